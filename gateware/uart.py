"""8N1 UART transmitter and receiver (no parity, one stop bit, least significant bit first).

Both take ``divisor``: clock cycles per bit (``round(clk_hz / baud)``, at least 4). The
receiver synchronises ``rx`` through two flip-flops, finds the falling edge of the start
bit, checks the start bit again half a bit later (a shorter low pulse is a glitch, not a
byte) and then samples every bit in its middle; a stop bit that reads 0 is a framing error
(the byte is discarded and the receiver waits for the line to go idle before it looks for
the next start bit). It hunts for the next start bit right after the middle of the stop
bit, so back-to-back bytes from a transmitter up to a few percent faster or slower are
received (the tests sweep +-2 %).
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["UartTx", "UartRx", "uart_divisor"]


def uart_divisor(clk_hz, baud, *, max_error=0.01):
    """Clock cycles per bit for ``baud`` at ``clk_hz``; ValueError if the rounding error is
    above ``max_error`` (relative) or the divisor is below 4."""
    if clk_hz <= 0 or baud <= 0:
        raise ValueError(f"clk_hz and baud must be positive, not {clk_hz} and {baud}")
    divisor = round(clk_hz / baud)
    if divisor < 4:
        raise ValueError(f"{baud} baud is too fast for a {clk_hz} Hz clock (at least 4 cycles per bit)")
    error = abs(clk_hz / divisor - baud) / baud
    if error > max_error:
        raise ValueError(f"{baud} baud from {clk_hz} Hz is off by {100 * error:.2f} % "
                         f"(divisor {divisor}); at most {100 * max_error:g} % allowed")
    return divisor


def _check_divisor(divisor):
    if not isinstance(divisor, int) or divisor < 4:
        raise ValueError(f"divisor must be an integer >= 4, not {divisor!r}")


class UartTx(wiring.Component):
    """Sends each byte of ``i`` as start bit, 8 data bits (LSB first), stop bit on ``tx``
    (idle high). Back-to-back bytes follow each other without an idle gap."""

    i: In(stream.Signature(8))
    tx: Out(1, init=1)

    def __init__(self, divisor):
        _check_divisor(divisor)
        self.divisor = divisor
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        busy = Signal()
        left = Signal(range(10))          # bits still to send after the one on the line
        shreg = Signal(9)                 # data bits then the stop bit
        timer = Signal(range(self.divisor))
        bit_done = Signal()
        m.d.comb += bit_done.eq(timer == 0)

        with m.If(busy):
            m.d.sync += timer.eq(timer - 1)
            with m.If(bit_done):
                m.d.sync += timer.eq(self.divisor - 1)
                with m.If(left != 0):
                    m.d.sync += [self.tx.eq(shreg[0]), shreg.eq(shreg >> 1), left.eq(left - 1)]
                with m.Else():
                    m.d.sync += busy.eq(0)
        # ready when idle, or in the last cycle of the stop bit (no gap between bytes)
        m.d.comb += self.i.ready.eq(~busy | (bit_done & (left == 0)))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [busy.eq(1), self.tx.eq(0), shreg.eq(Cat(self.i.payload, 1)), left.eq(9),
                         timer.eq(self.divisor - 1)]
        return m


class UartRx(wiring.Component):
    """Receives bytes from ``rx`` onto ``o``. ``o`` holds a byte until it is taken; a byte
    that completes while the previous one is still held is lost and pulses ``overrun``.
    ``framing_error`` pulses for a byte whose stop bit is 0."""

    rx: In(1, init=1)
    o: Out(stream.Signature(8))
    framing_error: Out(1)
    overrun: Out(1)

    def __init__(self, divisor):
        _check_divisor(divisor)
        self.divisor = divisor
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        div = self.divisor
        rx = Signal(init=1)
        m.submodules.sync = FFSynchronizer(self.rx, rx, init=1)
        timer = Signal(range(div))
        nbit = Signal(range(9))
        shreg = Signal(8)

        with m.If(self.o.ready):
            m.d.sync += self.o.valid.eq(0)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(~rx):
                    # the synchroniser and this cycle already took 3 cycles of the start bit:
                    # check it again in its middle
                    m.d.sync += timer.eq(max(div // 2 - 3, 0))
                    m.next = "START"
            with m.State("START"):
                m.d.sync += timer.eq(timer - 1)
                with m.If(timer == 0):
                    with m.If(rx):
                        m.next = "IDLE"            # glitch, not a start bit
                    with m.Else():
                        m.d.sync += [timer.eq(div - 1), nbit.eq(0)]
                        m.next = "DATA"
            with m.State("DATA"):
                m.d.sync += timer.eq(timer - 1)
                with m.If(timer == 0):
                    m.d.sync += [timer.eq(div - 1), shreg.eq(Cat(shreg[1:], rx)), nbit.eq(nbit + 1)]
                    with m.If(nbit == 7):
                        m.next = "STOP"
            with m.State("STOP"):
                m.d.sync += timer.eq(timer - 1)
                with m.If(timer == 0):
                    with m.If(rx):
                        with m.If(self.o.valid & ~self.o.ready):
                            m.d.comb += self.overrun.eq(1)
                        with m.Else():
                            m.d.sync += [self.o.payload.eq(shreg), self.o.valid.eq(1)]
                        m.next = "IDLE"
                    with m.Else():
                        m.d.comb += self.framing_error.eq(1)
                        m.next = "BREAK"
            with m.State("BREAK"):
                with m.If(rx):
                    m.next = "IDLE"
        return m
