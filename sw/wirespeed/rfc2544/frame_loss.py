"""RFC 2544 section 26.3, frame loss rate: per frame size, the percentage of offered frames
that the DUT does not forward, ``(sent - received) * 100 / sent``, at a series of offered
loads.

Loads: the first trial at 100 % of line rate, then 100 - step, 100 - 2 * step ... % (step 10 %
by default; RFC 2544 asks for 10 % or finer) until two successive trials lose nothing (or the
load would reach 0 %). An explicit list of load points replaces the stepping: every point is
measured, from the highest down, with no early stop.

Configuration (:class:`FrameLossConfig`), the trial (a ``trial(pct_of_line_rate) ->
TrialResult`` callable, normally :meth:`wirespeed.host.device.Device.run_trial`) and the
results (:class:`FrameLossResult`) are kept apart; the stepping, :func:`step_frame_loss`, is
a pure function of the trial callable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, Field, computed_field, field_validator

from ..ethernet import line_rate_fps
from ..host.device import LearningResult, TrialResult
from ..units import format_duration
from .common import RFC_TRIAL_NS, RFC_WAIT_NS, PortPairConfig, TrialRunner, run_learning

__all__ = ["FrameLossConfig", "LossOutcome", "step_frame_loss", "load_steps", "FrameLossPoint",
           "FrameLossResult", "FrameLossObserver", "run_frame_loss", "RFC_STEP_PCT"]

RFC_STEP_PCT = 10.0       # RFC 2544 26.3: steps of 10 % of line rate or finer
_EPS = 1e-9


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


# The stepping ------------------------------------------------------------------------------------------


class LossVerdict(Protocol):
    tx_frames: int
    lost_frames: int


def loss_free(result: LossVerdict) -> bool:
    """Frames were sent and none was lost (a trial that sent nothing proves nothing)."""
    return result.tx_frames > 0 and result.lost_frames == 0


R = TypeVar("R", bound=LossVerdict)


@dataclass
class LossOutcome(Generic[R]):
    """The loads tried (% of line rate), in order, and their trials. ``settled`` is True when
    the stepping ended on two successive loss-free trials (always False for explicit points)."""

    loads_pct: list[float] = field(default_factory=list)
    trials: list[R] = field(default_factory=list)
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


def step_frame_loss(trial: Callable[[float], R], step_pct: float = RFC_STEP_PCT,
                    points_pct: Sequence[float] | None = None) -> LossOutcome[R]:
    """RFC 2544 26.3 over ``trial(pct_of_line_rate)``: from 100 % down in ``step_pct`` steps
    until two successive trials send frames and lose none (:func:`loss_free`); or every one
    of ``points_pct`` (highest first)."""
    out = LossOutcome[R]()
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


class FrameLossObserver:
    """Told about progress as it happens (override what you need)."""

    def learning_done(self, result: LearningResult) -> None:
        pass

    def loss_size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        pass

    def loss_trial_started(self, frame_size: int | str, step: int, pct: float, rate_fps: float) -> None:
        pass

    def loss_trial_done(self, step: int, pct: float, result: TrialResult) -> None:
        pass

    def loss_size_done(self, result: FrameLossResult) -> None:
        pass


def run_frame_loss(device: TrialRunner, config: FrameLossConfig,
                   observer: FrameLossObserver | None = None) -> list[FrameLossResult]:
    """The frame loss rate test for every frame size of ``config``, in order."""
    observer = observer or FrameLossObserver()
    if config.learning is not None:
        observer.learning_done(run_learning(device, config))
    results = []
    for size in config.frame_sizes:
        flows, line = config.flows(size), line_rate_fps(size)
        observer.loss_size_started(size, line)
        steps = 0

        def trial(pct: float) -> TrialResult:
            nonlocal steps
            steps += 1
            rate = line * pct / 100
            observer.loss_trial_started(size, steps, pct, rate)
            result = device.run_trial(flows, rate, config.trial_duration_ns, config.wait_ns)
            observer.loss_trial_done(steps, pct, result)
            return result

        outcome = step_frame_loss(trial, config.step_pct, config.points_pct)
        result = FrameLossResult(
            frame_size=size, theoretical_max_fps=line, settled=outcome.settled,
            points=[FrameLossPoint(offered_pct=pct, offered_fps=line * pct / 100, trial=t)
                    for pct, t in zip(outcome.loads_pct, outcome.trials)])
        results.append(result)
        observer.loss_size_done(result)
    return results
