"""Per-stream receive statistics, fed by the analyzer's per-frame events
(:class:`wirespeed.gateware.analyzer.Analyzer` ``ev_*``).

A test frame with stream id ``sid`` belongs to table entry ``sid & (n_streams - 1)`` when
``sid >> log2(n_streams)`` equals ``stream_group``; any other test frame counts in
``foreign_frames`` and touches no entry. Each entry holds :data:`STATS_FIELDS`: frames and
bytes (FCS included) with a good FCS, FCS errors, the sequence counters below, the first and
last receive timestamps, latency (RFC 1242 3.8, as the analyzer's ``lat_def`` selects) min,
max, sum, sum of squares and jitter (RFC 4689 3.2.5: sum of |latency - previous latency of
the stream|), the next expected sequence number and the last latency.

Sequence (RFC 4689 3.3 terms; good-FCS frames only). ``e`` is the stream's next expected
number (0 after CLEAR); ``s - e`` is taken as a signed 32-bit difference (RFC 1982 serial
number arithmetic), so streams run across the 2**32 wrap:

* ``s == e``: in order; ``e = s + 1``;
* ``s > e``: the ``s - e`` skipped numbers count as lost; ``e = s + 1``;
* ``e - window <= s < e``: a duplicate if ``s`` was received already (the history bitmap
  remembers the ``window`` numbers below ``e``), else out of order, and no longer lost;
* ``s < e - window``: late (too old to tell; stays counted as lost).

After CLEAR the window below 0 counts as received, so a frame sent before CLEAR counts as a
duplicate or late, never as negative loss.

Loss events: for every accepted good-FCS frame with ``s > e`` (frames lost just before it),
``loss_valid`` is high for one clock :data:`LOSS_LATENCY` clocks after its event was presented
on ``ev_*``, with ``loss_skip`` = ``s - e`` (the numbers it skipped); duplicates, reordered and
late frames never raise it (for :mod:`wirespeed.gateware.gaps`).

Storage: the live table is one memory of ``n_streams`` entries (LUT RAM on ECP5), updated
read-modify-write over three clocks per event (read, compute, write); events must be
:data:`MIN_EVENT_SPACING` clocks apart or more (a test frame takes 16 clocks or more).

Snapshot: ``snapshot`` captures every entry and ``foreign_frames`` (into
``foreign_frames_snap``) as of that clock: every event presented on an earlier clock is in
it, none presented on that clock or later, as the analyzer's port counters. The entries go
to a shadow table the host reads through ``read_addr``/``read_data`` (synchronous: data the
clock after the address). A sweep copies one entry per clock when no event is being
processed; an event that updates an entry the sweep has not copied yet first copies its old
value (copy on write), and one already in the pipeline at the snapshot lets the sweep copy
the entry after its write. ``copying`` is high until the shadow is complete.

Clear: ``clear`` empties the live table and ``foreign_frames``, as if at once: events from
that clock until ``clearing`` falls are dropped; the sweep (``n_streams`` clocks, after any
event in the pipeline) copies on write for a snapshot taken before or with the clear, and a
snapshot taken during the sweep captures the empty table.

Widths: as the analyzer's: in 24 hours at 1.488 Mframes/s (1.3e11 frames < 2**37) no
64-bit counter wraps, the 64-bit sums hold a mean latency up to 143 ms and the 96-bit sum of
squares an RMS latency up to 0.78 s (docs/analyzer.md).
"""

from amaranth import Module, Signal, Const, Mux, signed
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .regmap import unpack_fields

__all__ = ["StreamStats", "STATS_FIELDS", "ENTRY_BITS", "LAT_MIN_INIT", "MIN_EVENT_SPACING", "LOSS_LATENCY",
           "empty_entry", "unpack_entry"]

#: (name, bits) of a table entry as the host reads it, least significant first.
STATS_FIELDS = [
    ("rx_frames", 64),
    ("rx_bytes", 64),
    ("fcs_errors", 64),
    ("in_order", 64),
    ("lost", 64),
    ("duplicate", 64),
    ("out_of_order", 64),
    ("late", 64),
    ("first_rx_ns", 64),
    ("last_rx_ns", 64),
    ("lat_min", 32),
    ("lat_max", 32),
    ("lat_sum", 64),
    ("lat_sq_sum", 96),
    ("jitter_sum", 64),
    ("next_seq", 32),
    ("last_lat", 32),
]
ENTRY_BITS = sum(bits for _, bits in STATS_FIELDS)
assert ENTRY_BITS <= 1024
LAT_MIN_INIT = (1 << 32) - 1
#: clocks from one event to the next, at least: read, compute, write, and one for the sweeps
MIN_EVENT_SPACING = 4
#: clocks from an event on ``ev_*`` to its ``loss_valid`` pulse
LOSS_LATENCY = 2
SEQ_BITS = 32


def empty_entry() -> dict[str, int]:
    """An entry after CLEAR: all zero but ``lat_min``."""
    return {name: LAT_MIN_INIT if name == "lat_min" else 0 for name, _ in STATS_FIELDS}


def unpack_entry(value: int) -> dict[str, int]:
    """The fields of one ``read_data`` value."""
    return unpack_fields(STATS_FIELDS, value)


class StreamStats(wiring.Component):
    def __init__(self, n_streams=16, window=32):
        if n_streams < 2 or n_streams > 1 << 16 or n_streams & (n_streams - 1):
            raise ValueError(f"StreamStats: n_streams must be a power of two from 2 to 65536, got {n_streams}")
        if not 1 <= window <= 1024:
            raise ValueError(f"StreamStats: window must be 1..1024, got {window}")
        self.n_streams, self.window = n_streams, window
        self._index_bits = (n_streams - 1).bit_length()
        super().__init__({
            "ev_valid": In(1), "ev_fcs_err": In(1), "ev_sid": In(16), "ev_seq": In(SEQ_BITS),
            "ev_latency": In(32), "ev_rx_ns": In(64), "ev_bytes": In(16),
            "stream_group": In(16 - self._index_bits),
            "clear": In(1), "snapshot": In(1),
            "read_addr": In(range(n_streams)), "read_data": Out(ENTRY_BITS),
            "foreign_frames": Out(64), "foreign_frames_snap": Out(64),
            "seq_errors": Out(64), "seq_errors_snap": Out(64),
            "clearing": Out(1), "copying": Out(1),
            "loss_valid": Out(1), "loss_skip": Out(SEQ_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        n, window = self.n_streams, self.window
        stats = data.StructLayout(dict(STATS_FIELDS))
        live_layout = data.StructLayout({**dict(STATS_FIELDS), "history": window})
        empty = empty_entry()
        # after CLEAR the window counts as received: only numbers skipped later are lost
        empty_live = live_layout.const({**empty, "history": (1 << window) - 1})
        m.submodules.live = live = Memory(shape=live_layout, depth=n, init=[empty_live] * n)
        m.submodules.shadow = shadow = Memory(shape=stats, depth=n, init=[empty] * n)
        rd, wr = live.read_port(), live.write_port()
        sw, host = shadow.write_port(), shadow.read_port()
        m.d.comb += [host.addr.eq(self.read_addr), self.read_data.eq(host.data)]
        r = rd.data

        # Stage 0: an event of this group is accepted and its entry read.
        accept = Signal()
        foreign = Signal()
        m.d.comb += foreign.eq(self.ev_sid[self._index_bits:] != self.stream_group)
        with m.If(self.ev_valid & ~self.clear & ~self.clearing):
            with m.If(foreign):
                m.d.sync += self.foreign_frames.eq(self.foreign_frames + 1)
            with m.Else():
                m.d.comb += accept.eq(1)
        p1_valid, p1_err = Signal(), Signal()
        p1_entry = Signal(range(n))
        p1_seq, p1_lat, p1_rx, p1_bytes = Signal(SEQ_BITS), Signal(32), Signal(64), Signal(16)
        m.d.sync += p1_valid.eq(accept)
        with m.If(accept):
            m.d.sync += [p1_err.eq(self.ev_fcs_err), p1_entry.eq(self.ev_sid[:self._index_bits]),
                         p1_seq.eq(self.ev_seq), p1_lat.eq(self.ev_latency), p1_rx.eq(self.ev_rx_ns),
                         p1_bytes.eq(self.ev_bytes)]

        # Stage 1: classify the sequence number against the entry (held on the read port).
        diff = Signal(SEQ_BITS)
        m.d.comb += diff.eq(p1_seq - r.next_seq)
        ahead = Signal()
        m.d.comb += ahead.eq(~diff[-1])
        back = Signal(SEQ_BITS)                        # e - s when behind
        m.d.comb += back.eq(-diff)
        in_window = Signal()
        m.d.comb += in_window.eq(~ahead & (back <= window))
        bit_index = Signal(range(window))              # history bit of s: e - 1 - s
        m.d.comb += bit_index.eq(back - 1)
        seen = Signal()
        m.d.comb += seen.eq(r.history.bit_select(bit_index, 1))
        shift = Signal(range(window + 1))              # history shift when ahead: s - e + 1
        m.d.comb += shift.eq(Mux(diff >= window, window, diff + 1))

        p2_valid = Signal()
        m.d.sync += p2_valid.eq(p1_valid)
        # port-level sequence errors: good frames of this group whose number is not the one
        # their stream expects (counted at stage 1; a snapshot adds the one at stage 1 now,
        # presented on an earlier clock)
        out_of_seq = Signal()
        m.d.comb += out_of_seq.eq(p1_valid & ~p1_err & (diff != 0))
        with m.If(out_of_seq):
            m.d.sync += self.seq_errors.eq(self.seq_errors + 1)
        # loss event: a good frame ahead of the expected number (registered, LOSS_LATENCY)
        m.d.sync += [self.loss_valid.eq(out_of_seq & ahead), self.loss_skip.eq(diff)]
        in_order, duplicate, reordered, late = (Signal(name=f"p2_{k}") for k in
                                                ("in_order", "duplicate", "reordered", "late"))
        lost_delta = Signal(signed(SEQ_BITS))
        next_seq = Signal(SEQ_BITS)
        history = Signal(window)
        first, lt_min, gt_max = Signal(), Signal(), Signal()
        jitter = Signal(32)
        square = Signal(64)
        with m.If(p1_valid):
            m.d.sync += [
                in_order.eq(diff == 0),
                duplicate.eq(in_window & seen), reordered.eq(in_window & ~seen),
                late.eq(~ahead & ~in_window),
                lost_delta.eq(Mux(ahead, diff, Mux(in_window & ~seen, -1, 0))),
                next_seq.eq(Mux(ahead, p1_seq + 1, r.next_seq)),
                first.eq(r.rx_frames == 0),
                lt_min.eq(p1_lat < r.lat_min), gt_max.eq(p1_lat > r.lat_max),
                jitter.eq(Mux(p1_lat >= r.last_lat, p1_lat - r.last_lat, r.last_lat - p1_lat)),
                square.eq(p1_lat * p1_lat),
            ]
            with m.If(ahead):
                m.d.sync += history.eq((r.history << shift)[:window] | 1)
            with m.Elif(in_window):
                m.d.sync += history.eq(r.history | (Const(1, window) << bit_index)[:window])
            with m.Else():
                m.d.sync += history.eq(r.history)

        # Sweeps: the clear sweep, and the snapshot sweep with its copy on write. Neither uses
        # the live read port while an event is in the pipeline (busy).
        busy = Signal()
        m.d.comb += busy.eq(accept | p1_valid | p2_valid)
        clear_ptr = Signal(range(n))
        clear_go = Signal()
        m.d.comb += clear_go.eq(self.clearing & ~p1_valid & ~p2_valid)
        sweeping = Signal()
        sweep_ptr = Signal(range(n))
        sweep_go = Signal()
        m.d.comb += sweep_go.eq(sweeping & ~busy & ~self.snapshot & ~self.clear & ~self.clearing)
        copied = Signal(n)                             # entries whose shadow is final
        new_copied = Signal(n)
        m.d.comb += new_copied.eq(Mux(self.snapshot, 0, copied))
        m.d.sync += copied.eq(new_copied)
        # an event written at the snapshot clock or the next was accepted before it: its write
        # belongs in the snapshot, and the sweep copies the entry once the write is done
        snapshot_d1 = Signal()
        m.d.sync += snapshot_d1.eq(self.snapshot)
        pre_snapshot = Signal()
        m.d.comb += pre_snapshot.eq(self.snapshot | snapshot_d1)

        def copy_needed(index):
            """A write (or a sweep read) of live entry ``index`` whose value as of the
            snapshot is not in the shadow yet."""
            return (sweeping | self.snapshot) & ~new_copied.bit_select(index, 1)

        # a snapshot taken while clearing sees the table empty: the clear sweep does not copy
        # the old values, the snapshot sweep copies the cleared entries when it is done
        snap_empty = Signal()
        with m.If(self.snapshot):
            m.d.sync += snap_empty.eq(self.clearing)

        pending = Signal()                             # shadow[pending_addr] <- the read data
        pending_addr = Signal(range(n))
        m.d.sync += pending.eq(0)
        m.d.comb += [sw.data.eq(r.as_value()[:ENTRY_BITS]), sw.addr.eq(Mux(pending, pending_addr, p1_entry)),
                     self.copying.eq(sweeping | pending)]
        with m.If(pending):
            m.d.comb += sw.en.eq(1)

        # the live read port: clear sweep, event, snapshot sweep; held otherwise (stages 1, 2
        # and the shadow copy use its data)
        with m.If(clear_go):
            m.d.comb += rd.addr.eq(clear_ptr)
            m.d.sync += [clear_ptr.eq(clear_ptr + 1), pending_addr.eq(clear_ptr)]
            with m.If(copy_needed(clear_ptr) & ~snap_empty):
                m.d.sync += [pending.eq(1), copied.eq(new_copied | (1 << clear_ptr))]
            with m.If(clear_ptr == n - 1):
                m.d.sync += self.clearing.eq(0)
        with m.Elif(accept):
            m.d.comb += rd.addr.eq(self.ev_sid[:self._index_bits])
        with m.Elif(sweep_go):
            m.d.comb += rd.addr.eq(sweep_ptr)
            m.d.sync += [sweep_ptr.eq(sweep_ptr + 1), pending_addr.eq(sweep_ptr)]
            with m.If(copy_needed(sweep_ptr)):
                m.d.sync += [pending.eq(1), copied.eq(new_copied | (1 << sweep_ptr))]
            with m.If(sweep_ptr == n - 1):
                m.d.sync += sweeping.eq(0)
        with m.Else():
            m.d.comb += rd.en.eq(0)

        # the live write port: clear sweep, or stage 2 writing the updated entry back
        with m.If(clear_go):
            m.d.comb += [wr.addr.eq(clear_ptr), wr.data.eq(empty_live), wr.en.eq(1)]
        with m.Elif(p2_valid):
            m.d.comb += [wr.addr.eq(p1_entry), wr.en.eq(1), wr.data.eq(r)]
            with m.If(copy_needed(p1_entry) & ~pre_snapshot):
                m.d.comb += sw.en.eq(1)
                m.d.sync += copied.eq(new_copied | (1 << p1_entry))
            new = wr.data
            with m.If(p1_err):
                m.d.comb += new.fcs_errors.eq(r.fcs_errors + 1)
            with m.Else():
                m.d.comb += [
                    new.rx_frames.eq(r.rx_frames + 1),
                    new.rx_bytes.eq(r.rx_bytes + p1_bytes),
                    new.in_order.eq(r.in_order + in_order),
                    new.lost.eq(r.lost + lost_delta),
                    new.duplicate.eq(r.duplicate + duplicate),
                    new.out_of_order.eq(r.out_of_order + reordered),
                    new.late.eq(r.late + late),
                    new.first_rx_ns.eq(Mux(first, p1_rx, r.first_rx_ns)),
                    new.last_rx_ns.eq(p1_rx),
                    new.lat_min.eq(Mux(lt_min, p1_lat, r.lat_min)),
                    new.lat_max.eq(Mux(gt_max, p1_lat, r.lat_max)),
                    new.lat_sum.eq(r.lat_sum + p1_lat),
                    new.lat_sq_sum.eq(r.lat_sq_sum + square),
                    new.jitter_sum.eq(r.jitter_sum + Mux(first, 0, jitter)),
                    new.next_seq.eq(next_seq),
                    new.last_lat.eq(p1_lat),
                    new.history.eq(history),
                ]

        with m.If(self.snapshot):
            m.d.sync += [sweeping.eq(1), sweep_ptr.eq(0), self.foreign_frames_snap.eq(self.foreign_frames),
                         self.seq_errors_snap.eq(self.seq_errors + out_of_seq)]
        with m.If(self.clear):
            m.d.sync += [self.clearing.eq(1), clear_ptr.eq(0), self.foreign_frames.eq(0), self.seq_errors.eq(0)]
        return m
