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

Pipeline (125 MHz on ECP5), one clock each: the sample and ``value - offset`` are
registered (0); its bin index and whether it is past the last bin (1); the port totals and
the address of its counter (2, so ``underflow``, ``overflow`` and ``used`` count it 3 clocks
after it is presented); then the counter is read (3), what was read is registered (4: a
block RAM read without its output register takes most of a clock) and written back
incremented (5). An update's read and write share one address, so samples must be 3 clocks
apart or more; they come at most once per frame (64 clocks or more apart). ``clear`` drops
the samples in the pipeline and zeroes both memories in a ``streams * bins``-cycle sweep
(``clearing`` is high meanwhile, and samples are not counted). 40-bit counters hold 24 hours
at 1.488 Mframes/s in one bin. The host reads the bins through ``read_addr``/``read_data``
and the underflow/overflow counters through ``uo_read_addr``/``uo_read_data``, second read
ports, one clock after the address, unregistered (a block RAM's output, through the write
bypass yosys adds: the reader registers it); a counter read on the clock it is written reads
its new value.
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
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
        # Every read port is transparent to its memory's write port (a counter read on the clock
        # it is written reads the new value): yosys 0.70 then maps the update's read and write
        # to one block RAM port (write-through) and the host's read to the other, one copy of
        # the memory; read-old-data ports cost it a second copy for the host and a bypass
        # multiplexer after the update's read.
        wr, uo_wr = mem.write_port(), uo_mem.write_port()
        rd, host = mem.read_port(transparent_for=(wr,)), mem.read_port(transparent_for=(wr,))
        uo_rd, uo_host = uo_mem.read_port(transparent_for=(uo_wr,)), uo_mem.read_port(transparent_for=(uo_wr,))
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data),
                     uo_host.addr.eq(self.uo_read_addr), self.uo_read_data.eq(uo_host.data)]

        # stage 0: the sample and its distance above the first bin, registered (value < offset
        # is the subtraction's borrow)
        t_valid, t_under = Signal(), Signal()
        t_stream = Signal(range(self.streams))
        t_above = Signal(32)
        m.d.sync += [t_valid.eq(self.sample & ~self.clearing), t_stream.eq(self.stream),
                     Cat(t_above, t_under).eq(self.value - self.offset)]
        # stage 1: classify it, registered: its bin index, and ``k_over`` when that is past the
        # last one, i.e. when a bit of the distance at ``log2(bins) + shift`` or above is set
        # (a mask from ``shift`` instead of a comparison after the shifter)
        bin_bits = (self.bins - 1).bit_length()
        index = Signal(32)
        above_mask = Signal(32)
        m.d.comb += index.eq(t_above >> self.shift)
        # the mask is the configuration's (static during a trial), registered: its own logic
        # is no part of the classify's clock
        m.d.sync += above_mask.eq(Cat(Const(0, bin_bits), Const(-1, 32) << self.shift))
        k_valid, k_under, k_over = Signal(), Signal(), Signal()
        k_stream = Signal(range(self.streams))
        k_index = Signal(bin_bits)
        m.d.sync += [k_valid.eq(t_valid), k_under.eq(t_under), k_over.eq((t_above & above_mask).any()),
                     k_stream.eq(t_stream), k_index.eq(index[:bin_bits])]
        # stage 2: count it in the port totals, and the address of its counter
        s1, s2, s3 = Signal(), Signal(), Signal()    # a bin update is in stage 3 / 4 / 5
        u1, u2, u3 = Signal(), Signal(), Signal()    # an underflow/overflow update is in stage 3 / 4 / 5
        bin_addr = Signal(range(self.streams * self.bins))    # a bin, or 2 * stream + (0 under, 1 over)
        m.d.sync += [s1.eq(0), s2.eq(s1), s3.eq(s2), u1.eq(0), u2.eq(u1), u3.eq(u2)]
        with m.If(k_valid):
            m.d.sync += self.used.eq(self.used | (1 << k_stream))
            with m.If(k_under):
                m.d.sync += [self.underflow.eq(self.underflow + 1), u1.eq(1), bin_addr.eq(Cat(0, k_stream))]
            with m.Elif(k_over):
                m.d.sync += [self.overflow.eq(self.overflow + 1), u1.eq(1), bin_addr.eq(Cat(1, k_stream))]
            with m.Else():
                m.d.sync += [s1.eq(1), bin_addr.eq(Cat(k_index, k_stream))]
        # stage 3: read the counter; stage 4: register what was read (a block RAM read without
        # its output register takes most of a clock); stage 5: write it back incremented. The
        # update's read and write share one address (held from stage 2, or the clear sweep), so
        # samples must be 3 clocks apart or more.
        rd_q, uo_rd_q = Signal(width), Signal(width)
        m.d.sync += [rd_q.eq(rd.data), uo_rd_q.eq(uo_rd.data)]
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
            with m.If(s3):
                m.d.comb += [wr.data.eq(rd_q + 1), wr.en.eq(1)]
            with m.If(u3):
                m.d.comb += [uo_wr.data.eq(uo_rd_q + 1), uo_wr.en.eq(1)]

        with m.If(self.clear):
            m.d.sync += [self.clearing.eq(1), sweep.eq(0), self.underflow.eq(0), self.overflow.eq(0),
                         self.used.eq(0), t_valid.eq(0), k_valid.eq(0), s1.eq(0), s2.eq(0), s3.eq(0),
                         u1.eq(0), u2.eq(0), u3.eq(0)]
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
