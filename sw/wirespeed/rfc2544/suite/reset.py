"""RFC 2544 section 26.6, reset, with RFC 6201's timestamp and frame-loss methods.

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
from collections.abc import Callable, Mapping, Sequence
from statistics import mean
from typing import Any

from pydantic import BaseModel, Field, computed_field

from ... import parse
from ... import sizes as size_points
from ...errors import WirespeedError
from ...ethernet import line_rate_fps
from ...host.models import TrialResult
from ...trial_lines import pack
from ...units import format_duration
from ..common import PortPairConfig, csv_text
from ..context import RunContext, run_alone
from ..estimate import DutHint, SizeEstimate
from ..events import Event
from ..registry import Metric, Option, Table, TestType, register

__all__ = ["ResetConfig", "ResetTrial", "ResetResult", "run_reset", "reset_of", "hook_command", "reset_csv", "TEST"]

NS_PER_S = 1_000_000_000


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
                                             "consecutive frames received (None: fewer than two frames, or no "
                                             "reset seen: no frame lost and no interval over two frame periods)")
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
    # Without a lost frame or a long interval the DUT was not reset within the trial (a hook
    # that returned late, or did nothing): the longest interval is then the frame spacing.
    seen = lost > 0 or rx.gap_max > 2 * NS_PER_S / trial.offered_fps
    has_gap = rx.rx_frames >= 2 and rx.gap_max > 0 and seen
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


RESET_COLUMNS = ["frame_size_B", "repetition", "offered_fps", "reset_time_us", "loss_reset_time_us", "frames_lost",
                 "last_frame_before_ns", "first_frame_after_ns", "trigger"]


def reset_csv(result: ResetResult | None) -> str:
    """Reset.csv: one row per repetition, then the means (RFC 2544 26.6, RFC 6201 timestamp and
    frame-loss methods)."""
    rows = []
    if result is not None:
        for i, t in enumerate(result.trials, 1):
            rows.append([result.frame_size, i, f"{t.rate_fps:.2f}",
                         "" if t.reset_ns is None else f"{t.reset_ns / 1e3:.3f}", f"{t.loss_reset_ns / 1e3:.3f}",
                         t.frames_lost, "" if t.last_before_ns is None else t.last_before_ns,
                         "" if t.first_after_ns is None else t.first_after_ns, t.trigger])
        mean_ts = result.mean_reset_ns
        rows.append([result.frame_size, "mean", "", "" if mean_ts is None else f"{mean_ts / 1e3:.3f}",
                     f"{result.mean_loss_reset_ns / 1e3:.3f}", "", "", "", ""])
    return csv_text(RESET_COLUMNS, rows)


# The procedure ----------------------------------------------------------------------------------------


def run(ctx: RunContext, config: ResetConfig) -> list[ResetResult]:
    """26.6 at the smallest frame size: ``ctx.reset()`` resets the DUT (the simulation's control
    window or :func:`hook_command`)."""
    if ctx.reset is None:
        raise WirespeedError("the reset test needs a way to reset the DUT (--reset-hook, or a simulated DUT)")
    throughput = {r.frame_size: r.throughput_fps for r in ctx.results_of("throughput")}
    size = size_points.smallest(config.frame_sizes)
    rate = throughput.get(size) or line_rate_fps(size) * config.rate_pct / 100
    flow = config.flows(size)[0]
    trigger = f"hook: {config.hook}" if config.hook else "simulated DUT control window"
    ctx.size_started(size, line_rate_fps(size))
    trials = []
    for rep in range(1, config.repetitions + 1):
        ctx.trial_started(size, rep, rate, repetition=rep, of=config.repetitions)
        trial = ctx.tester.run_trial([flow], rate, config.trial_duration_ns, config.wait_ns,
                                     event=(config.reset_at_ns, ctx.reset), timeline_points=config.timeline_points)
        trials.append(reset_of(trial, trigger))
        ctx.trial_done(size, rep, trial, _trial_line(rep, trials[-1]), test="reset", repetition=rep)
    result = ResetResult(frame_size=size, trials=trials)
    mean_ns = result.mean_reset_ns
    ctx.size_done(size, result, f"reset {size_points.text(size)}: reset time "
                                + ("none seen" if mean_ns is None else f"{mean_ns / 1e3:,.3f} µs")
                                + f" (timestamps), {len(trials)} trials")
    return [result]


def run_reset(tester: Any, config: ResetConfig, reset: Callable[[], None], throughput_fps: dict[Any, float],
              on_event: Callable[[Event], None] | None = None) -> ResetResult:
    """The test on its own, outside a plan, at the throughput of ``throughput_fps`` by size."""
    results: list[ResetResult] = run_alone(TEST.name, run, tester, config, on_event, throughput_fps=throughput_fps,
                                           reset=reset)
    return results[0]


def _estimate(config: ResetConfig, dut: DutHint) -> list[SizeEstimate]:
    """One size, ``repetitions`` trials of the trial duration."""
    size = size_points.smallest(config.frame_sizes)
    return [SizeEstimate(frame_size=size, trials=config.repetitions, most_trials=config.repetitions,
                         wire_ns=config.repetitions * (config.trial_duration_ns + config.wait_ns))]


def _trial_line(rep: int, result: ResetTrial) -> str:
    if result.reset_ns is not None:
        gap = f"{result.reset_ns / 1e3:,.3f} µs"
    else:
        gap = "none seen (was the DUT reset within the trial?)" if result.frames_lost == 0 else "-"
    return pack([f"{size_points.text(result.trial.frame_size):>6} reset rep {rep:>2}",
                 f"reset time {gap} (timestamps),",
                 f"{result.loss_reset_ns / 1e3:,.3f} µs (frame loss, {result.frames_lost:,} lost)"])


# The test ---------------------------------------------------------------------------------------------


def _summary(results: Sequence[ResetResult], record: Any) -> list[Table]:
    rows = [[str(r.frame_size), str(i), "-" if t.reset_ns is None else f"{t.reset_ns / 1e3:,.3f}",
             f"{t.loss_reset_ns / 1e3:,.3f}", f"{t.frames_lost:,}"] for r in results for i, t in enumerate(r.trials, 1)]
    return [Table("RFC 2544 26.6 reset (RFC 6201)", ["Frame size (B)", "Trial", "Reset time (µs, timestamps)",
                                                    "Reset time (µs, frame loss)", "Frames lost"], rows)]


def _configure(plan: Any, options: Mapping[str, Any]) -> ResetConfig:
    from ..plan import PlanError

    if options["reset_hook"] is not None and plan.target_kind == "sim":
        raise PlanError("--reset-hook", "for a board; the simulated DUT is reset through the simulation (give it "
                                        "reboot=TIME)")
    if plan.target_kind != "sim" and options["reset_hook"] is None:
        raise PlanError("--reset-hook", "required for the reset test on a board: the command that resets the DUT")
    trial_ns = plan.trial_ns
    at = trial_ns // 4 if options["reset_at"] is None else options["reset_at"]
    if at >= trial_ns:
        raise PlanError("--reset-at", f"inside the trial (below {format_duration(trial_ns)})")
    return ResetConfig(frame_sizes=plan.sizes, addresses=plan.addresses, wait_ns=plan.wait, sources=plan.sources,
                       destinations=plan.destinations, trial_duration_ns=trial_ns, reset_at_ns=at,
                       hook=options["reset_hook"], repetitions=options["reset_trials"])


TEST = register(TestType(
    name="reset", section="26.6", title="Reset", order=5, one_result=True,
    files=("Reset.csv",),
    config=ResetConfig, result=ResetResult, configure=_configure, run=run,
    tables=lambda results, record: {"Reset.csv": (RESET_COLUMNS, reset_csv(results[0] if results else None))},
    summary=_summary, needs={"throughput": "runs at the throughput rate"}, estimate=_estimate,
    metrics=(Metric("reset_us", "us", "reset time (timestamp method), mean over the repetitions that saw one",
                    lambda r: None if r.mean_reset_ns is None else r.mean_reset_ns / 1000),),
    definitions={
        "reset": "RFC 2544 26.6 / RFC 6201 at the smallest frame size: reset time (timestamp method) = the longest "
                 "interval between two consecutive test frames received, i.e. from the last frame before the reset "
                 "to the first after; loss reset time (frame-loss method) = frames lost / offered rate",
    },
    options=(
        Option("--reset-at", "When the DUT is reset, from the trial's start (default: a quarter of the trial).",
               "DURATION", kind="parsed", parse=parse.positive_duration),
        Option("--reset-hook", "On a bench, the command that resets the DUT (e.g. power-cycles it); a simulated "
                               "DUT is reset by the simulation (its reboot=TIME).", "COMMAND", kind="text"),
        Option("--reset-trials", "Repetitions (sim: 1, board: 5).", "N", min=1, max=1000,
               target_defaults={"sim": 1, "board": 5}),
    ),
))
