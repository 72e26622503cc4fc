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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from . import __version__, sizes
from .host.device import PERCENTILES, GatewareId, TrialResult
from .latency import DEFINITION_NAMES, LatencyFigures
from .rfc2544.back_to_back import BackToBackConfig, BackToBackResult
from .rfc2544.frame_loss import FrameLossConfig, FrameLossResult
from .rfc2544.recovery import RecoveryConfig, RecoveryResult, ResetConfig, ResetResult
from .rfc2544.throughput import ThroughputConfig, ThroughputResult
from .safeio import WriteError, append_line, atomic_write_text, patch_status

__all__ = ["RunHeader", "RunRecord", "ResultsWriter", "DEFINITIONS", "throughput_csv", "latency_csv",
           "back_to_back_csv", "frame_loss_csv", "atomic_write_text", "FORMAT", "latency_trials_csv",
           "latency_histograms_csv", "trials_csv", "tables_of", "ResumeError", "load_run",
           "remaining_sizes", "TEST_RESULTS", "WriteError", "TABLE_NAMES"]

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
    "frame_size": "bytes from destination MAC to FCS inclusive; or an IMIX (RFC 6985) named by its label, "
                  "imix:GENOME or imix:SIZE:WEIGHT,..., whose frames repeat the mix's size sequence "
                  "(mean_frame_B: its mean size)",
    "line_rate": "1 Gb/s; a frame of L bytes occupies L + 20 bytes on the wire (preamble, SFD, gap); an IMIX's "
                 "line rate is 1e9 / 8 / (mean L + 20) frames/s",
    "throughput_Mbps": "L * 8 * frames/s (frame bits only; L the mean size of an IMIX)",
    "measured_rx_fps": "(test frames received - 1) / (last - first receive timestamp)",
    "frames_lost": "frames sent that never arrived intact: from the analyzers' sequence tracking, sent - unique "
                   "arrivals (in sequence, reordered or late), never negative; duplicated, out-of-order and late "
                   "frames are counted beside it (RFC 4689 3.3, docs/analyzer.md) and each fails a zero-loss "
                   "trial. A build without per-stream statistics has only sent - received (at least 0; more "
                   "received than sent fails the trial)",
    "control_path": "register transactions with the tester (Etherbone): requests, retries, timeouts and "
                    "duplicate answers, per trial and for the run (control_path)",
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
    "frame_loss": "RFC 2544 26.3: loss % = frames lost * 100 / sent at each offered load (frames lost: "
                  "definitions.frames_lost), from 100 % of line rate down in steps until two successive trials "
                  "lose nothing, or at explicit load points",
}


RECOVERY_DEFINITIONS = {
    "system_recovery": "RFC 2544 26.5: offered load at overload_pct of the throughput (at most line rate), then "
                       "at recovery_pct of that; timestamp A = transmit time of the first reduced-rate frame, "
                       "timestamp B = transmit time of the last frame lost after A (from the analyzer's sequence "
                       "gap tracker); recovery time = B - A, 0 when nothing sent after A was lost; recovered = no "
                       "when frames were still being lost when the trial ended (a lower bound)",
}
RESET_DEFINITIONS = {
    "reset": "RFC 2544 26.6 / RFC 6201 at the smallest frame size: reset time (timestamp method) = the longest "
             "interval between two consecutive test frames received, i.e. from the last frame before the reset "
             "to the first after; loss reset time (frame-loss method) = frames lost / offered rate",
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
    recovery_parameters: RecoveryConfig | None = Field(None, description="RFC 2544 26.5 parameters, if run")
    reset_parameters: ResetConfig | None = Field(None, description="RFC 2544 26.6 / RFC 6201 parameters, if run")
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
    recovery: list[RecoveryResult] = Field(default_factory=list, description="RFC 2544 26.5 per frame size")
    reset: ResetResult | None = Field(None, description="RFC 2544 26.6 / RFC 6201")
    trials: list[TrialResult] = Field(default_factory=list)
    trial_tags: list[dict[str, Any]] = Field(default_factory=list,
                                             description="per trial (same order): the test and step it belongs to; "
                                                         "superseded: true for a trial of a frame size that a "
                                                         "resumed run measured again from scratch")
    resumed: list[dict[str, Any]] = Field(default_factory=list,
                                          description="each time the run was resumed ('rfc2544 --resume'): when, "
                                                      "the status and error it had, the learning phase it had "
                                                      "before, the trials superseded")
    control_path: dict[str, int] | None = Field(
        None, description="the run's register transactions with the tester (every session, resumed ones added): "
                          "requests, retries, timeouts, duplicate answers, bad frames, resynchronisations")
    dut_model: dict[str, dict[str, int]] | None = Field(
        None, description="simulation only: the simulated DUT model's own counters when the run ended (since the "
                          "simulation started: learning and every trial), per direction 'A->B' of tester ports")


# Derived tables ---------------------------------------------------------------------------------------

THROUGHPUT_COLUMNS = ["frame_size_B", "offered_fps", "measured_rx_fps", "pct_line_rate", "throughput_Mbps",
                      "theoretical_max_fps", "frames_sent", "frames_received", "trials", "search",
                      "loss_tolerance_pct", "confirmed", "mean_frame_B"]
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
            f"{r.loss_tolerance_pct:g}", {True: "yes", False: "no", None: ""}[r.confirmed],
            f"{float(sizes.mean_len(r.frame_size)):g}"]


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
                      "frames_sent", "frames_received", "frames_lost", "loss_pct", "frames_duplicated",
                      "frames_out_of_order", "frames_late", "fcs_errors", "measured_rx_fps"]


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


def _sequence_cells(trial: TrialResult) -> list:
    """Duplicated, out-of-order and late frames (empty: the build tracks no sequence numbers)."""
    return ["" if n is None else n for n in (trial.duplicate_frames, trial.out_of_order_frames, trial.late_frames)]


def frame_loss_csv(results: list[FrameLossResult]) -> str:
    """Frame_Loss.csv: one row per frame size and load point, in the order measured."""
    rows = [[r.frame_size, f"{p.offered_pct:.3f}", f"{p.offered_fps:.2f}", f"{r.theoretical_max_fps:.2f}",
             f"{p.trial.duration_ns / 1e6:.3f}", p.trial.tx_frames, p.trial.rx_frames, p.trial.lost_frames,
             f"{p.loss_pct:.4f}", *_sequence_cells(p.trial), p.trial.fcs_errors, f"{p.trial.measured_rx_fps:.2f}"]
            for r in results for p in r.points]
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
                  "frames_lost", "loss_pct", "frames_duplicated", "frames_out_of_order", "frames_late", "seq_errors",
                  "fcs_errors", "measured_rx_fps", "lat_min_ns", "lat_avg_ns", "lat_max_ns", "passed", "failure",
                  "control_retries", "control_timeouts", "control_duplicates"]


def trials_csv(trials: list[TrialResult], tags: list[dict[str, Any]]) -> str:
    """Trials.csv: every trial of the run in order, its raw counters summed over the ports
    (latency raw, in the trial's measured definition)."""
    rows = []
    for n, trial in enumerate(trials, 1):
        tag = tags[n - 1] if n - 1 < len(tags) else {}
        step = next((f"{k}={v}" for k, v in tag.items() if k not in ("test", "superseded")), "")
        if tag.get("superseded"):
            step = f"{step} (superseded)" if step else "superseded"
        lat = trial.latency
        control = trial.control or {}
        rows.append([n, tag.get("test", "throughput"), step, trial.frame_size, f"{trial.offered_fps:.2f}",
                     f"{trial.duration_ns / 1e6:.3f}", trial.tx_frames, trial.rx_frames, trial.lost_frames,
                     f"{trial.loss_pct:.4f}", *_sequence_cells(trial), trial.seq_errors, trial.fcs_errors,
                     f"{trial.measured_rx_fps:.2f}",
                     lat.min_ns if lat else "", f"{lat.avg_ns:.1f}" if lat else "", lat.max_ns if lat else "",
                     "yes" if trial.passed else "no", trial.failure or "",
                     *(control.get(k, "") if trial.control is not None else "" for k in
                       ("retries", "timeouts", "duplicates"))])
    return _csv(TRIALS_COLUMNS, rows)


RECOVERY_COLUMNS = ["frame_size_B", "repetition", "throughput_fps", "overload_fps", "reduced_fps",
                    "recovery_time_us", "recovered", "frames_lost_overload", "frames_lost_reduced",
                    "timestamp_a_ns", "timestamp_b_ns"]
RESET_COLUMNS = ["frame_size_B", "repetition", "offered_fps", "reset_time_us", "loss_reset_time_us", "frames_lost",
                 "last_frame_before_ns", "first_frame_after_ns", "trigger"]


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
    return _csv(RECOVERY_COLUMNS, rows)


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
    return _csv(RESET_COLUMNS, rows)


#: every table a run may write (tables_of gives those of one run)
TABLE_NAMES = ("Throughput.csv", "Latency.csv", "Latency_Trials.csv", "Latency_Histograms.csv", "Back_to_Back.csv",
               "Frame_Loss.csv", "System_Recovery.csv", "Reset.csv", "Trials.csv")


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
    if record.recovery_parameters is not None:
        tables["System_Recovery.csv"] = (RECOVERY_COLUMNS, recovery_csv(record.recovery))
    if record.reset_parameters is not None:
        tables["Reset.csv"] = (RESET_COLUMNS, reset_csv(record.reset))
    tables["Trials.csv"] = (TRIALS_COLUMNS, trials_csv(record.trials, record.trial_tags))
    return tables


# Writing ------------------------------------------------------------------------------------------------


class ResultsWriter:
    """Writes a run into ``out_dir`` as it is measured (see the module doc). A file that cannot
    be written raises :class:`~wirespeed.safeio.WriteError` (one line with its path); what
    was written before stays whole (:mod:`wirespeed.safeio`). Raises OSError when the folder
    or trials.jsonl cannot be created."""

    def __init__(self, out_dir: Path, header: RunHeader):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record = RunRecord(**dict(header))
        if header.back_to_back_parameters is not None:
            self.record.definitions |= B2B_DEFINITIONS
        if header.frame_loss_parameters is not None:
            self.record.definitions |= LOSS_DEFINITIONS
        if header.recovery_parameters is not None:
            self.record.definitions |= RECOVERY_DEFINITIONS
        if header.reset_parameters is not None:
            self.record.definitions |= RESET_DEFINITIONS
        self._trials = _open_log(self.out_dir / "trials.jsonl", truncate=True)
        self._rewrite()

    @classmethod
    def resume(cls, out_dir: Path, record: RunRecord, note: str) -> "ResultsWriter":
        """Go on writing the interrupted or failed run ``record`` of ``out_dir`` (see
        :func:`load_run`): trials of trials.jsonl newer than results.json (a run killed
        without a chance to write it) join the record; every trial of a frame size without a
        result gets ``superseded: true`` in its tag (that size is measured again from scratch);
        ``note`` joins the notes; the run is ``running`` again and new trials are appended to
        trials.jsonl, numbered on."""
        self = cls.__new__(cls)
        self.out_dir = Path(out_dir)
        self.record = record
        path = self.out_dir / "trials.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        for line in lines[len(record.trials):]:
            trial, tag = _trial_of_line(line)
            if trial is None:
                break
            record.trials.append(trial)
            record.trial_tags.append(tag)
        expected = "".join(_trial_line(n, t, tag) for n, (t, tag) in
                           enumerate(zip(record.trials, record.trial_tags), 1))
        if not path.exists() or path.read_text(encoding="utf-8") != expected:
            # trials.jsonl and results.json disagree (a line half written, a file edited): the
            # record is the reference. Otherwise trials.jsonl stays as it is (a log: the
            # superseded marks are in results.json and Trials.csv)
            atomic_write_text(path, expected)
        superseded = mark_superseded(record)
        record.resumed.append({"utc": _utc_now(), "status": record.status, "error": record.error,
                               "learning": record.learning, "superseded_trials": superseded})
        record.notes.append(note)
        record.status, record.error = "running", None
        self._trials = _open_log(path, truncate=False)
        self._rewrite()
        return self

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
        append_line(self._trials, self.out_dir / "trials.jsonl", _trial_line(len(self.record.trials), result, extra))

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

    def record_recovery(self, result: RecoveryResult) -> None:
        """Add one frame size's system recovery and rewrite results.json and the CSV files."""
        self.record.recovery.append(result)
        self._rewrite()

    def record_reset(self, result: ResetResult) -> None:
        """Record the reset test and rewrite results.json and the CSV files."""
        self.record.reset = result
        self._rewrite()

    def finish(self, status: Status, error: str | None = None) -> str:
        """Mark the run ``status`` (complete, interrupted, failed) and write everything; on a
        write failure, :class:`~wirespeed.safeio.WriteError` for ``complete``, else (the run
        is ending on an error already) the status alone in place if it fits. Returns the
        status results.json holds."""
        self.record.status, self.record.error = status, error
        try:
            self._rewrite()
            return status
        except WriteError:
            if status == "complete":
                raise
            return status if patch_status(self.out_dir / "results.json", status) else "running"
        finally:
            if self._trials is not None:
                os.close(self._trials)
                self._trials = None

    def _rewrite(self) -> None:
        self.record.updated_utc = _utc_now()
        files = {"results.json": self.record.model_dump_json(indent=2) + "\n"}
        files |= {name: text for name, (_, text) in tables_of(self.record).items()}
        for name, text in files.items():
            try:
                atomic_write_text(self.out_dir / name, text)
            except OSError as exc:
                raise WriteError(self.out_dir / name, exc) from None


def _open_log(path: Path, truncate: bool) -> int:
    """trials.jsonl for appending (a file descriptor: :func:`~wirespeed.safeio.append_line`)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0), 0o666)


# Resuming a run ------------------------------------------------------------------------------------------

# the record's list of results of each test, and the tests each trial tag's "test" belongs to
TEST_RESULTS = {"throughput": "results", "frame-loss": "frame_loss", "back-to-back": "back_to_back",
                "system-recovery": "recovery", "reset": "reset"}
_TAG_TEST = {None: "throughput", "throughput": "throughput", "latency": "throughput",
             "frame-loss": "frame-loss", "back-to-back": "back-to-back", "system-recovery": "system-recovery",
             "reset": "reset"}


def _done_sizes(record: RunRecord, test: str) -> set[int]:
    """Frame sizes whose ``test`` result the record holds (reset: one result, at the smallest
    size; system recovery: also the sizes it skips, those without a throughput)."""
    if test == "reset":
        return {record.reset.frame_size} if record.reset is not None else set()
    done = {r.frame_size for r in getattr(record, TEST_RESULTS[test])}
    if test == "system-recovery":
        done |= {r.frame_size for r in record.results if r.throughput_fps <= 0}
    return done


class ResumeError(ValueError):
    """Why a results folder cannot be resumed (one line)."""


def _trial_line(n: int, result: TrialResult, extra: dict[str, Any]) -> str:
    return json.dumps({"n": n, **extra, **result.model_dump(mode="json")}) + "\n"


def _trial_of_line(line: str) -> tuple[TrialResult | None, dict[str, Any]]:
    """A trials.jsonl line back as (trial, tag); (None, {}) when it is not a whole trial."""
    try:
        data = json.loads(line)
        fields = set(TrialResult.model_fields)
        computed = set(TrialResult.model_computed_fields)
        trial = TrialResult.model_validate({k: v for k, v in data.items() if k in fields})
    except ValueError:
        return None, {}
    return trial, {k: v for k, v in data.items() if k not in fields | computed | {"n"}}


def remaining_sizes(record: RunRecord, test: str, sizes: list[int]) -> list[int]:
    """The frame sizes of ``sizes`` (in order) whose ``test`` result the record does not have."""
    done = _done_sizes(record, test)
    if test == "reset":         # one measurement for the run
        return [] if done else sizes
    return [s for s in sizes if s not in done]


def mark_superseded(record: RunRecord) -> int:
    """Tag ``superseded: true`` every trial of a frame size whose test has no result in the
    record (a size interrupted part way, measured again from scratch); how many were newly
    tagged."""
    done = {test: _done_sizes(record, test) for test in TEST_RESULTS}
    count = 0
    for trial, tag in zip(record.trials, record.trial_tags):
        test = _TAG_TEST.get(tag.get("test"))
        if test is not None and trial.frame_size not in done[test] and not tag.get("superseded"):
            tag["superseded"] = True
            count += 1
    return count


def load_run(out_dir: Path) -> RunRecord:
    """The record of the run in ``out_dir`` to resume; :class:`ResumeError` when there is
    none, it is not one this version reads, or it is complete."""
    out_dir = Path(out_dir)
    path = out_dir / "results.json"
    if not out_dir.is_dir():
        raise ResumeError(f"no folder {out_dir}")
    if not path.is_file():
        raise ResumeError(f"no results.json in {out_dir} (not a results folder of 'wirespeed rfc2544')")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ResumeError(f"{path} is not text") from None
    except json.JSONDecodeError as exc:
        raise ResumeError(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except OSError as exc:
        raise ResumeError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not isinstance(data, dict) or "format" not in data:
        raise ResumeError(f"{path} is not a wirespeed results record (no format)")
    if data["format"] != FORMAT:
        raise ResumeError(f"{path} has format {data['format']!r}; this wirespeed ({__version__}) resumes "
                          f"{FORMAT!r} runs only")
    try:
        record = RunRecord.model_validate(data)
    except ValueError as exc:
        errors = getattr(exc, "errors", lambda: [])()
        where = ".".join(map(str, errors[0]["loc"])) + ": " + errors[0]["msg"] if errors else str(exc)
        raise ResumeError(f"{path} is not a valid {FORMAT} record ({where})") from None
    if record.status == "complete":
        raise ResumeError(f"the run in {out_dir} is complete: nothing to resume")
    if len(record.trial_tags) != len(record.trials):
        raise ResumeError(f"{path} is not a valid {FORMAT} record ({len(record.trials)} trials but "
                          f"{len(record.trial_tags)} trial tags)")
    return record
