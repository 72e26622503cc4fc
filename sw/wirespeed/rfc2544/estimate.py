"""How long a plan will take, before it runs: per test and frame size, the trials expected (and
the most the search bounds allow), their time on the wire and the wall time they take.

Trials: each test's estimator (its registry entry's ``estimate``) runs the test's own search
(:mod:`wirespeed.rfc2544.search`) against a model of the DUT, a :class:`DutHint`: a trial at
``rate`` passes when the DUT forwards that rate, plus what its queue holds over the trial
(``rate <= forwarding + (queue + 1) / duration``), and a failed one forwarded the smaller of the
two. A simulated DUT model states its forwarding rate (:meth:`DutHint.from_dut`: the router's
``rate``, line rate for a loopback or a switch without one); any other DUT (a board, a
Verilog design, a model with random impairments or a blackout) gets the documented prior
:data:`PRIOR_PCT`, and the estimate says which it used (``basis``).

Time on the wire: each trial's duration and wait (a burst's frames at line rate and its wait),
the wait's extension while a model's queue drains (:meth:`DutHint.settle_ns`), the learning
phase's frames and settle wait. Wall time (:class:`Pace`): on a board, wire time plus
:data:`BOARD_TRIAL_OVERHEAD_S` per trial for the control path; in simulation, wire time plus
:data:`SIM_TRIAL_OVERHEAD_NS` per trial (the simulation runs on while the host arms a trial and
reads its results), divided by the simulation's pace (simulated ns per wall second, measured on
the running simulation by :func:`measure_pace`). A simulation carries a trial more slowly than
it idles: the gateware and the DUT model move frames, and the host polls the clock and reads the
counters and histograms, so an idle measurement makes the estimate too short. The pace is
therefore measured over a pilot trial of the plan's own traffic when the DUT's model says what
it forwards: the first test's first frame size at :data:`PILOT_SHARE` of what the DUT forwards
(nothing queues or is lost, so the DUT is as before), shaped as that test's trials: their
duration, at most :data:`PILOT_NS`, and their wait scaled with it. An idle simulation runs more
than twice as fast as one carrying frames, so the pilot must hold the same share of traffic and
of waiting as the trials it stands for; only its length is cut. Otherwise (a Verilog design, a
model dropping frames at random or in a blackout window: a pilot would change what the run
measures) the pace is measured over :data:`PACE_INTERVAL_S` of an
idle simulation. :mod:`wirespeed.rfc2544.eta` refines the figures while the run goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ..ethernet import line_rate_fps
from ..host.trial import DRAIN_STEPS
from ..sizes import SizePoint
from . import registry

__all__ = ["DutHint", "ModelTrial", "Pace", "SizeEstimate", "TestEstimate", "RunEstimate", "estimate_configs",
           "measure_pace", "Pilot", "pilot_trial", "PRIOR_PCT", "PILOT_NS", "WARMUP_NS", "PILOT_SHARE",
           "SIM_TRIAL_OVERHEAD_NS", "BOARD_TRIAL_OVERHEAD_S", "format_seconds"]

#: % of line rate a DUT of unknown forwarding rate is assumed to forward (the searches then take
#: their full course: a loss, then the search below it)
PRIOR_PCT = 50.0
#: simulated ns that pass per trial beyond its duration and wait, while the host arms the
#: generators and reads the counters, histograms and stream statistics: the spacing of the
#: trials' start times in a simulated run (trials.jsonl ``started_ns``) less their durations
#: and waits. The simulation answers the host's register accesses between its socket polls, so
#: the host's work takes simulated time, whatever the machine's load.
SIM_TRIAL_OVERHEAD_NS = 600_000
#: wall seconds per trial beyond its time on the wire on a board: the control path's requests
#: (assumed: about 40 round trips of a few ms over Etherbone)
BOARD_TRIAL_OVERHEAD_S = 0.1
#: wall seconds over which :func:`measure_pace` reads an idle simulation's clock
PACE_INTERVAL_S = 0.5
#: the most tester time the pilot trial sends for: long enough that the host's arming and
#: reading (:data:`SIM_TRIAL_OVERHEAD_NS`, at the idle pace) weigh in it about as in a trial
PILOT_NS = 2_500_000
#: tester time the unmeasured warm-up before the pilot sends for
WARMUP_NS = 100_000
#: the pilot's rate, as a share of what the DUT forwards: below it, no frame queues or is lost
PILOT_SHARE = 0.9
#: impairments that make trials fail at random: a search against such a DUT follows no model
_RANDOM = ("loss", "dup", "reorder", "corrupt")


@dataclass(frozen=True)
class ModelTrial:
    """A trial as the DUT model predicts it (what the searches read of a result)."""

    offered_fps: float
    forwarded_fps: float
    tx_frames: int
    lost_frames: int

    @property
    def passed(self) -> bool:
        return self.tx_frames > 0 and self.lost_frames == 0


class DutHint(BaseModel):
    """What is known of the DUT's forwarding before the run (see the module doc).
    ``rate_fps``: frames/s it forwards (None: line rate at every size); ``queue_frames``: what
    it buffers; ``known``: from a model's parameters (False: the prior)."""

    known: bool
    rate_fps: float | None = None
    queue_frames: int = 0
    latency_ns: int = 0
    basis: str

    @classmethod
    def prior(cls, why: str = "no model of the DUT") -> DutHint:
        return cls(known=False, rate_fps=None, basis=f"prior ({why}): the DUT forwards {PRIOR_PCT:g} % of line "
                                                     "rate, buffers nothing")

    @classmethod
    def from_dut(cls, dut: Mapping[str, Any] | None) -> DutHint:
        """The hint a run's DUT description gives (``Tester.dut``, a simulated model's
        ``describe()``), else the prior."""
        dut = dut or {}
        model = dut.get("model")
        if model not in ("loopback", "router", "switch"):
            return cls.prior()
        if any(dut.get("impairments", {}).get(k) for k in _RANDOM):
            return cls.prior("the simulated DUT drops or alters frames at random")
        if dut.get("impairments", {}).get("blackout_len_ns"):
            return cls.prior("the simulated DUT drops frames in a blackout window")
        rate = dut.get("rate_fps")
        queue = int(dut.get("queue_frames", 0))
        what = "line rate" if rate is None else f"{rate:,.0f} frames/s"
        return cls(known=True, rate_fps=rate, queue_frames=queue, latency_ns=int(dut.get("latency_ns", 0)),
                   basis=f"simulated {model} ({dut.get('spec', model)}): forwards {what}"
                         + (f", queue {queue} frames" if queue else ""))

    def forwarding_fps(self, size: SizePoint) -> float:
        line = line_rate_fps(size)
        if not self.known:
            return line * PRIOR_PCT / 100
        return line if self.rate_fps is None else min(line, self.rate_fps)

    def passing_fps(self, size: SizePoint, duration_ns: int) -> float:
        """The highest rate a trial of ``duration_ns`` passes at: forwarding plus the queue."""
        extra = (self.queue_frames + 1) * 1e9 / duration_ns if self.known and self.queue_frames else 0.0
        return min(line_rate_fps(size), self.forwarding_fps(size) + extra)

    def trial(self, size: SizePoint, rate_fps: float, duration_ns: int) -> ModelTrial:
        """The model's trial at ``rate_fps`` for ``duration_ns``."""
        passing = self.passing_fps(size, duration_ns)
        sent = max(1, math.ceil(rate_fps * duration_ns / 1e9))
        through = min(rate_fps, passing)
        lost = 0 if rate_fps <= passing * (1 + 1e-12) else max(1, sent - math.floor(through * duration_ns / 1e9))
        return ModelTrial(offered_fps=rate_fps, forwarded_fps=through, tx_frames=sent, lost_frames=lost)

    def settle_ns(self, size: SizePoint, rate_fps: float, duration_ns: int, wait_ns: int) -> int:
        """The wait after a trial at ``rate_fps``: ``wait_ns``, and half of it more while the
        model's queue (filled by a rate above its forwarding) still drains in the last half
        (wirespeed.host.trial's settling)."""
        forwarding = self.forwarding_fps(size)
        if not self.known or rate_fps <= forwarding:
            return wait_ns
        queued = min(self.queue_frames, (rate_fps - forwarding) * duration_ns / 1e9)
        drain_ns = self.latency_ns + queued * 1e9 / forwarding
        half = max(wait_ns // 2, 1)
        extra = max(0, math.ceil((drain_ns - (wait_ns - half)) / half))
        return wait_ns + min(extra, DRAIN_STEPS) * half

    def burst_frames(self, size: SizePoint) -> float | None:
        """The longest burst at line rate the DUT forwards without loss (inf: any; None: not
        known, the prior)."""
        line, rate = line_rate_fps(size), self.forwarding_fps(size)
        if not self.known:
            return None
        if rate >= line:
            return math.inf
        return math.floor((self.queue_frames + 1) / (1 - rate / line))


def burst_ns(size: SizePoint, frames: int) -> int:
    """A burst's time on the wire, at line rate."""
    return math.ceil(frames * 1e9 / line_rate_fps(size))


class SizeEstimate(BaseModel):
    """One frame size of one test: trials expected, the most its bounds allow, time on the
    wire (trials and waits) and the wall time (filled in by :func:`estimate_configs`)."""

    frame_size: SizePoint
    trials: int
    most_trials: int
    wire_ns: int
    wall_s: float = 0.0


class TestEstimate(BaseModel):
    test: str
    sizes: list[SizeEstimate]
    trials: int
    most_trials: int
    wire_ns: int
    wall_s: float


class Pace(BaseModel):
    """How wire time becomes wall time: ``sim_ns_per_s`` simulated ns per wall second (None:
    real time, a board), plus ``trial_overhead_s`` per trial; ``measured``: what the pace was
    measured over ("pilot trial", "idle simulation"; "" on a board)."""

    sim_ns_per_s: float | None = None
    trial_overhead_s: float = BOARD_TRIAL_OVERHEAD_S
    measured: str = ""

    @classmethod
    def simulation(cls, sim_ns_per_s: float, measured: str = "") -> Pace:
        """A simulation's pace: its overhead per trial is simulated time too."""
        return cls(sim_ns_per_s=sim_ns_per_s, trial_overhead_s=SIM_TRIAL_OVERHEAD_NS / sim_ns_per_s,
                   measured=measured)

    def wall_s(self, wire_ns: int, trials: int) -> float:
        per_s = self.sim_ns_per_s or 1e9
        return wire_ns / per_s + trials * self.trial_overhead_s


class RunEstimate(BaseModel):
    """A plan's estimate (see the module doc); ``RunStarted.estimate`` carries it as JSON."""

    tests: list[TestEstimate]
    learning_wire_ns: int = 0
    trials: int
    most_trials: int
    wire_ns: int
    wall_s: float
    pace: Pace
    basis: str = Field(description="what the expected trials assume of the DUT")

    def of(self, test: str) -> TestEstimate | None:
        return next((t for t in self.tests if t.test == test), None)


def estimate_configs(configs: Mapping[str, Any], dut: DutHint | None = None, pace: Pace | None = None,
                     learning: Any = None) -> RunEstimate:
    """The estimate of running ``configs`` (test name -> configuration, as :meth:`Plan.configs`)
    after ``learning`` (a :class:`~.common.LearningConfig`, None: no learning phase)."""
    dut = dut or DutHint.prior()
    pace = pace or Pace()
    tests = []
    for name, config in configs.items():
        estimator = registry.get(name).estimate
        sizes = estimator(config, dut) if estimator is not None else []
        for size in sizes:
            size.wall_s = pace.wall_s(size.wire_ns, size.trials)
        tests.append(TestEstimate(test=name, sizes=sizes, trials=sum(s.trials for s in sizes),
                                  most_trials=sum(s.most_trials for s in sizes), wire_ns=sum(s.wire_ns for s in sizes),
                                  wall_s=sum(s.wall_s for s in sizes)))
    learn_ns = 0
    if learning is not None and configs:
        learn_ns = math.ceil(learning.frames * 1e9 / learning.rate_fps) + learning.settle_ns
    return RunEstimate(tests=tests, learning_wire_ns=learn_ns, trials=sum(t.trials for t in tests),
                       most_trials=sum(t.most_trials for t in tests),
                       wire_ns=learn_ns + sum(t.wire_ns for t in tests),
                       wall_s=pace.wall_s(learn_ns, 1 if learn_ns else 0) + sum(t.wall_s for t in tests),
                       pace=pace, basis=dut.basis)


def measure_pace(tester: Any, pilot: Pilot | None = None, interval_s: float = PACE_INTERVAL_S) -> Pace:
    """A running simulation's pace: its clock (``time.ns``) read before and after the pilot's
    trial (after its warm-up, unmeasured; see the module doc), else ``interval_s`` of wall time
    apart without polling in between (each read timed at the middle of its round trip)."""
    def read() -> tuple[float, int]:
        before = time.monotonic()
        ns = tester.now_ns()
        return (before + time.monotonic()) / 2, ns

    if pilot is not None:
        # the first trial on a fresh simulation is slower than the ones after it (its memory is
        # first touched, the host's trial code runs for the first time)
        pilot.warm_up()
    start_wall, start_ns = read()
    if pilot is not None:
        pilot.trial()
    else:
        time.sleep(interval_s)
    end_wall, end_ns = read()
    return Pace.simulation(max(end_ns - start_ns, 1) / max(end_wall - start_wall, 1e-6),
                           "pilot trial" if pilot is not None else "idle simulation")


@dataclass(frozen=True)
class Pilot:
    """The pilot :func:`measure_pace` runs (see the module doc): ``flows`` at ``rate_fps`` for
    ``duration_ns``, then ``wait_ns``; its warm-up the same, cut to :data:`WARMUP_NS`."""

    tester: Any
    flows: Any
    rate_fps: float
    duration_ns: int
    wait_ns: int

    def warm_up(self) -> None:
        self._run(min(WARMUP_NS, self.duration_ns))

    def trial(self) -> None:
        self._run(self.duration_ns)

    def _run(self, duration_ns: int) -> None:
        self.tester.run_trial(self.flows, self.rate_fps, duration_ns, self.wait_ns * duration_ns // self.duration_ns)


def pilot_trial(tester: Any, config: Any, dut: DutHint) -> Pilot | None:
    """The pilot before ``config``'s test (a :class:`PortPairConfig`): its traffic at its first
    frame size at :data:`PILOT_SHARE` of what the DUT forwards, for its (search) trials'
    duration cut to :data:`PILOT_NS` and their wait cut in proportion; None when the DUT's
    forwarding is not known."""
    if not dut.known or not hasattr(config, "flows") or not config.frame_sizes:
        return None
    size = config.frame_sizes[0]
    full = getattr(config, "search_duration_ns", None) or getattr(config, "trial_duration_ns", None) or PILOT_NS
    duration = min(full, PILOT_NS)
    wait = getattr(config, "wait_ns", 0) * duration // full
    return Pilot(tester, config.flows(size), dut.forwarding_fps(size) * PILOT_SHARE, duration, wait)


def format_seconds(seconds: float) -> str:
    """``42 s``, ``2 min 10 s``, ``1 h 05 min`` (wall time, to the second)."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
