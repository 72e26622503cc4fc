"""Running a plan from the command line: the results folder claimed before anything slow,
the run with its progress on the console, its summary, verdicts and JUnit file, the report
after it, and what Ctrl-C left behind."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from ..results.record import RunRecord
from ..rfc2544.expect import Verdict, verdicts_of
from ..rfc2544.plan import PlanError
from ..run import Run, RunFailed
from ..trial_lines import control_summary
from .common import InputError, as_input_error, err_console
from .progress import ProgressView, summary_tables, verdict_table

__all__ = ["EXIT_EXPECTATION", "interrupted", "claim_folder", "execute", "exit_on_missed", "write_junit",
           "report_after_run"]

#: the exit code of a run that completed but missed an expectation (--expect)
EXIT_EXPECTATION = 3


def interrupted(out: Path, notes: Sequence[str] = ()) -> NoReturn:
    """Ctrl-C: where the results so far are, or that nothing was written (the folder, if the
    run made it, is removed again when the claim ends); then exit 130. ``notes``: what was
    done before the run started (a run moved aside by --force)."""
    if (out / "results.json").is_file():
        err_console.print(f"wirespeed: interrupted; results so far are in {out}/", highlight=False, soft_wrap=True)
    else:
        err_console.print("wirespeed: interrupted before anything was measured; no results were written",
                          highlight=False, soft_wrap=True)
        for note in notes:
            err_console.print(f"wirespeed: note: {note}", highlight=False, soft_wrap=True)
    raise typer.Exit(130)


@contextlib.contextmanager
def claim_folder(out: Path, *, force: bool = False, resume: bool = False,
             field: str = "--out") -> Iterator[tuple[Any, list[str]]]:
    """The results folder ``out`` held for the run, before anything slow starts
    (:func:`wirespeed.outdir.claim`; ``resume``: locked as it is): (the claim, notes on a run
    moved aside or a stale lock taken over)."""
    from ..locks import Holder, LockBusy, results_lock
    from ..outdir import OutDirError, claim

    holder = Holder.current(command=" ".join(sys.argv), results=out)
    notes: list[str] = []
    try:
        held = results_lock(out).acquire(holder) if resume else claim(out, holder, force=force, notes=notes)
    except (LockBusy, OutDirError) as exc:
        raise InputError(field, str(exc)) from None
    except OSError as exc:
        raise InputError(field, f"cannot lock {out}: {exc.strerror or exc}") from None
    with held:
        yield held, notes


def execute(run: Run, json_out: bool, junit: Path | None = None) -> list[Verdict]:
    """Run ``run`` with its progress on the console, then its summary (``json_out``: results.json
    on stdout instead) and its verdicts; ``junit``: also the JUnit XML file. Returns the verdicts
    (:func:`exit_on_missed` after the report)."""
    out = run.out
    started = time.monotonic()
    try:
        with ProgressView() as view:
            record = run.execute(on_event=view)
    except RunFailed as exc:
        if junit is not None and run.record is not None:
            write_junit(junit, run.record, started)
        raise InputError(exc.field, str(exc), exit_code=1) from None
    except PlanError as exc:
        raise as_input_error(exc) from None
    except KeyboardInterrupt:
        if junit is not None and run.record is not None:
            write_junit(junit, run.record, started)
        raise
    verdicts = write_junit(junit, record, started) if junit is not None else verdicts_of(record)
    if json_out:
        assert out is not None          # the command's runs always have a folder (--out, or the resumed one)
        typer.echo((Path(out) / "results.json").read_text(), nl=False)
    else:
        for table in summary_tables(record):
            Console().print(table)
        url = run.tester.transport.url if run.tester is not None else None
        err_console.print(control_summary(record.control_path, url), highlight=False, soft_wrap=True)
        paths = run.writer.paths if run.writer is not None else []
        err_console.print(f"results: {', '.join(str(p) for p in paths)}", highlight=False, soft_wrap=True)
    if verdicts:
        err_console.print(verdict_table(verdicts))
    return verdicts


def exit_on_missed(verdicts: list[Verdict]) -> None:
    """Exit code 3, with one line, when an expectation was missed."""
    missed = sum(not v.passed for v in verdicts)
    if missed:
        err_console.print(f"wirespeed: {missed} of {len(verdicts)} verdicts failed (exit code {EXIT_EXPECTATION})",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_EXPECTATION)


def write_junit(path: Path, record: RunRecord, started: float) -> list[Verdict]:
    """``path``: the run as JUnit XML (--junit); returns the verdicts. A file that cannot be
    written is a one-line error after the results are safe."""
    from ..results.junit import junit_xml
    from ..safeio import atomic_write_text, describe_os_error

    verdicts = verdicts_of(record)
    try:
        atomic_write_text(path, junit_xml(record, verdicts, time.monotonic() - started))
    except OSError as exc:
        raise InputError("--junit", f"cannot write {path}: {describe_os_error(exc)}", exit_code=1) from None
    return verdicts


def report_after_run(out: Path) -> None:
    """Graphs and report.html of a finished run; the results are already on disk, so a failure
    here is a one-line warning."""
    try:
        from ..report import make_report

        report = make_report(out)
    except Exception as exc:
        err_console.print(f"wirespeed: warning: no graphs or report.html ({type(exc).__name__}: {exc}); "
                          f"the results are in {out}/, retry with 'wirespeed report {out}'",
                          highlight=False, soft_wrap=True)
        return
    err_console.print(f"report: {report.html} (graphs in {out / 'graphs'}/)", highlight=False, soft_wrap=True)
