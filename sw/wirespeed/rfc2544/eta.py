"""A run followed against its estimate (:mod:`wirespeed.rfc2544.estimate`): what is left of each
test and of the run, in wall seconds, refined by the pace of the trials so far.

Every face that shows progress (the command line's bars, a web page) feeds it the run's events
and asks :meth:`RunProgress.remaining_s` and :meth:`RunProgress.fraction` whenever it draws.
What is left: the estimated wall time of the trials still expected (each frame size's expected
trials, at least one more while a size runs past them), scaled by how the finished trials'
wall time compared with their estimate, less the time the trial in progress has run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import events as ev
from .estimate import RunEstimate, SizeEstimate

__all__ = ["RunProgress"]


class _Size:
    def __init__(self, estimate: SizeEstimate):
        self.per_trial_s = estimate.wall_s / max(estimate.trials, 1)
        self.expected = estimate.trials
        self.trials = 0
        self.done = False

    def left_s(self) -> float:
        """Estimated wall seconds of the trials still expected (finished trials excluded)."""
        if self.done:
            return 0.0
        return self.per_trial_s * max(self.expected - self.trials, 1 if self.trials else self.expected)


class RunProgress:
    """Call it with each event of a run; ``clock``: wall seconds (monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.estimate: RunEstimate | None = None
        self.sizes: dict[tuple[str, object], _Size] = {}
        self.tests_done: set[str] = set()
        self.started: dict[str, float] = {}
        self.run_started = self.learning_left_s = 0.0
        self.actual_s = self.estimated_s = 0.0        # finished trials: wall time, and its estimate
        self.trials: dict[str, int] = {}
        self.current: tuple[str, object] | None = None
        self.trial_started = 0.0

    def __call__(self, event: ev.Event) -> None:
        now = self.clock()
        if isinstance(event, ev.RunStarted):
            self.run_started = now
            if event.estimate is not None:
                self.estimate = RunEstimate.model_validate(event.estimate)
                for test in self.estimate.tests:
                    for point in test.sizes:
                        self.sizes[(test.test, point.frame_size)] = _Size(point)
                pace = self.estimate.pace
                self.learning_left_s = pace.wall_s(self.estimate.learning_wire_ns,
                                                   1 if self.estimate.learning_wire_ns else 0)
        elif isinstance(event, ev.LearningDone):
            self.learning_left_s = 0.0
        elif isinstance(event, ev.TestStarted):
            self.started[event.test] = now
        elif isinstance(event, ev.TrialStarted):
            self.current, self.trial_started = (event.test, event.frame_size), now
        elif isinstance(event, ev.TrialDone):
            self.trials[event.test] = self.trials.get(event.test, 0) + 1
            size = self.sizes.get((event.test, event.frame_size))
            if size is not None and self.current == (event.test, event.frame_size):
                self.actual_s += now - self.trial_started
                self.estimated_s += size.per_trial_s
            if size is not None:
                size.trials += 1
            self.current = None
        elif isinstance(event, ev.SizeDone):
            if (size := self.sizes.get((event.test, event.frame_size))) is not None:
                size.done = True
        elif isinstance(event, ev.TestDone):
            self.tests_done.add(event.test)

    @property
    def pace_factor(self) -> float:
        """Finished trials' wall time over its estimate (1 before the first)."""
        return self.actual_s / self.estimated_s if self.estimated_s > 0 else 1.0

    def remaining_s(self, test: str | None = None) -> float | None:
        """Wall seconds left of ``test`` (None: of the run); None without an estimate."""
        if self.estimate is None:
            return None
        tests = [test] if test is not None else [t.test for t in self.estimate.tests]
        left = 0.0
        running = 0.0
        for name in tests:
            if name in self.tests_done:
                continue
            for (owner, point), size in self.sizes.items():
                if owner != name:
                    continue
                if (owner, point) == self.current:      # the trial in progress counts down
                    left += size.left_s() - size.per_trial_s
                    running = max(0.0, size.per_trial_s * self.pace_factor - (self.clock() - self.trial_started))
                else:
                    left += size.left_s()
        learning = self.learning_left_s if test is None else 0.0
        return max(0.0, left) * self.pace_factor + running + learning

    def fraction(self, test: str | None = None) -> float | None:
        """How far ``test`` (None: the run) is, 0..1, by wall time spent and left."""
        left = self.remaining_s(test)
        if left is None:
            return None
        if test is not None and test in self.tests_done:
            return 1.0
        since = self.started.get(test, None) if test is not None else self.run_started
        spent = self.clock() - since if since is not None else 0.0
        return spent / (spent + left) if spent + left > 0 else 1.0

    def trials_done(self, test: str | None = None) -> int:
        return sum(self.trials.values()) if test is None else self.trials.get(test, 0)
