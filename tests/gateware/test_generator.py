"""FrameGenerator against the golden frame model, across frame sizes and backpressure."""

import random

import pytest
from amaranth.sim import Simulator
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from wirespeed.gateware import frame as F
from wirespeed.gateware.generator import FrameGenerator

CONFIG = dict(dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001,
              dst_ip=0xC6130001, src_port=F.DEFAULT_SRC_PORT, dst_port=7, ttl=10, stream_id=0x1234)

SIZES = [64, 65, 66, 67, 71, 99, 127, 128, 256, 1024, 1517, 1518]
BACKPRESSURE = {
    "none": lambda rng, cycle: 1,
    "random50": lambda rng, cycle: rng.random() < 0.5,
    "one_in_four": lambda rng, cycle: cycle % 4 == 0,
}


def run_generator(frame_len, ready_fn, n_frames=2, start_ns=1000, seed=1):
    """Start ``n_frames`` frames back to back; return [(bytes, flags...)] per frame."""
    dut = FrameGenerator()
    rng = random.Random(seed)
    frames, stamps = [], []

    async def bench(ctx):
        for name, value in CONFIG.items():
            ctx.set(getattr(dut, name), value)
        ctx.set(dut.frame_len, frame_len)
        ctx.set(dut.now, start_ns)
        await ctx.tick().repeat(3)  # checksum pipeline settles on the configuration
        cycle = 0
        for _ in range(n_frames):
            while ctx.get(dut.busy):
                await ctx.tick()
            now = start_ns + 8 * cycle
            ctx.set(dut.now, now)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            stamps.append(now)
            data, firsts, in_frame = bytearray(), [], True
            while in_frame:
                ready = int(ready_fn(rng, cycle))
                ctx.set(dut.source.ready, ready)
                assert ctx.get(dut.source.valid), "bubble inside a frame"
                if ready:
                    data.append(ctx.get(dut.source.p.data))
                    firsts.append(ctx.get(dut.source.p.first))
                    in_frame = not ctx.get(dut.source.p.last)
                await ctx.tick()
                cycle += 1
            frames.append((bytes(data), firsts))
        assert ctx.get(dut.tx_frames) == n_frames
        assert ctx.get(dut.tx_bytes) == n_frames * frame_len
        assert ctx.get(dut.first_tx_ns) == stamps[0]
        assert ctx.get(dut.last_tx_ns) == stamps[-1]

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return frames, stamps


@pytest.mark.parametrize("bp", BACKPRESSURE)
@pytest.mark.parametrize("frame_len", SIZES)
def test_frames_match_golden_model(frame_len, bp):
    frames, stamps = run_generator(frame_len, BACKPRESSURE[bp])
    for seq, ((data, firsts), ts) in enumerate(zip(frames, stamps)):
        want = F.build_frame(frame_len=frame_len, seq=seq, ts=ts, **CONFIG)
        assert data == want
        assert firsts == [1] + [0] * (len(data) - 1)


@pytest.mark.parametrize("frame_len", [64, 127, 1518])
def test_frames_dissect_as_rfc2544_udp(frame_len):
    frames, _ = run_generator(frame_len, BACKPRESSURE["none"], n_frames=1)
    data = frames[0][0]
    pkt = Ether(data + b"\0\0\0\0")
    assert pkt[IP].src == "198.18.0.1" and pkt[IP].dst == "198.19.0.1"
    assert pkt[IP].ttl == 10 and pkt[IP].len == frame_len - 18
    assert pkt[UDP].sport == 0xC020 and pkt[UDP].dport == 7 and pkt[UDP].len == frame_len - 38
    wire_csum = pkt[IP].chksum
    del pkt[IP].chksum
    assert Ether(bytes(pkt))[IP].chksum == wire_csum  # scapy recomputes the same checksum
    assert F.parse_signature(data) == (CONFIG["stream_id"], 0, 1000)
