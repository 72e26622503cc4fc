"""The generator's transmit counters (GeneratorCounters) against a model: launches at random
cycles (back to back too), CLEARs and SNAPSHOTs among them; the totals (frames, bytes, first
and last transmit timestamps) and every stream's frames and bytes at each snapshot's edge."""

import random

from amaranth import Module, Signal
from amaranth.sim import Simulator

from wirespeed.gateware.gen_counters import TOTALS, GeneratorCounters

N = 8


def test_totals_and_per_stream_counts_at_the_snapshot_edge():
    rng = random.Random(9)
    m = Module()
    m.submodules.dut = dut = GeneratorCounters(N)
    now = Signal(64, init=1000)
    m.d.sync += now.eq(now + 8)
    m.d.comb += dut.now.eq(now)
    checked = []

    def fresh():
        return {"tx_frames": 0, "tx_bytes": 0, "first_tx_ns": 0, "last_tx_ns": 0, "streams": [[0, 0] for _ in range(N)]}

    async def bench(ctx):
        live, pending = fresh(), None    # pending: the launch of the cycle before (seen a cycle late)
        for round_ in range(8):
            snap_at = rng.randrange(20, 120)
            want = None
            for cycle in range(160):
                launch = rng.random() < (0.5 if round_ % 2 else 0.1)
                # (a CLEAR during the per-stream snapshot's sweep would zero entries not yet
                # copied; the host never sends one then)
                clear = cycle < snap_at - 2 and rng.random() < 0.02
                snapshot = cycle == snap_at
                if pending is not None:          # the launched frame, from the cycle after its launch
                    ctx.set(dut.stream, pending[0])
                    ctx.set(dut.frame_len, pending[1])
                ctx.set(dut.launch, launch)
                ctx.set(dut.clear, clear)
                ctx.set(dut.snapshot, snapshot)
                if snapshot:
                    want = {k: (v if k != "streams" else [list(e) for e in v]) for k, v in live.items()}
                # the model: a launch counts from the next cycle on; a CLEAR zeroes from the next
                # cycle on, and a launch in its cycle is not counted
                if clear:
                    live, pending = fresh(), None
                else:
                    if launch:
                        stream, length = rng.randrange(N), rng.randrange(64, 9019)
                        if live["tx_frames"] == 0:
                            live["first_tx_ns"] = ctx.get(now)
                        live["tx_frames"] += 1
                        live["tx_bytes"] += length
                        live["last_tx_ns"] = ctx.get(now)
                        live["streams"][stream][0] += 1
                        live["streams"][stream][1] += length
                        pending = (stream, length)
                await ctx.tick()
            ctx.set(dut.launch, 0)
            ctx.set(dut.snapshot, 0)
            ctx.set(dut.clear, 0)
            await ctx.tick().repeat(30)
            got = {name: ctx.get(getattr(dut.snap, name)) for name, _ in TOTALS}
            streams = []
            for s in range(N):
                ctx.set(dut.stream_tx.addr, s)
                await ctx.tick()
                value = ctx.get(dut.stream_tx.data)
                streams.append([value & (2**64 - 1), value >> 64])
            got["streams"] = streams
            assert got == want, f"round {round_}"
            checked.append(want["tx_frames"])

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert sum(checked) > 100 and len(checked) == 8
