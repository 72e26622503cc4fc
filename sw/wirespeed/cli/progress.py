"""A run as the command line shows it: the events of :mod:`wirespeed.rfc2544.events` rendered on
stderr with rich (first the run's estimate, a line per test and a total; then a line per trial,
for the learning phase and as each frame size finishes, under progress bars with what is left
of the test and of the run), then each test's summary tables on stdout."""

from __future__ import annotations

from typing import Any

from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .. import sizes as size_points
from ..results.record import RunRecord
from ..rfc2544 import events as ev
from ..rfc2544 import registry
from ..rfc2544.estimate import RunEstimate, format_seconds
from ..rfc2544.eta import RunProgress
from ..rfc2544.expect import Verdict, format_value
from ..units import format_duration
from .common import err_console

__all__ = ["ProgressView", "summary_tables", "estimate_lines", "verdict_table"]


def _wire(ns: int) -> str:
    if ns >= 60_000_000_000:
        return format_seconds(ns / 1e9)
    return f"{ns / 1e9:.3g} s" if ns >= 1_000_000_000 else format_duration(int(float(f"{ns:.3g}")))


def estimate_lines(estimate: RunEstimate) -> list[str]:
    """The estimate as the command line prints it before the first trial: what it assumes, a
    line per test and the total."""
    pace = estimate.pace
    where = (f"the simulation runs {pace.sim_ns_per_s / 1e6:.3g} ms per wall second"
             + (f" ({pace.measured})" if pace.measured else "") if pace.sim_ns_per_s else "real time")
    lines = [f"estimate: {estimate.basis}",
             f"  pace: {where}, {pace.trial_overhead_s:.2g} s a trial for the control path"]
    for test in estimate.tests:
        count = len(test.sizes)
        lines.append(f"  {test.test}: {count} size{'s' if count != 1 else ''}, about {test.trials:,} trials "
                     f"(at most {test.most_trials:,}), {_wire(test.wire_ns)} on the wire, "
                     f"about {format_seconds(test.wall_s)}")
    lines.append(f"  total: about {estimate.trials:,} trials (at most {estimate.most_trials:,}), "
                 f"{_wire(estimate.wire_ns)} on the wire, about {format_seconds(estimate.wall_s)}")
    return lines


class _Following(ProgressColumn):
    """A column drawn from the run's progress (``task.fields["test"]``: the task's test, None for
    the run), so what is left counts down between events."""

    def __init__(self, follow: RunProgress):
        super().__init__()
        self.follow = follow


class _Bar(_Following):
    """How far the task's test (or the run) is, from the estimate at the moment it is drawn."""

    def render(self, task: Task) -> RenderableType:
        done = self.follow.fraction(task.fields.get("test"))
        return ProgressBar(total=None if done is None else 1.0, completed=done or 0.0, width=24,
                           pulse=done is None, animation_time=task.get_time())


class _Left(_Following):
    """What is left of the task's test (or of the run)."""

    def render(self, task: Task) -> RenderableType:
        left = self.follow.remaining_s(task.fields.get("test"))
        return Text("" if left is None else f"about {format_seconds(left)} left", style="progress.remaining")


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
        self.follow = RunProgress()
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), _Bar(self.follow),
                                 _Left(self.follow), TimeElapsedColumn(), console=console, transient=True)
        self.task: Any = None
        self.tests: dict[str, Any] = {}

    def __enter__(self) -> ProgressView:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.task is not None:       # the display starts with the run, after every check passed
            self.progress.__exit__(*exc)

    def _print(self, text: str) -> None:
        self.progress.console.print(text, highlight=False, soft_wrap=True)

    def __call__(self, event: ev.Event) -> None:
        self.follow(event)
        if isinstance(event, ev.RunStarted):
            if self.follow.estimate is not None:
                for line in estimate_lines(self.follow.estimate):
                    self._print(line)
            self.progress.__enter__()
            self.task = self.progress.add_task("run: starting", total=None)
        elif isinstance(event, ev.Note):
            self._print(f"wirespeed: note: {event.text}")
        elif isinstance(event, ev.TestStarted):
            self.tests[event.test] = self.progress.add_task(event.test, total=None, test=event.test)
        elif isinstance(event, ev.TestDone) and event.test in self.tests:
            self.progress.remove_task(self.tests.pop(event.test))
        elif isinstance(event, ev.LearningDone):
            self._print(_learning_line(event.result))
        elif isinstance(event, ev.TrialStarted):
            if event.test in self.tests:
                self.progress.update(self.tests[event.test], description=_description(event))
            self.progress.update(self.task, description=self._overall())
        elif isinstance(event, ev.TrialDone) and event.summary:
            self._print(event.summary)
        elif isinstance(event, ev.SizeDone) and event.summary:
            self._print(event.summary)

    def _overall(self) -> str:
        estimate = self.follow.estimate
        expected = f" of about {estimate.trials:,}" if estimate is not None else ""
        return f"run: trial {self.follow.trials_done() + 1}{expected}"


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
