"""RFC 2544 section 26.1, throughput: per frame size, the highest offered rate at which the
DUT forwards every frame it is sent (zero loss; RFC 1242 3.17).

Configuration (:class:`ThroughputConfig`), the trial (a ``trial(rate) -> TrialResult``
callable, normally :meth:`wirespeed.host.device.Device.run_trial`) and the results
(:class:`ThroughputResult`) are kept apart, as in TRex's ndr_bench. The search itself,
:func:`search_throughput`, is a pure function of the trial callable.

Search: the first trial runs at 100 % of line rate; if it loses nothing, that is the
result. Otherwise the offered rate is bisected between the highest passing rate (initially
0) and the lowest failing rate until they are at most ``resolution`` apart; the result is the
highest passing rate. With the default resolution of 0.1 % of line rate that takes
1 + ceil(log2(1000)) = 11 trials for a DUT below line rate.

RFC 2544 section 24 says trials SHOULD last 60 s with waits of 2 s (section 23); shorter
values (the simulation defaults) are allowed for the search and are flagged in the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, computed_field

from ..ethernet import line_rate_fps, throughput_mbps
from ..host.device import HistogramConfig, LearningResult, TrialResult
from ..latency import LAT_DEF, LatencyFigures, Pipeline, latency_figures
from ..units import format_duration
from .common import RFC_TRIAL_NS, RFC_WAIT_NS, LearningConfig, PortPairConfig, TrialRunner, run_learning

__all__ = [
    "ThroughputConfig", "LearningConfig", "ThroughputResult", "run_learning", "ThroughputObserver", "SearchOutcome",
    "search_throughput", "run_throughput", "RFC_TRIAL_NS", "RFC_WAIT_NS",
]

class ThroughputConfig(PortPairConfig):
    """Every parameter of a throughput test."""

    trial_duration_ns: int = Field(gt=0)
    wait_ns: int = Field(ge=0, description="after the generators stop, before the counters are read")
    resolution_pct: float = Field(0.1, gt=0, le=100, description="of line rate")
    max_trials: int = Field(32, ge=1, description="per frame size")
    latency_definition: Literal["bit_forwarding", "store_and_forward"] = Field(
        "bit_forwarding", description="what the analyzers measure (pN.ana.lat_def); the other definition "
                                      "is derived (wirespeed.latency)")

    def resolution_fps(self, frame_len: int) -> float:
        return line_rate_fps(frame_len) * self.resolution_pct / 100

    @computed_field
    @property
    def scaled_down(self) -> bool:
        """True when trials or waits are shorter than RFC 2544 asks."""
        return (self.trial_duration_ns < RFC_TRIAL_NS or self.wait_ns < RFC_WAIT_NS
                or (self.learning is not None and self.learning.settle_ns < RFC_WAIT_NS))

    def notes(self) -> list[str]:
        notes = []
        if self.learning is not None and self.learning.settle_ns < RFC_WAIT_NS:
            notes.append(f"learning settle wait {format_duration(self.learning.settle_ns)} is scaled down from "
                         f"RFC 2544 section 23 ({format_duration(RFC_WAIT_NS)})")
        if not (self.trial_duration_ns < RFC_TRIAL_NS or self.wait_ns < RFC_WAIT_NS):
            return notes
        return [f"trial {format_duration(self.trial_duration_ns)} and wait {format_duration(self.wait_ns)} "
                f"are scaled down from RFC 2544 (trials {format_duration(RFC_TRIAL_NS)}, waits "
                f"{format_duration(RFC_WAIT_NS)}); figures are not RFC 2544 results", *notes]


# The search -------------------------------------------------------------------------------------------


class Verdict(Protocol):
    passed: bool


R = TypeVar("R", bound=Verdict)


@dataclass
class SearchOutcome(Generic[R]):
    """Where the search ended. ``throughput_fps`` is the highest passing offered rate (0.0
    when none passed); the true throughput lies below ``failed_fps`` (the lowest failing
    rate, None if 100 % passed). ``converged`` is False when ``max_trials`` stopped it first."""

    line_rate_fps: float
    resolution_fps: float
    rates: list[float] = field(default_factory=list)
    trials: list[R] = field(default_factory=list)
    throughput_fps: float = 0.0
    failed_fps: float | None = None
    best: R | None = None
    converged: bool = False


def search_throughput(trial: Callable[[float], R], line_rate_fps: float, resolution_fps: float,
                      max_trials: int) -> SearchOutcome[R]:
    """RFC 2544 26.1 search over ``trial(rate_fps)``: 100 % first, then bisection between
    the highest passing and the lowest failing rate until they are ``resolution_fps`` apart
    (or ``max_trials`` trials have run)."""
    out = SearchOutcome[R](line_rate_fps=line_rate_fps, resolution_fps=resolution_fps)
    low, high, rate = 0.0, line_rate_fps, line_rate_fps
    while len(out.trials) < max_trials:
        result = trial(rate)
        out.rates.append(rate)
        out.trials.append(result)
        if result.passed:
            low, out.best = rate, result
        else:
            high = out.failed_fps = rate
        if high - low <= resolution_fps:
            out.converged = True
            break
        rate = (low + high) / 2
    out.throughput_fps = low
    return out


# Results ------------------------------------------------------------------------------------------------


class ThroughputResult(BaseModel):
    """The throughput of one frame size."""

    frame_size: int
    theoretical_max_fps: float
    resolution_fps: float
    throughput_fps: float = Field(description="highest offered rate with zero loss; 0 if none")
    failed_fps: float | None = Field(description="lowest offered rate that lost frames")
    converged: bool
    trials: int
    best: TrialResult | None = Field(description="the trial at throughput_fps")
    latency: list[LatencyFigures] = Field(default_factory=list,
                                          description="latency of the best trial in both definitions, "
                                                      "the measured one first")

    @computed_field
    @property
    def pct_line_rate(self) -> float:
        return 100.0 * self.throughput_fps / self.theoretical_max_fps

    @computed_field
    @property
    def throughput_mbps(self) -> float:
        return throughput_mbps(self.frame_size, self.throughput_fps)

    @classmethod
    def from_outcome(cls, frame_size: int, outcome: SearchOutcome[TrialResult],
                     pipeline: Pipeline | None = None) -> "ThroughputResult":
        """``pipeline``: the calibrated tester pipeline delay to subtract from the latency
        (:meth:`wirespeed.calibration.Calibration.pipeline_ns`); None reports raw latency."""
        return cls(frame_size=frame_size, theoretical_max_fps=outcome.line_rate_fps,
                   resolution_fps=outcome.resolution_fps, throughput_fps=outcome.throughput_fps,
                   failed_fps=outcome.failed_fps, converged=outcome.converged,
                   trials=len(outcome.trials), best=outcome.best,
                   latency=latency_figures(outcome.best, pipeline) if outcome.best else [])


class ThroughputObserver:
    """Told about progress as it happens (override what you need)."""

    def size_started(self, frame_size: int, line_rate_fps: float) -> None:
        pass

    def learning_done(self, result: LearningResult) -> None:
        pass

    def trial_started(self, frame_size: int, step: int, rate_fps: float) -> None:
        pass

    def trial_done(self, step: int, result: TrialResult) -> None:
        pass

    def size_done(self, result: ThroughputResult) -> None:
        pass


def run_throughput(device: TrialRunner, config: ThroughputConfig,
                   observer: ThroughputObserver | None = None,
                   pipeline: Pipeline | None = None) -> list[ThroughputResult]:
    """The throughput test for every frame size of ``config``, in order; latency figures
    calibrated by ``pipeline`` (see :meth:`ThroughputResult.from_outcome`)."""
    observer = observer or ThroughputObserver()
    if config.learning is not None:
        observer.learning_done(run_learning(device, config))
    results = []
    for size in config.frame_sizes:
        results.append(_one_size(device, config, size, observer, pipeline))
        observer.size_done(results[-1])
    return results


def _one_size(device: TrialRunner, config: ThroughputConfig, size: int,
              observer: ThroughputObserver, pipeline: Pipeline | None = None) -> ThroughputResult:
    flows, line = config.flows(size), line_rate_fps(size)
    observer.size_started(size, line)
    steps = 0
    histogram = HistogramConfig()

    def trial(rate: float) -> TrialResult:
        nonlocal steps, histogram
        steps += 1
        observer.trial_started(size, steps, rate)
        result = device.run_trial(flows, rate, config.trial_duration_ns, config.wait_ns, histogram,
                                  lat_def=LAT_DEF[config.latency_definition])
        if (lat := result.latency) is not None:   # bin the next trial around what this one saw
            histogram = HistogramConfig.fitting(lat.min_ns, lat.max_ns)
        observer.trial_done(steps, result)
        return result

    outcome = search_throughput(trial, line, config.resolution_fps(size), config.max_trials)
    return ThroughputResult.from_outcome(size, outcome, pipeline)
