"""What a test's procedure works with while it runs: the tester, the calibration, the results of
the tests before it, and the events it emits (:mod:`wirespeed.rfc2544.events`).

Procedures never print or write files: they call :meth:`RunContext.trial_started`,
:meth:`~RunContext.trial_done`, :meth:`~RunContext.size_started` and :meth:`~RunContext.size_done`,
and the run's consumers (the results writer, the command line's progress, the web page) see
the events. A stop requested through the run's :class:`StopToken` ends the run before the next
trial starts (:class:`RunStopped`): the trial in progress is finished and recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from . import events as ev
from .common import run_learning

__all__ = ["RunContext", "StopToken", "RunStopped", "run_alone", "KnownThroughput"]


class RunStopped(Exception):
    """The run was asked to stop (:meth:`StopToken.set`); raised before the next trial starts."""


class StopToken:
    """Ask a run, from any thread, to end after the trial in progress."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()


class RunContext:
    """The run as one test's procedure sees it (see the module doc).

    ``tester``: the tester the trials run on (:class:`~wirespeed.host.device.Device`);
    ``pipeline``: the calibrated tester pipeline delay for latency figures (None: raw);
    ``results``: every test's results so far, by test name (a test that ``needs`` another reads
    them here); ``reset``: the action that resets the DUT (the reset test);
    ``emit``: where events go."""

    def __init__(self, tester: Any, emit: Callable[[ev.Event], None], *, pipeline: Any = None,
                 results: dict[str, list[Any]] | None = None, stop: StopToken | None = None,
                 reset: Callable[[], None] | None = None):
        self.tester = tester
        self.emit = emit
        self.pipeline = pipeline
        self.results: dict[str, list[Any]] = results if results is not None else {}
        self.stop = stop or StopToken()
        self.reset = reset
        self.test = ""

    def size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        self.emit(ev.SizeStarted(test=self.test, frame_size=frame_size, line_rate_fps=line_rate_fps))

    def trial_started(self, frame_size: int | str, step: int, rate_fps: float, **labels: Any) -> None:
        """Announce the next trial; raises :class:`RunStopped` instead when a stop was asked."""
        if self.stop.is_set:
            raise RunStopped()
        self.emit(ev.TrialStarted(test=self.test, frame_size=frame_size, step=step, rate_fps=rate_fps,
                                  labels=labels))

    def trial_done(self, frame_size: int | str, step: int, result: Any, summary: str = "", **tags: Any) -> None:
        """A trial ended: ``tags`` go on its line of trials.jsonl (the test, its repetition ...)."""
        self.emit(ev.TrialDone(test=self.test, frame_size=frame_size, step=step, tags=tags, result=result,
                               summary=summary))

    def size_done(self, frame_size: int | str, result: Any, summary: str = "") -> None:
        self.results.setdefault(self.test, []).append(result)
        self.emit(ev.SizeDone(test=self.test, frame_size=frame_size, result=result, summary=summary))

    def results_of(self, test: str) -> list[Any]:
        return self.results.get(test, [])


class KnownThroughput(NamedTuple):
    """A throughput measured elsewhere, for a test that runs at it (outside a plan)."""

    frame_size: int | str
    throughput_fps: float


def run_alone(test: str, procedure: Callable[[RunContext, Any], list[Any]], tester: Any, config: Any,
              on_event: Callable[[ev.Event], None] | None = None, *, pipeline: Any = None,
              throughput_fps: Mapping[Any, float] | None = None, reset: Callable[[], None] | None = None) -> list[Any]:
    """One test's ``procedure`` outside a plan (a script, a test bench): its events to
    ``on_event``, its learning phase first when ``config`` has one; ``throughput_fps``: a
    throughput by frame size for the tests that run at it."""
    results = {"throughput": [KnownThroughput(size, fps) for size, fps in throughput_fps.items()]} \
        if throughput_fps is not None else None
    ctx = RunContext(tester, on_event or (lambda event: None), pipeline=pipeline, results=results, reset=reset)
    ctx.test = test
    if getattr(config, "learning", None) is not None:
        ctx.emit(ev.LearningDone(result=run_learning(tester, config)))
    return procedure(ctx, config)
