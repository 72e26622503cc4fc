"""A stream slice that registers ``ready`` (a skid buffer), for a sink whose ready comes
from far away or through many LUT levels.

The data path passes straight through while the slice is empty: no clock of latency, so a
frame leaves exactly when it would without the slice. The upstream ``ready`` is a flip-flop:
when the downstream refuses an item the upstream has already handed over, the slice keeps it
(the skid) and drops ``ready`` until the downstream has taken it. Between the tester's
generator and the LiteEth MAC this cuts the MAC's transmit ready, which reached the
generator's template block RAM read enable through five LUT levels (docs/performance.md).
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SkidBuffer"]


class SkidBuffer(wiring.Component):
    """``sink`` -> ``source`` with ``sink.ready`` registered; items in order, none lost or
    repeated; one item per clock while the downstream takes them."""

    def __init__(self, payload_shape):
        super().__init__({"sink": In(stream.Signature(payload_shape)),
                          "source": Out(stream.Signature(payload_shape))})

    def elaborate(self, platform):
        m = Module()
        held = Signal()                             # the skid holds an item
        held_p = Signal.like(self.sink.payload)
        m.d.comb += [
            self.sink.ready.eq(~held),
            self.source.valid.eq(held | self.sink.valid),
            self.source.payload.eq(Mux(held, held_p, self.sink.payload)),
        ]
        with m.If(held):
            with m.If(self.source.ready):
                m.d.sync += held.eq(0)
        with m.Elif(self.sink.valid & ~self.source.ready):
            m.d.sync += [held.eq(1), held_p.eq(self.sink.payload)]
        return m
