"""Per-stream transmit counters (frames, bytes) of a port, with a snapshot that is
consistent at one clock edge.

The live table is a small memory (one entry per stream, LUT RAM on an FPGA) counted
read-modify-write on ``count`` (one frame of ``stream``, ``frame_len`` bytes). ``snapshot``
copies the whole table to a shadow the host reads (``read_addr``/``read_data``, synchronous)
with a sweep of one entry per cycle; an entry counted during the sweep before the sweep
reached it first has its pre-count value copied (copy on write), so the shadow is the table
as it was at the snapshot edge. ``clear`` zeroes the live table at once (a valid bit per
entry).
"""

from amaranth import Module, Signal, Cat, Const, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["TxStreamCounters"]


class TxStreamCounters(wiring.Component):
    def __init__(self, n_streams=16):
        self.n_streams = n_streams
        super().__init__({
            "count": In(1), "stream": In(range(n_streams)), "frame_len": In(14),
            "clear": In(1), "snapshot": In(1),
            "read_addr": In(range(n_streams)), "read_data": Out(128),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        m.submodules.live = live = Memory(shape=128, depth=n, init=[])
        m.submodules.shadow = shadow = Memory(shape=128, depth=n, init=[])
        live_rd, sweep_rd, live_wr = live.read_port(domain="comb"), live.read_port(domain="comb"), live.write_port()
        sh_wr, host = shadow.write_port(), shadow.read_port()
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data)]
        valid = Signal(n)

        old = Signal(128)
        m.d.comb += [live_rd.addr.eq(self.stream),
                     old.eq(Mux(valid.bit_select(self.stream, 1), live_rd.data, 0))]
        with m.If(self.count):
            m.d.comb += [live_wr.addr.eq(self.stream), live_wr.en.eq(1),
                         live_wr.data.eq(Cat((old[:64] + 1)[:64], (old[64:] + self.frame_len)[:64]))]
            m.d.sync += valid.eq(valid | (Const(1, n) << self.stream))

        sweeping = Signal()
        ptr = Signal(range(n + 1))
        copied = Signal(n)
        m.d.comb += sweep_rd.addr.eq(ptr)
        cow = Signal()
        m.d.comb += cow.eq(self.count & sweeping & ~copied.bit_select(self.stream, 1))
        with m.If(cow):
            m.d.comb += [sh_wr.addr.eq(self.stream), sh_wr.data.eq(old), sh_wr.en.eq(1)]
            m.d.sync += copied.eq(copied | (Const(1, n) << self.stream))
        with m.Elif(sweeping):
            with m.If(ptr == n):
                m.d.sync += sweeping.eq(0)
            with m.Else():
                with m.If(~copied.bit_select(ptr, 1)):
                    m.d.comb += [sh_wr.addr.eq(ptr), sh_wr.en.eq(1),
                                 sh_wr.data.eq(Mux(valid.bit_select(ptr, 1), sweep_rd.data, 0))]
                m.d.sync += ptr.eq(ptr + 1)

        with m.If(self.snapshot):
            # the edge of the snapshot: a count in this very cycle is after it
            m.d.sync += [sweeping.eq(1), ptr.eq(0), copied.eq(0)]
            with m.If(self.count):
                m.d.comb += [sh_wr.addr.eq(self.stream), sh_wr.data.eq(old), sh_wr.en.eq(1)]
                m.d.sync += copied.eq(Const(1, n) << self.stream)
        with m.If(self.clear):
            m.d.sync += valid.eq(0)
        return m
