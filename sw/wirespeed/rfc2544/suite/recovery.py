"""RFC 2544 section 26.5, system recovery, timed from the hardware's per-frame timestamps.

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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from statistics import mean
from typing import Any

from pydantic import BaseModel, Field, computed_field

from ... import parse
from ... import sizes as size_points
from ...ethernet import line_rate_fps
from ...host.models import TrialResult
from ...host.sequence import stream_lost, tracked
from ...trial_lines import pack
from ...units import format_duration
from ..common import RFC_TRIAL_NS, PortPairConfig, csv_text
from ..context import RunContext, run_alone
from ..estimate import DutHint, SizeEstimate
from ..events import Event
from ..registry import Metric, Option, Table, TestType, register

__all__ = ["RecoveryConfig", "RecoveryTrial", "RecoveryResult", "run_recovery", "recovery_of", "recovery_csv", "TEST"]

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

    def notes(self) -> list[str]:
        if self.overload_ns >= RFC_TRIAL_NS:
            return []
        return [f"system recovery: {self.overload_pct:g} % of throughput for {format_duration(self.overload_ns)}, "
                f"then {self.recovery_pct:g} % of that for {format_duration(self.recovery_ns)}; RFC 2544 26.5 asks "
                f"for at least {format_duration(RFC_TRIAL_NS)} of overload"]


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


def recovery_of(trial: TrialResult, phase_ns: int, clk_hz: int) -> RecoveryTrial:
    """The recovery figures of one rate-step trial (:meth:`Device.run_phase_trial`)."""
    flow = trial.flows[0]
    tx, rx = trial.counters[flow.tx_port], trial.counters[flow.rx_port]
    ns_per_cycle = NS_PER_S // clk_hz
    a = tx.first_tx_ns + (phase_ns // ns_per_cycle) * ns_per_cycle
    first_id, second_id = flow.stream_id, flow.stream_id + 8
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


RECOVERY_COLUMNS = ["frame_size_B", "repetition", "throughput_fps", "overload_fps", "reduced_fps",
                    "recovery_time_us", "recovered", "frames_lost_overload", "frames_lost_reduced",
                    "timestamp_a_ns", "timestamp_b_ns"]
def recovery_csv(results: list[RecoveryResult]) -> str:
    """System_Recovery.csv: one row per frame size and repetition, then a mean row per size
    (repetition "mean"; the RFC 2544 26.5 figure)."""
    rows = []
    for r in results:
        for i, t in enumerate(r.trials, 1):
            rows.append([r.frame_size, i, f"{r.throughput_fps:.2f}", f"{t.overload_fps:.2f}", f"{t.reduced_fps:.2f}",
                         f"{t.recovery_ns / 1e3:.3f}", "yes" if t.recovered else "no", t.lost_overload,
                         t.lost_reduced, t.timestamp_a_ns, "" if t.timestamp_b_ns is None else t.timestamp_b_ns])
        rows.append([r.frame_size, "mean", f"{r.throughput_fps:.2f}", "", "", f"{r.mean_recovery_ns / 1e3:.3f}",
                     "yes" if r.recovered else "no", "", "", "", ""])
    return csv_text(RECOVERY_COLUMNS, rows)


# The procedure ----------------------------------------------------------------------------------------


def run(ctx: RunContext, config: RecoveryConfig) -> list[RecoveryResult]:
    """26.5 for every frame size with a throughput measured in the run (sizes whose throughput
    is 0 are skipped: nothing can be overloaded from no rate)."""
    throughput = {r.frame_size: r.throughput_fps for r in ctx.results_of("throughput")}
    results = []
    for size in config.frame_sizes:
        base = throughput.get(size, 0.0)
        if base <= 0:
            continue
        flow = config.flows(size)[0]
        overload = min(line_rate_fps(size), base * config.overload_pct / 100)
        reduced = overload * config.recovery_pct / 100
        ctx.size_started(size, line_rate_fps(size))
        trials = []
        for rep in range(1, config.repetitions + 1):
            ctx.trial_started(size, rep, overload, repetition=rep, of=config.repetitions)
            trial = ctx.tester.run_phase_trial(flow, (overload, reduced), config.overload_ns,
                                               config.overload_ns + config.recovery_ns, config.wait_ns,
                                               timeline_points=config.timeline_points)
            trials.append(recovery_of(trial, config.overload_ns, ctx.tester.clk_hz))
            ctx.trial_done(size, rep, trial, _trial_line(rep, trials[-1]), test="system-recovery", repetition=rep)
        result = RecoveryResult(frame_size=size, throughput_fps=base, trials=trials)
        results.append(result)
        ctx.size_done(size, result, f"system-recovery {size_points.text(size)}: {result.mean_recovery_ns / 1e3:,.3f} "
                                    f"µs mean" + ("" if result.recovered else " (a lower bound: still losing)")
                                    + f", {len(trials)} trials")
    return results


def run_recovery(tester: Any, config: RecoveryConfig, throughput_fps: dict[Any, float],
                 on_event: Callable[[Event], None] | None = None) -> list[RecoveryResult]:
    """The test on its own, outside a plan, at the throughput of ``throughput_fps`` by size."""
    return run_alone(TEST.name, run, tester, config, on_event, throughput_fps=throughput_fps)


def _estimate(config: RecoveryConfig, dut: DutHint) -> list[SizeEstimate]:
    """Every size (the throughput test finds a rate to overload), ``repetitions`` two-phase trials."""
    wire = config.repetitions * (config.overload_ns + config.recovery_ns + config.wait_ns)
    return [SizeEstimate(frame_size=size, trials=config.repetitions, most_trials=config.repetitions, wire_ns=wire)
            for size in config.frame_sizes]


def _trial_line(rep: int, result: RecoveryTrial) -> str:
    return pack([f"{size_points.text(result.trial.frame_size):>6} recovery rep {rep:>2}",
                 f"lost {result.lost_overload:,} + {result.lost_reduced:,}",
                 f"recovery {result.recovery_ns / 1e3:,.3f} µs",
                 *([] if result.recovered else ["[red](still losing at the end)[/]"])])


# The test ---------------------------------------------------------------------------------------------


def _summary(results: Sequence[RecoveryResult], record: Any) -> list[Table]:
    rows = [[str(r.frame_size), f"{r.throughput_fps:,.1f}", f"{r.trials[0].overload_fps:,.1f}",
             f"{r.mean_recovery_ns / 1e3:,.3f}", str(len(r.trials)),
             "yes" if r.recovered else "[red]no (lower bound)[/]"]
            for r in results]
    return [Table("RFC 2544 26.5 system recovery", ["Frame size (B)", "Throughput (fps)", "Overload (fps)",
                                                    "Recovery time (µs, mean)", "Trials", "Recovered"], rows)]


def _done(results: Sequence[RecoveryResult], record: Any) -> set[Any]:
    """Sizes with a result, and those the test skips (no throughput to overload from)."""
    done = {r.frame_size for r in results}
    return done | {r.frame_size for r in record.results_of("throughput") if r.throughput_fps <= 0}


def _configure(plan: Any, options: Mapping[str, Any]) -> RecoveryConfig:
    return RecoveryConfig(frame_sizes=plan.sizes, addresses=plan.addresses, wait_ns=plan.wait, sources=plan.sources,
                          destinations=plan.destinations, overload_ns=options["overload"],
                          recovery_ns=options["recovery"], repetitions=options["recovery_trials"])


TEST = register(TestType(
    name="system-recovery", section="26.5", title="System recovery", order=4, aliases=("recovery",),
    files=("System_Recovery.csv",),
    config=RecoveryConfig, result=RecoveryResult, configure=_configure, run=run,
    tables=lambda results, record: {"System_Recovery.csv": (RECOVERY_COLUMNS, recovery_csv(list(results)))},
    summary=_summary, done_sizes=_done, estimate=_estimate, needs={"throughput": "runs at the throughput rate"},
    metrics=(Metric("recovery_us", "us", "system recovery time, mean over the repetitions",
                    lambda r: r.mean_recovery_ns / 1000),),
    blocks={"stream_stats": "system-recovery needs (each rate phase's frames per stream)"},
    definitions={
        "system_recovery": "RFC 2544 26.5: offered load at overload_pct of the throughput (at most line rate), "
                           "then at recovery_pct of that; timestamp A = transmit time of the first reduced-rate "
                           "frame, timestamp B = transmit time of the last frame lost after A (from the analyzer's "
                           "sequence gap tracker); recovery time = B - A, 0 when nothing sent after A was lost; "
                           "recovered = no when frames were still being lost when the trial ended (a lower bound)",
    },
    options=(
        Option("--overload", "Time at 110 % of throughput before the rate falls (sim: 4ms, board: the RFC's 60s).",
               "DURATION", kind="parsed", parse=parse.positive_duration,
               target_defaults={"sim": 4_000_000, "board": 60_000_000_000}),
        Option("--recovery", "Time at the reduced rate after it fell (sim: 4ms, board: 60s).",
               "DURATION", kind="parsed", parse=parse.positive_duration,
               target_defaults={"sim": 4_000_000, "board": 60_000_000_000}),
        Option("--recovery-trials", "Repetitions per frame size (sim: 1, board: 5).", "N",
               min=1, max=1000, target_defaults={"sim": 1, "board": 5}),
    ),
))
