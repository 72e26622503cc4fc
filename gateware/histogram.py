"""Per-stream latency histograms in block RAM: ``streams`` histograms of ``bins`` counters of
``count_width`` bits.

A sample ``value`` (ns) of stream ``stream`` falls in bin ``(value - offset) >> shift`` (bin
width ``2**shift`` ns) of that stream's histogram; values below ``offset`` count in the
stream's underflow, values past the last bin in its overflow, so every sample is counted
exactly once. ``offset`` and ``shift`` are shared by all streams. The bins are one memory
of ``streams * bins`` words addressed ``stream * bins + bin``; the underflow and overflow
counters are a second, small memory addressed ``2 * stream`` (underflow) and ``2 * stream +
1`` (overflow). ``underflow`` and ``overflow`` are also kept as port totals, and ``used`` has
bit i set once stream i has had a sample, so a host reads only the histograms that hold
something.

Updates are read-modify-write over three cycles; samples come at most once per frame (64
clocks or more apart), so they never overlap. ``clear`` zeroes both memories in a ``streams
* bins``-cycle sweep (``clearing`` is high meanwhile, and samples are not counted). 40-bit
counters hold 24 hours at 1.488 Mframes/s in one bin. The host reads the bins through
``read_addr``/``read_data`` and the underflow/overflow counters through
``uo_read_addr``/``uo_read_data``, second read ports.
"""

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["Histogram", "histogram_model"]


def _power_of_two(name, value):
    if value < 1 or value & (value - 1):
        raise ValueError(f"Histogram: {name} must be a power of two, got {value}")


class Histogram(wiring.Component):
    def __init__(self, bins=1024, streams=16, count_width=40):
        _power_of_two("bins", bins)
        _power_of_two("streams", streams)
        self.bins, self.streams, self.count_width = bins, streams, count_width
        super().__init__({
            "sample": In(1), "stream": In(range(streams)), "value": In(32), "offset": In(32), "shift": In(5),
            "clear": In(1),
            "underflow": Out(64), "overflow": Out(64), "used": Out(streams), "clearing": Out(1),
            "read_addr": In(range(streams * bins)), "read_data": Out(count_width),
            "uo_read_addr": In(range(2 * streams)), "uo_read_data": Out(count_width),
        })

    def elaborate(self, platform):
        m = Module()
        width = unsigned(self.count_width)
        m.submodules.mem = mem = Memory(shape=width, depth=self.streams * self.bins, init=[])
        m.submodules.uo_mem = uo_mem = Memory(shape=width, depth=2 * self.streams, init=[])
        rd, wr, host = mem.read_port(), mem.write_port(), mem.read_port()
        uo_rd, uo_wr, uo_host = uo_mem.read_port(), uo_mem.write_port(), uo_mem.read_port()
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data),
                     uo_host.addr.eq(self.uo_read_addr), self.uo_read_data.eq(uo_host.data)]

        # stage 0: classify the sample
        above = Signal(32)
        index = Signal(32)
        m.d.comb += [above.eq(self.value - self.offset), index.eq(above >> self.shift)]
        s1, s2 = Signal(), Signal()          # a bin update is in stage 1 / 2
        u1, u2 = Signal(), Signal()          # an underflow/overflow update is in stage 1 / 2
        bin_addr = Signal(range(self.streams * self.bins))    # a bin, or 2 * stream + (0 under, 1 over)
        m.d.sync += [s1.eq(0), s2.eq(s1), u1.eq(0), u2.eq(u1)]
        with m.If(self.sample & ~self.clearing):
            m.d.sync += self.used.eq(self.used | (1 << self.stream))
            with m.If(self.value < self.offset):
                m.d.sync += [self.underflow.eq(self.underflow + 1), u1.eq(1), bin_addr.eq(Cat(0, self.stream))]
            with m.Elif(index >= self.bins):
                m.d.sync += [self.overflow.eq(self.overflow + 1), u1.eq(1), bin_addr.eq(Cat(1, self.stream))]
            with m.Else():
                m.d.sync += [s1.eq(1), bin_addr.eq(Cat(index[:(self.bins - 1).bit_length()], self.stream))]
        # stage 1: read the counter; stage 2: write it back incremented. The update's read and
        # write share one address (held from stage 0, or the clear sweep). (yosys 0.70 still
        # keeps a second copy of the block RAM for the host's read port: docs/performance.md.)
        sweep = Signal(range(self.streams * self.bins))
        addr = Signal.like(sweep)
        m.d.comb += [addr.eq(Mux(self.clearing, sweep, bin_addr)),
                     rd.addr.eq(addr), wr.addr.eq(addr), uo_rd.addr.eq(addr), uo_wr.addr.eq(addr)]
        with m.If(self.clearing):
            m.d.comb += [wr.data.eq(0), wr.en.eq(1), uo_wr.data.eq(0), uo_wr.en.eq(sweep < 2 * self.streams)]
            m.d.sync += sweep.eq(sweep + 1)
            with m.If(sweep == self.streams * self.bins - 1):
                m.d.sync += self.clearing.eq(0)
        with m.Else():
            with m.If(s2):
                m.d.comb += [wr.data.eq(rd.data + 1), wr.en.eq(1)]
            with m.If(u2):
                m.d.comb += [uo_wr.data.eq(uo_rd.data + 1), uo_wr.en.eq(1)]

        with m.If(self.clear):
            m.d.sync += [self.clearing.eq(1), sweep.eq(0), self.underflow.eq(0), self.overflow.eq(0),
                         self.used.eq(0), s1.eq(0), s2.eq(0), u1.eq(0), u2.eq(0)]
        return m


def histogram_model(samples, *, bins=1024, streams=16, offset=0, shift=0):
    """Golden model: ``samples`` is an iterable of (stream, latency ns); returns (bins, uo)
    where ``bins[s][i]`` is stream s's count in bin i and ``uo[s]`` its (underflow, overflow)."""
    counts = [[0] * bins for _ in range(streams)]
    uo = [[0, 0] for _ in range(streams)]
    for stream, value in samples:
        if value < offset:
            uo[stream][0] += 1
        elif (value - offset) >> shift >= bins:
            uo[stream][1] += 1
        else:
            counts[stream][(value - offset) >> shift] += 1
    return counts, [tuple(x) for x in uo]
