"""Per-stream transmit counters (frames, bytes) of a port, with a snapshot that is
consistent at one clock edge.

The live table is a small memory (one entry per stream, LUT RAM on an FPGA) counted
read-modify-write on ``count`` (one frame of ``stream``, ``frame_len`` bytes). ``snapshot``
copies the whole table to a shadow the host reads (``read_addr``/``read_data``, synchronous)
with a sweep of one entry per cycle; an entry counted during the sweep before the sweep
reached it first has its pre-count value copied (copy on write), so the shadow is the table
as it was at the snapshot edge. ``clear`` zeroes the live table at once (a valid bit per
entry).

Pipeline, two stages (a LUT RAM read, a 64-bit add and a LUT RAM write do not fit in one
cycle at 125 MHz):

* *read* (the cycle of ``count``, ``snapshot``, ``clear``): the counted entry is read, or
  taken from the write stage when the count of the cycle before is writing it (forwarded),
  and registered; so is the sweep's entry. Every decision is taken here, as with a
  one-cycle read-modify-write: copy on write or sweep copy, the sweep's pointer, the
  ``copied`` and ``valid`` bits.
* *write* (the next cycle): the counted entry plus one frame and ``frame_len`` bytes goes
  back to the live table; the shadow write decided the cycle before (a count's old value or
  the sweep's entry) goes to the shadow.

Counts may come on every cycle, for any streams. The shadow is written one cycle later than
a one-cycle design would, and its host read port is transparent to that write (a read at
the write's edge returns the new value), so ``read_data`` is the same on every cycle. The
sweep's entry needs no forwarding: an entry written by the write stage was counted the cycle
before during the sweep (or in the snapshot's cycle), and so is already copied.
"""

from amaranth import Cat, Const, Module, Mux, Signal
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
        sh_wr = shadow.write_port()
        host = shadow.read_port(transparent_for=(sh_wr,))
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data)]
        valid = Signal(n)              # entry written since the last clear (else it reads 0)

        # --- write stage: registers filled by the read stage ---------------------------------
        w_en = Signal()                # a count (not dropped by a CLEAR in its cycle)
        w_stream = Signal(range(n))
        w_len = Signal(14)
        w_old = Signal(128)            # its entry before the count
        w_new = Signal(128)
        m.d.comb += w_new.eq(Cat((w_old[:64] + 1)[:64], (w_old[64:] + w_len)[:64]))
        m.d.comb += [live_wr.addr.eq(w_stream), live_wr.data.eq(w_new), live_wr.en.eq(w_en)]
        with m.If(w_en):
            m.d.sync += valid.eq(valid | (Const(1, n) << w_stream))
        sh_en = Signal()               # the shadow write: of w_old (a count's old value) at
        sh_count = Signal()            # w_stream, else of the sweep's entry at sh_ptr (sh_sweep,
        sh_ptr = Signal(range(n))      # or 0 if not sh_valid)
        sh_sweep = Signal(128)
        sh_valid = Signal()
        m.d.comb += [sh_wr.en.eq(sh_en), sh_wr.addr.eq(Mux(sh_count, w_stream, sh_ptr)),
                     sh_wr.data.eq(Mux(sh_count, w_old, Mux(sh_valid, sh_sweep, 0)))]

        # --- read stage ------------------------------------------------------------------------
        # the counted entry as the table holds it now: the memory has the write stage's value
        # only after this edge (forwarded)
        fwd = Signal()
        old = Signal(128)
        m.d.comb += [live_rd.addr.eq(self.stream),
                     fwd.eq(w_en & (w_stream == self.stream)),
                     old.eq(Mux(fwd, w_new, Mux(valid.bit_select(self.stream, 1), live_rd.data, 0)))]
        m.d.sync += [w_en.eq(self.count & ~self.clear), w_stream.eq(self.stream), w_len.eq(self.frame_len),
                     w_old.eq(old)]

        # snapshot sweep and copy on write: one shadow write a cycle, a count's first copy
        # first (the sweep waits)
        sweeping = Signal()
        ptr = Signal(range(n + 1))
        copied = Signal(n)
        m.d.comb += sweep_rd.addr.eq(ptr)
        m.d.sync += [sh_ptr.eq(ptr), sh_sweep.eq(sweep_rd.data), sh_valid.eq(valid.bit_select(ptr, 1))]
        cow = Signal()                 # a count's first during the sweep: copy its old value
        m.d.comb += cow.eq(self.count & sweeping & ~copied.bit_select(self.stream, 1))
        m.d.sync += [sh_en.eq(0), sh_count.eq(cow)]
        with m.If(cow):
            m.d.sync += [sh_en.eq(1), copied.eq(copied | (Const(1, n) << self.stream))]
        with m.Elif(sweeping):
            with m.If(ptr == n):
                m.d.sync += sweeping.eq(0)
            with m.Else():
                m.d.sync += [sh_en.eq(~copied.bit_select(ptr, 1)), ptr.eq(ptr + 1)]

        with m.If(self.snapshot):
            # the edge of the snapshot: a count in this very cycle is after it
            m.d.sync += [sweeping.eq(1), ptr.eq(0), copied.eq(0)]
            with m.If(self.count):
                m.d.sync += [sh_en.eq(1), sh_count.eq(1), copied.eq(Const(1, n) << self.stream)]
        with m.If(self.clear):
            m.d.sync += valid.eq(0)
        return m
