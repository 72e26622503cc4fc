"""Runs in worker threads, one at a time per server: each is a :class:`wirespeed.Run` (or
:meth:`wirespeed.Run.resume`) on the tester the server's connector opens, writing its results
folder as the command line does; its events are kept in order for every subscriber, late ones
included (:class:`EventLog`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import WirespeedError
from ..locks import Holder, LockBusy, results_lock, tester_lock
from ..outdir import OutDirError, claim
from ..results.record import RunRecord
from ..rfc2544 import events as ev
from ..rfc2544.context import StopToken
from ..rfc2544.plan import Plan
from ..run import Run, requires
from ..traffic import PortAddress
from .archive import DRAWING
from .settings import Settings
from .store import RunStore, new_id

__all__ = ["RunManager", "Busy", "EventLog", "Handle"]


class Busy(Exception):
    """The tester is in use: by ``run`` (a run of this server) or by another process
    (``message`` names it)."""

    def __init__(self, message: str, run: str | None):
        super().__init__(message)
        self.message, self.run = message, run


class EventLog:
    """A run's events as JSON texts, in order, then the server's own last word on it
    (:meth:`close`); :meth:`follow` gives every one from the first and then each new one
    until the log is closed."""

    def __init__(self) -> None:
        self._items: list[tuple[str | None, str]] = []
        self._closed = False
        self._changed = threading.Condition()

    def append(self, text: str) -> None:
        with self._changed:
            self._items.append((None, text))
            self._changed.notify_all()

    def close(self, name: str, text: str) -> None:
        """The last item: the event ``name`` (not one of the run's), ``text`` its JSON."""
        with self._changed:
            self._items.append((name, text))
            self._closed = True
            self._changed.notify_all()

    def follow(self, keepalive_s: float = 15.0) -> Iterator[tuple[str | None, str] | None]:
        """Each item, (None, the run event's text) or (name, text) last, from the first; None
        after ``keepalive_s`` without one."""
        at = 0
        while True:
            with self._changed:
                if at == len(self._items) and not self._closed:
                    self._changed.wait(keepalive_s)
                fresh, closed = self._items[at:], self._closed
            at += len(fresh)
            yield from fresh
            if closed and not fresh:
                return
            if not fresh:
                yield None


@dataclass
class Handle:
    """A run this server started or resumed (the live part; the folder holds the rest)."""

    id: str
    folder: Path
    stop: StopToken = field(default_factory=StopToken)
    log: EventLog = field(default_factory=EventLog)
    state: str = "starting"             # starting, running, then the run's status (or failed)
    error: str | None = None
    warning: str | None = None
    thread: threading.Thread | None = None


class RunManager:
    """Starts, stops and resumes runs (see the module doc)."""

    def __init__(self, settings: Settings, store: RunStore,
                 check_resume: Callable[[Any, RunRecord], None] | None = None):
        self.settings, self.store = settings, store
        self.check_resume = check_resume
        self.handles: dict[str, Handle] = {}
        self.active: Handle | None = None
        self._other: str | None = None      # what holds the tester besides a run (see holding)
        self._lock = threading.Lock()

    def _check_free(self) -> None:
        """Busy naming what of this server holds the tester (the caller holds the lock)."""
        if self.active is not None:
            raise Busy(f"the tester is running run {self.active.id}; stop it or wait for it to end",
                       self.active.id)
        if self._other is not None:
            raise Busy(f"the tester is {self._other}; try again when that ends", None)

    @contextmanager
    def holding(self, what: str) -> Iterator[None]:
        """The tester reserved for ``what`` (not a run, e.g. "being identified") while the
        block runs; Busy when a run or another ``holding`` has it, and a run asked to start
        meanwhile gets Busy naming ``what``."""
        with self._lock:
            self._check_free()
            self._other = what
        try:
            yield
        finally:
            with self._lock:
                self._other = None

    def _reserve(self, run_id: str, folder: Path) -> Handle:
        """The tester reserved for a new handle, or Busy naming what holds it."""
        with self._lock:
            self._check_free()
            lock = tester_lock(self.settings.target)
            holder = lock.holder() if lock is not None else None
            if holder is not None:
                raise Busy(f"the tester {self.settings.target} is in use by another run: {holder.describe()}", None)
            handle = Handle(run_id, folder)
            self.active = self.handles[run_id] = handle
            return handle

    def _release(self, handle: Handle) -> None:
        with self._lock:
            if self.active is handle:
                self.active = None

    def start(self, plan: Plan, dut: Any, configs: dict[str, Any]) -> Handle:
        """A new run of ``plan`` (checked: :func:`wirespeed.cli.plans.plan_from_mapping`)."""
        run_id = new_id()
        folder = self.store.folder(run_id)
        handle = self._reserve(run_id, folder)
        try:
            held = claim(folder, self._holder(folder))
        except (OutDirError, LockBusy, OSError) as exc:
            self._release(handle)
            raise Busy(str(exc), None) from None

        def make(tester: Any) -> Run:
            return Run(plan, tester, out=folder, claimed=held, stop=handle.stop)

        self._launch(handle, held, dut, requires(configs, plan.learning_config), make, addresses=plan.addresses)
        return handle

    def resume(self, run_id: str, record: RunRecord, dut: Any, calibration: Any, note: str,
               left: dict[str, list[Any]]) -> Handle:
        """Go on with the interrupted or failed run ``run_id`` (its parts:
        :func:`wirespeed.cli.rfc2544.resume_parts`)."""
        folder = self.store.folder(run_id)
        handle = self._reserve(run_id, folder)
        try:
            held = results_lock(folder).acquire(self._holder(folder))
        except (LockBusy, OSError) as exc:
            self._release(handle)
            raise Busy(str(exc), None) from None
        todo = {name: record.parameters_of(name) for name, sizes in left.items() if sizes}
        check = self.check_resume

        def make(tester: Any) -> Run:
            if tester is not None and check is not None:
                check(tester, record)
            return Run.resume(record, tester, folder, calibration=calibration, note=note, claimed=held,
                              stop=handle.stop)

        self._launch(handle, held, dut if todo else None, requires(todo, record.learning_parameters), make,
                     need_tester=bool(todo), addresses=record.planned_addresses())
        return handle

    def stop(self, run_id: str) -> Handle | None:
        """Ask run ``run_id`` to stop after its trial in progress (None: not running here)."""
        handle = self.handles.get(run_id)
        if handle is None or handle is not self.active:
            return None
        handle.stop.set()
        return handle

    def shutdown(self) -> None:
        """The server is stopping: the run in progress ends after its trial (interrupted, resumable)."""
        handle = self.active
        if handle is not None and handle.thread is not None:
            handle.stop.set()
            handle.thread.join()

    def _report(self, handle: Handle) -> None:
        """Graphs and report.html of a complete run, as the command line writes them after a
        run; a failure is a warning of the run (its results are on disk already)."""
        from ..report import make_report

        try:
            if self.store.record(handle.id).status == "complete":
                with DRAWING:
                    make_report(handle.folder)
        except Exception as exc:            # the results stand without their report
            handle.warning = (f"no graphs or report.html ({type(exc).__name__}: {exc}); retry with "
                              f"'wirespeed report {handle.folder}'")

    def _holder(self, folder: Path) -> Holder:
        return Holder.current(command=f"wirespeed serve --data {self.settings.data}", results=folder)

    def _launch(self, handle: Handle, held: Any, dut: Any, needs: list[tuple[str, str, str]],
                make: Callable[[Any], Run], need_tester: bool = True,
                addresses: Mapping[int, PortAddress] | None = None) -> None:
        ended: list[bool] = []

        def on_event(event: ev.Event) -> None:
            if isinstance(event, ev.RunStarted):
                handle.state = "running"
                self.store.update(handle.id)
            ended.append(isinstance(event, ev.RunDone))
            handle.log.append(event.model_dump_json())

        def work() -> None:
            try:
                if not need_tester:
                    make(None).execute(on_event=on_event)
                else:
                    # a simulated router is set up for the plan's tester addresses
                    with self.settings.connector(self.settings.target, dut, requires=needs, addresses=addresses,
                                                 command=f"wirespeed serve (run {handle.id})") as tester:
                        make(tester).execute(on_event=on_event)
            except (WirespeedError, ValueError) as exc:     # RunFailed, or refused before measuring: one line
                handle.error = str(exc)
            except Exception as exc:            # the run's thread ends; the server goes on
                handle.error = f"{type(exc).__name__}: {exc}"
            finally:
                if self.settings.report and any(ended) and handle.error is None:
                    self._report(handle)
                held.release()
                row = self.store.update(handle.id)
                handle.state = row["status"] if row is not None else "failed"
                if not any(ended):      # it ended before the run could say so
                    handle.log.append(ev.RunDone(status="failed", error=handle.error).model_dump_json())
                self._release(handle)
                # after the report and the release: a page may start the next run at once
                handle.log.close("released", json.dumps({"status": handle.state, "error": handle.error,
                                                         "warning": handle.warning}))

        handle.thread = threading.Thread(target=work, name=f"wirespeed-serve-{handle.id}", daemon=True)
        handle.thread.start()
