"""One field modifier unit of the traffic generator (semantics in
:mod:`wirespeed.gateware.streamdesc`): a 32-bit value that walks a range per frame of one
stream, incrementing, decrementing or drawn at random, and may be chained under the unit
before it for nested walks (100 sources x 20 destinations).

The generator presents each frame it prepares on ``frame_stream`` (steady from the cycle
before) with a one-cycle ``frame`` strobe. ``applies`` (registered from ``frame_stream``)
says the unit writes into that frame; ``value`` is what it writes (read it before the
strobe's edge: the unit advances on it). ``wrap_out`` (the unit advances and returns to its
first value on this frame; always, for random) feeds the next unit's ``chain_in``. ``busy``
is high while a random unit has not drawn its next value yet (from the cycle after its
strobe); the generator waits for it before the strobe. ``clear`` restarts the walk at
``base``.

Timing (125 MHz on an ECP5): whether the unit wraps on its next advance is a register
(kept for the next idx when it advances, from a registered copy of the count register: a
count written by the host is seen a cycle later), so the chain
of units and a strobe start from registers; a random unit requests its next draw the cycle
after the strobe, and the value goes through two registered stages after the draw (shift,
add to ``base``), which ``busy`` covers. Strobes of an incrementing or decrementing unit
may come every cycle.
"""

from amaranth import Cat, Module, Mux, Signal
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

        # idx + 1 >= count, registered: the count register is copied (count_d), so a count the
        # host writes is seen a cycle later and the chain of units starts from registers; when
        # the unit advances the flag is that of its next idx (0: count <= 1, or idx + 1:
        # idx + 2 >= count), else it follows idx and count (count 0 wraps always)
        count_d = Signal(32)
        m.d.sync += count_d.eq(self.count)
        idx_wraps = Signal()
        wraps = Signal()
        m.d.comb += wraps.eq(random | idx_wraps)
        advancing = Signal()
        # a random value: requested the cycle after the strobe, ready (rng), shifted (+1 cycle),
        # added to base (+2): busy from the strobe until then
        settled = Signal(2)
        draw = Signal()               # a random unit advances: the next draw is requested next cycle
        draw_req = Signal()
        m.d.comb += [
            advancing.eq(self.applies & (~self.chain | self.chain_in)),
            self.wrap_out.eq(advancing & wraps),
            self.busy.eq(random & (~settled[1] | draw_req)),
            rng.seed.eq(self.seed), rng.span.eq(self.count),
            draw.eq(self.frame & advancing & random),
        ]
        # applies, registered: frame_stream is steady the cycle before the strobe
        m.d.sync += self.applies.eq((self.mode != MOD_OFF) & (self.stream == self.frame_stream))
        m.d.sync += [draw_req.eq(draw),
                     settled.eq(Cat(rng.ready, settled[0]) & ~rng.req.replicate(2))]

        # random: base + r * step, step a power of two: shift r by the step's lowest set bit.
        # Two registered stages find its index (step & -step, then the index) and two more
        # make the value (shifted, added to base); they load only in random mode and settle
        # within four cycles of the mode's write, long before the clear and first draw.
        low_bit = Signal(32)
        shamt = Signal(5)
        shifted = Signal(32)
        drawn = Signal(32)
        with m.If(random):
            m.d.sync += low_bit.eq(self.step & -self.step)
            m.d.sync += shamt.eq(Cat(Cat(low_bit[i] for i in range(32) if i >> k & 1).any() for k in range(5)))
            m.d.sync += [shifted.eq((rng.value << shamt)[:32]), drawn.eq(self.base + shifted)]

        with m.If(self.frame & advancing):
            m.d.sync += idx_wraps.eq(Mux(idx_wraps, count_d <= 1, idx + 2 >= count_d))
        with m.Else():
            m.d.sync += idx_wraps.eq(idx + 1 >= count_d)
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

        # after clear: restart at base, reseed, and draw the first random value
        first_draw = Signal()
        m.d.sync += first_draw.eq(self.clear)
        m.d.comb += rng.req.eq(draw_req | (first_draw & random))
        with m.If(self.clear):
            m.d.sync += [self.value.eq(self.base), idx.eq(0), settled.eq(0), idx_wraps.eq(count_d <= 1)]
            m.d.comb += rng.load.eq(1)
        return m
