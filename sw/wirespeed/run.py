"""A plan running on a tester: the learning phase, then each test of the plan in RFC order, every
step an event (:mod:`.events`), the results written as they are measured.

    run = Run(plan, tester, out="results/")
    record = run.execute(on_event=print)     # in this thread; Ctrl-C stops it, results kept
    for event in Run(plan, tester):           # or as an iterator (the run works in a thread)
        ...

A run ends ``complete``, ``interrupted`` (Ctrl-C, or :meth:`StopToken.set` from any thread: the
trial in progress is finished first) or ``failed`` (the tester or the DUT failed:
:class:`RunFailed`); the record says which, and an interrupted or failed run can be resumed
(:meth:`Run.resume`).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import WirespeedError
from .results.record import GENERAL_DEFINITIONS, RunHeader, RunRecord, Status
from .results.resume import prepare, remaining_sizes
from .results.writer import ResultsWriter
from .rfc2544 import events as ev
from .rfc2544 import registry
from .rfc2544.common import run_learning
from .rfc2544.context import RunContext, RunStopped, StopToken
from .rfc2544.estimate import DutHint, Pace, RunEstimate, estimate_configs, measure_pace, pilot_trial
from .rfc2544.plan import Plan
from .safeio import WriteError

__all__ = ["Run", "RunFailed", "requires", "status_words"]


class RunFailed(WirespeedError):
    """The run stopped on a failure: of the tester or the DUT (``field`` ``run``), or of writing
    its results (``--out``). ``kept``: the status results.json holds (``running`` when even the
    status could not be written: ``--resume`` continues such a run); every trial measured is in
    the results folder."""

    def __init__(self, message: str, out_dir: Path | None, *, field: str = "run", kept: str = "failed"):
        super().__init__(message)
        self.out_dir, self.field, self.kept = out_dir, field, kept


def requires(configs: dict[str, Any], learning: Any) -> list[tuple[str, str, str]]:
    """``(field, block, why)`` for each optional gateware block that running ``configs`` (test
    name -> configuration) after a learning phase (None: none) needs."""
    needs = []
    if learning is not None:
        needs.append(("--learning", "responder", "the learning phase needs (RFC 2544 section 23): run with "
                                                 "--no-learning and give the DUT static ARP/ND entries for the "
                                                 "tester's ports"))
    for name in configs:
        needs += [("--tests", block, why) for block, why in registry.get(name).blocks.items()]
    return needs


class Run:
    """``plan`` on ``tester`` (a connected :class:`~wirespeed.host.tester.Tester`).

    ``out``: the results folder (None: the record is kept in memory only); ``calibration``: a
    :class:`~wirespeed.calibration.Calibration` whose pipeline delay the latency figures lose,
    and ``calibration_info`` what the record says of it; ``notes``: more notes for the record;
    ``config_file``: the config file the plan came from, for the record; ``reset``: the action
    that resets the DUT (the reset test; default: the simulation's control window).

    The results folder is claimed when the run starts (:func:`wirespeed.outdir.claim`: locked,
    and refused when it holds a run, unless ``force`` moves that run aside), or the caller
    claimed it already (``claimed``: the :class:`~wirespeed.outdir.Claim`, released by the
    caller)."""

    def __init__(self, plan: Plan, tester: Any, *, out: Path | str | None = None, calibration: Any = None,
                 calibration_info: dict[str, Any] | None = None, notes: list[str] | None = None,
                 config_file: dict[str, str] | None = None, reset: Callable[[], None] | None = None,
                 stop: StopToken | None = None, force: bool = False, claimed: Any = None):
        if plan.target is None:       # the defaults of the tester it runs on
            plan = plan.model_copy(update={"target": "sim" if tester.is_simulation else "board"})
        self.plan, self.tester = plan, tester
        self.out = None if out is None else Path(out)
        self.calibration, self.calibration_info = calibration, calibration_info
        self.extra_notes, self.config_file = list(notes or []), config_file
        self.reset = reset
        self.stop = stop or StopToken()
        self.configs = plan.configs()
        self.force, self.claimed = force, claimed
        self.writer: ResultsWriter | None = None
        self.record: RunRecord | None = None
        self._resume_note: str | None = None

    @classmethod
    def resume(cls, record: RunRecord, tester: Any, out: Path | str, *, calibration: Any = None,
               note: str = "", reset: Callable[[], None] | None = None, stop: StopToken | None = None,
               claimed: Any = None) -> Run:
        """Go on with the interrupted or failed run ``record`` of ``out`` (see
        :mod:`wirespeed.results.resume`): its recorded parameters, the sizes left. The folder is
        locked for the run (``claimed``: the caller holds its lock already)."""
        self = cls.__new__(cls)
        self.force, self.claimed = False, claimed
        self.plan = Plan.model_validate(record.plan) if record.plan else Plan(tests=record.test_names)
        self.tester, self.out = tester, Path(out)
        self.calibration, self.calibration_info = calibration, record.calibration
        self.extra_notes, self.config_file, self.reset = [], record.config_file, reset
        self.stop = stop or StopToken()
        self.configs = {}
        for entry in record.tests:
            left = remaining_sizes(record, entry.name)
            if left:
                self.configs[entry.name] = entry.parameters.model_copy(update={"frame_sizes": left})
        self.writer, self.record, self._resume_note = None, record, note
        return self

    # checks

    def requires(self) -> list[tuple[str, str, str]]:
        """``(field, block, why)`` for each optional gateware block the run needs."""
        return requires(self.configs, self._learning())

    def _learning(self) -> Any:
        if self.record is not None and self._resume_note is not None:
            return self.record.learning_parameters
        return self.plan.learning_config

    def check(self) -> None:
        """ConnectError when the tester cannot carry the plan, PlanError when the calibration
        does not fit it (raised before anything is written)."""
        if self.tester is None or not self.configs:
            return
        if self.calibration is None and self._resume_note is None and "throughput" in self.configs:
            from . import sizes as size_points
            from .rfc2544.plan import resolve_calibration

            first = next(iter(self.configs.values()))
            self.calibration, self.calibration_info = resolve_calibration(
                self.plan, self.tester.target, size_points.distinct_sizes(first.frame_sizes))
        if self.calibration is not None and "throughput" in self.configs:
            self._check_calibration()
        for field, block, why in self.requires():
            self.tester.require(block, field, why)
        first = next(iter(self.configs.values()))
        size = first.frame_sizes[0]
        forward, *reverse = first.flows(size)
        self.tester.check_directions([forward], "--target")
        self.tester.check_directions(reverse, "--bidirectional")

    def _check_calibration(self) -> None:
        """PlanError when the calibration has no figure for a direction and size the run measures
        latency at, or was made on another target or gateware."""
        from .calibration import CalibrationError
        from .rfc2544.plan import PlanError

        config = self.configs["throughput"]
        needs = [(f.tx_port, f.rx_port, size) for point in config.frame_sizes for f in config.flows(point)
                 for size in set(f.spec.sizes)]
        try:
            self.calibration.check_usable(self.tester.ident, self.tester.target, needs)
        except CalibrationError as exc:
            field, _, message = str(exc).partition(": ")
            raise PlanError(field, message) from None
        self.calibration_info = (self.calibration_info or {}) | {"pipeline_delay_ns": self.calibration.summary(),
                                                                 "file": self.calibration.model_dump(mode="json")}

    # the record

    def _header(self) -> RunHeader:
        ident = self.tester.ident
        notes = self.plan.notes(self.configs)
        first = next(iter(self.configs.values()))
        if not all(self.tester.counts_sequence_errors(f.rx_port) for f in first.flows(first.frame_sizes[0])):
            notes.append("sequence numbers not tracked: the tester's gateware has no per-stream receive statistics "
                         "(a board build); frames lost is frames sent - frames received (at least 0), duplicates, "
                         "reordered and late frames are not counted, and a trial that receives more frames than it "
                         "sent fails")
        if "throughput" in self.configs:
            if self.calibration is not None:
                delays = sorted({p.pipeline_delay_ns for p in self.calibration.points})
                source = (self.calibration_info or {}).get("source", "")
                notes.append(f"latency calibrated: tester pipeline delay of {'/'.join(map(str, delays))} ns "
                             f"subtracted ({source})")
            else:
                notes.append("latency not calibrated: figures include the tester pipeline delay (run "
                             "'wirespeed calibrate' on a loopback cable and pass --calibration FILE)")
        definitions = dict(GENERAL_DEFINITIONS)
        for name in self.configs:
            definitions |= registry.get(name).definitions
        return RunHeader(test="rfc2544-" + "+".join(self.configs), target=self.tester.target, gateware=ident,
                         dut=self.tester.dut, notes=notes + self.extra_notes + list(getattr(self.tester, "notes", [])),
                         definitions=definitions,
                         latency_calibrated=self.calibration is not None, calibration=self.calibration_info,
                         learning_parameters=self.plan.learning_config, plan=self.plan.model_dump(mode="json"),
                         config_file=self.config_file, title=self.plan.title, operator=self.plan.operator,
                         dut_info=dict(self.plan.dut_info),
                         tests=[{"name": name, "parameters": config} for name, config in self.configs.items()])

    # running

    def execute(self, on_event: Callable[[ev.Event], None] | None = None) -> RunRecord:
        """Run in this thread, telling ``on_event`` every event; returns the record. Raises
        :class:`RunFailed` when the tester, the DUT or writing the results fails,
        KeyboardInterrupt after marking the run interrupted; ConnectError or PlanError (nothing
        written) when the tester cannot carry the plan; OutDirError or LockBusy when the results
        folder cannot be had."""
        self.check()
        with contextlib.ExitStack() as held:
            if self.out is not None and self.claimed is None:
                held.enter_context(self._claim(self.out))
            return self._execute(on_event)

    def _claim(self, out: Path) -> Any:
        from .locks import Holder, results_lock
        from .outdir import claim

        holder = Holder.current(results=out)
        if self._resume_note is not None:
            return results_lock(out).acquire(holder)
        notes: list[str] = []
        claimed = claim(out, holder, force=self.force, notes=notes)
        self.extra_notes += notes
        return claimed

    def _execute(self, on_event: Callable[[ev.Event], None] | None) -> RunRecord:
        try:
            if self.record is None:
                header = self._header()
                if self.out is not None:
                    self.writer = ResultsWriter(self.out, header)
                    self.record = self.writer.record
                else:
                    self.record = RunRecord(**dict(header))
            else:
                assert self.out is not None         # a resumed run has its folder (Run.resume)
                prepare(self.out, self.record, self._resume_note or "")
                self.writer = ResultsWriter.resume(self.out, self.record)
        except WriteError as exc:
            raise RunFailed(str(exc), self.out, field="--out") from None
        except OSError as exc:
            raise RunFailed(f"cannot write results to {self.out}: {exc.strerror or exc}", self.out,
                            field="--out") from None
        record = self.record
        control = _ControlPath(self.tester, record.control_path)
        listeners = [c for c in (self.writer, on_event) if c is not None]

        def emit(event: ev.Event) -> None:
            if isinstance(event, ev.TrialDone):
                record.control_path = control.total()
            if self.writer is None:
                _keep(record, event)
            for listener in listeners:
                listener(event)

        # from here on the run ends through _end, whatever stops it (Ctrl-C during the estimate's
        # pilot trial included), so results.json never stays "running" and says what the DUT reported
        try:
            estimate = self.estimate()
            if estimate is not None:
                record.estimate = estimate
            emit(ev.RunStarted(tests=list(self.configs), frame_sizes=list(self.plan.sizes), target=record.target,
                               out_dir=None if self.out is None else str(self.out),
                               resumed=self._resume_note is not None, recorded_trials=len(record.trials),
                               estimate=None if estimate is None else estimate.model_dump(mode="json")))
            for note in record.notes if self._resume_note is None else [self._resume_note]:
                emit(ev.Note(text=note))
            ctx = RunContext(self.tester, emit, stop=self.stop, reset=self.reset or self._default_reset(),
                             pipeline=self.calibration.pipeline_ns if self.calibration is not None else None,
                             results={e.name: list(e.results) for e in record.tests})
            learning = self._learning()
            if learning is not None and self.configs:
                first = next(iter(self.configs.values()))
                emit(ev.LearningDone(result=run_learning(self.tester, first.model_copy(update={"learning": learning}))))
            for name, config in self.configs.items():
                ctx.test = name
                emit(ev.TestStarted(test=name, frame_sizes=list(config.frame_sizes)))
                ctx.results[name] = list(record.results_of(name))
                registry.get(name).run(ctx, config)
                emit(ev.TestDone(test=name))
        except (KeyboardInterrupt, RunStopped):
            self._end(record, control, emit, "interrupted")
            if not self.stop.is_set:
                raise
            return record
        except WriteError as exc:
            kept = self._end(record, control, emit, "failed", str(exc))
            raise RunFailed(f"{exc}; results so far are in {self.out}/ ({status_words(kept)})", self.out,
                            field="--out", kept=kept) from None
        except WirespeedError as exc:
            kept = self._end(record, control, emit, "failed", str(exc))
            where = f"{self.out}/" + ("" if kept == "failed" else f", {status_words(kept)}")
            raise RunFailed(f"{exc} (results so far are in {where})", self.out, kept=kept) from None
        try:
            self._end(record, control, emit, "complete")
        except WriteError as exc:
            kept = self._end(record, control, emit, "failed", str(exc))
            raise RunFailed(f"{exc}; every trial was measured and is in {self.out}/trials.jsonl "
                            f"({status_words(kept)})", self.out, field="--out", kept=kept) from None
        return record

    def estimate(self) -> RunEstimate | None:
        """What the run is expected to take (:mod:`wirespeed.rfc2544.estimate`): the DUT's
        forwarding from the simulated model when there is one; in simulation its pace measured
        now (None: the tester failed to answer, the run will say why)."""
        if self.tester is None:
            return None
        simulated = bool(getattr(self.tester, "is_simulation", False))
        dut = DutHint.from_dut(getattr(self.tester, "dut", None))
        first = next(iter(self.configs.values()), None)
        try:
            pace = measure_pace(self.tester, pilot_trial(self.tester, first, dut)) if simulated else Pace()
        except (WirespeedError, ValueError):     # the run itself will say what is wrong
            return None
        learning = self._learning()
        return estimate_configs(self.configs, dut, pace, learning if hasattr(learning, "settle_ns") else None)

    def _end(self, record: RunRecord, control: _ControlPath, emit: Callable[[ev.Event], None], status: Status,
             error: str | None = None) -> str:
        """End the run ``status``: what the record learns at the end (the control path's
        totals; in a simulation the DUT model's own counters, best effort), written; then the
        RunDone event. Returns the status results.json holds (WriteError for a complete run
        that cannot be written)."""
        record.control_path = control.total()
        if self.tester is not None and getattr(self.tester, "dut_probe", None) is not None:
            try:
                record.dut_model = self.tester.dut_counters()
            except WirespeedError:
                pass
        state_probe = getattr(self.tester, "dut_state_probe", None) if self.tester is not None else None
        if state_probe is not None:
            try:
                record.dut_state = state_probe() or None
            except (OSError, RuntimeError, ValueError):     # best effort, as the model's counters
                pass
        kept = self.writer.finish(status, error) if self.writer is not None else status
        emit(ev.RunDone(status=status, error=error, out_dir=None if self.out is None else str(self.out)))
        return kept

    def _default_reset(self) -> Callable[[], None] | None:
        if "reset" not in self.configs:
            return None
        hook = getattr(self.configs["reset"], "hook", None)
        if hook:
            from .rfc2544.suite.reset import hook_command
            return hook_command(hook)
        action: Callable[[], None] = self.tester.reset_action()
        return action

    def __iter__(self) -> Iterator[ev.Event]:
        """The run's events as they come, the run working in a thread; leaving the loop early
        stops the run after the trial in progress."""
        events: queue.Queue[Any] = queue.Queue()
        done = object()

        def work() -> None:
            try:
                self.execute(on_event=events.put)
            except BaseException as exc:
                events.put(_Failure(exc))
            finally:
                events.put(done)

        worker = threading.Thread(target=work, name="wirespeed-run", daemon=True)
        worker.start()
        try:
            while (item := events.get()) is not done:
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        finally:
            self.stop.set()
            worker.join()


class _Failure:
    def __init__(self, exc: BaseException):
        self.exc = exc


class _ControlPath:
    """The run's control-path counters: those of its earlier sessions (a resumed run) and this
    session's since it began."""

    def __init__(self, tester: Any, before: dict[str, int] | None):
        self.transport = getattr(tester, "transport", None)
        self.before = dict(before or {})
        self.start = self.transport.control_stats() if self.transport is not None else {}

    def total(self) -> dict[str, int] | None:
        if self.transport is None:
            return self.before or None
        now = self.transport.control_stats()
        return {k: self.before.get(k, 0) + now[k] - self.start.get(k, 0) for k in now}


def status_words(status: str) -> str:
    """What a run that ended on a write failure left in results.json, in words."""
    return (f"status {status} in results.json" if status != "running" else
            "results.json could not be rewritten and still says running: 'rfc2544 --resume' continues it")


def _keep(record: RunRecord, event: ev.Event) -> None:
    """An in-memory run's record follows its events as a writer's would."""
    if isinstance(event, ev.TrialDone):
        record.trials.append(event.result)
        record.trial_tags.append(dict(event.tags))
    elif isinstance(event, ev.SizeDone):
        entry = record.entry(event.test)
        if entry is not None:
            entry.results.append(event.result)
    elif isinstance(event, ev.LearningDone):
        record.learning = event.result.model_dump(mode="json")
    elif isinstance(event, ev.RunDone):
        record.status, record.error = event.status, event.error
        record.updated_utc = datetime.now(UTC).isoformat(timespec="seconds")

