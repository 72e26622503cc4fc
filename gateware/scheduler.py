"""Trial timer and stream scheduler of one port (semantics in
:mod:`wirespeed.gateware.streamdesc`, "Scheduling").

Each stream s has a due time, Q48.32 clock cycles since the trial's first frame was ready
to leave (a scan and a prepare, about 21 cycles, after START): frame k of s is due at
k * period_s. A scan over the streams (one per cycle) finds the earliest-due stream still
sending (ties: the lower stream) and offers it on ``pick_*`` once a whole pass has seen no
take; the generator ``take``s it (``take_stream``, ``take_period``: the stream's due time
moves on by its period). A prepared frame leaves (``go``)
when its due time has come and the line is free, so a frame held up by the line does not
shift the ones after it, and the long-run rate of every stream is exact to 2**-32 cycles.

Pipelined for the 125 MHz sys clock (details in :meth:`elaborate`), with the timing of a
one-stage scan: a pass takes n_streams cycles from START or from a take, and the pick is
offered at its end (the first n_streams + 1 cycles after START), though the scan that finds
it runs three stages deep (read, check, compare) and restarts a few cycles after a take: the
first pick of a trial is worked out from the configuration alone (no due time is known yet),
and the first after a take is the earlier of the taken stream's new due time and the second
earliest of the scan's last pass. A take's add and write are the cycle after it; takes come
at least four cycles apart (the generator prepares a frame in between).

Trial end: ``mode`` 0, duration: a stream sends frame k only if it is due before
``duration`` cycles; ``mode`` 1, count: the port sends ``count`` frames in all.

Rate phase switch (``phase_at`` != 0): a stream not in the ``phase2`` mask sends frame k
only if it is also due before ``phase_at`` cycles; a stream in ``phase2`` has frame k due
at ``phase_at + k * period_s`` (its due time starts at ``phase_at`` instead of 0: the value
a stream's due time reads before its first take, the ``known`` bit). ``phase_at`` = 0: no
switch, every stream starts at 0 and ``phase2`` is ignored. With
``burst_len`` > 0 due times only order the streams: frames leave back to back in bursts of
``burst_len``, a burst starting ``burst_gap`` cycles or more after the previous burst's last
frame has left the generator (``line_free`` again).
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .replica import replica

__all__ = ["StreamScheduler", "MODE_DURATION", "MODE_COUNT"]

MODE_DURATION = 0
MODE_COUNT = 1


def _ge(a, b):
    """``a >= b`` (unsigned, equal widths): no borrow out of ``a - b``."""
    return ~(a - b)[len(a)]


def _less(a, b):
    """``a < b`` (unsigned, equal widths) as the borrow bit of ``a - b``: the carry chain's
    own last output, with no inverter after it (as ``a < b`` maps to)."""
    return (a - b)[len(a)]


class StreamScheduler(wiring.Component):
    def __init__(self, n_streams=16):
        if n_streams < 2 or n_streams & (n_streams - 1):
            raise ValueError(f"StreamScheduler: n_streams must be a power of two >= 2, got {n_streams}")
        self.n_streams = n_streams
        super().__init__({
            "start": In(1), "stop": In(1), "enable": In(1),
            "mode": In(1), "duration": In(64), "count": In(64),
            "burst_len": In(32), "burst_gap": In(32),
            "stream_en": In(n_streams),
            "phase_at": In(64), "phase2": In(n_streams),
            # the pick: the earliest-due stream, for the generator to prepare
            "pick_valid": Out(1), "pick_stream": Out(range(n_streams)),
            # take_next: take is high next cycle (the generator's commit register's input);
            # take_stream holds for three cycles before a take, which comes four cycles or more
            # after the last
            "take": In(1), "take_next": In(1), "take_stream": In(range(n_streams)), "take_period": In(64),
            # launch of the prepared frame
            "prepared": In(1), "line_free": In(1), "go": Out(1),
            "sending": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        # due times, Q48.32; the scan reads the integer part only (synthesis drops the
        # fraction bits of its read port)
        m.submodules.dues = dues = Memory(shape=80, depth=n, init=[])
        scan_rd = dues.read_port(domain="comb")
        take_rd = dues.read_port(domain="comb")
        wr = dues.write_port()
        known = Signal(n)              # due time written since START (else its start)

        # phase switch and trial end, registered (static during a trial): the start due time
        # of each stream (phase_at for phase 2 streams, else 0), the limit of the phase 1
        # streams, and whether a stream not yet taken (due at its start) may send
        phase_on = Signal()
        phase_base = Signal(48)
        phase2 = Signal(n)
        phase_lim = Signal(64)
        # phase_at != 0 from two registered halves (it also sets phase2 and, at START, a_phase2)
        phase_nz_lo, phase_nz_hi = Signal(), Signal()
        m.d.sync += [phase_nz_lo.eq(self.phase_at[:48] != 0), phase_nz_hi.eq(self.phase_at[48:] != 0)]
        m.d.comb += phase_on.eq(phase_nz_lo | phase_nz_hi)
        m.d.sync += [phase_base.eq(self.phase_at[:48]),
                     phase2.eq(Mux(phase_on, self.phase2, 0)), phase_lim.eq(self.phase_at)]
        start_ok = Signal()            # due 0 (phase 1, or no phase switch)
        start_ok2 = Signal()           # due phase_base (phase 2)
        m.d.sync += [start_ok.eq((self.mode == MODE_COUNT) | (self.duration != 0)),
                     start_ok2.eq((self.mode == MODE_COUNT) | (self.phase_at[:48] < self.duration))]

        cycle = Signal(48)             # cycles since START
        taken = Signal(64)             # frames taken this trial (count mode)
        count_ok = Signal()            # duration mode, or taken < count: a cycle late (constant between takes)
        m.d.sync += count_ok.eq((self.mode != MODE_COUNT) | (taken < self.count))

        # --- passes and picks ------------------------------------------------------------
        # The passes the picks keep time with, as a one-stage scan had them: a pass runs n
        # cycles, from START or from a take (``p`` counts them, while sending); at the end of
        # each the pick is published on ``pick_*`` (``pick_valid``: a stream may send, and
        # the count is not reached), or ``sending`` ends if none and no frame is prepared. The
        # scan below finds the picks three stages behind, so a pass's end takes its pick from
        # elsewhere: the first after START from the configuration (``first_*``: no due time is
        # known yet); the first after a take from ``r_*``, the earlier of the taken stream's
        # new due time and the second earliest of the scan's last pass before the take,
        # whose earliest the generator took (the scan restarts once the moved due time is
        # written, its passes ending three cycles after these); the others from the scan's
        # latest complete pass (``res_*``), the same while no take comes.
        #
        # *scan*, one stream per cycle in three stages: *read* (stream q): its due time,
        # registered; *evaluate*: check it against the trial end and the phase limit;
        # *compare*: keep the earliest and second earliest due (ties: the lower stream, seen
        # first in a scan pass, streams 0 to n - 1). START fills the pipeline itself (no due
        # time is known yet, none is read): stream 0 is compared the cycle after START (evaluated
        # in START's cycle, from the registered configuration), stream 1 evaluated and stream
        # 2 read.
        p = Signal(range(n))
        q = Signal(range(n))           # stream read
        bubble = Signal()              # the cycle after a take: nothing read
        a_valid = Signal()             # a stream to evaluate
        a_stream = Signal(range(n))
        a_due = Signal(48)             # its due time read (if known)
        a_known = Signal()             # its known, phase2 and stream_en bits
        a_phase2 = Signal()
        a_en = Signal()
        c_valid = Signal()             # a stream to compare
        c_zero = Signal()              # the scan pass's first stream
        c_last = Signal()              # its last
        c_stream = Signal(range(n))
        c_due = Signal(48)
        b1_valid, b1, b1_due = Signal(), Signal(range(n)), Signal(48)     # earliest so far
        b2_valid, b2, b2_due = Signal(), Signal(range(n)), Signal(48)     # second earliest

        # read
        m.d.comb += scan_rd.addr.eq(q)
        # the limits a due time is checked against (registered: static during a trial): the
        # trial end (the top bit set by a trial end by count, or a duration at or above
        # 2**48) and the phase 1 limit (the top bit set without a phase switch, or a limit at
        # or above 2**48); the checks are registered with the due time read
        dur_lim = Signal(49)
        ph_lim = Signal(49)
        m.d.sync += [dur_lim.eq(Cat(self.duration[:48], (self.mode == MODE_COUNT) | (self.duration[48:] != 0))),
                     ph_lim.eq(Cat(phase_lim[:48], ~phase_on | (phase_lim[48:] != 0)))]
        a_dlt = Signal()               # due before the trial end
        a_plt = Signal()               # due before phase_at (phase 1 limit)
        m.d.sync += [a_dlt.eq(scan_rd.data[32:] < dur_lim), a_plt.eq(scan_rd.data[32:] < ph_lim)]
        m.d.sync += [a_valid.eq(self.sending & ~self.take & ~bubble), a_stream.eq(q), a_due.eq(scan_rd.data[32:]),
                     a_known.eq(known.bit_select(q, 1)), a_phase2.eq(phase2.bit_select(q, 1)),
                     a_en.eq(self.stream_en.bit_select(q, 1)), bubble.eq(0)]
        with m.If(self.take):
            m.d.sync += [q.eq(0), bubble.eq(1)]
        with m.Elif(self.sending & ~bubble):
            m.d.sync += q.eq(q + 1)

        # evaluate: the checks on the due time read (trial end, phase 1 limit) and the stream's
        # bits are put together in one register, c_ok
        c_ok = Signal()                # enabled, not past the trial end or its phase limit
        m.d.sync += [
            c_valid.eq(a_valid & ~self.take),
            c_zero.eq(a_stream == 0),
            c_last.eq(a_stream == n - 1),
            c_stream.eq(a_stream),
            c_due.eq(Mux(a_known, a_due, a_phase2.replicate(48) & phase_base)),
            # (with c_valid folded in, and no take in the compare's cycle: fewer gates before
            # the compare's top bit)
            c_ok.eq(a_valid & ~self.take & ~self.take_next & a_en
                    & Mux(a_known, a_dlt & (a_phase2 | a_plt), Mux(a_phase2, start_ok2, start_ok))),
        ]

        # compare (the first compare after START is stream 0 at its start, set up by START).
        # Each register's enable is the borrow of
        # its due time compare (``_less``), whose top bit (from registers) forces it on (no
        # stream kept yet in the scan pass) or off (no compare, or the stream may not send).
        # b2 is kept only with b1, and is never earlier: a stream earlier than b1 is earlier
        # than b2.
        step = Signal()                # a compare this cycle
        keep1, keep2 = Signal(), Signal()   # b1, b2 hold a stream of this scan pass
        m.d.comb += [
            step.eq(~self.take & self.sending & c_valid),
            keep1.eq(~c_zero & b1_valid),
            keep2.eq(~c_zero & b2_valid),
        ]
        en1, en2 = Signal(), Signal()  # the stream is the earliest so far / b2 changes
        m.d.comb += [
            # (c_ok is low when a take comes in the compare's cycle: step without take)
            en1.eq(_less(Cat(c_due, ~(self.sending & c_ok)), Cat(b1_due, self.sending & c_ok & ~keep1))),
            en2.eq(_less(Cat(c_due, ~(self.sending & c_ok)), Cat(b2_due, self.sending & c_ok & ~keep2))),
        ]
        with m.If(step):
            m.d.sync += [b1_valid.eq(keep1 | en1), b2_valid.eq(Mux(en2, ~en1 | keep1, keep2))]
        with m.If(en1):
            m.d.sync += [b1.eq(c_stream), b1_due.eq(c_due)]
        with m.If(en2):
            m.d.sync += [b2.eq(Mux(en1, b1, c_stream)), b2_due.eq(Mux(en1, b1_due, c_due))]
        # a scan pass ends: the cycle after, its two earliest are kept (``last_*``, for the
        # first pick after the next take) and its earliest is the pick (``res_*``)
        scan_end = Signal()
        m.d.comb += scan_end.eq(step & c_last)
        kept = Signal()                # the cycle after a scan pass's end
        last_fresh = Signal()          # last_* are of the table as it is (no take since)
        last1_valid, last1 = Signal(), Signal(range(n))
        last2_valid, last2, last2_due = Signal(), Signal(range(n)), Signal(48)
        m.d.sync += kept.eq(scan_end & ~(self.start & self.enable))     # not the last trial's
        with m.If(kept):
            m.d.sync += [last_fresh.eq(1), last1_valid.eq(b1_valid), last1.eq(b1),
                         last2_valid.eq(b2_valid), last2.eq(b2), last2_due.eq(b2_due)]

        # --- take: move the stream's due time on by its period ---------------------------
        # the due time, read ahead, is registered with the period at the take;
        # the add and the write are the next cycle, and the new due time is registered too
        # (``x_due``)
        m.d.comb += take_rd.addr.eq(self.take_stream)
        # take_stream holds for three cycles before a take, and the due times and known bits
        # do not change in them (takes come four cycles apart, and a START aborts the
        # generator's prepare): the stream's due time is read in two registered stages (the
        # LUT RAM and the known and phase2 bits, then the choice), final in cur_r from the
        # cycle before the take, off the LUT RAM's path
        rd_r = Signal(80)
        rd_known = Signal()
        rd_p2 = Signal()
        cur_r = Signal(80)
        m.d.sync += [rd_r.eq(take_rd.data), rd_known.eq(known.bit_select(self.take_stream, 1)),
                     rd_p2.eq(phase2.bit_select(self.take_stream, 1)),
                     cur_r.eq(Mux(rd_known, rd_r, Cat(Const(0, 32), rd_p2.replicate(48) & phase_base)))]
        t_add = Signal()               # the cycle after a take: add and write
        t_merge = Signal()             # the cycle after: the first pick after the take
        # the taken stream: a replica, as the generator registers the same stream at the same
        # take (its prepared frame's), and synthesis would merge two equal registers into one
        # placed for the emitter, far from this compare
        t_stream = replica(len(self.take_stream), name="t_stream")
        t_cur = Signal(80)
        t_period = Signal(64)
        x_due = Signal(48)
        m.d.sync += [t_add.eq(self.take), t_merge.eq(t_add)]
        with m.If(self.take):
            m.d.sync += [t_stream.eq(self.take_stream), t_cur.eq(cur_r), t_period.eq(self.take_period)]
        m.d.comb += [wr.addr.eq(t_stream), wr.data.eq(t_cur + t_period), wr.en.eq(t_add)]
        with m.If(t_add):
            m.d.sync += x_due.eq(wr.data[32:])
        with m.If(self.take):
            m.d.sync += [known.eq(known | (Const(1, n) << self.take_stream)), taken.eq(taken + 1)]

        # the first pick after a take: the taken stream x at its new due time, checked as in
        # the scan, against the second earliest of the scan's last pass (``last2``), whose
        # earliest was x (ties: the lower stream). Otherwise (a take in the first pass after
        # START, only when START cuts into the preparing of a frame, or after a change of the
        # configuration during the trial) the pick waits for the scan, published a pass or more
        # later than a one-stage scan had it. The checks and the compare are the cycle after the write, the
        # choice (``r_at``) the next, or the same with two streams (a pass of two cycles ends
        # with it).
        x_ok_c, x_lt_c, r_sure_c = Signal(), Signal(), Signal()
        m.d.comb += [
            r_sure_c.eq(last_fresh & last1_valid & (last1 == t_stream)),
            x_ok_c.eq(self.stream_en.bit_select(t_stream, 1) &
                      ((self.mode == MODE_COUNT) | (self.duration[48:] != 0) | (x_due < self.duration[:48])) &
                      (~phase_on | phase2.bit_select(t_stream, 1) | (phase_lim[48:] != 0) | (x_due < phase_lim[:48]))),
            x_lt_c.eq(Cat(t_stream, x_due) < Cat(last2, last2_due)),
        ]
        with m.If(t_merge):
            m.d.sync += last_fresh.eq(0)
        if n == 2:
            r_at, x_ok, x_lt, r_sure = t_merge, x_ok_c, x_lt_c, r_sure_c
        else:
            r_at, x_ok, x_lt, r_sure = Signal(), Signal(), Signal(), Signal()
            m.d.sync += r_at.eq(t_merge)
            with m.If(t_merge):
                m.d.sync += [x_ok.eq(x_ok_c), x_lt.eq(x_lt_c), r_sure.eq(r_sure_c)]
        r_found = Signal()
        r_pick = Signal(range(n))
        m.d.comb += [r_found.eq(x_ok | last2_valid),
                     r_pick.eq(Mux(x_ok & (~last2_valid | x_lt), t_stream, last2))]

        # the first pass after START: no due time is known, so its pick is the lowest stream
        # that may send at its start due time, 0 (phase 1, or no phase switch) before
        # phase_base (phase 2) unless phase_base is 0 too; from registers, every cycle, in two
        # stages (one with two streams: the pick is wanted two cycles after START)
        e_lo, e_hi = Signal(n), Signal(n)       # may send, due 0 / due phase_base
        lo_any, base_zero = Signal(), Signal()
        first_found = Signal()
        first_pick = Signal(range(n))
        stage1 = [e_lo.eq(self.stream_en & ~phase2 & start_ok.replicate(n)),
                  e_hi.eq(self.stream_en & phase2 & start_ok2.replicate(n)),
                  lo_any.eq((self.stream_en & ~phase2).any() & start_ok)]
        m.d.comb += stage1 if n == 2 else []
        m.d.sync += [] if n == 2 else stage1
        m.d.comb += base_zero.eq(~phase_nz_lo)
        m.d.sync += first_found.eq((e_lo | e_hi).any())
        early = Mux(base_zero | ~lo_any, e_lo | e_hi, e_lo)
        for i in reversed(range(n)):
            with m.If(early[i]):
                m.d.sync += first_pick.eq(i)
        in_first = Signal()            # in the first pass after START

        # the pick a pass's end publishes, but for the first pass after START: the one worked
        # out after the take, then the earliest of the scan's latest pass (``res_*``; none
        # after a take the scan's last pass does not fit, until the scan has passed again)
        res_valid = Signal()
        res_found = Signal()
        res_pick = Signal(range(n))
        with m.If(self.take):
            m.d.sync += res_valid.eq(0)
        with m.Elif(r_at):
            m.d.sync += [res_valid.eq(r_sure), res_found.eq(r_found), res_pick.eq(r_pick)]
        with m.Elif(kept):
            m.d.sync += [res_valid.eq(1), res_found.eq(b1_valid), res_pick.eq(b1)]
        pub_valid = Signal()           # what the pass's end publishes
        pub_found = Signal()
        pub_pick = Signal(range(n))
        with m.If(in_first):
            m.d.comb += [pub_valid.eq(1), pub_found.eq(first_found), pub_pick.eq(first_pick)]
        if n == 2:
            # a pass of two cycles ends with the merge after a take
            with m.Elif(r_at & r_sure):
                m.d.comb += [pub_valid.eq(1), pub_found.eq(r_found), pub_pick.eq(r_pick)]
        with m.Else():
            m.d.comb += [pub_valid.eq(res_valid), pub_found.eq(res_found), pub_pick.eq(res_pick)]

        with m.If(self.take):
            m.d.sync += [p.eq(0), self.pick_valid.eq(0), in_first.eq(0)]
        with m.Elif(self.sending):
            m.d.sync += p.eq(p + 1)
            with m.If(p == n - 1):
                m.d.sync += in_first.eq(0)
            with m.If((p == n - 1) & pub_valid):
                found = count_ok & pub_found
                m.d.sync += [self.pick_valid.eq(found), self.pick_stream.eq(pub_pick)]
                with m.If(~found & ~self.prepared):
                    m.d.sync += self.sending.eq(0)      # nothing left to send

        # launch
        clock_on = Signal()            # the trial's clock runs (from its first prepared frame)
        in_burst = Signal(32)          # frames of the current burst gone
        gap = Signal(32)               # idle cycles since the burst ended
        # ``go`` is a few gates from registers (it enables the emitter's many registers):
        # whether the frame's time has come is a register, worked out a cycle ahead: ``bt``
        # with bursts, ``dt`` without. The configuration is static during a trial
        # (registered here).
        #
        # bt: ``in_burst < burst_len`` (a cycle late: in_burst moves only the cycle after a
        # launch, and the next launch is at least five cycles later, a prepare in between) or
        # ``gap >= burst_gap`` (kept up to date in ``gap_ge``, for each way the gap moves).
        burst_on = Signal()            # burst_len != 0
        bg_zero = Signal()             # burst_gap == 0
        bg_one = Signal()              # burst_gap == 1
        bg_m1 = Signal(32)             # burst_gap - 1
        m.d.sync += [burst_on.eq(self.burst_len != 0), bg_zero.eq(self.burst_gap == 0),
                     bg_one.eq(self.burst_gap == 1), bg_m1.eq(self.burst_gap - 1)]
        went = Signal()                # the cycle after a launch
        m.d.sync += went.eq(self.go)
        ib_lt = Signal()               # in_burst < burst_len, a cycle late
        m.d.sync += ib_lt.eq(in_burst < self.burst_len)
        gap_full = Signal()            # gap == 2**32 - 1 (it stops there)
        gap_ge = Signal()              # gap >= burst_gap
        gap_ge_n = Signal()            # its next value
        gap_moves = Signal()
        m.d.comb += gap_moves.eq(self.line_free & ~gap_full)
        with m.If(self.start & self.enable):
            m.d.comb += gap_ge_n.eq(bg_zero)                        # gap 0
        with m.Elif(went):
            m.d.comb += gap_ge_n.eq(bg_zero | (self.line_free & bg_one))   # gap 0 or 1
        with m.Elif(gap_moves):
            m.d.comb += gap_ge_n.eq(bg_zero | (gap >= bg_m1))       # gap + 1
        with m.Else():
            m.d.comb += gap_ge_n.eq(gap_ge)
        m.d.sync += gap_ge.eq(gap_ge_n)
        bt = Signal()
        m.d.sync += bt.eq(ib_lt | gap_ge_n)

        # dt: ``cycle >= p_due``, the prepared frame's due time (the take's): p_due is the
        # take stream's due time as read (cur_r, final from the cycle before the take) while
        # no frame is prepared, and held while one is. The compares of p_due with cycle, cycle + 1 and cycle + 2
        # are registered (ge0, ge1, ge2), and dt takes the one of the cycle count two cycles
        # on (cycle_inc of this cycle and the last): right whenever a frame is prepared.
        p_due = Signal(48)
        cycle_p1 = Signal(48)          # cycle + 1
        cycle_p2 = Signal(48)          # cycle + 2
        cycle_inc = Signal()
        p_hold = Signal(48)
        with m.If(~self.prepared):
            m.d.sync += p_hold.eq(cur_r[32:])
        m.d.comb += p_due.eq(Mux(self.prepared, p_hold, cur_r[32:]))
        m.d.comb += cycle_inc.eq(self.sending & (clock_on | self.prepared))
        ge0, ge1, ge2, inc_r = Signal(), Signal(), Signal(), Signal()
        m.d.sync += [ge0.eq(_ge(cycle, p_due)), ge1.eq(_ge(cycle_p1, p_due)), ge2.eq(_ge(cycle_p2, p_due)),
                     inc_r.eq(cycle_inc)]
        dt = Signal()
        m.d.sync += dt.eq(Mux(inc_r & cycle_inc, ge2, Mux(inc_r | cycle_inc, ge1, ge0)))
        m.d.comb += self.go.eq(self.prepared & self.line_free & Mux(burst_on, bt, dt))

        # the burst count and the gap move on the cycle after a launch, off ``go``'s path: a
        # frame cannot leave then (``prepared`` is low), so nothing reads them before
        with m.If(went):
            with m.If(in_burst >= self.burst_len):
                m.d.sync += in_burst.eq(1)
            with m.Else():
                m.d.sync += in_burst.eq(in_burst + 1)
            m.d.sync += [gap.eq(self.line_free), gap_full.eq(0)]   # 0 at the launch, counting from now
        with m.Elif(gap_moves):
            m.d.sync += [gap.eq(gap + 1), gap_full.eq(gap == 0xFFFFFFFE)]

        # the trial's clock starts with its first prepared frame (a scan and a prepare after
        # START), so that frame leaves at cycle 0 and every later one exactly on its due time
        with m.If(cycle_inc):
            m.d.sync += [cycle.eq(cycle_p1), cycle_p1.eq(cycle_p2), cycle_p2.eq(cycle_p2 + 1), clock_on.eq(1)]
        with m.If(self.start & self.enable):
            m.d.sync += [cycle.eq(0), cycle_p1.eq(1), cycle_p2.eq(2), clock_on.eq(0), known.eq(0), taken.eq(0),
                         self.sending.eq(1), p.eq(0), self.pick_valid.eq(0), in_burst.eq(0), gap.eq(0),
                         gap_full.eq(0), went.eq(0), last_fresh.eq(0), res_valid.eq(0), in_first.eq(1)]
            # the first scan pass fills the pipeline (no stream is known): stream 0 compared
            # next (evaluated here), stream 1 evaluated next, stream 2 read next
            m.d.sync += [c_valid.eq(1), c_zero.eq(1), c_last.eq(0), c_stream.eq(0),
                         c_due.eq(phase2[0].replicate(48) & phase_base),
                         c_ok.eq(self.stream_en[0] & Mux(phase2[0], start_ok2, start_ok)),   # c_valid too
                         a_valid.eq(1), a_stream.eq(1), a_known.eq(0), a_en.eq(self.stream_en[1]),
                         a_phase2.eq(phase2[1]), q.eq(2 % n), bubble.eq(0)]
        with m.Elif(self.stop):
            m.d.sync += [self.sending.eq(0), self.pick_valid.eq(0)]
        return m
