"""Analyzer against a golden model: recognition, counters, sequence and latency, across
frame sizes, back-to-back frames and idle cycles inside frames."""

import random

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware import frame as F
from wirespeed.gateware.analyzer import LAT_MIN_INIT, Analyzer

CFG = dict(dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001, dst_ip=0xC6130001)


class AnalyzerModel:
    """What the analyzer must count, from the frames it is given."""

    def __init__(self):
        self.c = dict(rx_frames=0, rx_bytes=0, seq_errors=0, fcs_errors=0, other_frames=0,
                      lat_min=LAT_MIN_INIT, lat_max=0, lat_sum=0, first_rx_ns=0, last_rx_ns=0,
                      lat_sq_sum=0, jitter_sum=0)
        self.expected = 0
        self.prev = None
        self.samples = []

    def frame(self, data, error, rx_ts):
        c = self.c
        if error:
            c["fcs_errors"] += 1
            return
        sig = F.parse_signature(data)
        if sig is None:
            c["other_frames"] += 1
            return
        _, seq, ts = sig
        lat = (rx_ts - ts) & 0xFFFFFFFF
        if c["rx_frames"] == 0:
            c["first_rx_ns"] = rx_ts
        c["rx_frames"] += 1
        c["rx_bytes"] += len(data) + F.FCS
        c["seq_errors"] += seq != self.expected
        self.expected = (seq + 1) & 0xFFFFFFFF
        c["lat_min"] = min(c["lat_min"], lat)
        c["lat_max"] = max(c["lat_max"], lat)
        c["lat_sum"] += lat
        c["lat_sq_sum"] += lat * lat
        if self.prev is not None:
            c["jitter_sum"] += abs(lat - self.prev)
        self.prev = lat
        self.samples.append(lat)
        c["last_rx_ns"] = rx_ts


def make_traffic(rng, sizes):
    """(frame bytes without FCS, fcs error) items: in-order, lost, duplicated, reordered test
    frames, foreign frames, a corrupted signature, a bad FCS and runts."""
    seqs = [0, 1, 2, 4, 5, 5, 7, 6, 8, 9]
    items = []
    for i, seq in enumerate(seqs):
        size = sizes[i % len(sizes)]
        items.append((F.build_frame(frame_len=size, seq=seq, ts=rng.randrange(1 << 20), stream_id=3, **CFG), 0))
    items.insert(3, (bytes(rng.randrange(256) for _ in range(60)), 0))          # random payload
    bad_check = bytearray(F.build_frame(frame_len=64, seq=99, ts=5, **CFG))
    bad_check[57] ^= 1
    items.insert(5, (bytes(bad_check), 0))                                        # signature check fails
    items.insert(7, (F.build_frame(frame_len=128, seq=10, ts=9, **CFG), 1))      # bad FCS
    items.insert(8, (F.build_frame(frame_len=64, seq=10, ts=9, **CFG)[:40], 0))  # runt: no room for a signature
    arp = bytearray(F.build_frame(frame_len=64, seq=10, ts=9, **CFG))
    arp[12:14] = b"\x08\x06"
    items.append((bytes(arp), 0))                                                 # not IPv4
    return items


GAPS = {"back_to_back": (0, 0.0), "gaps": (12, 0.0), "idle_inside_frames": (3, 0.25)}


@pytest.mark.parametrize("gap", GAPS)
@pytest.mark.parametrize("sizes", [[64], [65, 67, 99, 127], [128, 1518], [64, 1518, 71]], ids=str)
def test_counters_match_model(sizes, gap):
    rng = random.Random(len(sizes) * 7 + len(gap))
    items = make_traffic(rng, sizes)
    gap_cycles, idle_p = GAPS[gap]
    dut = Analyzer()
    model = AnalyzerModel()

    samples = []

    async def sampler(ctx):
        async for _clk, _rst, valid, value in ctx.tick().sample(dut.lat_sample, dut.lat_value):
            if valid:
                samples.append(value)

    async def bench(ctx):
        now = 1 << 20
        for data, error in items:
            for i, byte in enumerate(data):
                while rng.random() < idle_p:
                    ctx.set(dut.sink.valid, 0)
                    ctx.set(dut.now, now)
                    await ctx.tick()
                    now += 8
                if i == 0:
                    model.frame(data, error, now)
                last = i == len(data) - 1
                ctx.set(dut.sink.valid, 1)
                ctx.set(dut.sink.p, {"data": byte, "first": i == 0, "last": last, "error": error and last})
                ctx.set(dut.now, now)
                await ctx.tick()
                now += 8
            ctx.set(dut.sink.valid, 0)
            for _ in range(gap_cycles):
                await ctx.tick()
                now += 8
        await ctx.tick().repeat(3)
        got = {name: ctx.get(getattr(dut, name)) for name in model.c}
        assert got == model.c

        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        assert ctx.get(dut.rx_frames) == 0 and ctx.get(dut.lat_min) == LAT_MIN_INIT

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.add_process(sampler)
    sim.run()
    assert samples == model.samples            # every test frame's latency offered once, in order
    # the traffic really exercised every counter
    assert model.c["seq_errors"] >= 3 and model.c["fcs_errors"] == 1 and model.c["other_frames"] == 4
