"""RFC 2544 sections 26.5 (system recovery) and 26.6 (reset, with RFC 6201's timestamp and
frame-loss methods), timed from the hardware's per-frame timestamps.

**System recovery** (26.5): per frame size, the port sends at ``overload_pct`` (110 %) of the
throughput measured in the same run (at most line rate) for ``overload_ns`` (RFC: at least
60 s), then, with no gap, at ``recovery_pct`` (50 %) of that rate until the trial ends
(``pN.gen.phase_at``, :meth:`Device.run_phase_trial`). Timestamp A is the moment the rate
fell: the transmit time of the first reduced-rate frame, ``first_tx_ns + phase`` (exact: frames
leave on their due times). Timestamp B is the transmit time of the last frame lost: the
analyzer's loss tracker (``pN.ana.loss_last_*``) keeps the frame with the latest transmit time
that arrived after a sequence gap; the frame before it in its stream, ``seq - 1``, was the last
lost, sent one period earlier. The recovery time is B - A (0 when nothing sent after A was
lost). If the reduced-rate stream lost frames at its very end (received + lost in gaps <
sent), the DUT had not recovered when the trial ended: the result is a lower bound, flagged.
Repeated ``repetitions`` times; the mean is reported (the RFC's figure).

**Reset** (26.6, RFC 6201): at the smallest frame size, the port sends at the throughput rate
(or ``rate_pct`` of line rate when no throughput was measured) for the trial, and ``reset_at_ns``
after it started the run resets the DUT: in simulation through the DUT control window (a model
with ``reboot=TIME``), on a bench by running the user's hook command (e.g. one that
power-cycles the DUT). RFC 6201's timestamp method: the reset time is the longest interval
between two consecutive frames received (``pN.ana.gap_max``: the last frame before the reset
to the first after); its frame-loss method: frames lost / offered rate. Both are reported,
per repetition and as means.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from statistics import mean

from pydantic import BaseModel, Field, computed_field

from ..errors import WirespeedError
from .. import sizes as size_points
from ..ethernet import line_rate_fps
from ..host.device import TrialResult
from ..host.sequence import stream_lost, tracked
from ..units import format_duration
from .common import PortPairConfig, run_learning

__all__ = ["RecoveryConfig", "RecoveryTrial", "RecoveryResult", "run_recovery", "ResetConfig", "ResetTrial",
           "ResetResult", "run_reset", "recovery_of", "reset_of", "hook_command", "RecoveryObserver"]

NS_PER_S = 1_000_000_000


class RecoveryConfig(PortPairConfig):
    """RFC 2544 26.5 parameters."""

    overload_pct: float = Field(110.0, gt=100, le=1000, description="% of the throughput rate (at most line rate)")
    recovery_pct: float = Field(50.0, gt=0, lt=100, description="% of the overload rate after timestamp A")
    overload_ns: int = Field(gt=0, description="time at the overload rate (RFC: at least 60 s)")
    recovery_ns: int = Field(gt=0, description="time at the reduced rate, after timestamp A")
    wait_ns: int = Field(ge=0)
    repetitions: int = Field(1, ge=1, le=1000)
    timeline_points: int = Field(100, ge=0, le=10_000, description="counter samples per trial (rate over time)")


class RecoveryTrial(BaseModel):
    """One repetition: the figures and the trial behind them."""

    overload_fps: float
    reduced_fps: float
    timestamp_a_ns: int = Field(description="transmit time the rate fell (tester timebase)")
    timestamp_b_ns: int | None = Field(description="transmit time of the last frame lost after A; None: none")
    recovery_ns: int = Field(description="B - A, 0 when no frame sent after A was lost")
    recovered: bool = Field(description="False: frames were still lost at the end of the trial (a lower bound)")
    lost_overload: int = Field(description="frames lost of those sent before A")
    lost_reduced: int = Field(description="frames lost of those sent after A")
    trial: TrialResult


class RecoveryResult(BaseModel):
    frame_size: int | str = Field(description="bytes, FCS included, or an IMIX label (wirespeed.sizes)")
    throughput_fps: float
    trials: list[RecoveryTrial]

    @computed_field
    @property
    def mean_recovery_ns(self) -> float:
        return mean(t.recovery_ns for t in self.trials)

    @computed_field
    @property
    def recovered(self) -> bool:
        return all(t.recovered for t in self.trials)


def recovery_of(trial: TrialResult, phase_ns: int, clk_hz: int = 125_000_000) -> RecoveryTrial:
    """The recovery figures of one rate-step trial (:meth:`Device.run_phase_trial`)."""
    flow = trial.flows[0]
    tx, rx = trial.counters[flow.tx_port], trial.counters[flow.rx_port]
    ns_per_cycle = NS_PER_S // clk_hz
    a = tx.first_tx_ns + (phase_ns // ns_per_cycle) * ns_per_cycle
    first_id, second_id = flow.spec.stream_id, flow.spec.stream_id + 8
    over, reduced = trial.streams[first_id], trial.streams[second_id]
    period_ns = reduced["period_q32"] * ns_per_cycle / 2**32
    lost_over, lost_reduced = (stream_lost(s) if tracked(s) else max(0, s["tx_frames"] - s["rx_frames"])
                               for s in (over, reduced))
    tail = reduced["tx_frames"] - reduced["rx_frames"] - reduced["lost"] > 0
    b = None
    if tail:        # still losing when the trial ended: the last frame sent was lost
        b = a + round((reduced["tx_frames"] - 1) * period_ns)
    elif rx.loss_events and rx.loss_last_stream == second_id:
        b = a + round((rx.loss_last_seq - 1) * period_ns)
    return RecoveryTrial(overload_fps=trial.offered_fps, reduced_fps=clk_hz * 2**32 / reduced["period_q32"],
                         timestamp_a_ns=a, timestamp_b_ns=b,
                         recovery_ns=max(0, b - a) if b is not None else 0, recovered=not tail,
                         lost_overload=lost_over, lost_reduced=lost_reduced, trial=trial)


class RecoveryObserver:
    def recovery_trial_started(self, frame_size: int | str, repetition: int, overload_fps: float) -> None:
        pass

    def recovery_trial_done(self, repetition: int, result: RecoveryTrial) -> None:
        pass

    def recovery_size_done(self, result: RecoveryResult) -> None:
        pass

    def reset_trial_started(self, frame_size: int | str, repetition: int, rate_fps: float) -> None:
        pass

    def reset_trial_done(self, repetition: int, result: "ResetTrial") -> None:
        pass

    def reset_done(self, result: "ResetResult") -> None:
        pass


def run_recovery(device, config: RecoveryConfig, throughput_fps: dict[int, float],
                 observer: RecoveryObserver | None = None) -> list[RecoveryResult]:
    """26.5 for every frame size with a throughput in ``throughput_fps`` (sizes whose
    throughput is 0 are skipped: nothing can be overloaded from no rate)."""
    observer = observer or RecoveryObserver()
    if config.learning is not None:
        run_learning(device, config)
    results = []
    for size in config.frame_sizes:
        base = throughput_fps.get(size, 0.0)
        if base <= 0:
            continue
        flow = config.flows(size)[0]
        overload = min(line_rate_fps(size), base * config.overload_pct / 100)
        reduced = overload * config.recovery_pct / 100
        trials = []
        for rep in range(1, config.repetitions + 1):
            observer.recovery_trial_started(size, rep, overload)
            trial = device.run_phase_trial(flow, (overload, reduced), config.overload_ns,
                                           config.overload_ns + config.recovery_ns, config.wait_ns,
                                           timeline_points=config.timeline_points)
            trials.append(recovery_of(trial, config.overload_ns, device.clk_hz))
            observer.recovery_trial_done(rep, trials[-1])
        results.append(RecoveryResult(frame_size=size, throughput_fps=base, trials=trials))
        observer.recovery_size_done(results[-1])
    return results


# Reset -----------------------------------------------------------------------------------------------


class ResetConfig(PortPairConfig):
    """RFC 2544 26.6 / RFC 6201 parameters."""

    trial_duration_ns: int = Field(gt=0)
    reset_at_ns: int = Field(gt=0, description="when the reset is triggered, after the trial started")
    wait_ns: int = Field(ge=0)
    rate_pct: float = Field(100.0, gt=0, le=100, description="% of line rate when no throughput was measured")
    repetitions: int = Field(1, ge=1, le=1000)
    hook: str | None = Field(None, description="bench: the command that resets the DUT; None: the simulated "
                                                "DUT's control window")
    timeline_points: int = Field(100, ge=0, le=10_000, description="counter samples per trial (rate over time)")


class ResetTrial(BaseModel):
    rate_fps: float
    reset_ns: int | None = Field(description="RFC 6201 timestamp method: the longest interval between two "
                                             "consecutive frames received (None: fewer than two frames)")
    last_before_ns: int | None = Field(description="receive time of the last frame before the reset")
    first_after_ns: int | None = Field(description="receive time of the first frame after the reset")
    frames_lost: int
    loss_reset_ns: float = Field(description="RFC 6201 frame-loss method: frames lost / offered rate")
    trigger: str = Field(description="how the reset was triggered")
    trial: TrialResult


class ResetResult(BaseModel):
    frame_size: int | str = Field(description="bytes, FCS included, or an IMIX label (wirespeed.sizes)")
    trials: list[ResetTrial]

    @computed_field
    @property
    def mean_reset_ns(self) -> float | None:
        values = [t.reset_ns for t in self.trials if t.reset_ns is not None]
        return mean(values) if values else None

    @computed_field
    @property
    def mean_loss_reset_ns(self) -> float:
        return mean(t.loss_reset_ns for t in self.trials)


def reset_of(trial: TrialResult, trigger: str) -> ResetTrial:
    flow = trial.flows[0]
    rx = trial.counters[flow.rx_port]
    lost = max(0, trial.lost_frames)
    has_gap = rx.rx_frames >= 2 and rx.gap_max > 0
    return ResetTrial(rate_fps=trial.offered_fps, reset_ns=rx.gap_max if has_gap else None,
                      last_before_ns=rx.gap_end_rx - rx.gap_max if has_gap else None,
                      first_after_ns=rx.gap_end_rx if has_gap else None, frames_lost=lost,
                      loss_reset_ns=lost * NS_PER_S / trial.offered_fps, trigger=trigger, trial=trial)


def hook_command(command: str, timeout_s: float = 600.0) -> Callable[[], None]:
    """The bench's reset action: run ``command`` (split like a shell line, no shell); a
    failure or a timeout stops the run with the command's own message."""
    argv = shlex.split(command)

    def run() -> None:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WirespeedError(f"--reset-hook {command!r}: {exc}") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()
            raise WirespeedError(f"--reset-hook {command!r} exited {done.returncode}"
                                 + (f": {tail[-1]}" if tail else ""))
    return run


def run_reset(device, config: ResetConfig, reset: Callable[[], None], throughput_fps: dict[int, float],
              observer: RecoveryObserver | None = None) -> ResetResult:
    """26.6 at the smallest frame size: ``reset()`` resets the DUT (the control window or
    :func:`hook_command`)."""
    observer = observer or RecoveryObserver()
    if config.learning is not None:
        run_learning(device, config)
    size = size_points.smallest(config.frame_sizes)
    rate = throughput_fps.get(size) or line_rate_fps(size) * config.rate_pct / 100
    flow = config.flows(size)[0]
    trigger = f"hook: {config.hook}" if config.hook else "simulated DUT control window"
    trials = []
    for rep in range(1, config.repetitions + 1):
        observer.reset_trial_started(size, rep, rate)
        trial = device.run_trial([flow], rate, config.trial_duration_ns, config.wait_ns,
                                 event=(config.reset_at_ns, reset), timeline_points=config.timeline_points)
        trials.append(reset_of(trial, trigger))
        observer.reset_trial_done(rep, trials[-1])
    result = ResetResult(frame_size=size, trials=trials)
    observer.reset_done(result)
    return result


def describe(config: RecoveryConfig | ResetConfig) -> str:
    if isinstance(config, RecoveryConfig):
        return (f"{config.overload_pct:g} % of throughput for {format_duration(config.overload_ns)}, then "
                f"{config.recovery_pct:g} % of that for {format_duration(config.recovery_ns)}")
    return f"reset {format_duration(config.reset_at_ns)} into a {format_duration(config.trial_duration_ns)} trial"
