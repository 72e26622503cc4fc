"""A run as the command line shows it: the events of :mod:`wirespeed.rfc2544.events` rendered on
stderr with rich (a progress line, a line per trial and for the learning phase), then each
test's summary tables on stdout."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .. import sizes as size_points
from ..results.record import RunRecord
from ..rfc2544 import events as ev
from ..rfc2544 import registry
from ..rfc2544.expect import Verdict, format_value
from ..units import format_duration
from .common import err_console

__all__ = ["ProgressView", "summary_tables", "verdict_table"]


def _learning_line(result: Any) -> str:
    ports = sorted(result.addresses)
    return (f"learning: ports {', '.join(map(str, ports))}: gratuitous ARP "
            f"{'/'.join(str(result.gratuitous_arp.get(p, '-')) for p in ports)}, unsolicited NA "
            f"{'/'.join(str(result.unsolicited_na.get(p, '-')) for p in ports)}, learning frames "
            f"{'/'.join(str(result.learning_frames[p]) for p in ports)} sent, settle "
            f"{format_duration(result.settle_ns)}")


def _description(event: ev.TrialStarted) -> str:
    labels = event.labels
    parts = []
    if "latency_trial" in labels:
        parts.append(f"latency trial {labels['latency_trial']}/{labels['of']}")
    elif "repetition" in labels:
        parts.append(f"repetition {labels['repetition']}/{labels['of']}")
        if "burst_frames" in labels:
            parts.append(f"trial {event.step}, burst {labels['burst_frames']:,} frames")
    else:
        parts.append(f"trial {event.step}")
    pct = labels.get("pct_line_rate")
    rate = "" if "burst_frames" in labels else f" at {event.rate_fps:,.0f} fps" + (
        f" ({pct:.2f} %)" if pct is not None else "")
    return f"{event.test} {size_points.text(event.frame_size)}: {', '.join(parts)}{rate}"


class ProgressView:
    """Renders a run's events (call it with each); use as a context manager around the run."""

    def __init__(self, console: Console = err_console):
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 TextColumn("{task.completed}/{task.total} sizes"), TimeElapsedColumn(),
                                 console=console, transient=True)
        self.task: Any = None

    def __enter__(self) -> ProgressView:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.task is not None:       # the display starts with the run, after every check passed
            self.progress.__exit__(*exc)

    def _print(self, text: str) -> None:
        self.progress.console.print(text, highlight=False, soft_wrap=True)

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted):
            self.progress.__enter__()
            self.task = self.progress.add_task("starting", total=None)
        elif isinstance(event, ev.Note):
            self._print(f"wirespeed: note: {event.text}")
        elif isinstance(event, ev.TestStarted):
            count = 1 if registry.get(event.test).one_result else len(event.frame_sizes)
            total = (self.progress.tasks[0].total or 0) + count
            self.progress.update(self.task, total=total)
        elif isinstance(event, ev.LearningDone):
            self._print(_learning_line(event.result))
        elif isinstance(event, ev.TrialStarted):
            self.progress.update(self.task, description=_description(event))
        elif isinstance(event, ev.TrialDone) and event.summary:
            self._print(event.summary)
        elif isinstance(event, ev.SizeDone):
            self.progress.advance(self.task)


def summary_tables(record: RunRecord) -> list[Table]:
    """Each test's summary as rich tables."""
    tables = []
    for entry in record.tests:
        for spec in registry.get(entry.name).summary(entry.results, record):
            table = Table(title=spec.title)
            for column in spec.columns:
                table.add_column(column, justify="right")
            for row in spec.rows:
                table.add_row(*row)
            tables.append(table)
    return tables


def verdict_table(verdicts: list[Verdict]) -> Table:
    """The verdicts of a run's expectations (--expect), one row per expectation and size."""
    table = Table(title="Verdicts")
    for column, justify in (("expectation", "left"), ("size", "right"), ("measured", "right"),
                            ("verdict", "left")):
        table.add_column(column, justify=justify)      # type: ignore[arg-type]
    for v in verdicts:
        table.add_row(v.expectation, size_points.text(v.frame_size), format_value(v.value, v.unit),
                      "[green]pass[/]" if v.passed else "[red]fail[/]")
    return table
