"""RFC 2544 section 26.4, back-to-back frames, as updated by RFC 9004: per frame size, the
longest burst of frames at minimum inter-frame gap (100 % of line rate, from idle) that the
DUT forwards without losing a frame, searched to one frame and repeated; reported as mean,
standard deviation, minimum and maximum over the repetitions, with the DUT buffer time that
RFC 9004 derives from it.

Configuration (:class:`BackToBackConfig`), the trial (a ``trial(burst_frames) -> TrialResult``
callable, normally :meth:`wirespeed.host.device.Device.run_burst_trial`) and the results
(:class:`BackToBackResult`) are kept apart as in :mod:`wirespeed.rfc2544.throughput`; the
search, :func:`search_burst`, is a pure function of the trial callable.

Search (one repetition): without a hint the first trial sends ``max_burst`` frames; if the
DUT forwards them all the result is ``max_burst`` (capped: the DUT's buffer was not found).
Otherwise the burst is bisected between the longest passing (initially 0) and the shortest
failing burst until they are one frame apart. With a hint (the previous repetition's result,
used from the second repetition on) the search starts there and gallops (steps of 1, 2, 4 ...
frames) up from a pass or down from a failure until it has a passing and a failing burst,
then bisects: a DUT that repeats itself costs two trials per repetition, and every reported
figure is still bracketed by a pass and a failure one frame apart.

RFC 2544 26.4 asks for trials of at least 2 s and at least 50 repetitions; RFC 9004 keeps the
repetitions and bounds the burst by the tester (here ``max_burst``, by default 2 s of line
rate). Shorter values (the simulation defaults) are flagged in the results.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, Field, computed_field

from .. import sizes as size_points
from ..ethernet import line_rate_fps
from ..host.device import Flow, LearningResult, TrialResult
from ..units import format_duration
from .common import RFC_WAIT_NS, PortPairConfig, run_learning

__all__ = ["BackToBackConfig", "BurstOutcome", "search_burst", "BurstRepetition", "BackToBackResult",
           "BackToBackObserver", "run_back_to_back", "buffer_time", "RFC_REPETITIONS", "RFC_BURST_S"]

RFC_REPETITIONS = 50     # RFC 2544 26.4 / RFC 9004 section 6.3: SHOULD be repeated at least 50 times
RFC_BURST_S = 2.0        # RFC 2544 26.4: trial length at least 2 s (the default burst cap: 2 s of line rate)


class BackToBackConfig(PortPairConfig):
    """Every parameter of a back-to-back test."""

    repetitions: int = Field(RFC_REPETITIONS, ge=1, le=100_000, description="independent searches per frame size")
    max_burst: int | None = Field(None, ge=1, le=2**32,
                                  description="longest burst tried, frames; None: 2 s of line rate per size")
    wait_ns: int = Field(ge=0, description="after the burst, before the counters are read (drains the DUT)")
    max_trials: int = Field(64, ge=1, description="trials per repetition at most")
    def flow(self, frame_len: int) -> Flow:
        return self.flows(frame_len)[0]

    def max_burst_frames(self, frame_len: int) -> int:
        if self.max_burst is not None:
            return self.max_burst
        return math.floor(line_rate_fps(frame_len) * RFC_BURST_S)

    @computed_field
    @property
    def scaled_down(self) -> bool:
        return bool(self.notes())

    def notes(self) -> list[str]:
        notes = []
        if self.repetitions < RFC_REPETITIONS:
            notes.append(f"back-to-back: {self.repetitions} repetitions per frame size, scaled down from "
                         f"RFC 2544 26.4 / RFC 9004 ({RFC_REPETITIONS})")
        short = [s for s in self.frame_sizes if self.max_burst_frames(s) < line_rate_fps(s) * RFC_BURST_S - 1]
        if short:
            cap = self.max_burst_frames(short[0])
            burst_ns = round(cap * 1e9 / line_rate_fps(short[0]))
            notes.append(f"back-to-back: bursts capped at {cap:,} frames ({format_duration(burst_ns)} of "
                         f"{size_points.text(short[0])} frames at line rate), below RFC 2544 26.4's {RFC_BURST_S:g} s trials")
        if self.wait_ns < RFC_WAIT_NS:
            notes.append(f"back-to-back: wait after each burst {format_duration(self.wait_ns)}, scaled down from "
                         f"RFC 2544 section 23 ({format_duration(RFC_WAIT_NS)})")
        return notes


# The search -------------------------------------------------------------------------------------------


class Verdict(Protocol):
    passed: bool


R = TypeVar("R", bound=Verdict)


@dataclass
class BurstOutcome(Generic[R]):
    """Where one repetition's search ended. ``burst_frames`` is the longest passing burst (0
    when even one frame was lost); ``failed_frames`` the shortest failing one (None when
    ``max_burst`` passed: ``capped``). ``converged`` is False when ``max_trials`` stopped it."""

    max_burst: int
    bursts: list[int] = field(default_factory=list)
    trials: list[R] = field(default_factory=list)
    burst_frames: int = 0
    failed_frames: int | None = None
    converged: bool = False

    @property
    def capped(self) -> bool:
        return self.burst_frames >= self.max_burst


def search_burst(trial: Callable[[int], R], max_burst: int, max_trials: int = 64,
                 start: int | None = None) -> BurstOutcome[R]:
    """RFC 2544 26.4 search over ``trial(burst_frames)`` to a resolution of one frame (see the
    module doc): ``max_burst`` first, then bisection; or, with ``start``, a gallop from there
    to a pass/fail bracket, then bisection."""
    if max_burst < 1:
        raise ValueError(f"max_burst must be at least 1, not {max_burst}")
    out = BurstOutcome[R](max_burst=max_burst)
    low, high = 0, None                       # longest passing, shortest failing burst

    def probe(burst: int) -> bool:
        nonlocal low, high
        result = trial(burst)
        out.bursts.append(burst)
        out.trials.append(result)
        if result.passed:
            low = max(low, burst)
        else:
            high = burst if high is None else min(high, burst)
        return result.passed

    def done() -> bool:
        return low >= max_burst or (high is not None and high - low <= 1)

    if start is None:
        probe(max_burst)
    else:
        burst = min(max(start, 1), max_burst)
        step = 1
        if probe(burst):
            while not done() and high is None and len(out.trials) < max_trials:
                probe(min(low + step, max_burst))
                step *= 2
        else:
            while not done() and low == 0 and len(out.trials) < max_trials:
                probe(max(high - step, 1))
                step *= 2
    while not done() and len(out.trials) < max_trials:
        probe((low + high) // 2)
    out.burst_frames, out.failed_frames, out.converged = low, high, done()
    return out


# Results ------------------------------------------------------------------------------------------------


def buffer_time(mean_burst_frames: float, line_rate: float,
                throughput_fps: float | None) -> tuple[float, float | None]:
    """RFC 9004 section 6.4 (benchmark calculations): the DUT buffer time implied by the
    back-to-back burst, and that time corrected for the frames the DUT forwarded while the
    burst arrived (the DUT as a buffer drained at its throughput)::

        Implied DUT buffer time = average back-to-back frames / max theoretical frame rate
        Corrected DUT buffer time = implied - implied * measured throughput / max theoretical frame rate

    Returns (implied, corrected) in seconds; corrected is None without a measured throughput
    (RFC 2544 26.1) for the frame size. (The RFC's text could not be retrieved here; the formula
    agrees with an independent public summary of RFC 9004 sections 6.4-7: docs/rfc2544.md.)"""
    implied = mean_burst_frames / line_rate
    if throughput_fps is None:
        return implied, None
    return implied, implied - implied * throughput_fps / line_rate


class BurstRepetition(BaseModel):
    """One repetition: its result and the bursts it tried, in order."""

    burst_frames: int = Field(description="longest burst forwarded without loss")
    failed_frames: int | None = Field(description="shortest burst that lost frames; None if max_burst passed")
    converged: bool
    bursts: list[int] = Field(description="burst of each trial, frames")
    passed: list[bool] = Field(description="verdict of each trial")


class BackToBackResult(BaseModel):
    """The back-to-back figure of one frame size."""

    frame_size: int | str = Field(description="bytes, FCS included, or an IMIX label (wirespeed.sizes)")
    theoretical_max_fps: float
    max_burst: int = Field(description="longest burst tried, frames")
    repetitions: list[BurstRepetition]
    throughput_fps: float | None = Field(None, description="RFC 2544 26.1 throughput of this size measured in the "
                                                           "same run (for the corrected buffer time), else None")

    @property
    def _bursts(self) -> list[int]:
        return [r.burst_frames for r in self.repetitions]

    @computed_field
    @property
    def mean_burst_frames(self) -> float:
        return statistics.fmean(self._bursts)

    @computed_field
    @property
    def stddev_burst_frames(self) -> float:
        """Sample standard deviation (n - 1) over the repetitions; 0 for one repetition."""
        return statistics.stdev(self._bursts) if len(self._bursts) > 1 else 0.0

    @computed_field
    @property
    def min_burst_frames(self) -> int:
        return min(self._bursts)

    @computed_field
    @property
    def max_burst_frames(self) -> int:
        return max(self._bursts)

    @computed_field
    @property
    def capped(self) -> bool:
        """Some repetition forwarded the longest burst tried: the figure is a lower bound."""
        return any(b >= self.max_burst for b in self._bursts)

    @computed_field
    @property
    def trials(self) -> int:
        return sum(len(r.bursts) for r in self.repetitions)

    @computed_field
    @property
    def implied_buffer_time_s(self) -> float:
        return buffer_time(self.mean_burst_frames, self.theoretical_max_fps, self.throughput_fps)[0]

    @computed_field
    @property
    def corrected_buffer_time_s(self) -> float | None:
        return buffer_time(self.mean_burst_frames, self.theoretical_max_fps, self.throughput_fps)[1]


class BackToBackObserver:
    """Told about progress as it happens (override what you need)."""

    def learning_done(self, result: LearningResult) -> None:
        pass

    def b2b_size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        pass

    def b2b_trial_started(self, frame_size: int | str, repetition: int, step: int, burst: int) -> None:
        pass

    def b2b_trial_done(self, repetition: int, step: int, burst: int, result: TrialResult) -> None:
        pass

    def b2b_size_done(self, result: BackToBackResult) -> None:
        pass


class BurstRunner(Protocol):
    def run_burst_trial(self, flow: Flow, burst_frames: int, wait_ns: int, **kwargs) -> TrialResult: ...

    def learn(self, flows: Sequence[Flow], addresses=None, **kwargs) -> LearningResult: ...


def run_back_to_back(device: BurstRunner, config: BackToBackConfig, observer: BackToBackObserver | None = None,
                     throughput_fps: dict[int, float] | None = None) -> list[BackToBackResult]:
    """The back-to-back test for every frame size of ``config``, in order. ``throughput_fps``:
    the throughput measured in the same run, by frame size, for RFC 9004's corrected buffer time."""
    observer = observer or BackToBackObserver()
    if config.learning is not None:
        observer.learning_done(run_learning(device, config))
    results = []
    for size in config.frame_sizes:
        flow, line, cap = config.flow(size), line_rate_fps(size), config.max_burst_frames(size)
        observer.b2b_size_started(size, line)
        repetitions: list[BurstRepetition] = []
        hint = None
        for rep in range(1, config.repetitions + 1):
            step = 0

            def trial(burst: int) -> TrialResult:
                nonlocal step
                step += 1
                observer.b2b_trial_started(size, rep, step, burst)
                result = device.run_burst_trial(flow, burst, config.wait_ns)
                observer.b2b_trial_done(rep, step, burst, result)
                return result

            outcome = search_burst(trial, cap, config.max_trials, start=hint)
            hint = outcome.burst_frames if outcome.burst_frames > 0 else 1
            repetitions.append(BurstRepetition(burst_frames=outcome.burst_frames, failed_frames=outcome.failed_frames,
                                               converged=outcome.converged, bursts=outcome.bursts,
                                               passed=[t.passed for t in outcome.trials]))
        result = BackToBackResult(frame_size=size, theoretical_max_fps=line, max_burst=cap, repetitions=repetitions,
                                  throughput_fps=(throughput_fps or {}).get(size))
        results.append(result)
        observer.b2b_size_done(result)
    return results
