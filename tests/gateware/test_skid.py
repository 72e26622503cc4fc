"""The skid buffer (gateware/skid.py) against a golden model: items in order, none lost or
repeated, under backpressure sweeps on both sides; ``sink.ready`` depends on no input of the
same clock; no latency and full rate while the downstream takes every item."""

import random

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.skid import SkidBuffer
from wirespeed.gateware.streams import TxByte


def _run(n_items, p_valid, p_ready, seed, ready_at=None):
    """Drive ``n_items`` payloads in with probability ``p_valid`` per clock, take them out with
    probability ``p_ready``; returns what came out, the input cycle of each item, its output
    cycle and whether ``sink.ready`` ever changed with ``source.ready`` inside a clock.
    ``ready_at(cycle)``, if given, replaces ``p_ready``."""
    dut = SkidBuffer(TxByte)
    rng = random.Random(seed)
    items = [{"data": rng.randrange(256), "first": rng.randrange(2), "last": rng.randrange(2)}
             for _ in range(n_items)]
    out, t_in, t_out, comb_ready = [], [], [], []

    async def bench(ctx):
        i, cycle = 0, 0
        while len(out) < n_items:
            offer = i < n_items and rng.random() < p_valid
            ctx.set(dut.sink.valid, offer)
            if offer:
                ctx.set(dut.sink.payload, items[i])
            take = ready_at(cycle) if ready_at else rng.random() < p_ready
            # sink.ready may not follow source.ready within the clock
            ctx.set(dut.source.ready, not take)
            other = ctx.get(dut.sink.ready)
            ctx.set(dut.source.ready, take)
            if ctx.get(dut.sink.ready) != other:
                comb_ready.append(cycle)
            if ctx.get(dut.source.valid) and take:
                p = ctx.get(dut.source.payload)
                out.append({"data": p.data, "first": p.first, "last": p.last})
                t_out.append(cycle)
            if offer and ctx.get(dut.sink.ready):
                t_in.append(cycle)
                i += 1
            await ctx.tick()
            cycle += 1
            assert cycle < 100 * n_items + 100, "the buffer stopped moving"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return items, out, t_in, t_out, comb_ready


@pytest.mark.parametrize("p_valid, p_ready", [(1.0, 1.0), (1.0, 0.5), (0.5, 1.0), (0.3, 0.3), (0.9, 0.1),
                                              (1.0, 0.05), (0.2, 0.9)])
def test_items_in_order_none_lost_or_repeated(p_valid, p_ready):
    items, out, _, _, comb_ready = _run(400, p_valid, p_ready, seed=int(p_valid * 100 + p_ready * 10))
    assert out == items
    assert comb_ready == []


def test_no_latency_and_full_rate_when_never_stalled():
    items, out, t_in, t_out, _ = _run(200, 1.0, 1.0, seed=3)
    assert out == items
    assert t_in == t_out == list(range(200))


def test_a_stall_costs_no_more_than_the_stall():
    """Everything offered back to back, the downstream refusing every 7th clock: each item
    leaves on the first clock the downstream takes one, and the upstream never waits more
    than the one clock after a refusal."""
    items, out, t_in, t_out, _ = _run(300, 1.0, None, seed=9, ready_at=lambda cycle: cycle % 7 != 6)
    assert out == items
    assert all(cycle % 7 != 6 for cycle in t_out)
    assert t_out == [c for c in range(t_out[-1] + 1) if c % 7 != 6]
    assert all(b - a <= 2 for a, b in zip(t_in, t_in[1:]))
