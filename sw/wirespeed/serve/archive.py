"""A run's folder as a whole: deleted, packed into a zip, printed to PDF, compared with others.
The functions take the checked folder of a run (:func:`.common.run_folder`) and raise plain
exceptions; the API turns them into answers (:mod:`.api_runs`)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path

from ..locks import Holder, LockBusy, results_lock
from ..outdir import PDF_NAME
from ..results.resume import RecordError, load_record
from .store import BadName, RunStore, safe_file

__all__ = ["delete_run", "write_zip", "report_pdf", "compare_page", "NoResults", "Held"]

#: matplotlib's pyplot state is global: one drawing (a report's graphs, a comparison's) at a time
DRAWING = threading.Lock()


class NoResults(Exception):
    """The run has no figure to print yet (one line: why)."""


class Held(Exception):
    """Another process holds the run's results lock (one line: who)."""


def _not_held(folder: Path) -> None:
    holder = results_lock(folder).holder()
    if holder is not None:
        raise Held(f"{folder.name} is being written by {holder.describe()}")


def delete_run(store: RunStore, run_id: str, folder: Path) -> None:
    """Remove the run's ``folder`` and its index row. ``folder`` is ``DATA/runs/<id>`` itself, not
    a link (:func:`.common.run_folder`); rmtree removes links inside it without following them.
    The folder's results lock is held while it goes, so no run (of this server or a command
    line's ``--resume``) starts writing it meanwhile; Held when one already writes it."""
    try:
        with results_lock(folder).acquire(Holder.current(command=f"wirespeed serve: deleting run {run_id}")):
            shutil.rmtree(folder)
    except LockBusy as exc:
        raise Held(str(exc)) from None
    store.update(run_id)


def write_zip(store: RunStore, run_id: str, folder: Path) -> Path:
    """The run's files (:meth:`RunStore.files`: no lock file, no link) in a zip under the
    system's temporary folder, each as ``<id>/<name>``; the caller removes it."""
    handle, name = tempfile.mkstemp(prefix=f"wirespeed-{run_id}-", suffix=".zip")
    os.close(handle)
    try:
        with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED) as archive:
            for entry in store.files(run_id):
                try:       # checked again: a file may have become a link since the listing
                    path = safe_file(folder, entry["name"])
                except (BadName, FileNotFoundError):
                    continue
                archive.write(path, f"{run_id}/{entry['name']}")
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def report_pdf(folder: Path) -> Path:
    """``folder/report.pdf``, made (with the tables, graphs and report.html, as ``wirespeed
    report DIR --pdf``) when it is missing or older than results.json. NoResults when the run has
    no result yet; Held while another process writes it; ReportError when it cannot be made."""
    from ..report import make_report

    _not_held(folder)
    try:
        record = load_record(folder)
    except RecordError as exc:
        raise NoResults(f"run {folder.name} has no results: {exc.message}") from None
    if not any(entry.results for entry in record.tests):
        raise NoResults(f"run {folder.name} has no results yet ({record.status})")
    pdf = folder / PDF_NAME
    with DRAWING:
        if pdf.is_symlink() or not pdf.is_file() or pdf.stat().st_mtime < (folder / "results.json").stat().st_mtime:
            made = make_report(folder, pdf=True)
            assert made.pdf is not None
            return made.pdf
    return pdf


def compare_page(folders: list[tuple[str, Path]]) -> str:
    """The compare page of ``wirespeed compare --graph`` (compare.html: its graphs inline, nothing
    beside it referenced) of the runs in ``folders`` (label, folder), made in a temporary
    folder. CompareError (its field the folder) when a run cannot be compared."""
    from ..compare.page import COMPARE_NAME, write_compare
    from ..compare.runs import load_runs

    runs = [load_runs(str(folder), label) for label, folder in folders]
    with tempfile.TemporaryDirectory(prefix="wirespeed-compare-") as out, DRAWING:
        write_compare(runs, Path(out))
        return (Path(out) / COMPARE_NAME).read_text(encoding="utf-8")
