"""RFC 2544 section 26.3, frame loss rate: per frame size, the percentage of offered frames
that the DUT does not forward, ``(sent - received) * 100 / sent``, at a series of offered
loads.

Loads: the first trial at 100 % of line rate, then 100 - step, 100 - 2 * step ... % (step 10 %
by default; RFC 2544 asks for 10 % or finer) until two successive trials lose nothing (or the
load would reach 0 %). An explicit list of load points replaces the stepping: every point is
measured, from the highest down, with no early stop.

Configuration (:class:`FrameLossConfig`), the trials and the results (:class:`FrameLossResult`)
are kept apart; the stepping, :func:`~wirespeed.rfc2544.search.step_frame_loss`, is a pure
function of a trial callable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field, field_validator

from ... import parse
from ... import sizes as size_points
from ...ethernet import line_rate_fps
from ...host.models import TrialResult
from ...trial_lines import extra_parts, pack
from ...units import format_duration
from ..common import RFC_TRIAL_NS, RFC_WAIT_NS, PortPairConfig, csv_text, sequence_cells
from ..context import RunContext, run_alone
from ..estimate import DutHint, ModelTrial, SizeEstimate
from ..events import Event
from ..registry import Metric, Option, Table, TestType, register
from ..search import RFC_STEP_PCT, load_steps, step_frame_loss

__all__ = ["FrameLossConfig", "FrameLossPoint", "FrameLossResult", "run_frame_loss", "frame_loss_csv", "TEST"]


class FrameLossConfig(PortPairConfig):
    """Every parameter of a frame loss rate test."""

    trial_duration_ns: int = Field(gt=0)
    wait_ns: int = Field(ge=0, description="after the generators stop, before the counters are read")
    step_pct: float = Field(RFC_STEP_PCT, gt=0, le=100, description="of line rate, from 100 % down")
    points_pct: list[float] | None = Field(None, description="explicit loads, % of line rate; replace the stepping")

    @field_validator("points_pct")
    @classmethod
    def _points(cls, points: list[float] | None) -> list[float] | None:
        if points is None:
            return None
        if not points:
            raise ValueError("at least one load point")
        bad = [p for p in points if not 0 < p <= 100]
        if bad:
            raise ValueError(f"load points must be in (0, 100] % of line rate, not {bad[0]:g}")
        return points

    @computed_field
    @property
    def scaled_down(self) -> bool:
        return self.trial_duration_ns < RFC_TRIAL_NS or self.wait_ns < RFC_WAIT_NS

    def notes(self) -> list[str]:
        notes = []
        if self.scaled_down:
            notes.append(f"frame loss: trial {format_duration(self.trial_duration_ns)} and wait "
                         f"{format_duration(self.wait_ns)} are scaled down from RFC 2544 (trials "
                         f"{format_duration(RFC_TRIAL_NS)}, waits {format_duration(RFC_WAIT_NS)})")
        if self.points_pct is None and self.step_pct > RFC_STEP_PCT:
            notes.append(f"frame loss: steps of {self.step_pct:g} % are coarser than RFC 2544 26.3 asks "
                         f"({RFC_STEP_PCT:g} % or finer)")
        if self.points_pct is not None:
            notes.append("frame loss: explicit load points instead of RFC 2544 26.3's stepping from 100 %")
        return notes


# Results ------------------------------------------------------------------------------------------------


class FrameLossPoint(BaseModel):
    """One load point: what was offered and what came back."""

    offered_pct: float = Field(description="% of line rate")
    offered_fps: float
    trial: TrialResult

    @computed_field
    @property
    def loss_pct(self) -> float:
        """(sent - received) * 100 / sent (RFC 2544 26.3)."""
        return self.trial.loss_pct


class FrameLossResult(BaseModel):
    """The frame loss rate curve of one frame size."""

    frame_size: int | str = Field(description="bytes, FCS included, or an IMIX label (wirespeed.sizes)")
    theoretical_max_fps: float
    settled: bool = Field(description="the stepping ended on two successive loss-free trials")
    points: list[FrameLossPoint]


FRAME_LOSS_COLUMNS = ["frame_size_B", "offered_pct_line_rate", "offered_fps", "theoretical_max_fps", "duration_ms",
                      "frames_sent", "frames_received", "frames_lost", "loss_pct", "frames_duplicated",
                      "frames_out_of_order", "frames_late", "fcs_errors", "measured_rx_fps"]


def frame_loss_csv(results: list[FrameLossResult]) -> str:
    """Frame_Loss.csv: one row per frame size and load point, in the order measured."""
    rows = [[r.frame_size, f"{p.offered_pct:.3f}", f"{p.offered_fps:.2f}", f"{r.theoretical_max_fps:.2f}",
             f"{p.trial.duration_ns / 1e6:.3f}", p.trial.tx_frames, p.trial.rx_frames, p.trial.lost_frames,
             f"{p.loss_pct:.4f}", *sequence_cells(p.trial), p.trial.fcs_errors, f"{p.trial.measured_rx_fps:.2f}"]
            for r in results for p in r.points]
    return csv_text(FRAME_LOSS_COLUMNS, rows)


# The procedure ----------------------------------------------------------------------------------------


def run(ctx: RunContext, config: FrameLossConfig) -> list[FrameLossResult]:
    """The frame loss rate test for every frame size of ``config``, in order."""
    results = []
    for size in config.frame_sizes:
        flows, line = config.flows(size), line_rate_fps(size)
        ctx.size_started(size, line)
        steps = 0

        def trial(pct: float) -> TrialResult:
            nonlocal steps
            steps += 1
            rate = line * pct / 100
            ctx.trial_started(size, steps, rate, pct_line_rate=pct)
            result: TrialResult = ctx.tester.run_trial(flows, rate, config.trial_duration_ns, config.wait_ns)
            ctx.trial_done(size, steps, result, _trial_line(steps, pct, result), test="frame-loss", offered_pct=pct)
            return result

        outcome = step_frame_loss(trial, config.step_pct, config.points_pct)
        result = FrameLossResult(
            frame_size=size, theoretical_max_fps=line, settled=outcome.settled,
            points=[FrameLossPoint(offered_pct=pct, offered_fps=line * pct / 100, trial=t)
                    for pct, t in zip(outcome.loads_pct, outcome.trials)])
        results.append(result)
        ctx.size_done(size, result, _size_line(result))
    return results


def run_frame_loss(tester: Any, config: FrameLossConfig,
                   on_event: Callable[[Event], None] | None = None) -> list[FrameLossResult]:
    """The test on its own, outside a plan (:func:`~wirespeed.rfc2544.context.run_alone`)."""
    return run_alone(TEST.name, run, tester, config, on_event)


def _estimate(config: FrameLossConfig, dut: DutHint) -> list[SizeEstimate]:
    """The stepping against the DUT model: every load it loses at, then two loss-free ones."""
    out = []
    most = len(config.points_pct) if config.points_pct is not None else len(load_steps(config.step_pct))
    for size in config.frame_sizes:
        def trial(pct: float, size: int | str = size) -> ModelTrial:
            return dut.trial(size, line_rate_fps(size) * pct / 100, config.trial_duration_ns)

        outcome = step_frame_loss(trial, config.step_pct, config.points_pct)
        trials = len(outcome.trials)
        wire = sum(config.trial_duration_ns + dut.settle_ns(size, line_rate_fps(size) * pct / 100,
                                                            config.trial_duration_ns, config.wait_ns)
                   for pct in outcome.loads_pct)
        out.append(SizeEstimate(frame_size=size, trials=trials, most_trials=most, wire_ns=wire))
    return out


def _size_line(r: FrameLossResult) -> str:
    first = r.points[0]
    clean = f", no loss at {r.points[-2].offered_pct:g} and {r.points[-1].offered_pct:g} %" if r.settled else ""
    return (f"frame-loss {size_points.text(r.frame_size)}: {first.loss_pct:.2f} % lost at {first.offered_pct:g} %"
            f"{clean}, {len(r.points)} trials")


def _trial_line(step: int, pct: float, result: TrialResult) -> str:
    return pack([f"{size_points.text(result.frame_size):>6} loss trial {step:>2}", f"{pct:6.2f} %",
                 f"sent {result.tx_frames:>10,}", f"lost {result.lost_frames:>10,}", f"{result.loss_pct:7.3f} % lost",
                 *extra_parts(result)])


# The test ---------------------------------------------------------------------------------------------


def _summary(results: Sequence[FrameLossResult], record: Any) -> list[Table]:
    rows = []
    for r in results:
        for p in r.points:
            t = p.trial
            rows.append([str(r.frame_size), f"{p.offered_pct:g}", f"{p.offered_fps:,.1f}", f"{t.tx_frames:,}",
                         f"{t.rx_frames:,}", f"{t.lost_frames:,}", f"{p.loss_pct:.4f}",
                         *("-" if n is None else f"{n:,}" for n in (t.duplicate_frames, t.out_of_order_frames,
                                                                    t.late_frames)), f"{t.fcs_errors:,}"])
    return [Table("RFC 2544 26.3 frame loss rate",
                  ["frame size B", "load %", "offered fps", "sent", "received", "lost", "loss %", "duplicated",
                   "out of order", "late", "FCS errors"], rows)]


def _configure(plan: Any, options: Mapping[str, Any]) -> FrameLossConfig:
    return FrameLossConfig(
        frame_sizes=plan.sizes, trial_duration_ns=plan.trial_ns, wait_ns=plan.wait, step_pct=options["loss_step"],
        points_pct=options["loss_points"], addresses=plan.addresses, bidirectional=plan.bidirectional,
        sources=plan.sources, destinations=plan.destinations)


def _loss_at_top(r: FrameLossResult) -> float | None:
    return max(r.points, key=lambda p: p.offered_pct).loss_pct if r.points else None


TEST = register(TestType(
    name="frame-loss", section="26.3", title="Frame loss rate", order=2,
    files=("Frame_Loss.csv",),
    config=FrameLossConfig, result=FrameLossResult, configure=_configure, run=run,
    tables=lambda results, record: {"Frame_Loss.csv": (FRAME_LOSS_COLUMNS, frame_loss_csv(list(results)))},
    summary=_summary, estimate=_estimate,
    metrics=(Metric("loss_pct", "%", "frame loss rate at the highest offered load (100 % of line rate unless "
                                     "--loss-points)", _loss_at_top),),
    definitions={"frame_loss": "RFC 2544 26.3: loss % = frames lost * 100 / sent at each offered load (frames "
                               "lost: definitions.frames_lost), from 100 % of line rate down in steps until two "
                               "successive trials lose nothing, or at explicit load points"},
    options=(
        Option("--loss-step", "Step down from 100 % of line rate, % (RFC 2544: 10 or finer).", "PCT",
               kind="parsed", parse=parse.percentage("10"), default="10"),
        Option("--loss-points", "Loads instead of the steps, % of line rate, e.g. 100,90,75.", "LIST",
               kind="parsed", parse=parse.loss_points),
    ),
))
