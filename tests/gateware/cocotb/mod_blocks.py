"""cocotb tests of the modifier unit and the random range generator (wrappers.ModTop) against
the pure-Python model of wirespeed.gateware.streamdesc (walk semantics in its module doc,
xorshift32, seed_for, draw), and of the per-stream latency histogram against
wirespeed.gateware.histogram.histogram_model. Run from tests/gateware/test_cocotb_blocks.py."""

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from csr import start

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.histogram import histogram_model

M32 = (1 << 32) - 1
PARAMS = ("mode", "stream", "chain", "base", "step", "count", "seed")
HIST_INPUTS = ("h_sample", "h_stream", "h_value", "h_offset", "h_shift", "h_clear", "h_read_addr",
               "h_uo_read_addr")
INPUTS = ("frame", "frame_stream", "clear", "r_seed", "r_load", "r_span", "r_req") + \
    tuple(f"m{j}_{p}" for j in (0, 1) for p in PARAMS) + HIST_INPUTS
WIDTH = {name: bits for name, bits, _ in sd.MOD_FIELDS} | {"seed": 32}


class UnitModel:
    """One modifier unit as streamdesc describes it: ``idx`` counts advances since CLEAR;
    increment ``base + (idx % count) * step``, decrement ``base - ...``, random
    ``base + r * step`` with ``r`` drawn by :func:`streamdesc.draw` (frame 0 carries base);
    chain: advance only on frames where the previous unit wraps."""

    def __init__(self, mode, stream, chain, base, step, count, seed):
        self.mode, self.stream, self.chain = mode, stream, chain
        self.base, self.step, self.count, self.state = base, step, count, seed
        self.idx, self.r = 0, 0

    def applies(self, fs):
        return self.mode != sd.MOD_OFF and self.stream == fs

    def value(self):
        if self.mode == sd.MOD_RANDOM:
            return (self.base + self.r * self.step) & M32
        sign = -1 if self.mode == sd.MOD_DECREMENT else 1
        return (self.base + sign * (self.idx % self.count) * self.step) & M32

    def frame(self, fs, chain_in):
        """Strobe a frame of stream ``fs``; returns wrap_out."""
        if not self.applies(fs) or (self.chain and not chain_in):
            return False
        if self.mode == sd.MOD_RANDOM:
            self.r, self.state = sd.draw(self.state, self.count)
            return True
        self.idx += 1
        return self.idx % self.count == 0


async def configure(dut, configs):
    """Apply each unit's parameters and CLEAR; the models."""
    await RisingEdge(dut.clk)
    for j, cfg in enumerate(configs):
        for p in PARAMS:
            getattr(dut, f"m{j}_{p}").value = cfg[p]
    dut.frame.value = 0
    await RisingEdge(dut.clk)
    dut.clear.value = 1
    await RisingEdge(dut.clk)
    dut.clear.value = 0
    return [UnitModel(**cfg) for cfg in configs]


async def walk(dut, models, frames, rng, label):
    """Strobe ``frames`` frames (random streams among the units' and another, random idle
    cycles between, each after the random units have their next value): before every strobe
    the units' applies/value/wrap_out must equal the models'."""
    streams = sorted({m.stream for m in models} | {(models[0].stream + 1) & 15})
    for n in range(frames):
        fs = rng.choice(streams)
        idle = rng.choice([0, 0, 1, 3])
        while True:                          # idle cycles, and wait while a unit draws
            await RisingEdge(dut.clk)
            dut.frame.value = 0
            dut.frame_stream.value = fs
            await ReadOnly()
            if idle > 0:
                idle -= 1
                continue
            if not (int(dut.m0_busy.value) or int(dut.m1_busy.value)):
                break
        await RisingEdge(dut.clk)
        dut.frame.value = 1
        dut.frame_stream.value = fs
        await ReadOnly()
        wrap = False
        for j, m in enumerate(models):
            got = (int(getattr(dut, f"m{j}_applies").value), int(getattr(dut, f"m{j}_value").value),
                   int(getattr(dut, f"m{j}_wrap_out").value))
            applies, value = m.applies(fs), m.value()
            wrap = m.frame(fs, wrap)
            assert got == (int(applies), value, int(wrap)), \
                f"{label}: frame {n} (stream {fs}) unit {j}: got {got}, model {(int(applies), value, int(wrap))}"
    await RisingEdge(dut.clk)
    dut.frame.value = 0


def cfg(mode=sd.MOD_INCREMENT, stream=5, chain=0, base=0, step=1, count=1, seed=1):
    return dict(mode=mode, stream=stream, chain=chain, base=base, step=step, count=count, seed=seed)


@cocotb.test()
async def modifier_walks(dut):
    """Increment and decrement walks across the 2**32 wrap, count 1, 2 and large, frames of
    other streams (not applied, no advance), a unit switched off; nested (chained) walks."""
    await start(dut, INPUTS)
    rng = random.Random(5)
    cases = [
        ("inc/dec", [cfg(base=0xFFFFFFF0, step=3, count=7), cfg(mode=sd.MOD_DECREMENT, base=5, step=2, count=4)]),
        ("count1", [cfg(base=42, step=9, count=1), cfg(mode=sd.MOD_DECREMENT, base=0, step=1, count=2)]),
        ("off", [cfg(mode=sd.MOD_OFF, base=9, count=3), cfg(stream=5, base=100, step=0x10000, count=1000)]),
        ("other streams", [cfg(stream=3, base=1, step=1, count=5), cfg(stream=9, base=7, step=5, count=3)]),
        ("chain 5x3", [cfg(base=0xC6120001, count=5), cfg(chain=1, base=0xC6130001, count=3)]),
        ("chain dec", [cfg(mode=sd.MOD_DECREMENT, base=3, step=M32, count=2),
                       cfg(mode=sd.MOD_DECREMENT, chain=1, base=0, step=7, count=6)]),
    ]
    for label, configs in cases:
        models = await configure(dut, configs)
        await walk(dut, models, 60, rng, label)
    # the seed lab's nested walk: 100 sources x 20 destinations, every pair once
    models = await configure(dut, [cfg(base=0xC6120001, count=100), cfg(chain=1, base=0xC6130001, count=20)])
    pairs = set()
    for n in range(2000):
        await RisingEdge(dut.clk)
        dut.frame.value = 1
        dut.frame_stream.value = 5
        await ReadOnly()
        pair = (int(dut.m0_value.value), int(dut.m1_value.value))
        assert pair == (models[0].value(), models[1].value()), (n, pair)
        pairs.add(pair)
        models[1].frame(5, models[0].frame(5, False))
    await RisingEdge(dut.clk)
    dut.frame.value = 0
    assert len(pairs) == 2000


@cocotb.test()
async def modifier_random_and_chain(dut):
    """Random units (seeded as the generator seeds them, seed_for), spans 1..2**32-1, steps
    powers of two, a unit chained under a random one (advances on every frame), and random
    configurations of every MOD_FIELDS register."""
    await start(dut, INPUTS)
    rng = random.Random(6)
    cases = [
        ("random 1000", [cfg(mode=sd.MOD_RANDOM, count=1000, base=0xC6130001, seed=sd.seed_for(1, 0)),
                         cfg(mode=sd.MOD_RANDOM, count=3, step=1 << 16, base=0xC0200000, seed=sd.seed_for(1, 1))]),
        ("random span 1 and full", [cfg(mode=sd.MOD_RANDOM, count=1, base=77, seed=sd.seed_for(9, 0)),
                                    cfg(mode=sd.MOD_RANDOM, count=M32, step=1, seed=sd.seed_for(9, 1))]),
        ("chained under random", [cfg(mode=sd.MOD_RANDOM, count=20, seed=sd.seed_for(3, 0)),
                                  cfg(chain=1, base=10, step=2, count=4)]),
    ]
    for k in range(6):
        configs = []
        for j in (0, 1):
            mode = rng.randrange(4)
            step = 1 << rng.randrange(32) if mode == sd.MOD_RANDOM else rng.randrange(1 << WIDTH["step"])
            configs.append(cfg(mode=mode, stream=rng.choice([0, 5, 15]), chain=rng.randrange(2) if j else 0,
                               base=rng.randrange(1 << WIDTH["base"]), step=step,
                               count=rng.choice([1, 2, 3, 17, 1000, rng.randrange(1, 1 << WIDTH["count"])]),
                               seed=sd.seed_for(rng.randrange(1 << 32), j)))
        cases.append((f"random config {k}", configs))
    for label, configs in cases:
        models = await configure(dut, configs)
        await walk(dut, models, 80, rng, label)


@cocotb.test()
async def prng_draws(dut):
    """RandomRange: after load, every draw equals streamdesc.draw from the same state
    (xorshift32 13/17/5 with rejection), spans 0..2**32-1; span <= 1 gives 0 without stepping."""
    assert sd.xorshift32(1) == 270369      # the model itself: Marsaglia's (13, 17, 5) from 1
    await start(dut, INPUTS)
    rng = random.Random(7)
    for seed in (1, 0x12345678, sd.seed_for(0, 8), M32):
        await RisingEdge(dut.clk)
        dut.r_seed.value = seed
        dut.r_load.value = 1
        await RisingEdge(dut.clk)
        dut.r_load.value = 0
        state = seed
        for n in range(150):
            span = rng.choice([0, 1, 2, 3, 5, 7, 64, 65, 100, 1000, 1 << 31, (1 << 31) + 1, M32,
                               rng.randrange(1, 1 << 32)])
            await RisingEdge(dut.clk)
            dut.r_span.value = span
            dut.r_req.value = 1
            await RisingEdge(dut.clk)
            dut.r_req.value = 0
            while True:
                await ReadOnly()
                if int(dut.r_ready.value):
                    break
                await RisingEdge(dut.clk)
            want, state = sd.draw(state, span)
            got = int(dut.r_value.value)
            assert got == want, f"seed {seed:#x} draw {n} span {span}: got {got}, model {want}"


# ---- per-stream latency histogram ---------------------------------------------------------------

async def _hist_clear(dut):
    dut.h_clear.value = 1
    await RisingEdge(dut.clk)
    dut.h_clear.value = 0
    await RisingEdge(dut.clk)
    while True:
        await ReadOnly()
        if not dut.h_clearing.value:
            break
        await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)


async def _hist_read(dut, bins, streams):
    got = [[0] * bins for _ in range(streams)]
    for s in range(streams):
        for i in range(bins):
            dut.h_read_addr.value = s * bins + i
            await RisingEdge(dut.clk)
            await ReadOnly()
            got[s][i] = int(dut.h_read_data.value)
            await RisingEdge(dut.clk)
    uo = []
    for s in range(streams):
        pair = []
        for k in (0, 1):
            dut.h_uo_read_addr.value = 2 * s + k
            await RisingEdge(dut.clk)
            await ReadOnly()
            pair.append(int(dut.h_uo_read_data.value))
            await RisingEdge(dut.clk)
        uo.append(tuple(pair))
    return got, uo


@cocotb.test()
async def histogram_bins_match_model(dut):
    """Samples of random streams and latencies, with back-to-back samples at the minimum
    spacing (3 clocks) and at the frame rate, over several bin widths and offsets, including
    the bin edges and latencies below and beyond the range: every stream's bins, underflow and
    overflow equal histogram_model; port totals and the used mask agree; CLEAR zeroes all."""
    from wrappers import HIST_BINS as bins
    from wrappers import HIST_STREAMS as streams
    await start(dut, INPUTS)
    rng = random.Random(11)
    for offset, shift in ((0, 0), (1000, 3), (123_456, 7), (2**31, 12)):
        dut.h_offset.value = offset
        dut.h_shift.value = shift
        await _hist_clear(dut)
        span = bins << shift
        values = [rng.randrange(max(0, offset - span // 4), min(2**32, offset + span + span // 4))
                  for _ in range(300)]
        values += [offset, offset + span - 1, min(offset + span, 2**32 - 1), max(0, offset - 1)]
        live = rng.sample(range(streams), streams - 1)          # one stream stays unused
        samples = [(rng.choice(live), v) for v in values]
        for stream, value in samples:
            dut.h_stream.value = stream
            dut.h_value.value = value
            dut.h_sample.value = 1
            await RisingEdge(dut.clk)
            dut.h_sample.value = 0
            for _ in range(rng.choice([2, 2, 5, 83])):          # samples 3 clocks apart or more
                await RisingEdge(dut.clk)
        for _ in range(4):
            await RisingEdge(dut.clk)
        want_bins, want_uo = histogram_model(samples, bins=bins, streams=streams, offset=offset, shift=shift)
        got_bins, got_uo = await _hist_read(dut, bins, streams)
        assert got_bins == want_bins, (offset, shift)
        assert got_uo == want_uo, (offset, shift)
        await ReadOnly()
        assert int(dut.h_underflow.value) == sum(u for u, _ in want_uo)
        assert int(dut.h_overflow.value) == sum(o for _, o in want_uo)
        assert int(dut.h_used.value) == sum(1 << s for s in set(live) if any(x == s for x, _ in samples))
        await RisingEdge(dut.clk)
    await _hist_clear(dut)
    got_bins, got_uo = await _hist_read(dut, bins, streams)
    assert not any(map(any, got_bins)) and not any(map(any, got_uo))
    await ReadOnly()
    assert int(dut.h_used.value) == int(dut.h_underflow.value) == int(dut.h_overflow.value) == 0
