"""Uniform random integers in ``[0, span)`` for the traffic generator: xorshift32
(Marsaglia 2003; shifts 13, 17, 5) with rejection sampling, exactly as
:func:`wirespeed.gateware.streamdesc.draw`, so a golden model predicts every value.

``load`` sets the state to ``seed``. ``req`` asks for a new value for the current ``span``:
the generator steps once per cycle until the low bits (masked to the smallest power of two
above ``span - 1``) fall below ``span``; ``ready`` is then high and ``value`` holds until the
next ``req``. With ``span`` <= 1 the value is 0 and the state does not step. A draw takes
one cycle or more (two on average at worst).
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["RandomRange"]


def _xorshift32(x):
    x = x ^ (x << 13)[:32]
    x = x ^ (x >> 17)
    return x ^ (x << 5)[:32]


class RandomRange(wiring.Component):
    seed: In(32)
    load: In(1)
    span: In(32)
    req: In(1)
    value: Out(32)
    ready: Out(1)

    def elaborate(self, platform):
        m = Module()
        state = Signal(32, init=1)
        nxt = Signal(32)
        m.d.comb += nxt.eq(_xorshift32(state))

        # mask: the smallest 2**n - 1 that covers span - 1
        smear = Signal(32)
        m.d.comb += smear.eq(self.span - 1)
        for shift in (1, 2, 4, 8, 16):
            prev = smear
            smear = Signal(32)
            m.d.comb += smear.eq(prev | (prev >> shift))
        candidate = Signal(32)
        m.d.comb += candidate.eq(nxt & smear)

        drawing = Signal()
        with m.If(self.load):
            m.d.sync += [state.eq(self.seed), drawing.eq(0), self.ready.eq(0), self.value.eq(0)]
        with m.Elif(self.req):
            with m.If(self.span <= 1):
                m.d.sync += [self.value.eq(0), self.ready.eq(1), drawing.eq(0)]
            with m.Else():
                m.d.sync += [self.ready.eq(0), drawing.eq(1)]
        with m.Elif(drawing):
            m.d.sync += state.eq(nxt)
            with m.If(candidate < self.span):
                m.d.sync += [self.value.eq(candidate), self.ready.eq(1), drawing.eq(0)]
        return m
