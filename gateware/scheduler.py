"""Trial timer and stream scheduler of one port (semantics in
:mod:`wirespeed.gateware.streamdesc`, "Scheduling").

Each stream s has a due time, Q48.32 clock cycles since the trial's first frame was ready
to leave (a scan and a prepare, about 21 cycles, after START): frame k of s is due at
k * period_s. A scan over the streams (one per cycle) finds the earliest-due stream still
sending (ties: the lower stream) and offers it on ``pick_*`` once a whole pass has seen no
take; the generator ``take``s it (``take_stream``, ``take_period``: the stream's due time,
``take_due``, moves on by its period). A prepared frame leaves (``go``)
when its due time has come and the line is free, so a frame held up by the line does not
shift the ones after it, and the long-run rate of every stream is exact to 2**-32 cycles.

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

from amaranth import Cat, Module, Signal, Const, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["StreamScheduler", "MODE_DURATION", "MODE_COUNT"]

MODE_DURATION = 0
MODE_COUNT = 1


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
            "take": In(1), "take_stream": In(range(n_streams)), "take_period": In(64),
            "take_due": Out(48),
            # launch of the prepared frame
            "prepared": In(1), "prepared_due": In(48), "line_free": In(1), "go": Out(1),
            "sending": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        m.submodules.dues = dues = Memory(shape=80, depth=n, init=[])
        scan_rd = dues.read_port(domain="comb")
        take_rd = dues.read_port(domain="comb")
        wr = dues.write_port()
        known = Signal(n)              # due time written since START (else its start)

        # phase switch, registered (static during a trial): the start due time of each stream
        # (phase_at for phase 2 streams, else 0) and the limit of the phase 1 streams
        phase_on = Signal()
        phase_base = Signal(48)
        phase2 = Signal(n)
        phase_lim = Signal(64)
        m.d.sync += [phase_on.eq(self.phase_at != 0), phase_base.eq(self.phase_at[:48]),
                     phase2.eq(Mux(self.phase_at != 0, self.phase2, 0)), phase_lim.eq(self.phase_at)]

        def start_due(stream):
            """The due time (integer cycles) of ``stream`` before its first take."""
            return phase2.bit_select(stream, 1).replicate(48) & phase_base

        def phase_ok(stream, due):
            """Phase 1 streams stop at phase_at."""
            return ~phase_on | phase2.bit_select(stream, 1) | (due < phase_lim)

        cycle = Signal(48)             # cycles since START
        taken = Signal(64)             # frames taken this trial (count mode)

        # scan: one stream per cycle; a pick is offered after a whole pass without a take
        p = Signal(range(n))
        best_valid = Signal()
        best = Signal(range(n))
        best_due = Signal(48)
        m.d.comb += scan_rd.addr.eq(p)
        due_p = Signal(48)
        m.d.comb += due_p.eq(Mux(known.bit_select(p, 1), scan_rd.data[32:], start_due(p)))
        active = Signal()
        with m.If(self.mode == MODE_COUNT):
            m.d.comb += active.eq(self.stream_en.bit_select(p, 1) & (taken < self.count) & phase_ok(p, due_p))
        with m.Else():
            m.d.comb += active.eq(self.stream_en.bit_select(p, 1) & (due_p < self.duration) & phase_ok(p, due_p))

        with m.If(self.take):
            m.d.sync += [p.eq(0), best_valid.eq(0), self.pick_valid.eq(0)]
        with m.Elif(self.sending):
            m.d.sync += p.eq(p + 1)
            better = active & (~best_valid | (due_p < best_due))
            last = p == n - 1
            with m.If(last):
                # a full pass ends: publish, and start the next pass afresh
                m.d.sync += [
                    self.pick_valid.eq(best_valid | better),
                    best_valid.eq(0),
                ]
                m.d.sync += self.pick_stream.eq(Mux(better, p, best))
                with m.If(~best_valid & ~better & ~self.prepared):
                    m.d.sync += self.sending.eq(0)      # nothing left to send
            with m.Elif(better):
                m.d.sync += [best_valid.eq(1), best.eq(p), best_due.eq(due_p)]

        # take: move the stream's due time on by its period
        m.d.comb += take_rd.addr.eq(self.take_stream)
        cur = Signal(80)
        m.d.comb += [cur.eq(Mux(known.bit_select(self.take_stream, 1), take_rd.data,
                                Cat(Const(0, 32), start_due(self.take_stream)))),
                     self.take_due.eq(cur[32:])]
        with m.If(self.take):
            m.d.comb += [wr.addr.eq(self.take_stream), wr.data.eq(cur + self.take_period), wr.en.eq(1)]
            m.d.sync += [known.eq(known | (Const(1, n) << self.take_stream)), taken.eq(taken + 1)]

        # launch
        in_burst = Signal(32)          # frames of the current burst gone
        gap = Signal(32)               # idle cycles since the burst ended
        burst_open = Signal()
        m.d.comb += burst_open.eq((in_burst < self.burst_len) | (gap >= self.burst_gap))
        with m.If(self.burst_len != 0):
            m.d.comb += self.go.eq(self.prepared & self.line_free & burst_open)
        with m.Else():
            m.d.comb += self.go.eq(self.prepared & self.line_free & (cycle >= self.prepared_due))
        with m.If(self.go):
            with m.If(in_burst >= self.burst_len):
                m.d.sync += in_burst.eq(1)
            with m.Else():
                m.d.sync += in_burst.eq(in_burst + 1)
            m.d.sync += gap.eq(0)
        with m.Elif(self.line_free & (gap != 0xFFFFFFFF)):
            m.d.sync += gap.eq(gap + 1)

        # the trial's clock starts with its first prepared frame (a scan and a prepare after
        # START), so that frame leaves at cycle 0 and every later one exactly on its due time
        clock_on = Signal()
        with m.If(self.sending & (clock_on | self.prepared)):
            m.d.sync += [cycle.eq(cycle + 1), clock_on.eq(1)]
        with m.If(self.start & self.enable):
            m.d.sync += [cycle.eq(0), clock_on.eq(0), known.eq(0), taken.eq(0), self.sending.eq(1), p.eq(0),
                         best_valid.eq(0), self.pick_valid.eq(0), in_burst.eq(0), gap.eq(0)]
        with m.Elif(self.stop):
            m.d.sync += [self.sending.eq(0), self.pick_valid.eq(0)]
        return m
