"""UART transmitter and receiver (gateware/uart.py) against a bit-level golden model of an
8N1 line: back-to-back bytes, a +-2 % baud-rate sweep, framing errors, glitches, overrun."""

import random

import pytest
from amaranth import Module
from amaranth.sim import Simulator

from wirespeed.gateware.uart import UartRx, UartTx, uart_divisor


def line_levels(frames, divisor, skew=0.0, idle=20, stop_bits=None):
    """The rx line, one level per clock cycle, for ``frames`` (bytes, or (byte, stop_level)
    pairs) sent back to back by a transmitter whose bit lasts ``divisor * (1 + skew)``
    cycles. Bit edges fall on the rounded ideal times, so the error accumulates."""
    bit = divisor * (1 + skew)
    bits = []
    for f in frames:
        byte, stop = (f, 1) if isinstance(f, int) else f
        bits += [0] + [(byte >> i) & 1 for i in range(8)] + [stop]
    levels = [1] * idle
    t0 = len(levels)
    for n, level in enumerate(bits):
        end = t0 + round((n + 1) * bit)
        levels += [level] * (end - len(levels))
    return levels + [1] * (idle + 2 * divisor)


def decode_line(levels, divisor):
    """Golden receiver: bytes from a sampled tx line (start edge, then mid-bit samples)."""
    out, t = [], 0
    while t < len(levels):
        if levels[t] == 0:
            mid = t + divisor // 2
            if mid + 9 * divisor >= len(levels):
                break
            assert levels[mid] == 0
            byte = sum(levels[mid + (i + 1) * divisor] << i for i in range(8))
            assert levels[mid + 9 * divisor] == 1, "stop bit"
            out.append((t, byte))
            t = mid + 9 * divisor
        else:
            t += 1
    return out


def run_rx(levels, divisor, ready=lambda cycle: True):
    dut = UartRx(divisor)
    got, errors, overruns = [], [], []

    async def bench(ctx):
        for cycle, level in enumerate(levels):
            ctx.set(dut.rx, level)
            ctx.set(dut.o.ready, ready(cycle))
            if ctx.get(dut.o.valid) and ready(cycle):
                got.append(ctx.get(dut.o.payload))
            if ctx.get(dut.framing_error):
                errors.append(cycle)
            if ctx.get(dut.overrun):
                overruns.append(cycle)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return got, errors, overruns


def test_divisor():
    assert uart_divisor(125_000_000, 1_000_000) == 125
    assert uart_divisor(125_000_000, 3_000_000) == 42      # 0.79 % off, allowed
    with pytest.raises(ValueError, match="off by"):
        uart_divisor(12_000_000, 1_600_000)                # 7.5 cycles per bit: 6.7 % off
    with pytest.raises(ValueError, match="too fast"):
        uart_divisor(12_000_000, 4_000_000)


@pytest.mark.parametrize("divisor", [16, 27])
def test_tx_back_to_back_bytes(divisor):
    data = [0x00, 0xFF, 0x55, 0xAA, 0xC0, 0x01, 0x80, 0x7E]
    dut = UartTx(divisor)
    levels = []

    async def bench(ctx):
        queue = list(data)
        for _ in range(10 * divisor * (len(data) + 2)):
            ctx.set(dut.i.valid, bool(queue))
            if queue:
                ctx.set(dut.i.payload, queue[0])
            levels.append(ctx.get(dut.tx))
            if queue and ctx.get(dut.i.ready):
                queue.pop(0)
            await ctx.tick()
        assert not queue

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert levels[0] == 1
    decoded = decode_line(levels, divisor)
    assert [b for _, b in decoded] == data
    starts = [t for t, _ in decoded]
    # back to back: every byte is exactly 10 bit times after the previous one
    assert [b - a for a, b in zip(starts, starts[1:])] == [10 * divisor] * (len(data) - 1)
    assert levels[-1] == 1


@pytest.mark.parametrize("skew", [-0.02, -0.01, 0.0, 0.01, 0.02])
@pytest.mark.parametrize("divisor", [16, 125])
def test_rx_baud_sweep_back_to_back(divisor, skew):
    rng = random.Random(int(1000 * skew) + divisor)
    n = 40 if divisor == 16 else 4
    data = [0x00, 0xFF, 0x55, 0xAA] + [rng.getrandbits(8) for _ in range(n)]
    got, errors, overruns = run_rx(line_levels(data, divisor, skew), divisor)
    assert got == data
    assert errors == [] and overruns == []


def test_rx_framing_error_then_recovers():
    divisor = 16
    frames = [0x12, (0x34, 0), 0x56]
    levels = line_levels(frames[:2], divisor) + line_levels([0x56], divisor)
    got, errors, overruns = run_rx(levels, divisor)
    assert got == [0x12, 0x56]
    assert len(errors) == 1 and overruns == []


def test_rx_break_is_one_error_not_many_bytes():
    divisor = 16
    levels = [1] * 40 + [0] * (30 * divisor) + [1] * (3 * divisor) + line_levels([0xA5], divisor)
    got, errors, _ = run_rx(levels, divisor)
    assert got == [0xA5] and len(errors) == 1


def test_rx_ignores_glitches():
    divisor = 16
    levels = [1] * 40 + [0] * (divisor // 2 - 4) + [1] * (3 * divisor) + line_levels([0x3C], divisor)
    got, errors, _ = run_rx(levels, divisor)
    assert got == [0x3C] and errors == []


def test_rx_overrun_keeps_the_held_byte():
    divisor = 16
    levels = line_levels([0x11, 0x22, 0x33], divisor)
    stall_until = 25 * divisor      # the consumer wakes up during the third byte
    got, errors, overruns = run_rx(levels, divisor, ready=lambda cycle: cycle >= stall_until)
    assert got == [0x11, 0x33]      # 0x22 completed while 0x11 was still held
    assert len(overruns) == 1 and errors == []


def test_tx_to_rx_loopback():
    divisor = 8
    data = list(range(0, 256, 3))
    m = Module()
    m.submodules.tx = tx = UartTx(divisor)
    m.submodules.rx = rx = UartRx(divisor)
    m.d.comb += rx.rx.eq(tx.tx)
    got = []

    async def bench(ctx):
        queue = list(data)
        ctx.set(rx.o.ready, 1)
        for _ in range(10 * divisor * (len(data) + 2)):
            ctx.set(tx.i.valid, bool(queue))
            if queue:
                ctx.set(tx.i.payload, queue[0])
            if queue and ctx.get(tx.i.ready):
                queue.pop(0)
            if ctx.get(rx.o.valid):
                got.append(ctx.get(rx.o.payload))
            assert not ctx.get(rx.framing_error)
            await ctx.tick()

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == data
