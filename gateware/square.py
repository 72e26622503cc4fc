"""The square of an unsigned number, worked out serially: two bits per clock, most
significant first (``p = 4 * p + digit * x``, with ``3x`` worked out at the load).

A ``start`` while idle loads ``x``; ``p`` holds the square :data:`SQUARE_CLOCKS` clocks
later, when ``done`` is high for one clock, and keeps it until the next load. A ``start``
while ``busy`` is ignored (the user keeps it waiting). ``clear`` abandons a square.

Why serial: the ECP5's DSP multipliers do a 32x32 square in one clock, but their 3.9 ns with
the routing to and from their fixed sites (2.2-2.6 ns each way on the 25F, even with a
register stage of their own on each side) did not fit 8 ns. This is a 34-bit adder and a
few registers, placed anywhere.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SerialSquare"]


class SerialSquare(wiring.Component):
    def __init__(self, width=32):
        if width < 2 or width % 2:
            raise ValueError(f"SerialSquare: width must be an even number from 2, got {width}")
        self.width = width
        #: clocks from the ``start`` clock to the one ``done`` is high on
        self.latency = width // 2 + 1
        super().__init__({
            "start": In(1), "x": In(width), "clear": In(1),
            "p": Out(2 * width), "done": Out(1), "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w = self.width
        x, bits, x3 = Signal(w), Signal(w), Signal(w + 2)
        left = Signal(range(w // 2 + 1))                  # digits still to do
        first = Signal()                                  # the first digit: p starts from 0
        m.d.comb += self.busy.eq(left != 0)
        m.d.sync += self.done.eq(0)
        # (p is not reset at the load: a reset there is a control path from start and busy
        # to all of p's flip-flops)
        with m.If(self.clear):
            m.d.sync += left.eq(0)
        with m.Elif(self.busy):
            digit = bits[-2:]
            addend = Mux(digit[1], Mux(digit[0], x3, x << 1), Mux(digit[0], x, 0))
            m.d.sync += [self.p.eq(Mux(first, 0, self.p << 2) + addend), bits.eq(bits << 2),
                         left.eq(left - 1), self.done.eq(left == 1), first.eq(0)]
        with m.Elif(self.start):
            m.d.sync += [x.eq(self.x), bits.eq(self.x), x3.eq(self.x + (self.x << 1)),
                         left.eq(w // 2), first.eq(1)]
        return m
