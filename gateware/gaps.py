"""Gap and loss tracker of one port's receive path, for RFC 2544 26.5 (system recovery) and
26.6 / RFC 6201 (reset): outage times measured from per-frame timestamps. Fed by the
analyzer's per-frame events (:class:`~.analyzer.Analyzer` ``ev_*``) and the loss events of
the per-stream statistics (:class:`~.stream_stats.StreamStats` ``loss_valid``,
``loss_skip``).

Frames tracked: test frames with a good FCS (``ev_valid`` and not ``ev_fcs_err``).

* **Gap** (RFC 6201 timestamp method: the last frame before a reset to the first after):
  over every good test frame of the port, whatever its stream (like ``rx_frames``,
  ``first_rx_ns`` and ``last_rx_ns``: an outage silences the port, not one stream, and the
  host may run streams outside ``stream_group``): ``gap_max`` is the largest interval
  between the receive timestamps of two consecutive such frames since CLEAR, in ns (0 until
  two frames have arrived; the first of equal intervals stays), ``gap_end_rx`` the receive
  timestamp of the frame that ended it and ``gap_end_tx`` that frame's transmit timestamp
  (from its signature). Intervals are taken modulo 2**48 ns (3.3 days).
* **Loss events**: over the streams of ``stream_group`` only, because only they have a
  per-stream sequence tracker (the per-stream statistics): a frame that arrived ahead of its
  stream's expected sequence number, ``s > e`` (frames lost just before it; reordered,
  duplicate and late frames are not loss events). ``loss_events`` counts them (modulo
  2**32); of them, the one with the largest transmit timestamp (equal ones: the later to
  arrive) gives ``loss_last_tx``, ``loss_last_rx``, ``loss_last_stream`` (its stream id),
  ``loss_last_seq`` (its sequence number) and ``loss_last_gap`` (``s - e``, the frames lost
  just before it). Frames presented while the statistics sweep their table after CLEAR
  (``n_streams * 16`` clocks) are not seen by the sequence tracker, so they are never loss events.

Timestamps: ``*_rx`` the low 48 bits of the analyzer's receive timestamp, ``*_tx`` the
signature's 48-bit transmit timestamp, both ns on the tester's timebase.

Outputs are the snapshot registers: ``snapshot`` captures the state as of that clock (every
event presented on an earlier clock, none presented on that clock or later, as the
analyzer's port counters); ``clear`` empties the state as if at once (events presented on
its clock are dropped, those presented earlier are forgotten, a snapshot taken with it sees
the state before, one after it the empty state). All zero after reset and CLEAR.

Pipeline (125 MHz on ECP5: every 48-bit subtraction and comparison is registered): the event
is latched (A), its interval from the previous frame computed (B), compared with the
maxima, with the statistics' loss pulse (C), and the state updated (D): 4 clocks. A snapshot
or a CLEAR that finds an event in the pipeline waits for it to be done (a snapshot then
copies the updated state, a CLEAR forgets it). Events must be :data:`MIN_EVENT_SPACING` clocks
apart or more (a test frame takes 16 clocks or more).
"""

import copy

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .stream_stats import LOSS_LATENCY

__all__ = ["GapTracker", "GapModel", "GAP_FIELDS", "MIN_EVENT_SPACING"]

#: (name, bits, doc) of the snapshot registers, ``pN.ana.<name>``
GAP_FIELDS = [
    ("gap_max", 48, "largest interval between the receive timestamps of two consecutive good test frames "
                    "(any stream) since CLEAR, ns (0 before the second frame)"),
    ("gap_end_rx", 48, "receive timestamp of the frame that ended gap_max, ns"),
    ("gap_end_tx", 48, "transmit timestamp (signature) of the frame that ended gap_max, ns"),
    ("loss_events", 32, "good test frames of stream_group ahead of their stream's expected sequence number "
                        "(frames lost before them)"),
    ("loss_last_tx", 48, "of those, the largest transmit timestamp (signature), ns"),
    ("loss_last_rx", 48, "receive timestamp of that frame, ns"),
    ("loss_last_stream", 16, "stream id of that frame"),
    ("loss_last_seq", 32, "sequence number of that frame"),
    ("loss_last_gap", 32, "sequence numbers that frame skipped (frames lost just before it)"),
]
#: clocks from one event to the next, at least
MIN_EVENT_SPACING = 8
M48 = (1 << 48) - 1
M32 = (1 << 32) - 1


class GapTracker(wiring.Component):
    ev_valid: In(1)
    ev_fcs_err: In(1)
    ev_sid: In(16)
    ev_seq: In(32)
    ev_rx_ns: In(64)
    ev_tx_ns: In(48)
    loss_valid: In(1)          # from StreamStats, LOSS_LATENCY clocks after the event
    loss_skip: In(32)
    clear: In(1)
    snapshot: In(1)

    gap_max: Out(48)
    gap_end_rx: Out(48)
    gap_end_tx: Out(48)
    loss_events: Out(32)
    loss_last_tx: Out(48)
    loss_last_rx: Out(48)
    loss_last_stream: Out(16)
    loss_last_seq: Out(32)
    loss_last_gap: Out(32)

    def elaborate(self, platform):
        assert LOSS_LATENCY == 2, "stage B must see the loss pulse of its event"
        m = Module()
        live = {name: Signal(bits, name=f"live_{name}") for name, bits, _ in GAP_FIELDS}
        have_prev = Signal()
        prev_rx = Signal(48)

        # A: the event, held until the next one (events are MIN_EVENT_SPACING apart)
        a_valid = Signal()
        a_rx, a_tx, a_sid, a_seq = Signal(48), Signal(48), Signal(16), Signal(32)
        good = Signal()
        m.d.comb += good.eq(self.ev_valid & ~self.ev_fcs_err & ~self.clear)
        m.d.sync += a_valid.eq(good)
        with m.If(good):
            m.d.sync += [a_rx.eq(self.ev_rx_ns[:48]), a_tx.eq(self.ev_tx_ns), a_sid.eq(self.ev_sid),
                         a_seq.eq(self.ev_seq)]

        # B: the interval from the previous frame
        b_valid, b_gap = Signal(), Signal()
        b_interval = Signal(48)
        m.d.sync += b_valid.eq(a_valid)
        with m.If(a_valid):
            m.d.sync += [b_gap.eq(have_prev), b_interval.eq(a_rx - prev_rx)]

        # C: comparisons, and the statistics' loss pulse for this event (LOSS_LATENCY)
        c_valid, c_gap_better, c_loss, c_loss_better = Signal(), Signal(), Signal(), Signal()
        c_skip = Signal(32)
        m.d.sync += c_valid.eq(b_valid)
        with m.If(b_valid):
            m.d.sync += [c_gap_better.eq(b_gap & (b_interval > live["gap_max"])),
                         c_loss.eq(self.loss_valid),
                         c_loss_better.eq(self.loss_valid & (a_tx >= live["loss_last_tx"])),
                         c_skip.eq(self.loss_skip)]

        # D: update
        with m.If(c_valid):
            m.d.sync += [prev_rx.eq(a_rx), have_prev.eq(1)]
            with m.If(c_gap_better):
                m.d.sync += [live["gap_max"].eq(b_interval), live["gap_end_rx"].eq(a_rx),
                             live["gap_end_tx"].eq(a_tx)]
            with m.If(c_loss):
                m.d.sync += live["loss_events"].eq(live["loss_events"] + 1)
            with m.If(c_loss_better):
                m.d.sync += [live["loss_last_tx"].eq(a_tx), live["loss_last_rx"].eq(a_rx),
                             live["loss_last_stream"].eq(a_sid), live["loss_last_seq"].eq(a_seq),
                             live["loss_last_gap"].eq(c_skip)]

        # snapshot and clear, after any event in the pipeline
        busy = Signal()
        m.d.comb += busy.eq(a_valid | b_valid | c_valid)
        pend_snap, pend_clear, snap_after = Signal(), Signal(), Signal()
        want_snap, want_clear = Signal(), Signal()
        # a snapshot while a CLEAR waits is taken after it (it must see the empty state)
        m.d.comb += [want_snap.eq((self.snapshot & ~pend_clear) | pend_snap),
                     want_clear.eq(self.clear | pend_clear)]
        m.d.sync += [pend_snap.eq(want_snap & busy), pend_clear.eq(want_clear & busy)]
        do_snap = Signal()
        m.d.comb += do_snap.eq((want_snap & ~busy) | (snap_after & ~pend_clear))
        with m.If(snap_after & ~pend_clear):
            m.d.sync += snap_after.eq(0)
        with m.If(self.snapshot & pend_clear):
            m.d.sync += snap_after.eq(1)
        with m.If(do_snap):
            m.d.sync += [getattr(self, name).eq(sig) for name, sig in live.items()]
        with m.If(want_clear & ~busy):
            m.d.sync += [sig.eq(0) for sig in live.values()]
            m.d.sync += [have_prev.eq(0), prev_rx.eq(0)]
        return m


class GapModel:
    """Golden model: the definitions above, with the per-stream sequence tracking of
    :mod:`~.stream_stats` reduced to what decides a loss event (the expected number)."""

    def __init__(self, n_streams=16, group=0):
        self.n, self.group = n_streams, group
        self.bits = (n_streams - 1).bit_length()
        self.clear()

    def clear(self):
        self.state = {name: 0 for name, _, _ in GAP_FIELDS}
        self.prev_rx = None
        self.next_seq = [0] * self.n

    def snapshot(self) -> dict[str, int]:
        return copy.deepcopy(self.state)

    def event(self, fcs_err, sid, seq, rx_ns, tx_ns, tracked=True):
        """One test frame; ``tracked``: the per-stream statistics see it (not during their
        clear sweep)."""
        if fcs_err:
            return
        st = self.state
        rx, tx = rx_ns & M48, tx_ns & M48
        if self.prev_rx is not None:
            interval = (rx - self.prev_rx) & M48
            if interval > st["gap_max"]:
                st |= dict(gap_max=interval, gap_end_rx=rx, gap_end_tx=tx)
        self.prev_rx = rx
        if not tracked or sid >> self.bits != self.group:
            return
        index = sid & (self.n - 1)
        d = (seq - self.next_seq[index]) & M32
        if d >> 31:
            return                                    # behind: duplicate, reordered or late
        self.next_seq[index] = (seq + 1) & M32
        if d == 0:
            return
        st["loss_events"] = (st["loss_events"] + 1) & M32
        if tx >= st["loss_last_tx"]:
            st |= dict(loss_last_tx=tx, loss_last_rx=rx, loss_last_stream=sid, loss_last_seq=seq, loss_last_gap=d)
