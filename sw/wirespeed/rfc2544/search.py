"""The searches of RFC 2544, as pure functions of a trial callable (kept apart from the trials
and the results, as in TRex's ndr_bench): the throughput search (26.1), the frame loss
stepping (26.3) and the back-to-back burst search (26.4). Each test's module documents the
method it uses; the tests drive these with fake trials.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

__all__ = ["SearchOutcome", "search_throughput", "LossOutcome", "step_frame_loss", "load_steps", "loss_free",
           "RFC_STEP_PCT", "BurstOutcome", "search_burst"]

RFC_STEP_PCT = 10.0       # RFC 2544 26.3: steps of 10 % of line rate or finer
_EPS = 1e-9


# Throughput (26.1) -------------------------------------------------------------------------------------


class Verdict(Protocol):
    """A trial's result as the searches see it (read-only, as a model's computed field is)."""

    @property
    def passed(self) -> bool: ...


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
        if not trusted or forwarded is None:     # trusted only ever with a forwarded estimate
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


# Frame loss rate (26.3) --------------------------------------------------------------------------------


class LossVerdict(Protocol):
    @property
    def tx_frames(self) -> int: ...

    @property
    def lost_frames(self) -> int: ...


def loss_free(result: LossVerdict) -> bool:
    """Frames were sent and none was lost (a trial that sent nothing proves nothing)."""
    return result.tx_frames > 0 and result.lost_frames == 0


L = TypeVar("L", bound=LossVerdict)


@dataclass
class LossOutcome(Generic[L]):
    """The loads tried (% of line rate), in order, and their trials. ``settled`` is True when
    the stepping ended on two successive loss-free trials (always False for explicit points)."""

    loads_pct: list[float] = field(default_factory=list)
    trials: list[L] = field(default_factory=list)
    settled: bool = False


def load_steps(step_pct: float) -> list[float]:
    """100, 100 - step, 100 - 2 step ... down to the last load above 0 % (rounded to 1e-9)."""
    if not 0 < step_pct <= 100:
        raise ValueError(f"step must be in (0, 100] %, not {step_pct}")
    loads, k = [], 0
    while (load := round(100.0 - k * step_pct, 9)) > _EPS:
        loads.append(load)
        k += 1
    return loads


def step_frame_loss(trial: Callable[[float], L], step_pct: float = RFC_STEP_PCT,
                    points_pct: Sequence[float] | None = None) -> LossOutcome[L]:
    """RFC 2544 26.3 over ``trial(pct_of_line_rate)``: from 100 % down in ``step_pct`` steps
    until two successive trials send frames and lose none (:func:`loss_free`); or every one
    of ``points_pct`` (highest first)."""
    out = LossOutcome[L]()
    if points_pct is not None:
        for load in sorted(set(points_pct), reverse=True):
            out.loads_pct.append(load)
            out.trials.append(trial(load))
        return out
    clean = 0
    for load in load_steps(step_pct):
        result = trial(load)
        out.loads_pct.append(load)
        out.trials.append(result)
        clean = clean + 1 if loss_free(result) else 0
        if clean == 2:
            out.settled = True
            break
    return out


# Back-to-back (26.4) -------------------------------------------------------------------------------------


B = TypeVar("B", bound=Verdict)


@dataclass
class BurstOutcome(Generic[B]):
    """Where one repetition's search ended. ``burst_frames`` is the longest passing burst (0
    when even one frame was lost); ``failed_frames`` the shortest failing one (None when
    ``max_burst`` passed: ``capped``). ``converged`` is False when ``max_trials`` stopped it."""

    max_burst: int
    bursts: list[int] = field(default_factory=list)
    trials: list[B] = field(default_factory=list)
    burst_frames: int = 0
    failed_frames: int | None = None
    converged: bool = False

    @property
    def capped(self) -> bool:
        return self.burst_frames >= self.max_burst


def search_burst(trial: Callable[[int], B], max_burst: int, max_trials: int = 64,
                 start: int | None = None) -> BurstOutcome[B]:
    """RFC 2544 26.4 search over ``trial(burst_frames)`` to a resolution of one frame (see the
    module doc): ``max_burst`` first, then bisection; or, with ``start``, a gallop from there
    to a pass/fail bracket, then bisection."""
    if max_burst < 1:
        raise ValueError(f"max_burst must be at least 1, not {max_burst}")
    out = BurstOutcome[B](max_burst=max_burst)
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
                assert high is not None     # the first probe failed
                probe(max(high - step, 1))
                step *= 2
    while not done() and len(out.trials) < max_trials:
        assert high is not None     # not done with a trial to spare: the gallop bracketed the burst
        probe((low + high) // 2)
    out.burst_frames, out.failed_frames, out.converged = low, high, done()
    return out
