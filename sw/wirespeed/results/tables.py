"""The CSV tables of a run, derived from its record alone: each test's own (its registry
entry's ``tables``) and ``Trials.csv``, every trial of the run in order."""

from __future__ import annotations

from typing import Any

from ..host.models import TrialResult
from ..rfc2544 import registry
from ..rfc2544.common import csv_text, sequence_cells
from .record import RunRecord

__all__ = ["tables_of", "trials_csv", "TRIALS_COLUMNS", "TRIALS_CSV", "table_names"]


TRIALS_CSV = "Trials.csv"
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
                     f"{trial.loss_pct:.4f}", *sequence_cells(trial), trial.seq_errors, trial.fcs_errors,
                     f"{trial.measured_rx_fps:.2f}",
                     lat.min_ns if lat else "", f"{lat.avg_ns:.1f}" if lat else "", lat.max_ns if lat else "",
                     "yes" if trial.passed else "no", trial.failure or "",
                     *(control.get(k, "") if trial.control is not None else "" for k in
                       ("retries", "timeouts", "duplicates"))])
    return csv_text(TRIALS_COLUMNS, rows)


def tables_of(record: RunRecord) -> dict[str, tuple[list[str], str]]:
    """Every CSV table of a run: name -> (columns, text), the tests' in run order, then Trials.csv."""
    tables: dict[str, tuple[list[str], str]] = {}
    for entry in record.tests:
        tables |= registry.get(entry.name).tables(entry.results, record)
    tables[TRIALS_CSV] = (TRIALS_COLUMNS, trials_csv(record.trials, record.trial_tags))
    return tables


def table_names() -> list[str]:
    """Every CSV table a run may write (any test's, and Trials.csv)."""
    return [name for test in registry.all_tests() for name in test.files] + [TRIALS_CSV]
