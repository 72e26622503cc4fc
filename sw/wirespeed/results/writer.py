"""Results as they are measured: the results writer is a consumer of a run's events
(:mod:`wirespeed.rfc2544.events`).

Files in the output directory:

* ``trials.jsonl``: one line per trial, appended (flushed and fsynced) the moment the trial
  ends;
* ``results.json`` (:mod:`.record`) and the CSV tables (:mod:`.tables`): rewritten atomically
  (temporary file + rename) after each frame size and when the run ends, so an interrupted run
  keeps everything it measured.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..host.models import TrialResult
from ..rfc2544 import events as ev
from ..safeio import WriteError, append_line, atomic_write_text, patch_status
from .record import RunHeader, RunRecord, Status, upgrade_flows
from .tables import tables_of

__all__ = ["ResultsWriter", "atomic_write_text", "trial_line", "trial_of_line", "WriteError"]


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def trial_line(n: int, result: TrialResult, extra: dict[str, Any]) -> str:
    """Trial number ``n`` as its trials.jsonl line: its tags, then its fields."""
    return json.dumps({"n": n, **extra, **result.model_dump(mode="json")}) + "\n"


def trial_of_line(line: str) -> tuple[TrialResult | None, dict[str, Any]]:
    """A trials.jsonl line back as (trial, tags); (None, {}) when it is not a whole trial."""
    try:
        data = upgrade_flows(json.loads(line))
        fields = set(TrialResult.model_fields)
        computed = set(TrialResult.model_computed_fields)
        trial = TrialResult.model_validate({k: v for k, v in data.items() if k in fields})
    except ValueError:
        return None, {}
    return trial, {k: v for k, v in data.items() if k not in fields | computed | {"n"}}


class ResultsWriter:
    """Writes a run into ``out_dir`` as its events come (see the module doc): call it with each
    event (``writer(event)``) and end it with :meth:`finish`. A file that cannot be written raises
    :class:`~wirespeed.safeio.WriteError` (one line with its path); what was written before stays
    whole (:mod:`wirespeed.safeio`). Raises OSError when the folder or trials.jsonl cannot be
    created."""

    def __init__(self, out_dir: Path, header: RunHeader):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.record = RunRecord(**dict(header))
        self._trials: int | None = _open_log(self.out_dir / "trials.jsonl", truncate=True)
        self._rewrite()

    @classmethod
    def resume(cls, out_dir: Path, record: RunRecord) -> ResultsWriter:
        """Go on writing the run ``record`` of ``out_dir`` (prepared by
        :func:`wirespeed.results.resume.prepare`): new trials are appended to trials.jsonl."""
        self = cls.__new__(cls)
        self.out_dir = Path(out_dir)
        self.record = record
        self._trials = _open_log(self.out_dir / "trials.jsonl", truncate=False)
        self._rewrite()
        return self

    @property
    def paths(self) -> list[Path]:
        return [self.out_dir / name for name in ("results.json", *tables_of(self.record), "trials.jsonl")]

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.TrialDone):
            self.record_trial(event.result, **event.tags)
        elif isinstance(event, ev.SizeDone):
            self.record_result(event.test, event.result)
        elif isinstance(event, ev.LearningDone):
            self.record.learning = event.result.model_dump(mode="json")
            self._rewrite()

    def record_trial(self, result: TrialResult, **extra: Any) -> None:
        """Append one trial to trials.jsonl, on disk before this returns; ``extra`` keys (the
        test, the burst, the load point) go on its line before the trial's own fields."""
        self.record.trials.append(result)
        self.record.trial_tags.append(extra)
        assert self._trials is not None, "the run has ended"
        append_line(self._trials, self.out_dir / "trials.jsonl", trial_line(len(self.record.trials), result, extra))

    def record_result(self, test: str, result: Any) -> None:
        """Add one frame size's result of ``test`` and rewrite results.json and the CSV files."""
        entry = self.record.entry(test)
        if entry is None:
            raise ValueError(f"the run has no test {test!r}")
        entry.results.append(result)
        self._rewrite()

    def finish(self, status: Status, error: str | None = None) -> str:
        """Mark the run ``status`` (complete, interrupted, failed) and write everything; on a
        write failure, :class:`~wirespeed.safeio.WriteError` for ``complete``, else (the run is
        ending on an error already) the status alone in place if it fits. Returns the status
        results.json holds."""
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
