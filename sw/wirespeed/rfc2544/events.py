"""The typed events of a run: what every face of wirespeed (the command line, a script, the web
appliance) consumes, and what the results writer records.

A run emits, in order: ``RunStarted``; any ``Note``; ``LearningDone`` when the learning phase
runs; then per test ``TestStarted``, per frame size ``SizeStarted``, ``TrialStarted`` /
``TrialDone`` pairs and ``SizeDone``, and ``TestDone``; last ``RunDone`` with the run's status
(alone, without ``RunStarted``, when the run was stopped while its estimate was measured).
Every event is a pydantic model with a ``kind`` discriminator, so it serialises to one JSON line
(``event.model_dump_json()``) and back (:func:`parse_event`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from ..host.models import LearningResult, TrialResult

__all__ = ["Event", "RunStarted", "Note", "LearningDone", "TestStarted", "SizeStarted", "TrialStarted",
           "TrialDone", "SizeDone", "TestDone", "RunDone", "AnyEvent", "parse_event", "Status"]

Status = Literal["running", "complete", "interrupted", "failed"]
SizePoint = int | str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Event(BaseModel):
    """What every event has: its kind and when it happened (UTC, ISO 8601)."""

    kind: str
    utc: str = Field(default_factory=_now)


class RunStarted(Event):
    kind: Literal["run_started"] = "run_started"
    tests: list[str]
    frame_sizes: list[SizePoint]
    target: str
    out_dir: str | None = None
    resumed: bool = False
    recorded_trials: int = Field(0, description="trials the results held before this run started: a resumed "
                                                "run's earlier ones, the first lines of its trials.jsonl")
    estimate: dict[str, Any] | None = Field(None, description="trials and seconds expected, per test and in all")


class Note(Event):
    kind: Literal["note"] = "note"
    text: str


class LearningDone(Event):
    kind: Literal["learning_done"] = "learning_done"
    result: LearningResult


class TestStarted(Event):
    kind: Literal["test_started"] = "test_started"
    test: str
    frame_sizes: list[SizePoint]


class SizeStarted(Event):
    kind: Literal["size_started"] = "size_started"
    test: str
    frame_size: SizePoint
    line_rate_fps: float


class TrialStarted(Event):
    kind: Literal["trial_started"] = "trial_started"
    test: str
    frame_size: SizePoint
    step: int = Field(description="the trial's number within its frame size (and repetition)")
    rate_fps: float
    labels: dict[str, Any] = Field(default_factory=dict,
                                   description="what places the trial in its test: repetition, burst, load ...")


class TrialDone(Event):
    kind: Literal["trial_done"] = "trial_done"
    test: str
    frame_size: SizePoint
    step: int
    tags: dict[str, Any] = Field(default_factory=dict, description="recorded with the trial (trials.jsonl)")
    result: TrialResult
    summary: str = Field("", description="one line for people, as the command line prints it")


class SizeDone(Event):
    kind: Literal["size_done"] = "size_done"
    test: str
    frame_size: SizePoint
    result: Any = Field(description="the test's result for this frame size (its registry result model)")
    summary: str = ""


class TestDone(Event):
    kind: Literal["test_done"] = "test_done"
    test: str


class RunDone(Event):
    kind: Literal["run_done"] = "run_done"
    status: Status
    error: str | None = None
    out_dir: str | None = None


AnyEvent = Annotated[RunStarted | Note | LearningDone | TestStarted | SizeStarted | TrialStarted | TrialDone
                     | SizeDone | TestDone | RunDone, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyEvent)


def parse_event(text: str | bytes) -> Event:
    """An event back from its JSON line (``SizeDone.result`` stays a plain mapping)."""
    event: Event = _ADAPTER.validate_json(text)
    return event
