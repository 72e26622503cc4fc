"""The server's runs on disk: ``DATA/runs/<id>/``, each a results folder as ``wirespeed rfc2544
--out`` writes it, and an SQLite index of them (``DATA/index.sqlite3``) for the history. The
folders are the truth: the index is rebuilt from them on start and rewritten from a folder
whenever its run changes. A folder whose run says ``running`` while nobody holds its lock is a
run whose process died: it is marked ``interrupted`` (resumable)."""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..locks import RESULTS_LOCK_NAME, results_lock
from ..results.record import RunRecord
from ..results.resume import RecordError, load_record
from ..rfc2544 import registry
from ..safeio import atomic_write_text

__all__ = ["RunStore", "BadName", "RUN_ID", "headline", "safe_file", "record_json", "check_id"]

#: a run id or a file name's one component: no separator, no leading dot (so never ``..``)
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RESTART_ERROR = "the server stopped while the run was measuring; every finished trial is kept"
COLUMNS = ("id", "status", "title", "target", "dut", "tests", "started", "updated", "error")


class BadName(ValueError):
    """A run id or file name that is not one (``field``: which)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def check_id(run_id: str) -> str:
    if not RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise BadName("run", f"a run id (letters, digits, '.', '_', '-'; no '..'); not {run_id!r}")
    return run_id


def safe_file(folder: Path, name: str) -> Path:
    """The file ``name`` (a relative path) inside ``folder``: BadName for an absolute path, a
    ``..`` or hidden component, a symbolic link on the way, or a path that resolves outside;
    FileNotFoundError when there is no such file."""
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or not all(RUN_ID.fullmatch(p) and ".." not in p for p in parts):
        raise BadName("name", f"a file of the run's folder, as the file list gives it; not {name!r}")
    path = folder
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise BadName("name", f"{name!r} is a symbolic link; only the run's own files are served")
    if not path.is_file():
        raise FileNotFoundError(name)
    if not path.resolve().is_relative_to(folder.resolve()):
        raise BadName("name", f"{name!r} is outside the run's folder")
    return path


def headline(record: RunRecord) -> list[dict[str, Any]]:
    """Each test's summary tables (the console's, :attr:`TestType.summary`) as JSON."""
    tables = []
    for entry in record.tests:
        if entry.results:
            for table in registry.get(entry.name).summary(entry.results, record):
                tables.append({"test": entry.name, "title": table.title, "columns": list(table.columns),
                               "rows": [list(r) for r in table.rows]})
    return tables


def new_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


class RunStore:
    """The runs folder and its index (see the module doc); safe to use from several threads."""

    def __init__(self, data: Path):
        self.data = Path(data)
        self.runs = self.data / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.data / "index.sqlite3", check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, status TEXT, title TEXT, "
                         "target TEXT, dut TEXT, tests TEXT, started TEXT, updated TEXT, error TEXT)")

    def folder(self, run_id: str) -> Path:
        """The folder of run ``run_id`` (BadName for a malformed id; it may not exist yet)."""
        return self.runs / check_id(run_id)

    def rebuild(self) -> list[str]:
        """The index made again from the folders, after marking the runs of a dead process
        interrupted; returns the ids so marked."""
        marked = []
        with self._lock:
            self._db.execute("DELETE FROM runs")
            self._db.commit()
        for folder in sorted(self.runs.iterdir()):
            if folder.is_symlink() or not folder.is_dir() or not RUN_ID.fullmatch(folder.name):
                continue
            if self._recover(folder):
                marked.append(folder.name)
            self.update(folder.name)
        return marked

    def _recover(self, folder: Path) -> bool:
        """Mark the run in ``folder`` interrupted when it says running and nobody holds it."""
        try:
            record = load_record(folder)
        except RecordError:
            return False
        if record.status != "running" or results_lock(folder).holder() is not None:
            return False
        record.status, record.error = "interrupted", RESTART_ERROR
        record.updated_utc = datetime.now(UTC).isoformat(timespec="seconds")
        atomic_write_text(folder / "results.json", record.model_dump_json(indent=2) + "\n")
        return True

    def update(self, run_id: str) -> dict[str, Any] | None:
        """The index's row of ``run_id`` rewritten from its folder (removed when the folder holds
        no run); returns the row."""
        folder = self.folder(run_id)
        try:
            record = load_record(folder)
        except RecordError:
            with self._lock:
                self._db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
                self._db.commit()
            return None
        row = {"id": run_id, "status": record.status, "title": record.title, "target": record.target,
               "dut": record.dut.get("spec") or record.dut.get("description"),
               "tests": ",".join(record.test_names), "started": record.started_utc,
               "updated": record.updated_utc, "error": record.error}
        with self._lock:
            self._db.execute(f"INSERT OR REPLACE INTO runs VALUES ({','.join('?' * len(COLUMNS))})",
                             [row[c] for c in COLUMNS])
            self._db.commit()
        return row

    def rows(self) -> list[dict[str, Any]]:
        """Every indexed run, newest first."""
        with self._lock:
            rows = self._db.execute(f"SELECT {','.join(COLUMNS)} FROM runs ORDER BY started DESC, id DESC")
            return [dict(zip(COLUMNS, r)) for r in rows.fetchall()]

    def files(self, run_id: str) -> list[dict[str, Any]]:
        """The run's files (relative paths, sizes), its lock file and links left out."""
        folder = self.folder(run_id)
        found = []
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if path.name == RESULTS_LOCK_NAME or path.is_symlink() or not path.is_file():
                continue
            found.append({"name": rel, "bytes": path.stat().st_size})
        return found

    def record(self, run_id: str) -> RunRecord:
        """The run's record, read from its folder (RecordError when it has none)."""
        return load_record(self.folder(run_id))

    def close(self) -> None:
        with self._lock:
            self._db.close()


def record_json(record: RunRecord) -> dict[str, Any]:
    """What GET /runs/{id} says of a record: its header, each test's headline figures and the
    verdicts of its thresholds (``passed``: None when the plan set none)."""
    from ..rfc2544.expect import verdicts_of

    verdicts = verdicts_of(record)
    return {"verdicts": [v.model_dump(mode="json") for v in verdicts],
            "passed": all(v.passed for v in verdicts) if verdicts else None,
            "plan": record.plan, "status": record.status, "error": record.error, "title": record.title,
            "target": record.target, "dut": record.dut, "tests": record.test_names, "started": record.started_utc,
            "updated": record.updated_utc, "notes": list(record.notes), "trials": len(record.trials),
            "headline": headline(record), "gateware": json.loads(record.gateware.model_dump_json())}
