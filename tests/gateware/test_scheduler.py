"""TrialScheduler: frame k of a trial is due at floor(k * period) cycles; trials end by
duration or frame count; a busy generator delays a frame without shifting later ones."""

import math

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.scheduler import MODE_COUNT, MODE_DURATION, TrialScheduler


def run(period, mode, duration=0, count=0, busy_cycles=None, cycles=3000):
    """Return the cycles (since start) of each start_frame pulse and when running fell.
    ``busy_cycles`` maps a frame index to how long the generator stays busy after it."""
    busy_cycles = busy_cycles or {}
    dut = TrialScheduler()
    starts, fell = [], None

    async def bench(ctx):
        nonlocal fell
        ctx.set(dut.enable, 1)
        ctx.set(dut.mode, mode)
        ctx.set(dut.duration, duration)
        ctx.set(dut.count, count)
        ctx.set(dut.period, period)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        busy_left = 0
        for cycle in range(cycles):
            ctx.set(dut.gen_busy, busy_left > 0)
            if ctx.get(dut.start_frame):
                starts.append(cycle)
                busy_left = busy_cycles.get(len(starts) - 1, 0) + 1
            if not ctx.get(dut.running) and fell is None:
                fell = cycle
            await ctx.tick()
            busy_left = max(0, busy_left - 1)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return starts, fell


@pytest.mark.parametrize("period_cycles", [84, 84.5, 100.3333, 1538, 168.000001])
def test_frames_due_on_exact_schedule(period_cycles):
    period = round(period_cycles * 2**32)
    starts, _ = run(period, MODE_COUNT, count=20, cycles=40 * int(period_cycles))
    assert starts == [(k * period) >> 32 for k in range(20)]


def test_duration_mode_sends_frames_due_before_the_end():
    period = 100 << 32
    starts, fell = run(period, MODE_DURATION, duration=1050, cycles=1500)
    assert len(starts) == math.ceil(1050 / 100)
    assert fell is not None and 1000 < fell <= 1060


def test_busy_generator_delays_without_drift():
    period = int(84.25 * 2**32)
    starts, _ = run(period, MODE_COUNT, count=10, busy_cycles={2: 120}, cycles=2000)
    due = [(k * period) >> 32 for k in range(10)]
    assert starts[3] == starts[2] + 121 > due[3]   # frame 3 waited for the generator
    assert starts[:3] == due[:3] and starts[4:] == due[4:]   # the others kept the schedule


def test_disabled_port_does_not_start():
    dut = TrialScheduler()
    seen = []

    async def bench(ctx):
        ctx.set(dut.period, 84 << 32)
        ctx.set(dut.count, 5)
        ctx.set(dut.mode, MODE_COUNT)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for _ in range(500):
            seen.append(ctx.get(dut.start_frame) | ctx.get(dut.running))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert not any(seen)
