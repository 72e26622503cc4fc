"""Reading a results folder back: to report on it (:func:`load_record`), or to resume an
interrupted or failed run (:func:`load_run`, :func:`prepare`): the frame sizes each test
finished are kept, the others measured, a size left part way again from scratch (its earlier
trials kept and marked superseded)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..rfc2544 import registry
from .record import FORMAT, FORMAT_1, RunRecord, upgrade
from .writer import atomic_write_text, trial_line, trial_of_line

__all__ = ["RecordError", "ResumeError", "load_record", "load_run", "prepare", "remaining_sizes", "done_sizes",
           "mark_superseded"]

READABLE = (FORMAT_1, FORMAT)


class RecordError(ValueError):
    """Why a folder holds no readable run record: ``path`` and what was expected there."""

    def __init__(self, path: Path, message: str):
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


class ResumeError(ValueError):
    """Why a results folder cannot be resumed (one line)."""


def load_record(results_dir: Path) -> RunRecord:
    """The run record of a results folder, format 1 or 2 (RecordError when it is not one)."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise RecordError(results_dir, "no such directory; expected a results folder with results.json "
                                       "(from 'wirespeed rfc2544 --out DIR')")
    path = results_dir / "results.json"
    if not path.is_file():
        raise RecordError(path, "missing; expected the results.json written by 'wirespeed rfc2544'")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise RecordError(path, f"malformed JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
                                "expected a wirespeed results.json") from None
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith("wirespeed-results/"):
        raise RecordError(path, "not a wirespeed results file; expected a JSON object with format "
                                f"{' or '.join(map(repr, READABLE))}")
    if data["format"] not in READABLE:
        raise RecordError(path, f"format {data['format']!r} is not one this wirespeed ({__version__}) reads: "
                                f"{' and '.join(map(repr, READABLE))}")
    try:
        return RunRecord.model_validate(upgrade(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise RecordError(path, f"not a valid wirespeed results file ({where}: {first['msg']}); "
                                "expected a results.json written by 'wirespeed rfc2544'") from None


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
    if data["format"] not in READABLE:
        raise ResumeError(f"{path} has format {data['format']!r}; this wirespeed ({__version__}) resumes "
                          f"{' and '.join(map(repr, READABLE))} runs only")
    try:
        record = RunRecord.model_validate(upgrade(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) + ": " + first["msg"]
        raise ResumeError(f"{path} is not a valid {data['format']} record ({where})") from None
    if record.status == "complete":
        raise ResumeError(f"the run in {out_dir} is complete: nothing to resume")
    if len(record.trial_tags) != len(record.trials):
        raise ResumeError(f"{path} is not a valid {data['format']} record ({len(record.trials)} trials but "
                          f"{len(record.trial_tags)} trial tags)")
    return record


def done_sizes(record: RunRecord, test: str) -> set[Any]:
    """Frame sizes whose ``test`` result the record holds (with what the test itself counts as
    done, e.g. sizes system recovery skips)."""
    kind = registry.get(test)
    results = record.results_of(test)
    if kind.done_sizes is not None:
        return kind.done_sizes(results, record)
    return {r.frame_size for r in results}


def remaining_sizes(record: RunRecord, test: str) -> list[Any]:
    """The frame sizes of ``test`` (in order) whose result the record does not have; a test
    with one result for the run has none left once it has it."""
    kind, sizes = registry.get(test), record.parameters_of(test).frame_sizes
    done = done_sizes(record, test)
    if kind.one_result:
        return [] if record.results_of(test) else list(sizes)
    return [s for s in sizes if s not in done]


_TAG_TEST = {None: "throughput", "latency": "throughput"}


def mark_superseded(record: RunRecord) -> int:
    """Tag ``superseded: true`` every trial of a frame size whose test has no result in the
    record (a size interrupted part way, measured again from scratch); how many were newly
    tagged."""
    tests = set(record.test_names)
    done = {test: done_sizes(record, test) for test in tests}
    one = {test for test in tests if registry.get(test).one_result and record.results_of(test)}
    count = 0
    for trial, tag in zip(record.trials, record.trial_tags):
        test = _TAG_TEST.get(tag.get("test"), tag.get("test"))
        if test in tests and test not in one and trial.frame_size not in done[test] and not tag.get("superseded"):
            tag["superseded"] = True
            count += 1
    return count


def prepare(out_dir: Path, record: RunRecord, note: str) -> RunRecord:
    """Make ``record`` (from :func:`load_run`) ready to go on: trials of trials.jsonl newer than
    results.json (a run killed before it could write it) join the record; every trial of a frame
    size without a result is marked superseded; ``note`` joins the notes; the run is
    ``running`` again."""
    path = Path(out_dir) / "trials.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for line in lines[len(record.trials):]:
        trial, tag = trial_of_line(line)
        if trial is None:
            break
        record.trials.append(trial)
        record.trial_tags.append(tag)
    expected = "".join(trial_line(n, t, tag) for n, (t, tag) in enumerate(zip(record.trials, record.trial_tags), 1))
    if not path.exists() or path.read_text(encoding="utf-8") != expected:
        # trials.jsonl and results.json disagree (a line half written, a file edited): the
        # record is the reference. Otherwise trials.jsonl stays as it is (a log: the
        # superseded marks are in results.json and Trials.csv)
        atomic_write_text(path, expected)
    superseded = mark_superseded(record)
    record.resumed.append({"utc": datetime.now(UTC).isoformat(timespec="seconds"), "status": record.status,
                           "error": record.error, "learning": record.learning, "superseded_trials": superseded})
    record.notes.append(note)
    record.status, record.error = "running", None
    return record
