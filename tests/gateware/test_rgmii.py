"""GMII <-> RGMII adapter (gateware/rgmii.py) in the Amaranth simulator, against a golden
RGMII model: transmit encoding, receive decoding and the clock crossing with a frame-size
sweep (64 bytes to 9018-byte jumbo frames) at 0 and +-200 ppm between the PHY's receive
clock and the sys clock; latency fixed to +-1 cycle; no hole inside a frame; in-band status."""

import random

import pytest
from amaranth import Module
from amaranth.sim import Simulator

from wirespeed.gateware.rgmii import RX_CDC_LATENCY_CYCLES, RGMIIPort, RGMIITx, RxCDC

T_SYS = 8e-9
PREAMBLE = bytes([0x55] * 7 + [0xD5])
INBAND = 0xD      # link up, 1000 Mb/s (speed code 2 in bits 2:1), full duplex


# Golden RGMII model ------------------------------------------------------------------------------

def rgmii_encode(byte=None, er=False, idle_status=INBAND):
    """(ctl pair, data pair) on the wire for one clock cycle: a frame byte, or idle with the
    in-band status on both nibbles."""
    if byte is None:
        return 0b00, idle_status | (idle_status << 4)
    return (1 | ((1 ^ er) << 1)), byte


def rgmii_decode(ctl, data):
    """(tx_en, tx_er, byte) of one cycle of DDR pairs."""
    en = ctl & 1
    return en, en ^ ((ctl >> 1) & 1), data


def wire_stream(frames, gap=12):
    """Per-cycle wire values for frames (preamble added) separated by ``gap`` idle cycles;
    returns the list and the index of each frame's first byte."""
    cycles, starts = [None] * 20, []
    for f in frames:
        starts.append(len(cycles))
        cycles += list(PREAMBLE + f)
        cycles += [None] * gap
    return cycles + [None] * 40, starts


def random_frame(rng, size):
    return bytes(rng.randrange(256) for _ in range(size))


# Receive path ------------------------------------------------------------------------------------

def run_rx(frames, ppm=0.0, threshold=4, gap=12):
    """Drive RGMII receive pairs at a clock ``ppm`` faster (negative: slower) than the sys
    clock; return the frames seen
    on GMII in sync, each frame's first-byte latency (sys cycles), whether any frame had a
    hole or an error, the underrun count and the in-band status."""
    dut = RGMIIPort("rx", threshold=threshold)
    m = Module()
    m.submodules.dut = dut
    t_rx = T_SYS / (1 + ppm * 1e-6)
    sim = Simulator(m)
    sim.add_clock(T_SYS, domain="sync")
    sim.add_clock(t_rx, domain="rx")
    wire, starts = wire_stream(frames, gap)
    state = {"done": False}

    async def phy(ctx):
        for value in wire:
            ctl, data = rgmii_encode(value)
            ctx.set(dut.ddr.rx_ctl, ctl)
            ctx.set(dut.ddr.rx_data, data)
            await ctx.tick("rx")
        state["done"] = True

    out, out_starts = [], []
    result = {}

    async def mac(ctx):
        cur, prev_dv, k = None, 0, 0
        idle_after_done = 0
        while idle_after_done < 80:
            await ctx.tick()
            k += 1
            dv, er, d = ctx.get(dut.gmii.rx_dv), ctx.get(dut.gmii.rx_er), ctx.get(dut.gmii.rxd)
            if dv and not prev_dv:
                cur = bytearray()
                out_starts.append(k)
            if dv:
                cur.append(d)
                if er:
                    result["errors"] = result.get("errors", 0) + 1
            if prev_dv and not dv:
                out.append(bytes(cur))
            prev_dv = dv
            if state["done"]:
                idle_after_done += 1
        result["underruns"] = ctx.get(dut.rx_underruns)
        result["overflows"] = ctx.get(dut.rx_overflows)
        result["inband"] = ctx.get(dut.inband)

    sim.add_testbench(phy)
    sim.add_testbench(mac)
    sim.run()
    # a byte set after rx tick n is registered by the decoder at rx edge n+1; sys edge k
    # comes at (k - 1 + 1/2) periods (both clocks start half a period in)
    lat = []
    for s, k in zip(starts, out_starts):
        t_in = (s + 0.5) * t_rx
        t_out = (k - 0.5) * T_SYS
        lat.append((t_out - t_in) / T_SYS)
    return out, lat, result


SIZES = [64, 65, 127, 128, 511, 1518, 1522, 9018]


@pytest.mark.parametrize("ppm", [0.0, 200.0, -200.0])
def test_rx_frame_size_sweep(ppm):
    rng = random.Random(int(ppm) + 5)
    frames = [random_frame(rng, n) for n in SIZES] + [random_frame(rng, 64) for _ in range(6)]
    out, lat, result = run_rx(frames, ppm)
    expected = [PREAMBLE + f for f in frames]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got == want, f"frame of {len(want)} bytes differs"
    assert result.get("errors", 0) == 0       # no byte marked bad: no hole, no underrun
    assert result["underruns"] == 0 and result["overflows"] == 0
    assert result["inband"] == INBAND
    # fixed latency: between the documented constant and one cycle less (the clocks' phase)
    eps = 1e-6
    assert all(RX_CDC_LATENCY_CYCLES - 1 - eps <= x <= RX_CDC_LATENCY_CYCLES + eps for x in lat), \
        (lat, RX_CDC_LATENCY_CYCLES)
    if ppm:
        assert max(lat) - min(lat) > 0.5     # the phase really moved through the run


@pytest.mark.parametrize("ppm, counter", [(-1000.0, "underruns"), (1000.0, "overflows")])
def test_rx_clock_far_out_of_tolerance_is_counted(ppm, counter):
    """At 1000 ppm a jumbo frame drifts by 9 bytes: beyond the budget, and the counters say
    so (and the frame is marked bad or short) instead of passing silently."""
    rng = random.Random(2)
    frames = [random_frame(rng, 9018), random_frame(rng, 64)]
    out, _, result = run_rx(frames, ppm, threshold=1 if ppm < 0 else 4)
    assert result[counter] == 1
    other = "overflows" if counter == "underruns" else "underruns"
    assert result[other] == 0
    assert out[1] == PREAMBLE + frames[1]            # the next frame is whole again
    assert out[0] != PREAMBLE + frames[0] or result.get("errors", 0) > 0


def test_rx_back_to_back_min_gap_keeps_frames_apart():
    rng = random.Random(9)
    frames = [random_frame(rng, 64) for _ in range(20)]
    out, lat, result = run_rx(frames, 200.0, gap=12)
    assert out == [PREAMBLE + f for f in frames]
    assert result.get("errors", 0) == 0


def test_rx_threshold_8_latency_is_larger_by_4():
    rng = random.Random(3)
    frames = [random_frame(rng, 100) for _ in range(4)]
    _, lat4, _ = run_rx(frames, 0.0, threshold=4)
    out, lat8, result = run_rx(frames, 0.0, threshold=8)
    assert out == [PREAMBLE + f for f in frames] and result.get("errors", 0) == 0
    assert abs(sum(lat8) / len(lat8) - sum(lat4) / len(lat4) - 4) <= 1


def test_rx_short_fragment_released_by_timeout():
    """A fragment shorter than the threshold (a runt) still comes out, whole, on its own."""
    dut = RGMIIPort("rx", threshold=8)
    m = Module()
    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(T_SYS, domain="sync")
    sim.add_clock(T_SYS, domain="rx")
    wire = [None] * 10 + [0x11, 0x22, 0x33] + [None] * 60
    seen = []

    async def phy(ctx):
        for value in wire:
            ctl, data = rgmii_encode(value)
            ctx.set(dut.ddr.rx_ctl, ctl)
            ctx.set(dut.ddr.rx_data, data)
            await ctx.tick("rx")

    async def mac(ctx):
        for _ in range(len(wire) + 10):
            await ctx.tick()
            if ctx.get(dut.gmii.rx_dv):
                seen.append((ctx.get(dut.gmii.rxd), ctx.get(dut.gmii.rx_er)))

    sim.add_testbench(phy)
    sim.add_testbench(mac)
    sim.run()
    assert seen == [(0x11, 0), (0x22, 0), (0x33, 0)]


def test_rx_error_byte_passes_with_rx_er():
    dut = RGMIIPort("rx")
    m = Module()
    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(T_SYS, domain="sync")
    sim.add_clock(T_SYS, domain="rx")
    frame = list(PREAMBLE + bytes(range(40)))
    seen = []

    async def phy(ctx):
        for _ in range(10):
            ctx.set(dut.ddr.rx_ctl, 0)
            await ctx.tick("rx")
        for i, b in enumerate(frame):
            ctl, data = rgmii_encode(b, er=(i == 20))
            ctx.set(dut.ddr.rx_ctl, ctl)
            ctx.set(dut.ddr.rx_data, data)
            await ctx.tick("rx")
        ctx.set(dut.ddr.rx_ctl, 0)

    async def mac(ctx):
        for _ in range(100):
            await ctx.tick()
            if ctx.get(dut.gmii.rx_dv):
                seen.append((ctx.get(dut.gmii.rxd), ctx.get(dut.gmii.rx_er)))

    sim.add_testbench(phy)
    sim.add_testbench(mac)
    sim.run()
    assert [b for b, _ in seen] == frame
    assert [i for i, (_, er) in enumerate(seen) if er] == [20]


def test_rx_cdc_threshold_must_fit_depth():
    with pytest.raises(ValueError, match="threshold"):
        RxCDC(threshold=16, depth=16)
    with pytest.raises(ValueError, match="threshold"):
        RxCDC(threshold=0)


# Transmit path -----------------------------------------------------------------------------------

def test_tx_encoding_against_golden_model():
    rng = random.Random(1)
    dut = RGMIITx()
    sim = Simulator(dut)
    sim.add_clock(T_SYS)
    # (en, er, byte) per cycle: idle, a frame with one error byte, carrier-extension-like er alone
    stimulus = [(0, 0, 0)] * 3 + [(1, int(i == 30), rng.randrange(256)) for i in range(80)] + \
               [(0, 0, 0)] * 2 + [(0, 1, 0x0F)] + [(0, 0, 0)] * 3
    seen = []

    async def bench(ctx):
        for en, er, d in stimulus:
            ctx.set(dut.gmii_tx_en, en)
            ctx.set(dut.gmii_tx_er, er)
            ctx.set(dut.gmii_txd, d)
            await ctx.tick()
            seen.append(rgmii_decode(ctx.get(dut.tx_ctl), ctx.get(dut.tx_data)))

    sim.add_testbench(bench)
    sim.run()
    # one register stage: what went in on cycle n is on the pairs after edge n
    got = [(en, er, d if en or er else 0) for en, er, d in seen]
    want = [(en, er, d if en or er else 0) for en, er, d in stimulus]
    assert got == want
    # raw pairs: an error byte is TX_CTL high on the rising edge, low on the falling edge
    raw = []

    async def raw_bench(ctx):
        for en, er, d in stimulus[:40]:
            ctx.set(dut.gmii_tx_en, en)
            ctx.set(dut.gmii_tx_er, er)
            ctx.set(dut.gmii_txd, d)
            await ctx.tick()
            raw.append((ctx.get(dut.tx_ctl), ctx.get(dut.tx_data)))

    sim = Simulator(dut)
    sim.add_clock(T_SYS)
    sim.add_testbench(raw_bench)
    sim.run()
    assert raw[33] == (0b01, stimulus[33][2]) and raw[32] == (0b11, stimulus[32][2]) and raw[0][0] == 0
