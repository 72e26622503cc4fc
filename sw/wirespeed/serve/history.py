"""What the server's earlier runs say of its tester, read from their records without
connecting to it: the calibration the newest run used, and the simulation's pace a run measured
(for the estimate of a plan before it starts, :func:`estimate_json`)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..calibration import Calibration
from ..results.record import RunRecord
from ..results.resume import RecordError
from ..rfc2544.estimate import DutHint, Pace
from ..rfc2544.plan import Plan
from .store import RunStore

__all__ = ["newest_records", "calibration_json", "recorded_pace", "estimate_json", "PACE_LOOKBACK"]

#: how many of the newest runs on the target are read for a recorded pace (a run refused before
#: it measured one has none); each is one results.json read
PACE_LOOKBACK = 20


def newest_records(store: RunStore, target: str, most: int) -> list[tuple[str, RunRecord]]:
    """(id, record) of at most ``most`` of the newest runs on ``target``; a folder whose
    results.json cannot be read is passed over."""
    found = []
    for row in store.rows():
        if row["target"] != target:
            continue
        try:
            found.append((row["id"], store.record(row["id"])))
        except RecordError:
            continue
        if len(found) >= most:
            break
    return found


def calibration_json(run_id: str, record: RunRecord) -> dict[str, Any] | None:
    """The calibration run ``run_id`` used: ``run``, ``source`` (automatic, or the file),
    ``method``, ``created_utc``, ``cable_delay_ns`` and ``pipeline_delay_ns`` (per direction
    ``"TX->RX"``, per frame size); None when it used none."""
    used = record.calibration
    if not isinstance(used, dict):
        return None
    file: Calibration | None = None
    if isinstance(used.get("file"), dict):
        try:
            file = Calibration.model_validate(used["file"])
        except ValidationError:
            file = None
    delays = used.get("pipeline_delay_ns")
    if delays is None and file is not None:
        delays = file.summary()
    return {"run": run_id, "source": used.get("source"), "method": file.method if file else None,
            "created_utc": file.created_utc if file else None,
            "cable_delay_ns": file.cable_delay_ns if file else None, "pipeline_delay_ns": delays or {}}


def recorded_pace(store: RunStore, target: str) -> tuple[Pace, str] | None:
    """The simulation's pace the newest run on ``target`` that measured one recorded (its
    ``estimate.pace``), and that run's id; None when no run did."""
    for run_id, record in newest_records(store, target, PACE_LOOKBACK):
        if record.estimate is not None and record.estimate.pace.sim_ns_per_s:
            return record.estimate.pace, run_id
    return None


def estimate_json(plan: Plan, dut: dict[str, Any] | None, target: str, store: RunStore) -> dict[str, Any]:
    """The estimate of ``plan`` before it runs (:meth:`Plan.estimate`) against ``dut`` (the
    simulated DUT's description, :func:`wirespeed.host.tester.describe_dut`; else the prior).
    On a board the wall time is real time plus the control path; in simulation it takes the pace
    of the newest run that recorded one (``pace_from``), and is None without one."""
    pace: Pace | None = Pace()
    pace_from = None
    if target == "sim":
        recorded = recorded_pace(store, target)
        pace, pace_from = recorded if recorded is not None else (None, None)
    estimate = plan.estimate(DutHint.from_dut(dut), pace)
    known = pace is not None
    return {"trials": estimate.trials, "most_trials": estimate.most_trials, "wire_s": estimate.wire_ns / 1e9,
            "wall_s": estimate.wall_s if known else None, "basis": estimate.basis, "pace_from": pace_from,
            "tests": [{"test": t.test, "trials": t.trials, "most_trials": t.most_trials,
                       "wall_s": t.wall_s if known else None} for t in estimate.tests]}
