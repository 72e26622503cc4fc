"""Trial timer and rate control: decides, in gateware, when each frame of a trial starts.

A trial starts on ``start`` (when ``enable``) and ends by duration (``mode`` 0: frames start
only at cycles below ``duration``) or by frame count (``mode`` 1). Frame k is due at cycle
floor(k * period) after the start, ``period`` being Q32.32 clock cycles, so the long-run rate
is exact to the resolution of 2^-32 cycles; a frame delayed by a busy generator does not
shift the ones after it.
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["TrialScheduler", "MODE_DURATION", "MODE_COUNT"]

MODE_DURATION = 0
MODE_COUNT = 1


class TrialScheduler(wiring.Component):
    start: In(1)
    stop: In(1)
    enable: In(1)
    mode: In(1)
    duration: In(64)   # clock cycles
    count: In(64)      # frames
    period: In(64)     # Q32.32 clock cycles between frame starts
    gen_busy: In(1)

    start_frame: Out(1)
    running: Out(1)    # high from start until the last frame has left the generator

    def elaborate(self, platform):
        m = Module()
        cycle = Signal(48)        # cycles since the trial started
        due = Signal(48 + 32)     # Q48.32 cycle at which the next frame is due
        started = Signal(64)      # frames started this trial
        sending = Signal()        # still scheduling frames

        more = Signal()
        with m.If(self.mode == MODE_COUNT):
            m.d.comb += more.eq(started < self.count)
        with m.Else():
            m.d.comb += more.eq(due[32:] < self.duration)

        m.d.comb += self.running.eq(sending | self.gen_busy)
        with m.If(self.start & self.enable):
            m.d.sync += [cycle.eq(0), due.eq(0), started.eq(0), sending.eq(1)]
        with m.Elif(self.stop):
            m.d.sync += sending.eq(0)
        with m.Elif(sending):
            m.d.sync += cycle.eq(cycle + 1)
            with m.If(~more):
                m.d.sync += sending.eq(0)
            with m.Elif((cycle >= due[32:]) & ~self.gen_busy):
                m.d.comb += self.start_frame.eq(1)
                m.d.sync += [due.eq(due + self.period), started.eq(started + 1)]
        return m
