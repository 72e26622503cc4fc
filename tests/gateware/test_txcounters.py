"""TxStreamCounters: per-stream frame and byte counts, and a snapshot that equals the table
at its clock edge whatever frames are counted during the copy sweep."""

import random

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.txcounters import TxStreamCounters


@pytest.mark.parametrize("seed", range(4))
def test_counts_and_consistent_snapshots(seed):
    rng = random.Random(seed)
    dut = TxStreamCounters(16)
    live = [[0, 0] for _ in range(16)]

    async def read_all(ctx):
        out = []
        for i in range(16):
            ctx.set(dut.read_addr, i)
            await ctx.tick()
            value = ctx.get(dut.read_data)
            out.append([value & (2**64 - 1), value >> 64])
        return out

    async def bench(ctx):
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        for round_ in range(6):
            # counts at up to one per cycle, a snapshot in the middle of them
            snap_at = rng.randrange(5, 40)
            want = None
            for cycle in range(60):
                count = rng.random() < (0.9 if round_ % 2 else 0.2)
                stream, length = rng.randrange(16), rng.randrange(64, 9019)
                ctx.set(dut.count, count)
                ctx.set(dut.stream, stream)
                ctx.set(dut.frame_len, length)
                ctx.set(dut.snapshot, cycle == snap_at)
                if cycle == snap_at:
                    want = [list(e) for e in live]       # a count in the snapshot's cycle is after it
                if count:
                    live[stream][0] += 1
                    live[stream][1] += length
                await ctx.tick()
            ctx.set(dut.count, 0)
            ctx.set(dut.snapshot, 0)
            await ctx.tick().repeat(20)
            assert await read_all(ctx) == want, f"round {round_}"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
