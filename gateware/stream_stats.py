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

Storage (block RAM, so a board can afford it): each entry is :data:`ENTRY_WORDS` 64-bit
words (STATS_FIELDS in order; ``next_seq`` shares a word with the top of ``lat_sq_sum``), live
and shadow, 2 DP16KD each on ECP5; the sequence state the classification needs at once
(expected number, history, last latency, whether the stream has a good frame) is a small
memory of its own (LUT RAM). The state is read and the number compared with the expected one
at stage 0, the difference taken at stage 1 (the loss pulse and the sequence error come from
it), where the number falls worked out at stage 2, the history at stage 3, and the new state
written back at stage 4. From stage 2 on the entry is updated one word per clock (16 clocks,
the sum of squares last: its square, :class:`~.square.SerialSquare`, begun at stage 1, takes
17) through a six-stage word pipeline: decide the word, address the block RAM from
registers, read, register and add, work out the new word, write. Events must be
:data:`MIN_EVENT_SPACING` clocks apart or more.

Snapshot: ``snapshot`` captures every entry and ``foreign_frames`` (into
``foreign_frames_snap``) as of that clock: every event presented on an earlier clock is in
it, none presented on that clock or later, as the analyzer's port counters. The entries go
to a shadow table the host reads a 32-bit word at a time through ``read_addr`` (``entry *``
:data:`READ_WORDS` ``+ word``) and ``read_data`` (:data:`READ_LATENCY` clocks after the
address). A sweep copies one word per clock when no event is being taken in or updated; an
update of an entry the sweep has not copied yet first copies its old words (copy on write,
word by word as it reads them), and one whose event came before the snapshot lets the sweep
copy the entry after it. ``copying`` is high until the shadow is complete: 256 clocks with
no traffic, a few more per event under load.

Clear: ``clear`` empties the live table and ``foreign_frames``, as if at once: events from
that clock until ``clearing`` falls are dropped; the sweep (``n_streams * ENTRY_WORDS``
clocks, after any update in progress) copies on write for a snapshot taken before or with
the clear, and a snapshot taken during the sweep captures the empty table.

Widths: as the analyzer's: in 24 hours at 1.488 Mframes/s (1.3e11 frames < 2**37) no
64-bit counter wraps, the 64-bit sums hold a mean latency up to 143 ms and the 96-bit sum of
squares an RMS latency up to 0.78 s (docs/analyzer.md).
"""

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .registers import WORD_READ_LATENCY
from .regmap import pack_fields
from .square import SerialSquare
from .statsdesc import ENTRY_BITS, ENTRY_WORDS, LAT_MIN_INIT, READ_WORDS, STATS_FIELDS, empty_entry, unpack_entry
from .synth_hints import no_collision_name

__all__ = ["StreamStats", "STATS_FIELDS", "ENTRY_BITS", "ENTRY_WORDS", "READ_WORDS", "READ_LATENCY", "LAT_MIN_INIT",
           "MIN_EVENT_SPACING", "LOSS_LATENCY", "empty_entry", "unpack_entry"]

#: clocks from ``read_addr`` to ``read_data`` (a register behind the block RAM's output): what
#: the register bank's word-read windows expect
READ_LATENCY = WORD_READ_LATENCY
#: clocks from one event to the next, at least: an update takes 16 clocks and the sweeps need
#: a few between updates (on the wire a test frame takes 36 clocks or more with its FCS,
#: preamble and gap: see :mod:`.analyzer`)
MIN_EVENT_SPACING = 24
#: clocks from an event on ``ev_*`` to its ``loss_valid`` pulse
LOSS_LATENCY = 2
SEQ_BITS = 32

_OFFSET = {}
for _name, _bits in STATS_FIELDS:
    _OFFSET[_name] = sum(b for _, b in STATS_FIELDS[:len(_OFFSET)])


def _word(name):
    return _OFFSET[name] // 64


# the word of each update step: the sum of squares last, its two words in a row (the carry)
# and late enough for the serial square
W_SQ_LO, W_SQ_HI = _word("lat_sq_sum"), _word("next_seq")
assert (W_SQ_LO, W_SQ_HI) == (12, 13) and _word("jitter_sum") == 14 and _word("last_lat") == 15
assert _OFFSET["next_seq"] == 64 * W_SQ_HI + 32 and _OFFSET["lat_min"] == 640 and _OFFSET["lat_max"] == 672


_EMPTY = pack_fields(STATS_FIELDS, empty_entry(), "entry")
EMPTY_WORDS = [(_EMPTY >> (64 * w)) & ((1 << 64) - 1) for w in range(ENTRY_WORDS)]
#: the word of each update step: the sum of squares last, its two words in a row (the carry
#: from one to the other), late enough for the square (SerialSquare, begun at the event)
STEP_WORDS = [*range(12), 14, 15, 12, 13]
SQ_STEP = STEP_WORDS.index(12)

# what the update of each word does (``_mode``)
ADD, REPLACE, KEEP, MINMAX, SEQ = range(5)


class StreamStats(wiring.Component):
    def __init__(self, n_streams=16, window=32):
        if n_streams < 2 or n_streams > 1 << 16 or n_streams & (n_streams - 1):
            raise ValueError(f"StreamStats: n_streams must be a power of two from 2 to 65536, got {n_streams}")
        if not 1 <= window <= 1024:
            raise ValueError(f"StreamStats: window must be 1..1024, got {window}")
        self.n_streams, self.window = n_streams, window
        self._index_bits = (n_streams - 1).bit_length()
        #: clocks from a CLEAR until ``clearing`` falls, at most, with no event in the pipeline
        self.clear_clocks = n_streams * ENTRY_WORDS
        super().__init__({
            "ev_valid": In(1), "ev_fcs_err": In(1), "ev_sid": In(16), "ev_seq": In(SEQ_BITS),
            "ev_latency": In(32), "ev_rx_ns": In(64), "ev_bytes": In(16),
            "stream_group": In(16 - self._index_bits),
            "clear": In(1), "snapshot": In(1),
            "read_addr": In(range(n_streams * READ_WORDS)), "read_data": Out(32),
            "foreign_frames": Out(64), "foreign_frames_snap": Out(64),
            "seq_errors": Out(64), "seq_errors_snap": Out(64),
            "clearing": Out(1), "copying": Out(1),
            "loss_valid": Out(1), "loss_skip": Out(SEQ_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        n, window, ib = self.n_streams, self.window, self._index_bits

        # The sequence state of each stream: small, read and written once per event (LUT RAM).
        seq_layout = data.StructLayout({"next_seq": SEQ_BITS, "history": window, "last_lat": 32, "seen": 1})
        # after CLEAR the window counts as received: only numbers skipped later are lost
        empty_seq = seq_layout.const({"history": (1 << window) - 1})
        m.submodules.seq = seq = Memory(shape=seq_layout, depth=n, init=[empty_seq] * n)
        s_rd, s_wr = seq.read_port(domain="comb"), seq.write_port()
        r = Signal(seq_layout)                         # stage 1: the state as read at stage 0
        m.d.sync += r.eq(s_rd.data)
        # The counters: ENTRY_WORDS words of 64 bits per stream, live and shadow (block RAM).
        live = Memory(shape=64, depth=n * ENTRY_WORDS, init=EMPTY_WORDS * n)
        shadow = Memory(shape=64, depth=n * ENTRY_WORDS, init=EMPTY_WORDS * n)
        m.submodules[no_collision_name("live")] = live
        m.submodules[no_collision_name("shadow")] = shadow
        # a word is never read on the clock it is written (busy, MIN_EVENT_SPACING; the host
        # reads when ``copying`` is low): the memories are named for synthesis to know it
        # (:mod:`.synth_hints`), so it puts no collision logic behind the block RAM's slow output
        wr, sw = live.write_port(), shadow.write_port()
        rd, host = live.read_port(), shadow.read_port()
        # the host's word: the block RAM's output registered whole, then the half selected
        host_hi, host_hi_q, host_q = Signal(), Signal(), Signal(64)
        m.d.comb += host.addr.eq(self.read_addr >> 1)
        m.d.sync += [host_hi.eq(self.read_addr[0]), host_hi_q.eq(host_hi), host_q.eq(host.data)]
        m.d.comb += self.read_data.eq(Mux(host_hi_q, host_q[32:], host_q[:32]))

        # Stage 0: an event of this group is accepted, its sequence state read (and its number
        # compared with the expected one, byte by byte).
        accept = Signal()
        foreign, foreign_now, foreign_p1 = Signal(), Signal(), Signal()
        m.d.comb += foreign.eq(self.ev_sid[ib:] != self.stream_group)
        # a foreign event is counted a clock later (from a register); a snapshot adds the one
        # still to be counted
        m.d.sync += foreign_p1.eq(foreign_now)
        with m.If(foreign_p1):
            m.d.sync += self.foreign_frames.eq(self.foreign_frames + 1)
        with m.If(self.ev_valid & ~self.clear & ~self.clearing):
            with m.If(foreign):
                m.d.comb += foreign_now.eq(1)
            with m.Else():
                m.d.comb += accept.eq(1)
        m.d.comb += s_rd.addr.eq(self.ev_sid[:ib])
        # the event, held until the next one (MIN_EVENT_SPACING, whatever its group: the
        # update's last use is 21 clocks after it; events while clearing do not count) for the
        # update
        p1_valid, p1_err, p1_expected = Signal(), Signal(), Signal()
        # the comparison with the expected number, in bytes: each byte's equality from the
        # read (two LUT levels after the LUT RAM), registered, and their AND at stage 1 (in
        # one clock with the read, the whole 32-bit compare took 8.5 ns on the 25F)
        p1_eq = Signal(SEQ_BITS // 8)
        m.d.comb += p1_expected.eq(p1_eq.all())
        p1_entry = Signal(range(n))
        p1_seq, p1_lat, p1_rx, p1_bytes = Signal(SEQ_BITS), Signal(32), Signal(64), Signal(16)
        m.d.sync += p1_valid.eq(accept)
        with m.If(self.ev_valid & ~self.clear & ~self.clearing):
            m.d.sync += [p1_err.eq(self.ev_fcs_err), p1_entry.eq(self.ev_sid[:ib]),
                         p1_eq.eq(Cat(self.ev_seq[k:k + 8] == s_rd.data.next_seq[k:k + 8]
                                      for k in range(0, SEQ_BITS, 8))),
                         p1_seq.eq(self.ev_seq), p1_lat.eq(self.ev_latency), p1_rx.eq(self.ev_rx_ns),
                         p1_bytes.eq(self.ev_bytes)]

        # Stage 1: the square begun; its word is decided SQ_STEP clocks after the update's
        # first (two clocks after the event) and its addend registered two clocks later (R, Q)
        m.submodules.square = square = SerialSquare(32)
        m.d.comb += [square.start.eq(p1_valid), square.x.eq(p1_lat)]
        assert 1 + square.latency <= 2 + SQ_STEP + 2, "the square is late for its word"

        # Stage 1: the difference from the stream's expected number: the loss pulse and the
        # sequence error come from it; the stream's state is kept for the stages after.
        diff = Signal(SEQ_BITS)
        m.d.comb += diff.eq(p1_seq - r.next_seq)
        # port-level sequence errors: good frames of this group whose number is not the one
        # their stream expects (counted at stage 1 from the comparison made at stage 0; a
        # snapshot adds the one at stage 1 now, presented on an earlier clock)
        out_of_seq = Signal()
        m.d.comb += out_of_seq.eq(p1_valid & ~p1_err & ~p1_expected)
        # (``seq_errors_inc`` is kept at seq_errors + 1, so that a snapshot takes one or the
        # other: out_of_seq into the carry-in of a 64-bit add took 8.6 ns on the 25F)
        seq_errors_inc = Signal(64, init=1)
        with m.If(out_of_seq):
            m.d.sync += [self.seq_errors.eq(self.seq_errors + 1), seq_errors_inc.eq(seq_errors_inc + 1)]
        # loss event: a good frame ahead of the expected number (registered, LOSS_LATENCY)
        m.d.sync += [self.loss_valid.eq(out_of_seq & ~diff[-1]), self.loss_skip.eq(diff)]
        p2_valid = Signal()
        p2_diff = Signal(SEQ_BITS)
        p2_state = Signal(seq_layout)                  # the stream's state before the event
        m.d.sync += p2_valid.eq(p1_valid)
        with m.If(p1_valid):
            m.d.sync += [p2_diff.eq(diff), p2_state.eq(r)]

        # Stage 2: where the number falls, each a comparison with a constant at most: behind by
        # 1..window is d >= 2**32 - window; the history bit of s, e - 1 - s, is ~d.
        ahead = Signal()
        m.d.comb += ahead.eq(~p2_diff[-1])
        in_order, ahead3, in_window = Signal(name="u_in_order"), Signal(), Signal()
        bit_index = Signal(range(window))              # history bit of s: e - 1 - s
        shift = Signal(range(window + 1))              # history shift when ahead: s - e + 1
        jitter, first = Signal(32), Signal(name="u_first")
        p3_valid = Signal()
        m.d.sync += p3_valid.eq(p2_valid)
        with m.If(p2_valid):
            last = p2_state.last_lat
            m.d.sync += [
                in_order.eq(p2_diff == 0), ahead3.eq(ahead), in_window.eq(p2_diff >= (1 << SEQ_BITS) - window),
                bit_index.eq(~p2_diff), shift.eq(Mux(p2_diff >= window, window, p2_diff[:len(shift)] + 1)),
                jitter.eq(Mux(p1_lat >= last, p1_lat - last, last - p1_lat)), first.eq(~p2_state.seen),
            ]

        # Stage 3: the history: whether the number was seen, and the stream's new state.
        seen = Signal()
        new_seq = Signal(seq_layout)                   # the stream's state after the event
        p4_valid = Signal()
        m.d.sync += p4_valid.eq(p3_valid)
        with m.If(p3_valid):
            m.d.sync += [seen.eq(p2_state.history.bit_select(bit_index, 1)), new_seq.eq(p2_state)]
            with m.If(~p1_err):
                m.d.sync += [new_seq.next_seq.eq(Mux(ahead3, p1_seq + 1, p2_state.next_seq)),
                             new_seq.last_lat.eq(p1_lat), new_seq.seen.eq(1)]
                with m.If(ahead3):
                    m.d.sync += new_seq.history.eq((p2_state.history << shift)[:window] | 1)
                with m.Elif(in_window):
                    m.d.sync += new_seq.history.eq(p2_state.history | (Const(1, window) << bit_index)[:window])
        # Stage 4: the sequence counters' increments; the new state written back (the
        # stream's next event comes 24 clocks later or more)
        duplicate, reordered, late = (Signal(name=f"u_{k}") for k in ("duplicate", "reordered", "late"))
        lost_delta = Signal(signed(SEQ_BITS))
        with m.If(p4_valid):
            m.d.sync += [
                duplicate.eq(in_window & seen), reordered.eq(in_window & ~seen),
                late.eq(~ahead3 & ~in_window),
                lost_delta.eq(Mux(ahead3, p2_diff, Mux(in_window & ~seen, -1, 0))),
            ]
        # (its write port driven from registers, a clock after the write is decided)
        seq_w_en, seq_w_addr, seq_w_data = Signal(), Signal(range(n)), Signal(seq_layout)
        m.d.comb += [s_wr.addr.eq(seq_w_addr), s_wr.data.eq(seq_w_data), s_wr.en.eq(seq_w_en)]
        m.d.sync += seq_w_en.eq(0)
        with m.If(p4_valid):
            m.d.sync += [seq_w_addr.eq(p1_entry), seq_w_data.eq(new_seq), seq_w_en.eq(1)]

        # Stage 2 on: the update, one word per clock for ENTRY_WORDS clocks (``step``); the
        # words that take the classification come after it is done.
        updating = Signal()
        step = Signal(range(ENTRY_WORDS))
        with m.If(p1_valid):
            m.d.sync += [updating.eq(1), step.eq(0)]
        with m.Elif(updating):
            m.d.sync += step.eq(step + 1)
            with m.If(step == ENTRY_WORDS - 1):
                m.d.sync += updating.eq(0)
        step_word = Signal(4)                          # STEP_WORDS[step]
        m.d.comb += step_word.eq(Mux(step[2] & step[3], step ^ 2, step))
        assert all((k ^ 2 if k >= 12 else k) == w for k, w in enumerate(STEP_WORDS))

        # The word pipeline, shared by the update, the clear sweep and the snapshot sweep: A
        # decides the word, R addresses it (from registers), Q is the block RAM's read, C
        # registers its data, copies it to the shadow if need be and adds, D works out the new
        # word, W writes it.
        NONE, EVENT, SWEEP, CLEAR = range(4)
        a_op, a_copy = Signal(2), Signal()             # A: which word, decided
        a_entry, a_word = Signal(range(n)), Signal(4)
        r_op, r_copy, r_entry, r_word = Signal(2), Signal(), Signal(range(n)), Signal(4)
        m.d.sync += [r_op.eq(a_op), r_copy.eq(a_copy), r_entry.eq(a_entry), r_word.eq(a_word)]
        m.d.comb += rd.addr.eq(Cat(r_word, r_entry))   # R: the block RAM's address, from registers
        q_op, q_copy, q_entry, q_word = Signal(2), Signal(), Signal(range(n)), Signal(4)
        c_op, c_copy, c_entry, c_word = Signal(2), Signal(), Signal(range(n)), Signal(4)
        d_op = Signal(2)
        m.d.sync += [q_op.eq(r_op), q_copy.eq(r_copy), q_entry.eq(r_entry), q_word.eq(r_word),
                     c_op.eq(q_op), c_copy.eq(q_copy), c_entry.eq(q_entry), c_word.eq(q_word)]
        old = Signal(64)                               # C: the word as read
        m.d.sync += old.eq(rd.data)
        m.d.comb += [sw.addr.eq(Cat(c_word, c_entry)), sw.data.eq(old), sw.en.eq(c_copy)]
        self._shadow_write = sw.en                     # for the tests: never while copying is low

        # Sweeps: the clear sweep, and the snapshot sweep with its copy on write. Neither uses
        # the pipeline while an update is in it, from its first read to its last write (busy,
        # a register worked out a clock ahead: updating, or an update's word at Q, C or W).
        # (The clear waits for the events taken in before it; a snapshot sweep's read during an
        # event's first two clocks copies the word as it was, which is what the snapshot wants.)
        busy = Signal()
        m.d.sync += busy.eq(p1_valid | (updating & (step != ENTRY_WORDS - 1)) | updating
                            | (r_op == EVENT) | (q_op == EVENT) | (c_op == EVENT) | (d_op == EVENT))
        clear_entry, clear_word = Signal(range(n)), Signal(4)
        clear_go = Signal()
        m.d.comb += clear_go.eq(self.clearing & ~busy)
        sweeping = Signal()
        sweep_entry, sweep_word = Signal(range(n)), Signal(4)
        sweep_go = Signal()
        m.d.comb += sweep_go.eq(sweeping & ~busy & ~self.snapshot & ~self.clear & ~self.clearing)
        copied = Signal(n)                             # entries whose shadow is final
        new_copied = Signal(n)
        m.d.comb += new_copied.eq(Mux(self.snapshot, 0, copied))
        m.d.sync += copied.eq(new_copied)
        # an event whose update starts at the snapshot clock or the next was accepted before
        # it: its update belongs in the snapshot, and the sweep copies the entry once it is done
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

        # an update copies the old words on write when its first step finds it needed
        # (from the entry's copied flag as of stage 1, registered: the sweep may have copied it
        # since, and copying it again copies the same words; a snapshot since is pre_snapshot)
        cow, cow_held, p2_copied = Signal(), Signal(), Signal()
        m.d.sync += p2_copied.eq(copied.bit_select(p1_entry, 1))
        m.d.comb += cow.eq(Mux(step == 0, sweeping & ~p2_copied & ~pre_snapshot, cow_held))
        # (an update copies only while sweeping: at its first step sweeping is high, at the
        # steps after, the copy of the step before is in r_copy; so copying needs no term of
        # its own, whose decision took 8.1 ns to the register bank on the 25F)
        m.d.comb += self.copying.eq(sweeping | r_copy | q_copy | c_copy)

        with m.If(clear_go):
            m.d.comb += [a_op.eq(CLEAR), a_entry.eq(clear_entry), a_word.eq(clear_word),
                         a_copy.eq(copy_needed(clear_entry) & ~snap_empty)]
            m.d.sync += clear_word.eq(clear_word + 1)
            with m.If(clear_word == 0):
                m.d.sync += [seq_w_addr.eq(clear_entry), seq_w_data.eq(empty_seq), seq_w_en.eq(1)]
            with m.If(clear_word == ENTRY_WORDS - 1):
                m.d.sync += clear_entry.eq(clear_entry + 1)
                with m.If(a_copy):
                    m.d.sync += copied.eq(new_copied | (1 << clear_entry))
                with m.If(clear_entry == n - 1):
                    m.d.sync += self.clearing.eq(0)
        with m.Elif(updating):
            m.d.comb += [a_op.eq(EVENT), a_entry.eq(p1_entry), a_word.eq(step_word), a_copy.eq(cow)]
            with m.If(step == 0):
                m.d.sync += cow_held.eq(cow)
                with m.If(cow):
                    m.d.sync += copied.eq(new_copied | (1 << p1_entry))
        with m.Elif(sweep_go):
            with m.If(copied.bit_select(sweep_entry, 1)):          # copied on write: skip it (never
                # on a snapshot's clock: copied is new_copied)
                m.d.sync += [sweep_entry.eq(sweep_entry + 1), sweep_word.eq(0)]
                with m.If(sweep_entry == n - 1):
                    m.d.sync += sweeping.eq(0)
            with m.Else():
                m.d.comb += [a_op.eq(SWEEP), a_entry.eq(sweep_entry), a_word.eq(sweep_word), a_copy.eq(1)]
                m.d.sync += sweep_word.eq(sweep_word + 1)
                with m.If(sweep_word == ENTRY_WORDS - 1):
                    m.d.sync += [sweep_entry.eq(sweep_entry + 1), copied.eq(new_copied | (1 << sweep_entry))]
                    with m.If(sweep_entry == n - 1):
                        m.d.sync += sweeping.eq(0)

        # Q: what the word's update does, from the event held since stage 1
        good = Signal()
        m.d.comb += good.eq(~p1_err)
        mode, addend, repl = Signal(3), Signal(64), Signal(64)
        m.d.sync += [mode.eq(KEEP), addend.eq(0), repl.eq(0)]
        with m.If(q_op == CLEAR):
            m.d.sync += mode.eq(REPLACE)
            with m.Switch(q_word):
                for w, value in enumerate(EMPTY_WORDS):
                    if value:
                        with m.Case(w):
                            m.d.sync += repl.eq(value)
        with m.Elif(q_op == EVENT):
            increments = {"rx_frames": good, "fcs_errors": p1_err, "in_order": good & in_order,
                          "duplicate": good & duplicate, "out_of_order": good & reordered, "late": good & late}
            with m.Switch(q_word):
                for name, value in increments.items():
                    with m.Case(_word(name)):
                        m.d.sync += [mode.eq(ADD), addend.eq(value)]
                for name, value in (("rx_bytes", p1_bytes), ("lost", lost_delta.as_signed()), ("lat_sum", p1_lat),
                                    ("jitter_sum", Mux(first, 0, jitter)), ("lat_sq_sum", square.p)):
                    with m.Case(_word(name)):
                        m.d.sync += [mode.eq(ADD), addend.eq(Mux(good, value, 0))]
                with m.Case(_word("first_rx_ns")):
                    m.d.sync += [mode.eq(Mux(good & first, REPLACE, KEEP)), repl.eq(p1_rx)]
                with m.Case(_word("last_rx_ns")):
                    m.d.sync += [mode.eq(Mux(good, REPLACE, KEEP)), repl.eq(p1_rx)]
                with m.Case(_word("lat_min")):
                    m.d.sync += mode.eq(Mux(good, MINMAX, KEEP))
                with m.Case(W_SQ_HI):
                    m.d.sync += mode.eq(SEQ)
                with m.Case(_word("last_lat")):
                    m.d.sync += [mode.eq(Mux(good, REPLACE, KEEP)), repl.eq(p1_lat)]

        # C: the sum, the comparisons (registered: a 64-bit carry chain behind the block RAM's
        # register leaves no room for the choice after it)
        total = Signal(65)
        m.d.comb += total.eq(old + addend)
        carry = Signal()                               # of the sum of squares' low word, for its high one
        m.d.sync += carry.eq(total[64])
        d_entry, d_word, d_mode = Signal(range(n)), Signal(4), Signal(3)
        d_old, d_sum, d_repl = Signal(64), Signal(64), Signal(64)
        d_seq_lo, d_lt, d_gt = Signal(32), Signal(), Signal()
        m.d.sync += [d_op.eq(c_op), d_entry.eq(c_entry), d_word.eq(c_word), d_mode.eq(mode),
                     d_old.eq(old), d_sum.eq(total[:64]), d_repl.eq(repl), d_seq_lo.eq(old[:32] + carry),
                     d_lt.eq(p1_lat < old[:32]), d_gt.eq(p1_lat > old[32:])]
        # D: the new word
        new = Signal(64)
        with m.Switch(d_mode):
            with m.Case(ADD):
                m.d.comb += new.eq(d_sum)
            with m.Case(REPLACE):
                m.d.comb += new.eq(d_repl)
            with m.Case(MINMAX):
                m.d.comb += new.eq(Cat(Mux(d_lt, p1_lat, d_old[:32]), Mux(d_gt, p1_lat, d_old[32:])))
            with m.Case(SEQ):
                m.d.comb += new.eq(Cat(d_seq_lo, new_seq.next_seq))
            with m.Default():
                m.d.comb += new.eq(d_old)
        w_en, w_addr, w_data = Signal(), Signal(range(n * ENTRY_WORDS)), Signal(64)
        m.d.sync += [w_en.eq((d_op == EVENT) | (d_op == CLEAR)), w_addr.eq(Cat(d_word, d_entry)), w_data.eq(new)]
        m.d.comb += [wr.addr.eq(w_addr), wr.data.eq(w_data), wr.en.eq(w_en)]

        with m.If(self.snapshot):
            m.d.sync += [sweeping.eq(1), sweep_entry.eq(0), sweep_word.eq(0),
                         self.foreign_frames_snap.eq(self.foreign_frames + foreign_p1),
                         self.seq_errors_snap.eq(Mux(out_of_seq, seq_errors_inc, self.seq_errors))]
        with m.If(self.clear):
            m.d.sync += [self.clearing.eq(1), clear_entry.eq(0), clear_word.eq(0), self.foreign_frames.eq(0),
                         self.seq_errors.eq(0), seq_errors_inc.eq(1)]
        return m
