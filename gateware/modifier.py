"""One field modifier unit of the traffic generator (semantics in
:mod:`wirespeed.gateware.streamdesc`): a 32-bit value that walks a range per frame of one
stream, incrementing, decrementing or drawn at random, and may be chained under the unit
before it for nested walks (100 sources x 20 destinations).

The generator presents each frame it prepares on ``frame_stream`` with a one-cycle
``frame`` strobe. ``applies`` says the unit writes into that frame; ``value`` is what it
writes (read it before the strobe's edge: the unit advances on it). ``wrap_out`` (the unit
advances and returns to its first value on this frame; always, for random) feeds the next
unit's ``chain_in``. ``busy`` is high while a random unit has not drawn its next value yet;
the generator waits for it before the strobe. ``clear`` restarts the walk at ``base``.
"""

from amaranth import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .prng import RandomRange
from .streamdesc import MOD_DECREMENT, MOD_INCREMENT, MOD_OFF, MOD_RANDOM

__all__ = ["Modifier"]


class Modifier(wiring.Component):
    mode: In(2)
    stream: In(4)
    chain: In(1)
    base: In(32)
    step: In(32)
    count: In(32)
    seed: In(32)
    clear: In(1)

    frame: In(1)
    frame_stream: In(4)
    chain_in: In(1)

    applies: Out(1)
    value: Out(32)
    wrap_out: Out(1)
    busy: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.submodules.rng = rng = RandomRange()
        idx = Signal(32)
        random = Signal()
        m.d.comb += random.eq(self.mode == MOD_RANDOM)

        wraps = Signal()
        m.d.comb += wraps.eq(random | (idx + 1 >= self.count))
        advancing = Signal()
        m.d.comb += [
            self.applies.eq((self.mode != MOD_OFF) & (self.stream == self.frame_stream)),
            advancing.eq(self.applies & (~self.chain | self.chain_in)),
            self.wrap_out.eq(advancing & wraps),
            self.busy.eq(random & ~rng.ready),
            rng.seed.eq(self.seed), rng.span.eq(self.count),
        ]

        # random: base + r * step, step a power of two: shift r by the step's lowest set bit
        shamt = Signal(5)
        for bit in reversed(range(32)):
            with m.If(self.step[bit]):
                m.d.comb += shamt.eq(bit)
        drawn = Signal(32)
        m.d.comb += drawn.eq(self.base + (rng.value << shamt)[:32])

        with m.If(self.frame & advancing):
            with m.Switch(self.mode):
                with m.Case(MOD_INCREMENT):
                    m.d.sync += [self.value.eq(Mux(wraps, self.base, self.value + self.step)),
                                 idx.eq(Mux(wraps, 0, idx + 1))]
                with m.Case(MOD_DECREMENT):
                    m.d.sync += [self.value.eq(Mux(wraps, self.base, self.value - self.step)),
                                 idx.eq(Mux(wraps, 0, idx + 1))]
                with m.Case(MOD_RANDOM):
                    m.d.sync += self.value.eq(drawn)
                    m.d.comb += rng.req.eq(1)

        # after clear: restart at base, reseed, and draw the first random value
        first_draw = Signal()
        m.d.sync += first_draw.eq(self.clear)
        with m.If(first_draw & random):
            m.d.comb += rng.req.eq(1)
        with m.If(self.clear):
            m.d.sync += [self.value.eq(self.base), idx.eq(0)]
            m.d.comb += rng.load.eq(1)
        return m
