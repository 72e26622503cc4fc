"""Free-running nanosecond timebase: every timestamp of the tester comes from here."""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from .config import CLK_HZ

__all__ = ["Timebase"]


class Timebase(wiring.Component):
    """``now`` counts nanoseconds since reset, advancing ``ns_per_cycle`` every clock
    (8 at 125 MHz). 64 bits do not wrap in 584 years."""

    now: Out(64)

    def __init__(self, clk_hz=CLK_HZ):
        if 1_000_000_000 % clk_hz:
            raise ValueError(f"Timebase: clk_hz must divide 1e9 exactly, got {clk_hz}")
        self.ns_per_cycle = 1_000_000_000 // clk_hz
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.now.eq(self.now + self.ns_per_cycle)
        return m
