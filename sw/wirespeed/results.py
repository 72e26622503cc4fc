"""Results as they are measured: one self-describing ``results.json`` per run (tool and
gateware versions, target, DUT, every parameter, every trial's raw counters), from which the
CSV files are derived.

Files in the output directory:

* ``trials.jsonl``: one line per trial, appended (flushed and fsynced) the moment the trial
  ends;
* ``results.json``, ``Throughput.csv``, ``Latency.csv``: rewritten atomically (temporary
  file + rename) after each frame size and when the run ends, so an interrupted run keeps
  everything it measured.
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
from .rfc2544.throughput import ThroughputConfig, ThroughputResult

__all__ = ["RunHeader", "RunRecord", "ResultsWriter", "DEFINITIONS", "throughput_csv", "latency_csv",
           "atomic_write_text", "FORMAT"]

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
                  "(received == sent, no sequence or FCS errors); offered rates are searched by "
                  "bisection to the stated resolution",
    "frame_size": "bytes from destination MAC to FCS inclusive",
    "line_rate": "1 Gb/s; a frame of L bytes occupies L + 20 bytes on the wire (preamble, SFD, gap)",
    "throughput_Mbps": "L * 8 * frames/s (frame bits only)",
    "measured_rx_fps": "(test frames received - 1) / (last - first receive timestamp)",
    "latency": LATENCY_DEFINITION,
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


class RunRecord(RunHeader):
    """``results.json``: the header, the run's status, the results so far and every trial."""

    status: Status = "running"
    error: str | None = None
    updated_utc: str = Field(default_factory=_utc_now)
    results: list[ThroughputResult] = Field(default_factory=list)
    trials: list[TrialResult] = Field(default_factory=list)


# Derived tables ---------------------------------------------------------------------------------------

THROUGHPUT_COLUMNS = ["frame_size_B", "offered_fps", "measured_rx_fps", "pct_line_rate", "throughput_Mbps",
                      "theoretical_max_fps", "frames_sent", "frames_received", "trials"]
LATENCY_COLUMNS = ["frame_size_B", "rate_fps", "min_ns", "avg_ns", "max_ns", "stddev_ns", "jitter_ns",
                   "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "histogram_bin_ns", "frames", "definition",
                   "source", "calibrated", "pipeline_delay_ns"]


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
            best.tx_frames if best else "", best.rx_frames if best else "", r.trials]


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
            "" if lat.pipeline_delay_ns is None else lat.pipeline_delay_ns]


def latency_csv(results: list[ThroughputResult]) -> str:
    """Latency.csv: latency of the final passing trial of each frame size, one row per
    RFC 1242 definition (the measured one first, then the derived one when it is exact)."""
    rows = [_latency_row(r, lat) for r in results if r.best for lat in r.latency if lat.available]
    return _csv(LATENCY_COLUMNS, rows)


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
        self._trials = open(self.out_dir / "trials.jsonl", "w", encoding="utf-8")
        self._rewrite()

    @property
    def paths(self) -> list[Path]:
        return [self.out_dir / name for name in ("results.json", "Throughput.csv", "Latency.csv", "trials.jsonl")]

    def record_trial(self, result: TrialResult) -> None:
        """Append one trial to trials.jsonl, on disk before this returns."""
        self.record.trials.append(result)
        line = json.dumps({"n": len(self.record.trials), **result.model_dump(mode="json")})
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

    def finish(self, status: Status, error: str | None = None) -> None:
        """Mark the run ``status`` (complete, interrupted, failed) and write everything."""
        self.record.status, self.record.error = status, error
        self._rewrite()
        self._trials.close()

    def _rewrite(self) -> None:
        self.record.updated_utc = _utc_now()
        atomic_write_text(self.out_dir / "results.json", self.record.model_dump_json(indent=2) + "\n")
        atomic_write_text(self.out_dir / "Throughput.csv", throughput_csv(self.record.results))
        atomic_write_text(self.out_dir / "Latency.csv", latency_csv(self.record.results))
