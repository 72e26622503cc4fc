"""Results as they are measured: one self-describing ``results.json`` per run (tool and
gateware versions, target, DUT, every parameter, every trial's raw counters), from which the
CSV files are derived.

Files in the output directory:

* ``trials.jsonl``: one line per trial, appended (flushed and fsynced) the moment the trial
  ends;
* ``results.json``, ``Throughput.csv``, ``Latency.csv`` (RFC 2544 26.1/26.2), ``Back_to_Back.csv``
  (26.4, when run), ``Frame_Loss.csv`` (26.3, when run), and the detail tables ``Trials.csv``
  (every trial of the run), ``Latency_Trials.csv`` (26.2's repeated latency trials, when run)
  and ``Latency_Histograms.csv`` (the latency distribution behind each Latency.csv row):
  rewritten atomically (temporary file + rename) after each frame size and when the run
  ends, so an interrupted run keeps everything it measured.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from . import __version__
from .host.device import PERCENTILES, GatewareId, TrialResult
from .latency import DEFINITION_NAMES, LatencyFigures
from .rfc2544.back_to_back import BackToBackConfig, BackToBackResult
from .rfc2544.frame_loss import FrameLossConfig, FrameLossResult
from .rfc2544.throughput import ThroughputConfig, ThroughputResult

__all__ = ["RunHeader", "RunRecord", "ResultsWriter", "DEFINITIONS", "throughput_csv", "latency_csv",
           "back_to_back_csv", "frame_loss_csv", "atomic_write_text", "FORMAT", "latency_trials_csv",
           "latency_histograms_csv", "trials_csv", "tables_of"]

FORMAT = "wirespeed-results/1"
Status = Literal["running", "complete", "interrupted", "failed"]

LATENCY_DEFINITION = ("RFC 1242 3.8, both definitions per frame size: bit forwarding = "
                      f"{DEFINITION_NAMES['bit_forwarding']}; store and forward = "
                      f"{DEFINITION_NAMES['store_and_forward']}. The analyzers measure one per trial "
                      "(parameters.latency_definition, source 'measured'); the other is the measured one "
                      "shifted by 8 ns x frame size (source 'derived', exact for one frame size). Calibrated "
                      "figures have the tester's pipeline delay (from a loopback-cable calibration) "
                      "subtracted; raw ones include it")
DEFINITIONS = {
    "throughput": "RFC 2544 26.1: highest offered rate at which every frame sent was received "
                  "(received == sent, no sequence or FCS errors; or at most parameters.loss_tolerance_pct "
                  "lost, when set); offered rates are searched to the stated resolution by bisection or, by "
                  "default, loss-informed (the next rate from what the last failed trial got through); with "
                  "shorter search trials the result is confirmed by a full-length trial",
    "repeated_latency": "RFC 2544 26.2: latency trials repeated at the throughput rate "
                        "(parameters.latency_trials); the reported value is the mean over the trials of each "
                        "trial's average latency, per definition",
    "frame_size": "bytes from destination MAC to FCS inclusive",
    "line_rate": "1 Gb/s; a frame of L bytes occupies L + 20 bytes on the wire (preamble, SFD, gap)",
    "throughput_Mbps": "L * 8 * frames/s (frame bits only)",
    "measured_rx_fps": "(test frames received - 1) / (last - first receive timestamp)",
    "latency": LATENCY_DEFINITION,
}
B2B_DEFINITIONS = {
    "back_to_back": "RFC 2544 26.4 / RFC 9004: longest burst of frames at minimum inter-frame gap (100 % of "
                    "line rate, from idle) forwarded without loss, searched to one frame, repeated; mean, sample "
                    "standard deviation (n - 1), min and max over the repetitions; a capped figure (the longest "
                    "burst tried passed) is a lower bound",
    "buffer_time": "RFC 9004 section 6.4: implied DUT buffer time = mean back-to-back frames / theoretical max "
                   "frame rate; corrected DUT buffer time = implied - implied * throughput / theoretical max frame "
                   "rate, with the RFC 2544 26.1 throughput measured in the same run (not available otherwise)",
}
LOSS_DEFINITIONS = {
    "frame_loss": "RFC 2544 26.3: loss % = (sent - received) * 100 / sent at each offered load, from 100 % of "
                  "line rate down in steps until two successive trials lose nothing, or at explicit load points",
}


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunHeader(BaseModel):
    """What describes a run, known before the first trial."""

    format: str = FORMAT
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "wirespeed", "version": __version__})
    test: str = "rfc2544-throughput"
    target: str
    gateware: GatewareId
    dut: dict[str, Any]
    parameters: ThroughputConfig
    notes: list[str] = Field(default_factory=list)
    definitions: dict[str, str] = Field(default_factory=lambda: dict(DEFINITIONS))
    latency_calibrated: bool = Field(False, description="latency figures have the tester pipeline delay "
                                                        "subtracted")
    calibration: dict[str, Any] | None = Field(None, description="the calibration used: where it came from "
                                                                  "and its whole file")
    learning: dict[str, Any] | None = Field(None, description="the learning phase before the first trial "
                                                               "(addresses, ARP/ND, learning frames, settle)")
    started_utc: str = Field(default_factory=_utc_now)
    tests: list[str] = Field(default_factory=lambda: ["throughput"], description="the tests of this run, in order")
    back_to_back_parameters: BackToBackConfig | None = Field(None, description="RFC 2544 26.4 parameters, if run")
    frame_loss_parameters: FrameLossConfig | None = Field(None, description="RFC 2544 26.3 parameters, if run")
    config_file: dict[str, str] | None = Field(None, description="the --config file of the run: path, format, "
                                                                 "sha256 and its text")


class RunRecord(RunHeader):
    """``results.json``: the header, the run's status, the results so far and every trial."""

    status: Status = "running"
    error: str | None = None
    updated_utc: str = Field(default_factory=_utc_now)
    results: list[ThroughputResult] = Field(default_factory=list)
    back_to_back: list[BackToBackResult] = Field(default_factory=list, description="RFC 2544 26.4 per frame size")
    frame_loss: list[FrameLossResult] = Field(default_factory=list, description="RFC 2544 26.3 per frame size")
    trials: list[TrialResult] = Field(default_factory=list)
    trial_tags: list[dict[str, Any]] = Field(default_factory=list,
                                             description="per trial (same order): the test and step it belongs to")


# Derived tables ---------------------------------------------------------------------------------------

THROUGHPUT_COLUMNS = ["frame_size_B", "offered_fps", "measured_rx_fps", "pct_line_rate", "throughput_Mbps",
                      "theoretical_max_fps", "frames_sent", "frames_received", "trials", "search",
                      "loss_tolerance_pct", "confirmed"]
LATENCY_COLUMNS = ["frame_size_B", "rate_fps", "min_ns", "avg_ns", "max_ns", "stddev_ns", "jitter_ns",
                   "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "histogram_bin_ns", "frames", "definition",
                   "source", "calibrated", "pipeline_delay_ns", "repeats", "repeats_mean_ns",
                   "repeats_mean_stddev_ns", "repeats_min_ns", "repeats_max_ns"]


def _csv(columns: list[str], rows: list[list]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def _throughput_row(r: ThroughputResult) -> list:
    best = r.best
    return [r.frame_size, f"{r.throughput_fps:.2f}", f"{best.measured_rx_fps:.2f}" if best else "",
            f"{r.pct_line_rate:.3f}", f"{r.throughput_mbps:.3f}", f"{r.theoretical_max_fps:.2f}",
            best.tx_frames if best else "", best.rx_frames if best else "", r.trials, r.search,
            f"{r.loss_tolerance_pct:g}", {True: "yes", False: "no", None: ""}[r.confirmed]]


def throughput_csv(results: list[ThroughputResult]) -> str:
    """Throughput.csv: one row per frame size; frames of the trial at the throughput rate."""
    return _csv(THROUGHPUT_COLUMNS, [_throughput_row(r) for r in results])


def _latency_row(r: ThroughputResult, lat: LatencyFigures) -> list:
    def pct(q):
        value = lat.percentiles_ns.get(f"p{q:g}")
        return "" if value is None else value

    return [r.frame_size, f"{r.throughput_fps:.2f}", lat.min_ns, f"{lat.avg_ns:.1f}", lat.max_ns,
            f"{lat.stddev_ns:.1f}", f"{lat.jitter_ns:.1f}", *(pct(q) for q in PERCENTILES),
            lat.bin_ns or "", lat.frames, lat.name, lat.source, "yes" if lat.calibrated else "no",
            "" if lat.pipeline_delay_ns is None else lat.pipeline_delay_ns, *_repeats(r, lat.definition)]


def _repeats(r: ThroughputResult, definition: str) -> list:
    rep = next((x for x in r.repeated_latency if x.definition == definition), None)
    if rep is None:
        return ["", "", "", "", ""]
    return [rep.trials, f"{rep.mean_ns:.1f}", f"{rep.stddev_of_means_ns:.1f}", rep.min_ns, rep.max_ns]


def latency_csv(results: list[ThroughputResult]) -> str:
    """Latency.csv: latency of the final passing trial of each frame size, one row per
    RFC 1242 definition (the measured one first, then the derived one when it is exact), with
    RFC 2544 26.2's repeated-trial figures when latency trials were run."""
    rows = [_latency_row(r, lat) for r in results if r.best for lat in r.latency if lat.available]
    return _csv(LATENCY_COLUMNS, rows)


BACK_TO_BACK_COLUMNS = ["frame_size_B", "mean_burst_frames", "stddev_burst_frames", "min_burst_frames",
                        "max_burst_frames", "repetitions", "max_burst_tried_frames", "capped",
                        "theoretical_max_fps", "implied_buffer_time_us", "throughput_fps",
                        "corrected_buffer_time_us", "trials"]
FRAME_LOSS_COLUMNS = ["frame_size_B", "offered_pct_line_rate", "offered_fps", "theoretical_max_fps", "duration_ms",
                      "frames_sent", "frames_received", "frames_lost", "loss_pct", "measured_rx_fps"]


def _b2b_row(r: BackToBackResult) -> list:
    corrected = r.corrected_buffer_time_s
    return [r.frame_size, f"{r.mean_burst_frames:.2f}", f"{r.stddev_burst_frames:.2f}", r.min_burst_frames,
            r.max_burst_frames, len(r.repetitions), r.max_burst, "yes" if r.capped else "no",
            f"{r.theoretical_max_fps:.2f}", f"{r.implied_buffer_time_s * 1e6:.3f}",
            "" if r.throughput_fps is None else f"{r.throughput_fps:.2f}",
            "" if corrected is None else f"{corrected * 1e6:.3f}", r.trials]


def back_to_back_csv(results: list[BackToBackResult]) -> str:
    """Back_to_Back.csv: one row per frame size; the corrected buffer time is empty without a
    throughput measured in the same run."""
    return _csv(BACK_TO_BACK_COLUMNS, [_b2b_row(r) for r in results])


def frame_loss_csv(results: list[FrameLossResult]) -> str:
    """Frame_Loss.csv: one row per frame size and load point, in the order measured."""
    rows = [[r.frame_size, f"{p.offered_pct:.3f}", f"{p.offered_fps:.2f}", f"{r.theoretical_max_fps:.2f}",
             f"{p.trial.duration_ns / 1e6:.3f}", p.trial.tx_frames, p.trial.rx_frames, p.trial.lost_frames,
             f"{p.loss_pct:.4f}", f"{p.trial.measured_rx_fps:.2f}"] for r in results for p in r.points]
    return _csv(FRAME_LOSS_COLUMNS, rows)


LATENCY_TRIALS_COLUMNS = ["frame_size_B", "repeat", "rate_fps", "definition", "source", "min_ns", "avg_ns", "max_ns",
                          "stddev_ns", "jitter_ns", "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "frames",
                          "frames_lost", "calibrated"]


def latency_trials_csv(results: list[ThroughputResult]) -> str:
    """Latency_Trials.csv: each RFC 2544 26.2 latency trial, both definitions (as Latency.csv)."""
    rows = []
    for r in results:
        for i, (trial, figures) in enumerate(zip(r.latency_repeats, r.latency_repeat_figures), 1):
            for lat in figures:
                if lat.available:
                    pct = [lat.percentiles_ns.get(f"p{q:g}") for q in PERCENTILES]
                    rows.append([r.frame_size, i, f"{trial.offered_fps:.2f}", lat.name, lat.source, lat.min_ns,
                                 f"{lat.avg_ns:.1f}", lat.max_ns, f"{lat.stddev_ns:.1f}", f"{lat.jitter_ns:.1f}",
                                 *("" if v is None else v for v in pct), lat.frames, max(0, trial.lost_frames),
                                 "yes" if lat.calibrated else "no"])
    return _csv(LATENCY_TRIALS_COLUMNS, rows)


HISTOGRAM_COLUMNS = ["frame_size_B", "trial", "rx_port", "definition", "bin_low_ns", "bin_high_ns", "frames"]


def latency_histograms_csv(results: list[ThroughputResult]) -> str:
    """Latency_Histograms.csv: the raw measured latency histogram (tester pipeline delay
    included, the trial's measured definition) of each size's final passing trial ("best") and
    of each repeated latency trial; non-empty bins, then an underflow and an overflow row
    (empty bin bounds) when not zero."""
    from .latency import definition_of

    rows = []
    for r in results:
        trials = ([("best", r.best)] if r.best else []) + [(f"repeat {i}", t) for i, t in
                                                              enumerate(r.latency_repeats, 1)]
        for label, trial in trials:
            name = DEFINITION_NAMES[definition_of(trial.lat_def)]
            for port, hist in sorted(trial.histograms.items()):
                for index in sorted(hist.counts):
                    low = hist.offset_ns + index * hist.bin_ns
                    rows.append([r.frame_size, label, port, name, low, low + hist.bin_ns, hist.counts[index]])
                if hist.underflow:
                    rows.append([r.frame_size, label, port, name, "", hist.offset_ns, hist.underflow])
                if hist.overflow:
                    rows.append([r.frame_size, label, port, name,
                                 hist.offset_ns + 1024 * hist.bin_ns, "", hist.overflow])
    return _csv(HISTOGRAM_COLUMNS, rows)


TRIALS_COLUMNS = ["n", "test", "step", "frame_size_B", "offered_fps", "duration_ms", "frames_sent", "frames_received",
                  "frames_lost", "loss_pct", "seq_errors", "fcs_errors", "measured_rx_fps", "lat_min_ns", "lat_avg_ns",
                  "lat_max_ns", "passed"]


def trials_csv(trials: list[TrialResult], tags: list[dict[str, Any]]) -> str:
    """Trials.csv: every trial of the run in order, its raw counters summed over the ports
    (latency raw, in the trial's measured definition)."""
    rows = []
    for n, trial in enumerate(trials, 1):
        tag = tags[n - 1] if n - 1 < len(tags) else {}
        step = next((f"{k}={v}" for k, v in tag.items() if k != "test"), "")
        lat = trial.latency
        rows.append([n, tag.get("test", "throughput"), step, trial.frame_size, f"{trial.offered_fps:.2f}",
                     f"{trial.duration_ns / 1e6:.3f}", trial.tx_frames, trial.rx_frames, trial.lost_frames,
                     f"{trial.loss_pct:.4f}", trial.seq_errors, trial.fcs_errors, f"{trial.measured_rx_fps:.2f}",
                     lat.min_ns if lat else "", f"{lat.avg_ns:.1f}" if lat else "", lat.max_ns if lat else "",
                     "yes" if trial.passed else "no"])
    return _csv(TRIALS_COLUMNS, rows)


def tables_of(record: RunRecord) -> dict[str, tuple[list[str], str]]:
    """Every CSV table of a run, derived from its record alone: name -> (columns, text)."""
    tables = {}
    if "throughput" in record.tests:
        tables["Throughput.csv"] = (THROUGHPUT_COLUMNS, throughput_csv(record.results))
        tables["Latency.csv"] = (LATENCY_COLUMNS, latency_csv(record.results))
        if record.parameters.latency_trials:
            tables["Latency_Trials.csv"] = (LATENCY_TRIALS_COLUMNS, latency_trials_csv(record.results))
        tables["Latency_Histograms.csv"] = (HISTOGRAM_COLUMNS, latency_histograms_csv(record.results))
    if record.back_to_back_parameters is not None:
        tables["Back_to_Back.csv"] = (BACK_TO_BACK_COLUMNS, back_to_back_csv(record.back_to_back))
    if record.frame_loss_parameters is not None:
        tables["Frame_Loss.csv"] = (FRAME_LOSS_COLUMNS, frame_loss_csv(record.frame_loss))
    tables["Trials.csv"] = (TRIALS_COLUMNS, trials_csv(record.trials, record.trial_tags))
    return tables


# Writing ------------------------------------------------------------------------------------------------


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old or the new file, whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResultsWriter:
    """Writes a run into ``out_dir`` as it is measured (see the module doc)."""

    def __init__(self, out_dir: Path, header: RunHeader):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record = RunRecord(**dict(header))
        if header.back_to_back_parameters is not None:
            self.record.definitions |= B2B_DEFINITIONS
        if header.frame_loss_parameters is not None:
            self.record.definitions |= LOSS_DEFINITIONS
        self._trials = open(self.out_dir / "trials.jsonl", "w", encoding="utf-8")
        self._rewrite()

    @property
    def paths(self) -> list[Path]:
        return [self.out_dir / name for name in ("results.json", *self._csv_names, "trials.jsonl")]

    @property
    def _csv_names(self) -> list[str]:
        return list(tables_of(self.record))

    def record_trial(self, result: TrialResult, **extra: Any) -> None:
        """Append one trial to trials.jsonl, on disk before this returns; ``extra`` keys (the
        test, the burst, the load point) go on its line before the trial's own fields."""
        self.record.trials.append(result)
        self.record.trial_tags.append(extra)
        line = json.dumps({"n": len(self.record.trials), **extra, **result.model_dump(mode="json")})
        self._trials.write(line + "\n")
        self._trials.flush()
        os.fsync(self._trials.fileno())

    def record_learning(self, learning: dict[str, Any]) -> None:
        """Record the learning phase (before the first trial) and rewrite results.json."""
        self.record.learning = learning
        self._rewrite()

    def record_size(self, result: ThroughputResult) -> None:
        """Add one frame size's result and rewrite results.json and the CSV files."""
        self.record.results.append(result)
        self._rewrite()

    def record_back_to_back(self, result: BackToBackResult) -> None:
        """Add one frame size's back-to-back result and rewrite results.json and the CSV files."""
        self.record.back_to_back.append(result)
        self._rewrite()

    def record_frame_loss(self, result: FrameLossResult) -> None:
        """Add one frame size's frame loss curve and rewrite results.json and the CSV files."""
        self.record.frame_loss.append(result)
        self._rewrite()

    def finish(self, status: Status, error: str | None = None) -> None:
        """Mark the run ``status`` (complete, interrupted, failed) and write everything."""
        self.record.status, self.record.error = status, error
        self._rewrite()
        self._trials.close()

    def _rewrite(self) -> None:
        self.record.updated_utc = _utc_now()
        atomic_write_text(self.out_dir / "results.json", self.record.model_dump_json(indent=2) + "\n")
        for name, (_, text) in tables_of(self.record).items():
            atomic_write_text(self.out_dir / name, text)
