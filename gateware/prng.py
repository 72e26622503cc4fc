"""Uniform random integers in ``[0, span)`` for the traffic generator: xorshift32
(Marsaglia 2003; shifts 13, 17, 5) with rejection sampling, exactly as
:func:`wirespeed.gateware.streamdesc.draw`, so a golden model predicts every value.

``load`` sets the state to ``seed``. ``req`` asks for a new value for the current ``span``:
the generator steps once per cycle until the low bits (masked to the smallest power of two
above ``span - 1``) fall below ``span``; ``ready`` is then high and ``value`` holds until the
next ``req`` (while ``ready`` is low it shows the draw's rejected candidates). With ``span``
<= 1 the value is 0 and the state does not step. A draw takes one cycle or more (two on
average at worst). ``span`` must hold from ``req`` until ``ready``.

Timing (125 MHz on an ECP5): the next state (``xorshift32(state)``) is kept a step ahead in a
register, and the mask is registered from ``span`` with ``req`` (one carry chain and five OR
stages), so a drawing cycle is one AND, one 32-bit compare and the enables of ``ready`` and
``drawing``.
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["RandomRange"]


def _xorshift32(x):
    x = x ^ (x << 13)[:32]
    x = x ^ (x >> 17)
    return x ^ (x << 5)[:32]


def _xorshift32_int(x):
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    return x ^ ((x << 5) & 0xFFFFFFFF)


def _smear_right(x):
    """Every bit of ``x`` ORed into all the bits below it: bit i is the OR of bits i and up."""
    for k in (1, 2, 4, 8, 16):
        x = x | (x >> k)
    return x


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
        nxt = Signal(32, init=_xorshift32_int(1))    # xorshift32(state) whenever a draw steps

        # mask: the smallest 2**n - 1 that covers span - 1 (0 for span 0), registered. A
        # cycle-based simulator computes a smear of span - 1 almost wholly under req; a
        # bit-reversed span, a term it keeps apart, would cost it 32 shifts on every clock.
        span = self.span
        span_m1 = Signal(33)
        m.d.comb += span_m1.eq(span - 1)
        mask = Signal(32)
        # span holds from req until ready: the mask registered at req is the draw's
        with m.If(self.req):
            m.d.sync += mask.eq(_smear_right(span_m1[:32]) & ~span_m1[32].replicate(32))
        candidate = Signal(32)
        m.d.comb += candidate.eq(nxt & mask)

        drawing = Signal()
        stepping = Signal()
        with m.If(self.load):
            m.d.sync += [state.eq(self.seed), drawing.eq(0), self.ready.eq(0), self.value.eq(0)]
        with m.Elif(self.req):
            # value 0 whatever the span (span <= 1 then only sets ready and drawing)
            m.d.sync += self.value.eq(0)
            with m.If(self.span <= 1):
                m.d.sync += [self.ready.eq(1), drawing.eq(0)]
            with m.Else():
                m.d.sync += [self.ready.eq(0), drawing.eq(1)]
        with m.Elif(drawing):
            # every candidate is loaded (the compare then reaches only ready and drawing)
            m.d.comb += stepping.eq(1)
            m.d.sync += [state.eq(nxt), nxt.eq(_xorshift32(nxt)), self.value.eq(candidate)]
            with m.If(candidate < self.span):
                m.d.sync += [self.ready.eq(1), drawing.eq(0)]
        # nxt == xorshift32(state) on every cycle but the one after a load, and it is
        # recomputed only then: a draw starts the cycle after req (or later) and neither req
        # nor load steps, so a drawing cycle always uses a fresh nxt
        loaded = Signal()
        m.d.sync += loaded.eq(self.load)
        with m.If(loaded & ~stepping):
            m.d.sync += nxt.eq(_xorshift32(state))
        return m
