"""RFC 2544 section 26.1, throughput: per frame size, the highest offered rate at which the
DUT forwards every frame it is sent (zero loss; RFC 1242 3.17).

Configuration (:class:`ThroughputConfig`), the trials and the results
(:class:`ThroughputResult`) are kept apart, as in TRex's ndr_bench; the search,
:func:`~wirespeed.rfc2544.search.search_throughput`, is a pure function of a trial callable.

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

RFC 2544 26.2, latency, runs with this test: ``latency_trials`` trials at each frame size's
throughput rate after its search, their mean reported per RFC 1242 definition
(:mod:`wirespeed.latency`); the search's final passing trial gives the latency of Latency.csv.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, computed_field, model_validator

from ... import parse
from ... import sizes as size_points
from ...ethernet import line_rate_fps, throughput_mbps
from ...host.models import HistogramConfig, TrialResult
from ...latency import DEFINITION_NAMES, LAT_DEF, LatencyFigures, Pipeline, latency_figures
from ...trial_lines import extra_parts, pack, short_verdict
from ...units import format_duration
from ..common import RFC_TRIAL_NS, RFC_WAIT_NS, PortPairConfig
from ..context import RunContext, run_alone
from ..estimate import DutHint, ModelTrial, SizeEstimate
from ..events import Event
from ..registry import Metric, Option, Table, TestType, register
from ..search import SearchOutcome, search_throughput
from .throughput_tables import latency_csv, latency_histograms_csv, latency_trials_csv, tables, throughput_csv

__all__ = ["ThroughputConfig", "ThroughputResult", "RepeatedLatency", "run_throughput", "TEST", "throughput_csv",
           "latency_csv", "latency_trials_csv", "latency_histograms_csv"]


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

    def resolution_fps(self, frame_len: size_points.SizePoint) -> float:
        return line_rate_fps(frame_len) * self.resolution_pct / 100

    @model_validator(mode="after")
    def _search_not_longer(self) -> Self:
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
        out: list[RepeatedLatency] = []
        if not per_trial or not all(per_trial):
            return out
        for i, first in enumerate(per_trial[0]):
            figs = [f[i] for f in per_trial if len(f) > i and f[i].available]
            if len(figs) != len(trials) or any(f.definition != first.definition for f in figs):
                continue
            means: list[float] = []
            mins: list[int] = []
            maxes: list[int] = []
            for f in figs:
                # available figures carry every statistic (wirespeed.latency.latency_figures)
                assert f.avg_ns is not None and f.min_ns is not None and f.max_ns is not None
                means.append(f.avg_ns)
                mins.append(f.min_ns)
                maxes.append(f.max_ns)
            mean = sum(means) / len(means)
            spread = (sum((m - mean) ** 2 for m in means) / (len(means) - 1)) ** 0.5 if len(means) > 1 else 0.0
            out.append(cls(definition=first.definition, name=first.name, trials=len(figs), mean_ns=mean,
                           stddev_of_means_ns=spread, min_ns=min(mins), max_ns=max(maxes),
                           mean_of_max_ns=sum(maxes) / len(maxes), frames=sum(f.frames for f in figs),
                           lost_frames=sum(max(0, t.lost_frames) for t in trials)))
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
                     pipeline: Pipeline | None = None, *, trials: int | None = None,
                     **extra: Any) -> "ThroughputResult":
        """``pipeline``: the calibrated tester pipeline delay to subtract from the latency
        (:meth:`wirespeed.calibration.Calibration.pipeline_ns`); None reports raw latency."""
        return cls(frame_size=frame_size, theoretical_max_fps=outcome.line_rate_fps,
                   resolution_fps=outcome.resolution_fps, throughput_fps=outcome.throughput_fps,
                   failed_fps=outcome.failed_fps, converged=outcome.converged,
                   trials=len(outcome.trials) if trials is None else trials, best=outcome.best, **extra,
                   latency=latency_figures(outcome.best, pipeline) if outcome.best else [])


# The procedure ----------------------------------------------------------------------------------------


def run(ctx: RunContext, config: ThroughputConfig) -> list[ThroughputResult]:
    """The throughput test for every frame size of ``config``, in order; latency figures
    calibrated by ``ctx.pipeline`` (see :meth:`ThroughputResult.from_outcome`)."""
    return [_one_size(ctx, config, size) for size in config.frame_sizes]


def run_throughput(tester: Any, config: ThroughputConfig, on_event: Callable[[Event], None] | None = None,
                   pipeline: Pipeline | None = None) -> list[ThroughputResult]:
    """The test on its own, outside a plan (:func:`~wirespeed.rfc2544.context.run_alone`)."""
    return run_alone(TEST.name, run, tester, config, on_event, pipeline=pipeline)


def _one_size(ctx: RunContext, config: ThroughputConfig, size: int | str) -> ThroughputResult:
    device, pipeline = ctx.tester, ctx.pipeline
    flows, line = config.flows(size), line_rate_fps(size)
    ctx.size_started(size, line)
    steps = 0
    histogram = HistogramConfig()
    search_ns = config.search_duration_ns or config.trial_duration_ns

    def run_one(rate: float, duration_ns: int, repeat: int = 0) -> TrialResult:
        nonlocal steps, histogram
        if repeat:
            ctx.trial_started(size, repeat, rate, latency_trial=repeat, of=config.latency_trials)
        else:
            steps += 1
            ctx.trial_started(size, steps, rate, pct_line_rate=100 * rate / line)
        result: TrialResult = device.run_trial(flows, rate, duration_ns, config.wait_ns, histogram,
                                               lat_def=LAT_DEF[config.latency_definition])
        if (lat := result.latency) is not None:   # bin the next trial around what this one saw
            histogram = HistogramConfig.fitting(lat.min_ns, lat.max_ns)
        if repeat:
            ctx.trial_done(size, repeat, result, _latency_line(repeat, result), test="latency", repeat=repeat)
        else:
            ctx.trial_done(size, steps, result, _trial_line(steps, result, line), test="throughput")
        return result

    def forwarded(result: TrialResult) -> float:
        # frames that arrived once (duplicates are not forwarding capacity)
        got = result.tx_frames - result.lost_frames
        return result.offered_fps * got / result.tx_frames if result.tx_frames else 0.0

    informed = forwarded if config.search == "loss-informed" else None
    outcome = search_throughput(lambda rate: run_one(rate, search_ns), line, config.resolution_fps(size),
                                config.max_trials, passed=config.passes, forwarded=informed)
    confirmed = None
    if search_ns < config.trial_duration_ns and outcome.best is not None and steps < config.max_trials:
        # RFC 2544 26.1: the rate found by short trials holds for a full-length trial, or the
        # search goes on below it with full-length trials
        check = run_one(outcome.throughput_fps, config.trial_duration_ns)
        if config.passes(check):
            outcome.best, confirmed = check, True
        else:
            outcome = search_throughput(lambda rate: run_one(rate, config.trial_duration_ns), line,
                                        config.resolution_fps(size), config.max_trials - steps,
                                        passed=config.passes, failed=(outcome.throughput_fps, check),
                                        forwarded=informed)
            confirmed = outcome.best is not None
    elif search_ns < config.trial_duration_ns:
        confirmed = False
    search_trials = steps
    repeats = []
    if outcome.best is not None:        # RFC 2544 26.2: latency trials at the throughput rate
        repeats = [run_one(outcome.throughput_fps, config.trial_duration_ns, i + 1)
                   for i in range(config.latency_trials)]
    figures = [latency_figures(t, pipeline) for t in repeats]
    result = ThroughputResult.from_outcome(size, outcome, pipeline, trials=search_trials, confirmed=confirmed,
                                           loss_tolerance_pct=config.loss_tolerance_pct, search=config.search,
                                           latency_repeats=repeats, latency_repeat_figures=figures,
                                           repeated_latency=RepeatedLatency.over(repeats, figures))
    trials = search_trials + len(repeats)
    ctx.size_done(size, result, f"throughput {size_points.text(size)}: {result.throughput_fps:,.1f} fps "
                                f"({result.pct_line_rate:.1f} % of line rate), {trials} trials"
                                + ("" if result.converged else " (not converged: --max-trials)"))
    return result


def _estimate(config: ThroughputConfig, dut: DutHint) -> list[SizeEstimate]:
    """The search (and confirmation) against the DUT model, then the latency trials."""
    search_ns, full = config.search_duration_ns or config.trial_duration_ns, config.trial_duration_ns
    out = []
    for size in config.frame_sizes:
        def trial(rate: float, size: int | str = size) -> ModelTrial:
            return dut.trial(size, rate, search_ns)

        informed = (lambda r: r.forwarded_fps) if config.search == "loss-informed" else None
        found = search_throughput(trial, line_rate_fps(size),
                                  config.resolution_fps(size), config.max_trials, forwarded=informed)
        searched = len(found.trials)
        more = int(search_ns < full and found.best is not None and searched < config.max_trials)
        more += config.latency_trials if found.best is not None else 0
        wire = sum(search_ns + dut.settle_ns(size, rate, search_ns, config.wait_ns) for rate in found.rates)
        wire += more * (full + dut.settle_ns(size, found.throughput_fps, full, config.wait_ns))
        out.append(SizeEstimate(frame_size=size, trials=searched + more,
                                most_trials=config.max_trials + config.latency_trials, wire_ns=wire))
    return out


def _trial_line(step: int, result: TrialResult, line_rate: float) -> str:
    return pack([f"{size_points.text(result.frame_size):>6} trial {step:>2}",
                 f"{result.offered_fps:>11,.0f} fps {100 * result.offered_fps / line_rate:6.2f} %",
                 f"sent {result.tx_frames:>10,}", f"lost {result.lost_frames:>10,}", *short_verdict(result),
                 *extra_parts(result)])


def _latency_line(repeat: int, result: TrialResult) -> str:
    lat = result.latency
    figures = f"min/avg/max {lat.min_ns:,}/{lat.avg_ns:,.1f}/{lat.max_ns:,} ns raw" if lat else "no frames"
    return pack([f"{size_points.text(result.frame_size):>6} latency {repeat:>2}", f"{result.offered_fps:,.0f} fps",
                 f"lost {result.lost_frames:,}", figures, *extra_parts(result)])


# The test ---------------------------------------------------------------------------------------------


def _summary(results: Sequence[ThroughputResult], record: Any) -> list[Table]:
    config = record.parameters_of("throughput")
    rows = [[str(r.frame_size), f"{r.throughput_fps:,.1f}", f"{r.pct_line_rate:.2f}", f"{r.throughput_mbps:.1f}",
             f"{r.theoretical_max_fps:,.1f}", f"{r.trials}" + ("" if r.converged else " (cap)")] for r in results]
    throughput = Table(f"RFC 2544 throughput (zero loss, resolution {config.resolution_pct:g} % of line rate)",
                       ["frame size B", "throughput fps", "% line rate", "Mb/s", "line rate fps", "trials"], rows)
    state = ("calibrated: tester pipeline delay subtracted" if record.latency_calibrated else
             "not calibrated: includes the tester pipeline delay")
    rows = [[str(r.frame_size), lat.definition.replace("_", " "), lat.source, f"{lat.min_ns:,}", f"{lat.avg_ns:,.1f}",
             f"{lat.max_ns:,}", f"{lat.jitter_ns:,.1f}"] for r in results for lat in r.latency if lat.available]
    latency = Table(f"Latency at the throughput rate, ns ({state})",
                    ["size B", "definition", "source", "min", "avg", "max", "jitter"], rows)
    return [throughput, latency]


def _latency_definition(text: str) -> str:
    values = {"bit-forwarding": "bit_forwarding", "store-and-forward": "store_and_forward"}
    if text in values.values():         # the key itself, as the CSVs and results.json spell it
        return text
    if text not in values:
        raise ValueError(f"bit-forwarding ({DEFINITION_NAMES['bit_forwarding']}) or store-and-forward "
                         f"({DEFINITION_NAMES['store_and_forward']}); not {text!r}")
    return values[text]


def _configure(plan: Any, options: Mapping[str, Any]) -> ThroughputConfig:
    from ..plan import PlanError

    trial_ns = plan.trial_ns
    if options["search_duration"] is not None and options["search_duration"] > trial_ns:
        raise PlanError("--search-duration", f"at most the trial duration ({format_duration(trial_ns)})")
    return ThroughputConfig(
        frame_sizes=plan.sizes, resolution_pct=options["resolution"], max_trials=options["max_trials"],
        search=options["search"], bidirectional=plan.bidirectional, sources=plan.sources,
        destinations=plan.destinations, loss_tolerance_pct=options["loss_tolerance"],
        search_duration_ns=options["search_duration"], latency_trials=options["latency_trials"],
        trial_duration_ns=trial_ns, wait_ns=plan.wait, latency_definition=options["latency_definition"],
        addresses=plan.addresses)


DEFINITIONS = {
    "throughput": "RFC 2544 26.1: highest offered rate at which every frame sent was received "
                  "(received == sent, no sequence or FCS errors; or at most parameters.loss_tolerance_pct "
                  "lost, when set); offered rates are searched to the stated resolution by bisection or, by "
                  "default, loss-informed (the next rate from what the last failed trial got through); with "
                  "shorter search trials the result is confirmed by a full-length trial",
    "repeated_latency": "RFC 2544 26.2: latency trials repeated at the throughput rate "
                        "(parameters.latency_trials); the reported value is the mean over the trials of each "
                        "trial's average latency, per definition",
    "throughput_Mbps": "L * 8 * frames/s (frame bits only; L the mean size of an IMIX)",
    "measured_rx_fps": "(test frames received - 1) / (last - first receive timestamp)",
}

LATENCY_SECTION = "26.2"      # measured at the throughput rate, so part of this test; its options have their own panel
LATENCY_PANEL = f"Latency (RFC 2544 {LATENCY_SECTION})"


def _latency_figures(r: ThroughputResult) -> tuple[float | None, float | None]:
    """RFC 2544 26.2 figures (mean, max) in the measured definition, ns."""
    if r.repeated_latency:
        return r.repeated_latency[0].mean_ns, r.repeated_latency[0].max_ns
    if r.latency and r.latency[0].available:
        return r.latency[0].avg_ns, r.latency[0].max_ns
    return None, None


def _latency_us(r: ThroughputResult) -> float | None:
    mean = _latency_figures(r)[0]
    return None if mean is None else mean / 1000


def _latency_max_us(r: ThroughputResult) -> float | None:
    top = _latency_figures(r)[1]
    return None if top is None else top / 1000


TEST = register(TestType(
    name="throughput", section="26.1", title="Throughput", order=1, aliases=("latency",),
    includes=((LATENCY_SECTION, "latency"),),
    files=("Throughput.csv", "Latency.csv", "Latency_Trials.csv", "Latency_Histograms.csv"),
    config=ThroughputConfig, result=ThroughputResult, configure=_configure, run=run, tables=tables,
    summary=_summary, definitions=DEFINITIONS, estimate=_estimate,
    metrics=(
        Metric("throughput_pct", "%", "throughput, % of line rate", lambda r: r.pct_line_rate),
        Metric("throughput_fps", "fps", "throughput, frames/s", lambda r: r.throughput_fps),
        Metric("throughput_mbps", "Mb/s", "throughput, Mb/s of frames (FCS included)", lambda r: r.throughput_mbps),
        Metric("latency_us", "us", "RFC 2544 26.2 latency in the measured definition: the mean over the "
                                   "latency trials, else the final search trial's average", _latency_us),
        Metric("latency_max_us", "us", "largest latency of any frame of those trials", _latency_max_us),
    ),
    options=(
        Option("--resolution", "Search resolution, % of line rate.", "PCT", kind="parsed",
               parse=parse.percentage("0.1"), default="0.1"),
        Option("--max-trials", "Trials per frame size at most.", "N", min=1, default="32"),
        Option("--search", "loss-informed (the next rate from what the last failure got through: fewer trials) "
                           "or bisect (RFC 2544's binary search).",
               "NAME", kind="parsed", parse=parse.choice("loss-informed", "bisect"), default="loss-informed"),
        Option("--loss-tolerance", "A trial passes losing at most this % of its frames (RFC 2544: 0).", "PCT",
               kind="parsed", parse=parse.loss_tolerance, default="0"),
        Option("--search-duration", "Search trials this long, the rate found then confirmed by a --trial-duration "
                                    "trial (default: --trial-duration).", "DURATION", kind="parsed",
               parse=parse.positive_duration),
        Option("--latency-trials", "Latency trials repeated at the throughput rate, their mean reported (sim: 2, "
                                   "board: the RFC's 20; 0: none).", "N", min=0, max=1000,
               target_defaults={"sim": 2, "board": 20}, panel=LATENCY_PANEL),
        Option("--latency-definition", "Measured (RFC 1242 3.8): bit-forwarding, first bit in to first bit out, or "
                                       "store-and-forward, last bit in; the other is derived.", "NAME",
               kind="parsed", parse=_latency_definition, default="bit-forwarding", panel=LATENCY_PANEL),
    ),
))
