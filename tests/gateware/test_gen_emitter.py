"""The generator's emitter stage (FrameEmitter, with the tables' templates) against the golden
model of its interface (genstages.emitted): random prepared frames (header lengths, patch
fields and modifiers anywhere in the header, including over each other and past its end),
frame sizes from 64 to 9018 bytes, the sink's backpressure and a slow or late prepare stage;
every byte, first/last, no bubble inside a frame, the transmit timestamp, and the line's
wire time (frames back to back exactly L + 20 cycles apart)."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.sim import Simulator
from genstages import byte0_mods, emitted, launch_flags, set_frame

from wirespeed.gateware import frame as F
from wirespeed.gateware import streamdesc as SD
from wirespeed.gateware.gen_emitter import FrameEmitter
from wirespeed.gateware.gen_tables import GeneratorTables

N_STREAMS, N_MODS = 4, 3

READY = {
    "none": lambda rng, cycle: True,
    "random50": lambda rng, cycle: rng.random() < 0.5,
    "one_in_four": lambda rng, cycle: cycle % 4 == 0,
}


def random_frame(rng, length):
    """A prepared frame as prepare could hand it over: any header up to the signature, patch
    fields and modifiers anywhere (the UDP checksum from byte 2), any values."""
    hdr = rng.choice([0, 1, 2, min(127, length - F.SIG_FROM_END), rng.randrange(min(128, length - F.SIG_FROM_END + 1))])

    def off(lo=0):
        return rng.choice([lo, lo + 1, lo + 2, rng.randrange(lo, 128), rng.randrange(lo, max(lo + 1, hdr + 2))])

    fr = {"stream": rng.randrange(N_STREAMS), "stream_id": rng.randrange(1 << 16), "seq": rng.randrange(1 << 32),
          "frame_len": length, "hdr_len": hdr,
          "udp_en": int(rng.random() < 0.6), "udp_off": min(127, off(2)), "udp_part": rng.randrange(1 << 16),
          "sig_sum": rng.randrange(1 << 18), "sig_x": rng.randrange(1 << 16),
          "mod": [{"apply": int(rng.random() < 0.6), "off": off(), "mask": rng.randrange(1 << 32),
                   "value": rng.randrange(1 << 32)} for _ in range(N_MODS)]}
    for name, value in (("len1", "len1"), ("len2", "len2"), ("ip", "ip_csum")):
        fr |= {f"{name}_en": int(rng.random() < 0.6), f"{name}_off": off(), value: rng.randrange(1 << 16)}
    fr["pm0"], fr["pv0"] = byte0_mods(fr)
    fr["launch"] = launch_flags(fr)
    return fr


def run(sizes, ready, *, seed, late_pick=False, hold=False, rewrite_templates=False):
    rng = random.Random(seed)
    m = Module()
    m.submodules.tables = tables = GeneratorTables(N_STREAMS)
    m.submodules.emit = emit = FrameEmitter(N_STREAMS, N_MODS)
    wiring.connect(m, tables.tmpl_rd, emit.tmpl_rd)
    m.d.comb += emit.tmpl_written.eq(tables.tmpl_written)
    now = Signal(64, init=(1 << 48) - 5000)        # crosses 2**48 (the timestamp wraps)
    m.d.sync += now.eq(now + 1)
    m.d.comb += emit.now.eq(now)
    templates = [bytes(rng.randrange(256) for _ in range(SD.TEMPLATE_BYTES)) for _ in range(N_STREAMS)]
    frames = [random_frame(rng, size) for size in sizes]
    launches, got = [], []
    win, src, hand = tables.tmpl_win, emit.source, emit.handoff

    async def bench(ctx):
        for s, tmpl in enumerate(templates):
            for i, byte in enumerate(tmpl):
                ctx.set(win.w_en, 1)
                ctx.set(win.w_addr, s * SD.TEMPLATE_BYTES + i)
                ctx.set(win.w_data, byte)
                await ctx.tick()
        ctx.set(win.w_en, 0)
        ctx.set(hand.stream, frames[0]["stream"])
        ctx.set(hand.picked, 1)
        await ctx.tick()
        ctx.set(hand.picked, 0)
        k, cycle, ready_at, pick_at = 0, 0, 5, None      # frame k is handed over at ready_at
        data, bubbles = None, 0
        while len(got) < len(frames) and cycle < 200_000:
            r = bool(READY[ready](rng, cycle))
            ctx.set(src.ready, r)
            h = hold and rng.random() < 0.1
            ctx.set(emit.hold, h)
            if rewrite_templates and rng.random() < 0.01:
                s, i = rng.randrange(N_STREAMS), rng.randrange(SD.TEMPLATE_BYTES)
                ctx.set(win.w_en, 1)
                ctx.set(win.w_addr, s * SD.TEMPLATE_BYTES + i)
                ctx.set(win.w_data, templates[s][i])
            else:
                ctx.set(win.w_en, 0)
            ctx.set(hand.picked, 0)
            if pick_at == cycle and k < len(frames):     # prepare takes the next frame's stream
                ctx.set(hand.stream, frames[k]["stream"])
                ctx.set(hand.picked, 1)
            if k < len(frames) and cycle == ready_at:
                set_frame(ctx, hand.frame, frames[k])
            # as prepare's commit: high the cycle before the frame changes
            ctx.set(hand.committed, k < len(frames) and cycle + 1 == ready_at)
            prepared = k < len(frames) and cycle >= ready_at
            free = ctx.get(emit.line_free)
            assert not (h and free), "line free while held"
            go = prepared and free
            ctx.set(emit.go, go)
            if go:
                launches.append((cycle, ctx.get(now)))
                k += 1
                delay = rng.randrange(1, 4) if not late_pick or rng.random() < 0.5 else rng.randrange(1, 150)
                pick_at = cycle + delay
                ready_at = pick_at + rng.randrange(5, 12 if ready == "none" else 60)
            valid = ctx.get(src.valid)
            if data is not None and not valid:
                bubbles += 1
            if valid and r:
                if ctx.get(src.p.first):
                    assert data is None, "first inside a frame"
                    data = bytearray()
                assert data is not None, "a byte outside a frame"
                data.append(ctx.get(src.p.data))
                if ctx.get(src.p.last):
                    got.append(bytes(data))
                    data = None
            await ctx.tick()
            cycle += 1
        assert bubbles == 0, "valid dropped inside a frame"

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert len(got) == len(frames)
    for n, (fr, data, (_, ts)) in enumerate(zip(frames, got, launches)):
        want = emitted(fr, templates[fr["stream"]], ts)
        assert data == want, f"frame {n} ({fr['frame_len']} bytes) differs at byte " \
                             f"{next(i for i, (a, b) in enumerate(zip(data, want)) if a != b)}"
    return launches


@pytest.mark.parametrize("ready", sorted(READY))
def test_sizes_and_backpressure(ready):
    sizes = [64, 65, 66, 67, 71, 99, 127, 128, 129, 300, 1518, 64, 64]
    launches = run(sizes, ready, seed=sorted(READY).index(ready), late_pick=ready != "none")
    if ready == "none":
        # at line rate: each frame leaves exactly its predecessor's wire time later
        spacing = [b - a for (a, _), (b, _) in zip(launches, launches[1:])]
        assert spacing == [size + F.WIRE_OVERHEAD for size in sizes[:-1]], spacing


@pytest.mark.slow
def test_jumbo_hold_and_template_rewrites():
    """A 9018-byte frame; the line held for another source at random (never free then); the
    host rewriting template bytes during the frames (the fetch of bytes 0-2 starts again)."""
    run([9018, 64, 65, 1518, 64], "random50", seed=3, late_pick=True, hold=True, rewrite_templates=True)
