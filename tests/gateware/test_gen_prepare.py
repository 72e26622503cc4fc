"""The generator's prepare stage (FramePrepare, with the tables it reads) against the golden
models: each frame it hands over (gen_layouts.FrameHandoff), sent as the emitter's model sends
it (genstages.emitted), equals the scapy golden frame of wirespeed.traffic.expected_frames,
and its launch flags and byte-0 modifier patch are what its fields imply. Streams of every
size mode (64 to 9018 bytes), header kind and modifier kind; the scheduler's pick and launch
at random times (a slow line), and STOP aborting frames being prepared."""

import random

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator
from genstages import byte0_mods, emitted, get_frame, launch_flags

from wirespeed.gateware import streamdesc as SD
from wirespeed.gateware.gen_prepare import FramePrepare
from wirespeed.gateware.gen_tables import GeneratorTables
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec, expected_frames

N_STREAMS, N_MODS = 8, 8


def prepare_with_tables():
    """A FramePrepare reading its own GeneratorTables, as the generator wires them."""
    m = Module()
    m.submodules.tables = tables = GeneratorTables(N_STREAMS)
    m.submodules.prep = prep = FramePrepare(N_STREAMS, N_MODS)
    wiring.connect(m, tables.desc_rd, prep.desc_rd)
    wiring.connect(m, tables.tbase_rd, prep.tbase_rd)
    wiring.connect(m, tables.size_rd, prep.size_rd)
    m.d.comb += prep.size_busy.eq(tables.size_busy)
    return m, tables, prep


async def write_entry(ctx, win, index, value, words):
    """A host write of a table entry through its window, a word a cycle."""
    for w in range(words):
        ctx.set(win.w_en, 1)
        ctx.set(win.w_addr, index)
        ctx.set(win.w_word, w)
        ctx.set(win.w_data, (value >> (32 * w)) & 0xFFFFFFFF)
        await ctx.tick()
    ctx.set(win.w_en, 0)


def run(program, count, *, seed, slow=False, stops=False):
    compiled = program.compile()
    assert [s.index for s in compiled.streams] == list(range(len(compiled.streams)))
    want = list(expected_frames(compiled, count=count))
    rng = random.Random(seed)
    m, tables, prep = prepare_with_tables()
    got, takes, aborted = [], [], [0]

    async def bench(ctx):
        for index, value in compiled.size_table.items():
            await write_entry(ctx, tables.sizes_win, index, value, 1)
        for index, value in enumerate(compiled.descriptors()[:N_STREAMS]):
            await write_entry(ctx, tables.desc_win, index, value, SD.DESC_BITS // 32)
        for j, unit in enumerate(compiled.modifiers[:N_MODS]):
            for name, _, _ in SD.MOD_FIELDS:
                ctx.set(getattr(prep.mods[j], name), unit[name])
        ctx.set(prep.seed, compiled.seed)
        ctx.set(prep.clear, 1)
        await ctx.tick()
        ctx.set(prep.clear, 0)
        await ctx.tick().repeat(3)
        k, cycle, go_at, picked_at = 0, 0, None, None
        while len(got) < count and cycle < 50_000:
            # the scheduler: offers frame k's stream (at times not), launches a prepared frame
            # when the line frees up (at once, or after a while)
            ctx.set(prep.pick_valid, not slow or rng.random() < 0.7)
            ctx.set(prep.pick_stream, want[k].stream if k < count else 0)
            stop = stops and picked_at is not None and cycle - picked_at in (1, 2, 3) and rng.random() < 0.15
            ctx.set(prep.stop, stop)
            aborted[0] += stop
            if stop:
                picked_at = None
            prepared = ctx.get(prep.prepared)
            if prepared and go_at is None:
                go_at = cycle + (rng.randrange(0, 200) if slow else 0)
            go = prepared and go_at is not None and cycle >= go_at and not stop
            ctx.set(prep.go, go)
            if go:
                got.append(get_frame(ctx, prep.handoff.frame))
                go_at = None
            if ctx.get(prep.take):
                takes.append((ctx.get(prep.take_stream), ctx.get(prep.take_period)))
                k += 1
            if ctx.get(prep.handoff.picked):
                picked_at = cycle
            assert ctx.get(prep.sched_prepared) == prepared
            await ctx.tick()
            cycle += 1

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert len(got) == count, (len(got), count)
    assert takes == [(e.stream, compiled.streams[e.stream].descriptor["period"]) for e in want]
    for n, (fr, exp) in enumerate(zip(got, want)):
        assert (fr["stream"], fr["stream_id"], fr["seq"], fr["frame_len"]) == \
            (exp.stream, exp.stream_id, exp.seq, exp.length), n
        assert fr["launch"] == launch_flags(fr), f"frame {n}: launch flags"
        assert (fr["pm0"], fr["pv0"]) == byte0_mods(fr), f"frame {n}: byte 0's modifier patch"
        template = compiled.streams[exp.stream].template.ljust(SD.TEMPLATE_BYTES, b"\0")
        ts = rng.randrange(1 << 48)
        assert emitted(fr, template, ts) == exp.build(ts), f"frame {n} (stream {exp.stream}, {exp.length} bytes)"
    return aborted[0]


STREAMS = (
    StreamSpec(size="64-1518/97", udp_checksum=True,
               modifiers=(ModifierSpec(field="src_ip", count=7), ModifierSpec(field="dst_ip", count=3, chain=True))),
    StreamSpec(vlan=100, pcp=5, size="66-9018/4476", udp_checksum=True, src_port=1000,
               modifiers=(ModifierSpec(field="vlan", count=5, step=3),
                          ModifierSpec(field="src_port", mode="decrement", count=7))),
    StreamSpec(src_ip="2001:2::1", dst_ip="2001:2:0:1::1", size="seq:82,83,1001,9018", udp_checksum=True,
               modifiers=(ModifierSpec(field="dst_ip", mode="random", count=1000),
                          ModifierSpec(field="src_mac", count=4))),
    StreamSpec(size="imix:bcg", modifiers=(ModifierSpec(field="dst_port", mode="random", count=50),)),
    StreamSpec(size="65"),
)


@pytest.mark.parametrize("slow", [False, True])
def test_frames_of_every_size_mode(slow):
    streams = STREAMS + (StreamSpec(src_ip="2001:2::5", dst_ip="2001:2:0:1::9", size="rand:82-9018",
                                    udp_checksum=True),)
    program = PortProgram(streams=streams, rate_pct=100, seed=99)
    run(program, 40, seed=int(slow), slow=slow)


def test_launch_flags_of_any_descriptor():
    """Descriptors no program compiler writes: header lengths 0 to 3, patch fields and
    modifiers at bytes 0 to 3, over each other; the launch flags and byte 0's modifier patch
    are what the frame's fields imply, and the fields are the descriptor's."""
    rng = random.Random(11)
    rounds = []                       # (descriptors, modifier units) of each round
    for _ in range(6):
        descs, mods = [], []
        for s in range(N_STREAMS):
            fields = {"enable": 1, "size_mode": SD.SIZE_FIXED, "hdr_len": rng.randrange(4), "stream_id": s,
                      "size_a": rng.choice([20, 21, 22, 64]), "period": 1 << 32}
            for name in ("len1", "len2", "ipcsum", "udpcsum"):
                fields |= {f"{name}_en": int(rng.random() < 0.75), f"{name}_off": rng.randrange(3)}
            fields |= {"len1_adj": rng.randrange(1 << 14), "len2_adj": rng.randrange(1 << 14)}
            descs.append(fields)
        for _ in range(N_MODS):
            mods.append({"mode": SD.MOD_INCREMENT, "stream": rng.randrange(N_STREAMS), "chain": 0,
                         "offset": rng.randrange(4), "mask": rng.randrange(1 << 32), "base": rng.randrange(1 << 32),
                         "step": 1, "count": 5, "csum": rng.randrange(4)})
        rounds.append((descs, mods))
    m, tables, prep = prepare_with_tables()
    got = []

    async def bench(ctx):
        for descs, mods in rounds:
            for index, fields in enumerate(descs):
                await write_entry(ctx, tables.desc_win, index, SD.pack_descriptor(**fields), SD.DESC_BITS // 32)
            for j, unit in enumerate(mods):
                for name, value in unit.items():
                    ctx.set(getattr(prep.mods[j], name), value)
            ctx.set(prep.clear, 1)
            await ctx.tick()
            ctx.set(prep.clear, 0)
            for s in range(N_STREAMS):
                ctx.set(prep.pick_valid, 1)
                ctx.set(prep.pick_stream, s)
                while not ctx.get(prep.prepared):
                    await ctx.tick()
                ctx.set(prep.pick_valid, 0)
                ctx.set(prep.go, 1)
                got.append((descs[s], mods, s, get_frame(ctx, prep.handoff.frame)))
                await ctx.tick()
                ctx.set(prep.go, 0)

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert len(got) == 6 * N_STREAMS
    for d, mods, s, fr in got:
        assert fr["launch"] == launch_flags(fr), (s, d)
        assert (fr["pm0"], fr["pv0"]) == byte0_mods(fr), (s, d)
        assert (fr["frame_len"], fr["hdr_len"]) == (d["size_a"], d["hdr_len"])
        for name, key in (("len1", "len1"), ("len2", "len2"), ("ip", "ipcsum"), ("udp", "udpcsum")):
            assert (fr[f"{name}_en"], fr[f"{name}_off"]) == (d[f"{key}_en"], d[f"{key}_off"])
        assert fr["len1"] == (d["size_a"] - d["len1_adj"]) & 0xFFFF
        assert [(u["apply"], u["off"], u["mask"]) for u in fr["mod"]] == \
            [(int(u["stream"] == s), u["offset"], u["mask"]) for u in mods]


def test_stop_aborts_a_frame_being_prepared():
    """STOP in READ, SIZE or WAIT_RNG drops the frame: no take, no per-stream state advanced,
    so the same frame is prepared again (no random sizes here: their draw would be spent)."""
    program = PortProgram(streams=STREAMS, rate_pct=100, seed=5)
    assert run(program, 40, seed=2, slow=True, stops=True) > 5
