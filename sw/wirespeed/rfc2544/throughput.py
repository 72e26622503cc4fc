"""RFC 2544 section 26.1, throughput: per frame size, the highest offered rate at which the
DUT forwards every frame it is sent (zero loss; RFC 1242 3.17).

Configuration (:class:`ThroughputConfig`), the trial (a ``trial(rate) -> TrialResult``
callable, normally :meth:`wirespeed.host.device.Device.run_trial`) and the results
(:class:`ThroughputResult`) are kept apart, as in TRex's ndr_bench. The search itself,
:func:`search_throughput`, is a pure function of the trial callable.

Search: the first trial runs at 100 % of line rate; if it loses nothing, that is the
result. Otherwise the offered rate is searched between the highest passing rate (initially 0)
and the lowest failing rate until they are at most ``resolution`` apart; the result is the
highest passing rate. Plain bisection (``search="bisect"``, RFC 2544's binary search) takes
1 + ceil(log2(1000)) = 11 trials at the default resolution of 0.1 % of line rate. The default
``search="loss-informed"`` uses what a failed trial measured: the DUT forwarded
``offered * (1 - loss)`` frames/s, so the next trial runs half a resolution below that rate and,
if it passes, the one after half a resolution above it: for a DUT with a plain forwarding limit
the search ends there, in 3 trials. Whenever an estimate proves wrong (the guess fails, or the
probe above it passes: a DUT whose forwarding collapses under overload, or a queue that
flatters short trials) it bisects the interval left, and from then on, so such a DUT costs at
most two trials more than bisection. The interval never grows, so it ends within ``resolution`` of the
same throughput as bisection would.

A trial passes when it loses no frame, or at most ``loss_tolerance_pct`` of them (an optional
tolerance, reported with the result; RFC 2544's throughput is zero loss). Search trials may be
shorter than the trial duration (``search_duration_ns``); the result is then confirmed by a
trial of the full duration at the found rate, and if that one loses frames the search goes on
below it with full-length trials.

RFC 2544 section 24 says trials SHOULD last 60 s with waits of 2 s (section 23); shorter
values (the simulation defaults) are allowed for the search and are flagged in the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, computed_field, model_validator

from ..ethernet import line_rate_fps, throughput_mbps
from ..host.device import HistogramConfig, LearningResult, TrialResult
from ..latency import LAT_DEF, LatencyFigures, Pipeline, latency_figures
from ..units import format_duration
from .common import RFC_TRIAL_NS, RFC_WAIT_NS, LearningConfig, PortPairConfig, TrialRunner, run_learning

__all__ = [
    "ThroughputConfig", "LearningConfig", "ThroughputResult", "run_learning", "ThroughputObserver", "SearchOutcome",
    "search_throughput", "run_throughput", "RFC_TRIAL_NS", "RFC_WAIT_NS", "RepeatedLatency",
]

class ThroughputConfig(PortPairConfig):
    """Every parameter of a throughput test."""

    trial_duration_ns: int = Field(gt=0)
    wait_ns: int = Field(ge=0, description="after the generators stop, before the counters are read")
    resolution_pct: float = Field(0.1, gt=0, le=100, description="of line rate")
    max_trials: int = Field(32, ge=1, description="per frame size")
    search: Literal["loss-informed", "bisect"] = Field(
        "loss-informed", description="bisect: RFC 2544's binary search; loss-informed: the next rate from what the "
                                     "last trial forwarded (fewer trials, same resolution)")
    loss_tolerance_pct: float = Field(0.0, ge=0, lt=100, description="a trial passes if it loses at most this "
                                                                       "% of its frames (RFC 2544: 0)")
    latency_trials: int = Field(0, ge=0, le=1000, description="RFC 2544 26.2: latency trials repeated at each "
                                                                "size's throughput rate after its search (RFC: 20); "
                                                                "0: the latency of the search's final trial only")
    search_duration_ns: int | None = Field(None, gt=0, description="length of the search trials; None: the trial "
                                                                   "duration. Shorter: the result is confirmed by "
                                                                   "a full-length trial")
    latency_definition: Literal["bit_forwarding", "store_and_forward"] = Field(
        "bit_forwarding", description="what the analyzers measure (pN.ana.lat_def); the other definition "
                                      "is derived (wirespeed.latency)")

    def resolution_fps(self, frame_len: int) -> float:
        return line_rate_fps(frame_len) * self.resolution_pct / 100

    @model_validator(mode="after")
    def _search_not_longer(self):
        if self.search_duration_ns is not None and self.search_duration_ns > self.trial_duration_ns:
            raise ValueError("search_duration_ns must not exceed trial_duration_ns")
        return self

    def passes(self, result: TrialResult) -> bool:
        """The trial's verdict: no loss, or at most ``loss_tolerance_pct`` (and nothing
        received that was not sent: no duplicate)."""
        if self.loss_tolerance_pct == 0:
            return result.passed
        return (result.tx_frames > 0 and result.unsent_received == 0
                and result.loss_pct <= self.loss_tolerance_pct)

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
                      max_trials: int, *, passed: Callable[[R], bool] | None = None,
                      forwarded: Callable[[R], float | None] | None = None,
                      failed: tuple[float, R] | None = None) -> SearchOutcome[R]:
    """RFC 2544 26.1 search over ``trial(rate_fps)``: 100 % first, then between the highest
    passing and the lowest failing rate until they are ``resolution_fps`` apart (or
    ``max_trials`` trials have run). ``passed(result)`` is the verdict (default
    ``result.passed``). Without ``forwarded`` the search bisects. With it, ``forwarded(result)``
    is the rate a failed trial got through the DUT, and the search is loss-informed (module
    doc): half a resolution below that rate next and, if that passes, half a resolution above it;
    bisecting whenever an estimate proves wrong. ``failed``: a trial known to have failed at
    ``(rate, result)``, the upper end to search below (instead of a first trial at 100 %)."""
    passed = passed or (lambda r: r.passed)
    out = SearchOutcome[R](line_rate_fps=line_rate_fps, resolution_fps=resolution_fps)
    low, high = 0.0, line_rate_fps
    phase = "bisect"        # or "guess": trying just below what got through; "probe": just above it
    trusted = forwarded is not None

    def next_rate(ok: bool, result: R) -> float:
        nonlocal phase, trusted
        middle = (low + high) / 2
        was, phase = phase, "bisect"
        if was == "guess" and not ok or was == "probe" and ok:
            trusted = False         # what got through misled us once (collapse, queue): bisect from now on
        if not trusted:
            return middle
        if was == "guess" and ok and low + resolution_fps < high:
            phase = "probe"         # the guess held: one resolution above it settles the estimate
            return low + resolution_fps
        if ok:
            return middle
        got = forwarded(result)
        if got is None or not low < got - resolution_fps / 2 < high:
            return middle
        phase = "guess"
        return got - resolution_fps / 2

    rate = line_rate_fps
    if failed is not None:
        high = out.failed_fps = failed[0]
        rate = next_rate(False, failed[1])
    close = resolution_fps * (1 + 1e-9)    # a climb of exactly one resolution converges despite rounding
    while len(out.trials) < max_trials and high - low > close:
        result = trial(rate)
        out.rates.append(rate)
        out.trials.append(result)
        ok = passed(result)
        if ok:
            low, out.best = rate, result
        else:
            high = out.failed_fps = rate
        rate = next_rate(ok, result)
    out.converged = high - low <= close
    out.throughput_fps = low
    return out


# Results ------------------------------------------------------------------------------------------------


class RepeatedLatency(BaseModel):
    """RFC 2544 26.2 over repeated trials, one definition: the reported latency is the mean of
    the trials' values (here each trial's mean over all its frames), with the spread of those
    means and the extremes over all trials."""

    definition: str
    name: str
    trials: int
    mean_ns: float = Field(description="mean over the trials of each trial's average latency (the RFC's value)")
    stddev_of_means_ns: float = Field(description="sample standard deviation of the trials' averages")
    min_ns: int = Field(description="smallest latency of any frame of any trial")
    max_ns: int = Field(description="largest latency of any frame of any trial")
    mean_of_max_ns: float = Field(description="mean over the trials of each trial's largest latency")
    frames: int
    lost_frames: int = Field(description="frames the repeats lost (RFC 2544 measures latency at throughput)")

    @classmethod
    def over(cls, trials: list[TrialResult], per_trial: list[list[LatencyFigures]]) -> list["RepeatedLatency"]:
        """Per definition available in every trial; ``per_trial``: each trial's figures
        (:func:`wirespeed.latency.latency_figures`)."""
        out = []
        if not per_trial or not all(per_trial):
            return out
        for i, first in enumerate(per_trial[0]):
            figs = [f[i] for f in per_trial if len(f) > i and f[i].available]
            if len(figs) != len(trials) or any(f.definition != first.definition for f in figs):
                continue
            means = [f.avg_ns for f in figs]
            mean = sum(means) / len(means)
            spread = (sum((m - mean) ** 2 for m in means) / (len(means) - 1)) ** 0.5 if len(means) > 1 else 0.0
            out.append(cls(definition=first.definition, name=first.name, trials=len(figs), mean_ns=mean,
                           stddev_of_means_ns=spread, min_ns=min(f.min_ns for f in figs),
                           max_ns=max(f.max_ns for f in figs), mean_of_max_ns=sum(f.max_ns for f in figs) / len(figs),
                           frames=sum(f.frames for f in figs), lost_frames=sum(max(0, t.lost_frames) for t in trials)))
        return out


class ThroughputResult(BaseModel):
    """The throughput of one frame size."""

    frame_size: int | str = Field(description="bytes, FCS included, or an IMIX label (wirespeed.sizes)")
    theoretical_max_fps: float
    resolution_fps: float
    throughput_fps: float = Field(description="highest offered rate with zero loss; 0 if none")
    failed_fps: float | None = Field(description="lowest offered rate that lost frames")
    converged: bool
    trials: int = Field(description="trials run for this frame size, the confirmation included")
    search: str = Field("bisect", description="the search: bisect or loss-informed")
    loss_tolerance_pct: float = Field(0.0, description="a trial passed with at most this % loss")
    confirmed: bool | None = Field(None, description="True: the result held for a full-length trial after "
                                                     "shorter search trials; None: the search trials were "
                                                     "full length")
    best: TrialResult | None = Field(description="the trial at throughput_fps")
    latency_repeats: list[TrialResult] = Field(default_factory=list,
                                               description="RFC 2544 26.2: the repeated latency trials at "
                                                           "throughput_fps")
    latency_repeat_figures: list[list[LatencyFigures]] = Field(
        default_factory=list, description="latency of each repeat in both definitions (calibrated like latency)")
    repeated_latency: list[RepeatedLatency] = Field(default_factory=list,
                                                    description="RFC 2544 26.2 figures over latency_repeats, per "
                                                                "definition available in every repeat")
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
    def from_outcome(cls, frame_size: int | str, outcome: SearchOutcome[TrialResult],
                     pipeline: Pipeline | None = None, *, trials: int | None = None, **extra) -> "ThroughputResult":
        """``pipeline``: the calibrated tester pipeline delay to subtract from the latency
        (:meth:`wirespeed.calibration.Calibration.pipeline_ns`); None reports raw latency."""
        return cls(frame_size=frame_size, theoretical_max_fps=outcome.line_rate_fps,
                   resolution_fps=outcome.resolution_fps, throughput_fps=outcome.throughput_fps,
                   failed_fps=outcome.failed_fps, converged=outcome.converged,
                   trials=len(outcome.trials) if trials is None else trials, best=outcome.best, **extra,
                   latency=latency_figures(outcome.best, pipeline) if outcome.best else [])


class ThroughputObserver:
    """Told about progress as it happens (override what you need)."""

    def size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        pass

    def learning_done(self, result: LearningResult) -> None:
        pass

    def trial_started(self, frame_size: int | str, step: int, rate_fps: float) -> None:
        pass

    def trial_done(self, step: int, result: TrialResult) -> None:
        pass

    def latency_trial_started(self, frame_size: int | str, repeat: int, repeats: int, rate_fps: float) -> None:
        pass

    def latency_trial_done(self, repeat: int, result: TrialResult) -> None:
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


def _one_size(device: TrialRunner, config: ThroughputConfig, size: int | str,
              observer: ThroughputObserver, pipeline: Pipeline | None = None) -> ThroughputResult:
    flows, line = config.flows(size), line_rate_fps(size)
    observer.size_started(size, line)
    steps = 0
    histogram = HistogramConfig()
    search_ns = config.search_duration_ns or config.trial_duration_ns

    def run(rate: float, duration_ns: int, repeat: int = 0) -> TrialResult:
        nonlocal steps, histogram
        if repeat:
            observer.latency_trial_started(size, repeat, config.latency_trials, rate)
        else:
            steps += 1
            observer.trial_started(size, steps, rate)
        result = device.run_trial(flows, rate, duration_ns, config.wait_ns, histogram,
                                  lat_def=LAT_DEF[config.latency_definition])
        if (lat := result.latency) is not None:   # bin the next trial around what this one saw
            histogram = HistogramConfig.fitting(lat.min_ns, lat.max_ns)
        if repeat:
            observer.latency_trial_done(repeat, result)
        else:
            observer.trial_done(steps, result)
        return result

    def forwarded(result: TrialResult) -> float:
        # frames that arrived once (duplicates are not forwarding capacity)
        got = result.tx_frames - result.lost_frames
        return result.offered_fps * got / result.tx_frames if result.tx_frames else 0.0

    def search(duration_ns: int, high: float) -> SearchOutcome[TrialResult]:
        return search_throughput(lambda rate: run(rate, duration_ns), high, config.resolution_fps(size),
                                 config.max_trials - steps, passed=config.passes,
                                 forwarded=forwarded if config.search == "loss-informed" else None)

    outcome = search(search_ns, line)
    confirmed = None
    if search_ns < config.trial_duration_ns:
        # RFC 2544 26.1: the rate found by short trials holds for a full-length trial, or the
        # search goes on below it with full-length trials
        confirmed = False
        while outcome.best is not None and steps < config.max_trials:
            check = run(outcome.throughput_fps, config.trial_duration_ns)
            if config.passes(check):
                outcome.best, confirmed = check, True
                break
            outcome = search_throughput(lambda rate: run(rate, config.trial_duration_ns), line,
                                        config.resolution_fps(size), config.max_trials - steps,
                                        passed=config.passes, failed=(outcome.throughput_fps, check),
                                        forwarded=forwarded if config.search == "loss-informed" else None)
            confirmed = outcome.best is not None
            break
    search_trials = steps
    repeats = []
    if outcome.best is not None:        # RFC 2544 26.2: latency trials at the throughput rate
        repeats = [run(outcome.throughput_fps, config.trial_duration_ns, i + 1) for i in range(config.latency_trials)]
    figures = [latency_figures(t, pipeline) for t in repeats]
    return ThroughputResult.from_outcome(size, outcome, pipeline, trials=search_trials, confirmed=confirmed,
                                         loss_tolerance_pct=config.loss_tolerance_pct, search=config.search,
                                         latency_repeats=repeats, latency_repeat_figures=figures,
                                         repeated_latency=RepeatedLatency.over(repeats, figures))
