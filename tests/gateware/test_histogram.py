"""Per-stream histograms against the golden model (histogram_model): bin placement for several
widths and offsets, per-stream underflow/overflow and port totals, the ``used`` mask, the
clear sweep (samples during it are not counted), and reads through the host ports."""

import random

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.histogram import Histogram, histogram_model


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


async def clear(ctx, dut):
    ctx.set(dut.clear, 1)
    await ctx.tick()
    ctx.set(dut.clear, 0)
    cycles = 0
    while ctx.get(dut.clearing):
        await ctx.tick()
        cycles += 1
    return cycles


async def feed(ctx, dut, samples, rng):
    for stream, value in samples:
        ctx.set(dut.stream, stream)
        ctx.set(dut.value, value)
        ctx.set(dut.sample, 1)
        await ctx.tick()
        ctx.set(dut.sample, 0)
        await ctx.tick().repeat(rng.choice([2, 4, 70]))   # at least 3 cycles apart (frames: 64+)
    await ctx.tick().repeat(4)


async def read_all(ctx, dut):
    bins = []
    for stream in range(dut.streams):
        row = []
        for i in range(dut.bins):
            ctx.set(dut.read_addr, stream * dut.bins + i)
            await ctx.tick()
            row.append(ctx.get(dut.read_data))
        bins.append(row)
    uo = []
    for stream in range(dut.streams):
        pair = []
        for k in (0, 1):
            ctx.set(dut.uo_read_addr, 2 * stream + k)
            await ctx.tick()
            pair.append(ctx.get(dut.uo_read_data))
        uo.append(tuple(pair))
    return bins, uo


@pytest.mark.parametrize("streams", [1, 4])
@pytest.mark.parametrize("offset,shift", [(0, 3), (200, 0), (20_000, 6), (1000, 10)])
def test_bins_match_model(offset, shift, streams):
    bins = 64
    rng = random.Random(offset + shift + streams)
    span = bins << shift
    live = [s for s in range(streams) if streams == 1 or s != 2]        # stream 2 stays unused
    values = [rng.randrange(max(0, offset - span // 4), offset + span + span // 4) for _ in range(200)]
    values += [offset, offset + span - 1, offset + span, max(0, offset - 1)]   # the edges
    samples = [(rng.choice(live), v) for v in values]
    dut = Histogram(bins=bins, streams=streams)

    async def bench(ctx):
        ctx.set(dut.offset, offset)
        ctx.set(dut.shift, shift)
        assert await clear(ctx, dut) == streams * bins        # one cycle per bin
        await feed(ctx, dut, samples, rng)
        got_bins, got_uo = await read_all(ctx, dut)
        want_bins, want_uo = histogram_model(samples, bins=bins, streams=streams, offset=offset, shift=shift)
        assert got_bins == want_bins
        assert got_uo == want_uo
        assert ctx.get(dut.underflow) == sum(u for u, _ in want_uo)
        assert ctx.get(dut.overflow) == sum(o for _, o in want_uo)
        assert ctx.get(dut.used) == sum(1 << s for s in {s for s, _ in samples})
        assert sum(map(sum, got_bins)) + ctx.get(dut.underflow) + ctx.get(dut.overflow) == len(samples)

        await clear(ctx, dut)                                   # clear really zeroes
        got_bins, got_uo = await read_all(ctx, dut)
        assert not any(map(any, got_bins)) and not any(map(any, got_uo))
        assert ctx.get(dut.used) == ctx.get(dut.underflow) == ctx.get(dut.overflow) == 0

    run(dut, bench)


def test_samples_during_clear_are_not_counted_and_streams_stay_apart():
    dut = Histogram(bins=16, streams=8)
    rng = random.Random(7)

    async def bench(ctx):
        ctx.set(dut.shift, 2)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.value, 8)
        ctx.set(dut.sample, 1)                 # during the sweep: dropped
        await ctx.tick()
        ctx.set(dut.sample, 0)
        while ctx.get(dut.clearing):
            await ctx.tick()
        # every stream the same latency, stream s gets s + 1 samples
        samples = [(s, 8) for s in range(8) for _ in range(s + 1)]
        rng.shuffle(samples)
        await feed(ctx, dut, samples, rng)
        got_bins, _ = await read_all(ctx, dut)
        assert [row[2] for row in got_bins] == [s + 1 for s in range(8)]
        assert sum(map(sum, got_bins)) == len(samples)

    run(dut, bench)


def test_bad_shapes_are_refused():
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)   # the refused objects, when collected
        for kwargs, message in (({"bins": 1000}, "bins must be a power of two"),
                                ({"streams": 3}, "streams must be a power of two")):
            try:
                Histogram(**kwargs)
            except ValueError as exc:
                assert message in str(exc)
            else:
                pytest.fail(f"Histogram({kwargs}) was accepted")
        gc.collect()


@pytest.mark.parametrize("phase", range(-1, 8))
def test_clear_drops_the_sample_in_flight(phase):
    """A sample taken ``phase`` clocks before CLEAR (-1: on CLEAR's clock) is lost whatever
    pipeline stage it has reached (no bin, no underflow/overflow, no total, no ``used`` bit
    after the sweep), and a sample after the sweep counts normally."""
    bins, streams = 16, 2
    dut = Histogram(bins=bins, streams=streams)

    async def bench(ctx):
        ctx.set(dut.offset, 100)
        ctx.set(dut.shift, 0)
        await clear(ctx, dut)
        for stream, value in ((0, 105), (1, 50), (1, 500)):      # a bin, an underflow, an overflow
            ctx.set(dut.stream, stream)
            ctx.set(dut.value, value)
            ctx.set(dut.sample, 1)
            if phase < 0:
                await clear(ctx, dut)      # sample and CLEAR on the same clock
                ctx.set(dut.sample, 0)
            else:
                await ctx.tick()
                ctx.set(dut.sample, 0)
                if phase:
                    await ctx.tick().repeat(phase)
                await clear(ctx, dut)
            await ctx.tick().repeat(8)
            got_bins, got_uo = await read_all(ctx, dut)
            assert got_bins == [[0] * bins] * streams and got_uo == [(0, 0)] * streams
            assert (ctx.get(dut.underflow), ctx.get(dut.overflow), ctx.get(dut.used)) == (0, 0, 0)
        ctx.set(dut.stream, 1)
        ctx.set(dut.value, 107)
        ctx.set(dut.sample, 1)
        await ctx.tick()
        ctx.set(dut.sample, 0)
        await ctx.tick().repeat(8)
        got_bins, _ = await read_all(ctx, dut)
        assert got_bins[1][7] == 1 and sum(map(sum, got_bins)) == 1 and ctx.get(dut.used) == 0b10

    run(dut, bench)
