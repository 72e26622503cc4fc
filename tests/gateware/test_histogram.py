"""Histogram against a golden model: bin placement for several widths and offsets,
underflow/overflow, clear sweep, and reads through the host port."""

import random

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.histogram import Histogram


def golden(values, offset, shift, bins):
    hist, under, over = [0] * bins, 0, 0
    for v in values:
        if v < offset:
            under += 1
        elif (v - offset) >> shift >= bins:
            over += 1
        else:
            hist[(v - offset) >> shift] += 1
    return hist, under, over


@pytest.mark.parametrize("offset,shift", [(0, 3), (200, 0), (20_000, 6), (1000, 10)])
def test_bins_match_model(offset, shift):
    bins = 64
    rng = random.Random(offset + shift)
    span = bins << shift
    values = [rng.randrange(max(0, offset - span // 4), offset + span + span // 4) for _ in range(300)]
    values += [offset, offset + span - 1, offset + span, max(0, offset - 1)]   # the edges
    dut = Histogram(bins=bins)

    async def bench(ctx):
        ctx.set(dut.offset, offset)
        ctx.set(dut.shift, shift)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        while ctx.get(dut.clearing):
            await ctx.tick()
        for v in values:
            ctx.set(dut.value, v)
            ctx.set(dut.sample, 1)
            await ctx.tick()
            ctx.set(dut.sample, 0)
            await ctx.tick().repeat(rng.choice([3, 5, 70]))   # at least 3 cycles apart (frames: 64+)
        await ctx.tick().repeat(4)
        got = []
        for i in range(bins):
            ctx.set(dut.read_addr, i)
            await ctx.tick()
            got.append(ctx.get(dut.read_data))
        want, under, over = golden(values, offset, shift, bins)
        assert got == want
        assert (ctx.get(dut.underflow), ctx.get(dut.overflow)) == (under, over)
        assert sum(got) + under + over == len(values)

        ctx.set(dut.clear, 1)                                  # clear really zeroes
        await ctx.tick()
        ctx.set(dut.clear, 0)
        await ctx.tick().repeat(bins + 2)
        assert not ctx.get(dut.clearing)
        for i in (0, bins // 2, bins - 1):
            ctx.set(dut.read_addr, i)
            await ctx.tick()
            assert ctx.get(dut.read_data) == 0

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
