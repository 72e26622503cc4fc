"""RFC 2544 section 26.4, back-to-back frames, as updated by RFC 9004: per frame size, the
longest burst of frames at minimum inter-frame gap (100 % of line rate, from idle) that the
DUT forwards without losing a frame, searched to one frame and repeated; reported as mean,
standard deviation, minimum and maximum over the repetitions, with the DUT buffer time that
RFC 9004 derives from it.

Configuration (:class:`BackToBackConfig`), the trials (bursts) and the results
(:class:`BackToBackResult`) are kept apart; the search,
:func:`~wirespeed.rfc2544.search.search_burst`, is a pure function of a trial callable.

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field

from ... import sizes as size_points
from ...ethernet import line_rate_fps
from ...host.models import TrialResult
from ...traffic import Flow
from ...trial_lines import extra_parts, pack, short_verdict
from ...units import format_duration
from ..common import RFC_WAIT_NS, PortPairConfig, csv_text
from ..context import RunContext, run_alone
from ..estimate import DutHint, ModelTrial, SizeEstimate, burst_ns
from ..events import Event
from ..registry import Metric, Option, Table, TestType, register
from ..search import search_burst

__all__ = ["BackToBackConfig", "BurstRepetition", "BackToBackResult", "run_back_to_back", "buffer_time",
           "back_to_back_csv", "RFC_REPETITIONS", "RFC_BURST_S", "TEST"]

RFC_REPETITIONS = 50     # RFC 2544 26.4 / RFC 9004 section 6.3: SHOULD be repeated at least 50 times
RFC_BURST_S = 2.0        # RFC 2544 26.4: trial length at least 2 s (the default burst cap: 2 s of line rate)


class BackToBackConfig(PortPairConfig):
    """Every parameter of a back-to-back test."""

    repetitions: int = Field(RFC_REPETITIONS, ge=1, le=100_000, description="independent searches per frame size")
    max_burst: int | None = Field(None, ge=1, le=2**32,
                                  description="longest burst tried, frames; None: 2 s of line rate per size")
    wait_ns: int = Field(ge=0, description="after the burst, before the counters are read (drains the DUT)")
    max_trials: int = Field(64, ge=1, description="trials per repetition at most")
    def flow(self, frame_len: size_points.SizePoint) -> Flow:
        return self.flows(frame_len)[0]

    def max_burst_frames(self, frame_len: size_points.SizePoint) -> int:
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
                         f"{size_points.text(short[0])} frames at line rate), below RFC 2544 26.4's "
                         f"{RFC_BURST_S:g} s trials")
        if self.wait_ns < RFC_WAIT_NS:
            notes.append(f"back-to-back: wait after each burst {format_duration(self.wait_ns)}, scaled down from "
                         f"RFC 2544 section 23 ({format_duration(RFC_WAIT_NS)})")
        return notes


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
    def implied_buffer_time_s(self) -> float | None:
        """RFC 9004's implied DUT buffer time; None when capped (the cap ended the bursts, not
        the DUT: :meth:`bursts_buffer_time` gives what the cap shows)."""
        return None if self.capped else self.bursts_buffer_time()[0]

    @computed_field
    @property
    def corrected_buffer_time_s(self) -> float | None:
        """RFC 9004's corrected DUT buffer time; None when capped or without a throughput."""
        return None if self.capped else self.bursts_buffer_time()[1]

    def bursts_buffer_time(self) -> tuple[float, float | None]:
        """(implied, corrected) buffer times of the bursts forwarded: the figures when the
        result is not capped, lower bounds when it is."""
        return buffer_time(self.mean_burst_frames, self.theoretical_max_fps, self.throughput_fps)


BACK_TO_BACK_COLUMNS = ["frame_size_B", "mean_burst_frames", "stddev_burst_frames", "min_burst_frames",
                        "max_burst_frames", "repetitions", "max_burst_tried_frames", "capped",
                        "theoretical_max_fps", "implied_buffer_time_us", "throughput_fps",
                        "corrected_buffer_time_us", "trials"]


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.3f}"


def _b2b_row(r: BackToBackResult) -> list[object]:
    return [r.frame_size, f"{r.mean_burst_frames:.2f}", f"{r.stddev_burst_frames:.2f}", r.min_burst_frames,
            r.max_burst_frames, len(r.repetitions), r.max_burst, "yes" if r.capped else "no",
            f"{r.theoretical_max_fps:.2f}", _us(r.implied_buffer_time_s),
            "" if r.throughput_fps is None else f"{r.throughput_fps:.2f}", _us(r.corrected_buffer_time_s), r.trials]


def back_to_back_csv(results: list[BackToBackResult]) -> str:
    """Back_to_Back.csv: one row per frame size; both buffer times are empty for a capped size
    (not measured), the corrected one without a throughput measured in the same run."""
    return csv_text(BACK_TO_BACK_COLUMNS, [_b2b_row(r) for r in results])


# The procedure ----------------------------------------------------------------------------------------


def run(ctx: RunContext, config: BackToBackConfig) -> list[BackToBackResult]:
    """The back-to-back test for every frame size of ``config``, in order; the throughput
    measured in the same run (``ctx.results_of("throughput")``) gives RFC 9004's corrected
    buffer time."""
    throughput = {r.frame_size: r.throughput_fps for r in ctx.results_of("throughput")}
    results = []
    for size in config.frame_sizes:
        flow, line, cap = config.flow(size), line_rate_fps(size), config.max_burst_frames(size)
        ctx.size_started(size, line)
        repetitions: list[BurstRepetition] = []
        hint = None
        for rep in range(1, config.repetitions + 1):
            step = 0

            def trial(burst: int) -> TrialResult:
                nonlocal step
                step += 1
                ctx.trial_started(size, step, line, repetition=rep, of=config.repetitions, burst_frames=burst)
                result: TrialResult = ctx.tester.run_burst_trial(flow, burst, config.wait_ns)
                ctx.trial_done(size, step, result, _trial_line(rep, step, burst, result), test="back-to-back",
                               repetition=rep, burst_frames=burst)
                return result

            outcome = search_burst(trial, cap, config.max_trials, start=hint)
            hint = outcome.burst_frames if outcome.burst_frames > 0 else 1
            repetitions.append(BurstRepetition(burst_frames=outcome.burst_frames, failed_frames=outcome.failed_frames,
                                               converged=outcome.converged, bursts=outcome.bursts,
                                               passed=[t.passed for t in outcome.trials]))
        result = BackToBackResult(frame_size=size, theoretical_max_fps=line, max_burst=cap, repetitions=repetitions,
                                  throughput_fps=throughput.get(size))
        results.append(result)
        buffer_s = result.implied_buffer_time_s      # None when capped: the cap, not the DUT's buffer
        buffer = "no buffer time (capped)" if buffer_s is None else f"buffer {buffer_s * 1e6:,.3f} µs"
        ctx.size_done(size, result, f"back-to-back {size_points.text(size)}: {result.mean_burst_frames:,.1f} frames "
                                    f"mean{' (cap)' if result.capped else ''} ({result.min_burst_frames:,}-"
                                    f"{result.max_burst_frames:,}), {buffer}, {result.trials} trials")
    return results


def run_back_to_back(tester: Any, config: BackToBackConfig, on_event: Callable[[Event], None] | None = None,
                     throughput_fps: dict[Any, float] | None = None) -> list[BackToBackResult]:
    """The test on its own, outside a plan (:func:`~wirespeed.rfc2544.context.run_alone`);
    ``throughput_fps``: a throughput by frame size, for the corrected buffer time."""
    return run_alone(TEST.name, run, tester, config, on_event, throughput_fps=throughput_fps or {})


def _estimate(config: BackToBackConfig, dut: DutHint) -> list[SizeEstimate]:
    """Each repetition's search against the DUT model's longest loss-free burst (half the cap
    when the DUT is not known), started from the last repetition's result as :func:`run` does."""
    out = []
    for size in config.frame_sizes:
        cap = config.max_burst_frames(size)
        longest = dut.burst_frames(size)
        limit = cap // 2 if longest is None else longest
        trials, wire, hint = 0, 0, None
        for _ in range(config.repetitions):
            outcome = search_burst(lambda burst: ModelTrial(0.0, 0.0, burst, int(burst > limit)), cap,
                                   config.max_trials, start=hint)
            hint = outcome.burst_frames if outcome.burst_frames > 0 else 1
            trials += len(outcome.trials)
            # a burst is a trial at line rate for its length: the wait grows while the queue drains
            wire += sum(burst_ns(size, b) + dut.settle_ns(size, line_rate_fps(size), burst_ns(size, b), config.wait_ns)
                        for b in outcome.bursts)
        out.append(SizeEstimate(frame_size=size, trials=trials, most_trials=config.repetitions * config.max_trials,
                                wire_ns=wire))
    return out


def _trial_line(rep: int, step: int, burst: int, result: TrialResult) -> str:
    return pack([f"{size_points.text(result.frame_size):>6} b2b rep {rep:>2} trial {step:>2}", f"burst {burst:>9,}",
                 f"sent {result.tx_frames:>9,}", f"lost {result.lost_frames:>9,}", *short_verdict(result),
                 *extra_parts(result)])


# The test ---------------------------------------------------------------------------------------------


def _summary(results: Sequence[BackToBackResult], record: Any) -> list[Table]:
    rows = []
    for r in results:
        implied, corrected = r.bursts_buffer_time()
        bound = "at least " if r.capped else ""      # the cap, not the DUT, ended the bursts
        rows.append([str(r.frame_size), f"{r.mean_burst_frames:,.1f}" + (" (cap)" if r.capped else ""),
                     f"{r.stddev_burst_frames:,.2f}", f"{r.min_burst_frames:,}", f"{r.max_burst_frames:,}",
                     str(len(r.repetitions)), f"{bound}{implied * 1e6:,.3f}",
                     "n/a (no throughput)" if corrected is None else f"{bound}{corrected * 1e6:,.3f}"])
    return [Table("RFC 2544 26.4 back-to-back (longest loss-free burst at line rate, frames) and RFC 9004 DUT buffer "
                  "time", ["frame size B", "mean", "std dev", "min", "max", "reps", "implied buffer µs",
                           "corrected buffer µs"], rows)]


def _configure(plan: Any, options: Mapping[str, Any]) -> BackToBackConfig:
    return BackToBackConfig(frame_sizes=plan.sizes, wait_ns=plan.wait, addresses=plan.addresses,
                            sources=plan.sources, destinations=plan.destinations,
                            repetitions=options["b2b_trials"], max_burst=options["b2b_max_burst"])


TEST = register(TestType(
    name="back-to-back", section="26.4", title="Back-to-back frames", order=3,
    includes=(("RFC 9004", "buffer time"),),
    files=("Back_to_Back.csv",),
    config=BackToBackConfig, result=BackToBackResult, configure=_configure, run=run,
    tables=lambda results, record: {"Back_to_Back.csv": (BACK_TO_BACK_COLUMNS, back_to_back_csv(list(results)))},
    summary=_summary, estimate=_estimate,
    metrics=(Metric("b2b_frames", "frames", "back-to-back: mean longest burst without loss",
                    lambda r: r.mean_burst_frames),),
    definitions={
        "back_to_back": "RFC 2544 26.4 / RFC 9004: longest burst of frames at minimum inter-frame gap (100 % of "
                        "line rate, from idle) forwarded without loss, searched to one frame, repeated; mean, sample "
                        "standard deviation (n - 1), min and max over the repetitions; a capped figure (the longest "
                        "burst tried passed) is a lower bound",
        "buffer_time": "RFC 9004 section 6.4: implied DUT buffer time = mean back-to-back frames / theoretical max "
                       "frame rate; corrected DUT buffer time = implied - implied * throughput / theoretical max "
                       "frame rate, with the RFC 2544 26.1 throughput measured in the same run (not available "
                       "otherwise); not measured for a capped size (the longest burst tried passed: the buffer "
                       "was not found), where both are left empty",
    },
    options=(
        Option("--b2b-trials", "Burst searches per frame size (sim: 5, board: RFC 2544's 50).", "N", min=1,
               max=100_000, target_defaults={"sim": 5, "board": 50}),
        Option("--b2b-max-burst", "The longest burst tried, frames (sim: 1000, board: 2 s of line rate).", "N",
               min=1, max=2**32, target_defaults={"sim": 1000, "board": None}),
    ),
))
