"""Latency histogram in block RAM: ``bins`` counters of ``count_width`` bits.

A sample ``value`` (ns) falls in bin ``(value - offset) >> shift`` (bin width ``2**shift``
ns); values below ``offset`` count as ``underflow``, values past the last bin as
``overflow``, so every sample is counted exactly once. Updates are read-modify-write over
three cycles; samples come at most once per frame (64 clocks or more apart), so they never
overlap. ``clear`` zeroes the memory in a ``bins``-cycle sweep (``clearing`` is high
meanwhile, and samples are not counted). 40-bit counters hold 24 hours at 1.488 Mframes/s.
The host reads the bins through ``read_addr``/``read_data``, a second read port.
"""

from amaranth import Module, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["Histogram"]


class Histogram(wiring.Component):
    def __init__(self, bins=1024, count_width=40):
        if bins & (bins - 1):
            raise ValueError(f"Histogram: bins must be a power of two, got {bins}")
        self.bins, self.count_width = bins, count_width
        super().__init__({
            "sample": In(1), "value": In(32), "offset": In(32), "shift": In(5), "clear": In(1),
            "underflow": Out(64), "overflow": Out(64), "clearing": Out(1),
            "read_addr": In(range(bins)), "read_data": Out(count_width),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=unsigned(self.count_width), depth=self.bins, init=[])
        rd = mem.read_port()
        wr = mem.write_port()
        host = mem.read_port()
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data)]

        # stage 0: classify the sample
        above = Signal(32)
        m.d.comb += above.eq(self.value - self.offset)
        index = Signal(32)
        m.d.comb += index.eq(above >> self.shift)
        s1, s2 = Signal(), Signal()
        bin_ = Signal(range(self.bins))
        m.d.sync += [s1.eq(0), s2.eq(s1)]
        with m.If(self.sample & ~self.clearing):
            with m.If(self.value < self.offset):
                m.d.sync += self.underflow.eq(self.underflow + 1)
            with m.Elif(index >= self.bins):
                m.d.sync += self.overflow.eq(self.overflow + 1)
            with m.Else():
                m.d.sync += [s1.eq(1), bin_.eq(index)]
        # stage 1: read the bin; stage 2: write it back incremented
        m.d.comb += rd.addr.eq(bin_)
        sweep = Signal(range(self.bins))
        with m.If(self.clearing):
            m.d.comb += [wr.addr.eq(sweep), wr.data.eq(0), wr.en.eq(1)]
            m.d.sync += sweep.eq(sweep + 1)
            with m.If(sweep == self.bins - 1):
                m.d.sync += self.clearing.eq(0)
        with m.Elif(s2):
            m.d.comb += [wr.addr.eq(bin_), wr.data.eq(rd.data + 1), wr.en.eq(1)]

        with m.If(self.clear):
            m.d.sync += [self.clearing.eq(1), sweep.eq(0), self.underflow.eq(0), self.overflow.eq(0),
                         s1.eq(0), s2.eq(0)]
        return m
