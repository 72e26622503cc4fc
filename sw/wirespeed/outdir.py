"""The results folder of a run (``--out DIR``): claimed for the run, never silently reused.

:func:`claim` takes the folder's lock (:func:`wirespeed.locks.results_lock`: a second run
into it is refused, naming the first) and refuses a folder that already holds a wirespeed run
(its results.json or trials.jsonl, or tables, graphs or report.html a run writes): continue
an unfinished run with ``--resume DIR``; or ``force`` moves the old run aside, whole, to a
sibling folder ``DIR.replaced-<UTC time>`` (never deleted) and the new run starts in an empty
``DIR``. Other files in a folder without a run stay where they are.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from .errors import WirespeedError
from .locks import RESULTS_LOCK_NAME, Holder, Lock, LockBusy, results_lock
from .results.tables import table_names
from .safeio import describe_os_error

__all__ = ["OutDirError", "GRAPHS_DIR", "REPORT_NAME", "PDF_NAME", "run_file_names", "Claim", "run_files",
           "describe_run", "claim", "move_aside"]

#: what ``wirespeed report`` writes into a results folder beside the run's own files
GRAPHS_DIR, REPORT_NAME, PDF_NAME = "graphs", "report.html", "report.pdf"


def run_file_names() -> tuple[str, ...]:
    """What a run writes into its folder."""
    return ("results.json", "trials.jsonl", *table_names(), REPORT_NAME, PDF_NAME, GRAPHS_DIR)


class OutDirError(WirespeedError):
    """The folder cannot be used for the run (one line, for ``--out``)."""


def run_files(folder: Path) -> list[str]:
    """The names of :func:`run_file_names` present in ``folder``."""
    return [name for name in run_file_names() if (folder / name).exists()]


def describe_run(folder: Path) -> tuple[str, str | None]:
    """(what the run in ``folder`` is, in words; its status or None when unreadable)."""
    try:
        data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        status = str(data["status"])
        return f"{data.get('test', 'a run')}, {status}, started {data.get('started_utc', '?')}", status
    except (OSError, ValueError, KeyError, TypeError):
        found = run_files(folder)
        return f"{', '.join(found[:3])}{', ...' if len(found) > 3 else ''}", None


def move_aside(folder: Path) -> Path:
    """Rename ``folder`` to an unused sibling ``NAME.replaced-<UTC time>[-N]``; its new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = folder.parent / f"{folder.name}.replaced-{stamp}"
    aside, n = base, 1
    while aside.exists():
        n += 1
        aside = base.with_name(f"{base.name}-{n}")
    os.rename(folder, aside)
    return aside


class Claim:
    """A results folder held for a run (:func:`claim`); ``release`` gives it up and removes the
    folder again if the claim made it and nothing was written into it."""

    def __init__(self, lock: Lock, folder: Path, made: bool):
        self.lock, self.folder, self.made = lock, folder, made

    def release(self) -> None:
        self.lock.release()
        if self.made:
            try:
                self.folder.rmdir()         # only when empty
            except OSError:
                pass

    def __enter__(self) -> "Claim":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def claim(out: Path, holder: Holder, *, force: bool = False, notes: list[str] | None = None) -> Claim:
    """Results folder ``out`` held for a new run, empty of any run (see the module doc).
    Raises :class:`OutDirError` or :class:`~wirespeed.locks.LockBusy` (one line each).
    ``notes`` gets a line for a run moved aside or a stale lock taken over."""
    out = Path(out)
    notes = notes if notes is not None else []
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{out} is a file, not a folder")
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = results_lock(out).acquire(holder)
    except LockBusy:
        raise
    except OSError as exc:
        raise OutDirError(f"cannot use {out} for results: {describe_os_error(exc)}") from None
    if lock.stale is not None:
        notes.append(f"{out}: took over the lock of {lock.stale.describe()}, which had ended")
    if not run_files(out):
        return Claim(lock, out, made)
    what, status = describe_run(out)
    if not force:
        lock.release()
        if status in ("running", "interrupted", "failed"):
            hint = f"continue it with --resume {out}, or give --force to move it aside"
        else:
            hint = "give another --out, or --force to move it aside"
        raise OutDirError(f"{out} holds a wirespeed run ({what}): {hint} (to {out}.replaced-<time>; nothing "
                          "is deleted)")
    try:
        aside = move_aside(out)
    except OSError as exc:
        lock.release()
        raise OutDirError(f"cannot move the run in {out} aside: {describe_os_error(exc)}") from None
    # the lock moved with the folder: it is given up there once the new folder's is held
    lock.follow(aside / RESULTS_LOCK_NAME)
    notes.append(f"--force: the run that was in {out} ({what}) is now in {aside}")
    try:
        out.mkdir()
        return Claim(results_lock(out).acquire(holder), out, True)
    except OSError as exc:
        raise OutDirError(f"cannot use {out} for results: {describe_os_error(exc)}") from None
    finally:
        lock.release()
