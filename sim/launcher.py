"""Run the simulation harness as a subprocess.

    with SimProcess(parse_dut("router:rate=400k")) as sim:
        transport = EtherboneTransport(sim.host, sim.port)
        ...
    print(sim.stats["cycles_per_s"])

The harness dies with the process that started it (PR_SET_PDEATHSIG; note that Linux ties
this to the starting *thread*).

``management="uart"`` starts the UART flavour instead (:func:`~.build.ensure_uart_harness`):
the same tester and DUT models, but the registers are reached only through the gateware
``UartBridge`` (docs/management.md), its UART served over TCP with optional per-frame faults:

    with SimProcess(parse_dut("router:rate=400k"), management="uart",
                    faults=UartFaults.both("drop=20000,dup=20000")) as sim:
        transport = SerialTransport(sim.url)             # socket://127.0.0.1:PORT
        control = DutControl(EtherboneTransport(sim.host, sim.control_port))
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .build import ensure_harness
from .dut import DutSpec

__all__ = ["SimProcess", "THREADS_ENV", "UartFaults", "default_threads", "parse_exit_stats", "parse_fault_rates"]

READY_RE = re.compile(r"^WIRESPEED-SIM READY udp=(\d+)$", re.M)
READY_UART_RE = re.compile(r"^WIRESPEED-SIM READY uart=(\d+) control_udp=(\d+)$", re.M)
MANAGEMENT = ("udp", "uart")
_FAULT_KINDS = ("drop", "dup", "late", "corrupt")


def _check_rates(text: str) -> str:
    """``text`` if it is ``KIND=PPM,...`` (sim/harness/uart_link.h), each kind at most once, or
    empty (no faults); else ValueError (one line)."""
    total, seen = 0, set()
    for item in text.split(",") if text else []:
        kind, eq, value = item.partition("=")
        if not eq or kind not in _FAULT_KINDS or not value.isdigit() or int(value) > 1_000_000:
            raise ValueError(f"UART faults are KIND=PPM,... with KIND one of {', '.join(_FAULT_KINDS)} and "
                             f"PPM 0..1000000, got {item!r}")
        if kind in seen:
            raise ValueError(f"UART faults: {kind} is given twice in {text!r}; give each kind once")
        seen.add(kind)
        total += int(value)
    if total > 1_000_000:
        raise ValueError(f"UART fault rates add up to more than 1000000 ppm: {text!r}")
    return text


def parse_fault_rates(text: str) -> str:
    """``--uart-faults``: :func:`_check_rates` of at least one KIND=PPM (ValueError, one line)."""
    if not text.strip():
        raise ValueError(f"at least one KIND=PPM ({', '.join(_FAULT_KINDS)}), e.g. drop=20000,dup=20000; "
                         "leave --uart-faults out for a clean line")
    return _check_rates(text.strip())


@dataclass(frozen=True)
class UartFaults:
    """Per-frame faults on the simulated UART of the ``uart`` flavour (sim/harness/uart_link.h):
    each SLIP frame of a direction is dropped, duplicated, delivered ``late_ms`` later (wall
    clock) or has one bit flipped, at the given rates in parts per million of frames, e.g.
    ``"drop=20000,dup=20000,late=20000,corrupt=20000"`` (2 % each). ``seed`` seeds the draws."""

    to_design: str = ""
    to_host: str = ""
    seed: int = 1
    late_ms: int = 300
    skew_ppm: int = 0

    def __post_init__(self):
        _check_rates(self.to_design)
        _check_rates(self.to_host)
        if not 0 <= self.seed <= 0xFFFF_FFFF:
            raise ValueError(f"seed must be 0..4294967295, got {self.seed}")
        if not 0 <= self.late_ms <= 600_000:
            raise ValueError(f"late_ms must be 0..600000, got {self.late_ms}")
        if not -50_000 <= self.skew_ppm <= 50_000:
            raise ValueError(f"skew_ppm must be -50000..50000, got {self.skew_ppm}")

    @classmethod
    def both(cls, rates: str, **kwargs) -> UartFaults:
        """The same ``rates`` in both directions."""
        return cls(to_design=rates, to_host=rates, **kwargs)

    def harness_args(self) -> list[str]:
        args = ["--seed", str(self.seed), "--late-ms", str(self.late_ms), "--skew-ppm", str(self.skew_ppm)]
        if self.to_design:
            args += ["--to-design", self.to_design]
        if self.to_host:
            args += ["--to-host", self.to_host]
        return args
_KV_RE = re.compile(r"(\w+)=(\S+)")
_TAIL_LINES = 30


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def parse_exit_stats(stderr: str) -> dict[str, Any]:
    """Parse the harness's ``WIRESPEED-SIM`` statistics lines.

    Returns ``{"reason", "cycles", "wall_s", "cycles_per_s", "dut_a": {...}, "dut_b": {...},
    "etherbone": {...}, "model": {"parts", "threads"}}``; keys are missing for lines that
    were not printed. The UART flavour
    adds ``"faults_to_design"``, ``"faults_to_host"``, ``"link"``, ``"mgmt"`` (the gateware
    bridge's counters) and ``"control"`` (the DUT control port's Etherbone counters).
    """
    stats: dict[str, Any] = {}
    for line in stderr.splitlines():
        if not line.startswith("WIRESPEED-SIM "):
            continue
        words = line.split()
        kind = words[1] if len(words) > 1 else ""
        values = {k: _number(v) for k, v in _KV_RE.findall(line)}
        if kind == "EXIT":
            stats.update(values)
        elif kind == "ETHERBONE":
            stats["etherbone"] = values
        elif kind == "DUT" and len(words) > 3:
            values["model"] = words[3]
            stats[f"dut_{words[2]}"] = values
        elif kind == "FAULTS" and len(words) > 2:
            stats[f"faults_{words[2]}"] = values
        elif kind == "MODEL":
            stats["model"] = values
        elif kind in ("LINK", "MGMT", "CONTROL"):
            stats[kind.lower()] = values
    return stats


#: the environment variable that sets how many threads the simulation runs on (1 or 2)
THREADS_ENV = "WIRESPEED_SIM_THREADS"


def default_threads() -> int:
    """Threads for the simulated tester, which is built in two parts (:mod:`.partition`):
    ``$WIRESPEED_SIM_THREADS`` if set, else 2 where this process may use two cores or more.
    Each thread spins while it waits for the other, so runs that share the cores (a test
    suite's workers) should set 1."""
    text = os.environ.get(THREADS_ENV)
    if text is None:
        return 2 if len(os.sched_getaffinity(0)) >= 2 else 1
    if text.strip() not in ("1", "2"):
        raise ValueError(f"{THREADS_ENV} must be 1 or 2, got {text!r}")
    return int(text)


class SimProcess:
    """The simulated tester with its DUT models, serving Etherbone on ``host``:``port``.

    ``threads``: 1 or 2 (default :func:`default_threads`; given to the default flavour's
    harness, and to ``binary`` only when given).
    ``binary`` overrides the executable (default: :func:`ensure_harness`); ``extra_args``
    are appended to the harness command line (e.g. ``["--max-cycles", "1000000"]``);
    ``progress`` hears the stages of a build of the simulation, when one is needed
    (:mod:`.build`).

    ``management="uart"``: the UART flavour (:func:`~.build.ensure_uart_harness`). The tester's
    registers are then reached only through the gateware ``UartBridge`` on ``url``
    (``socket://127.0.0.1:PORT``, for :class:`~wirespeed.transport.uart.SerialTransport`;
    ``port`` is that TCP port, ``tcp_port`` chooses it, 0: any); ``faults``
    (:class:`UartFaults`, or a rates string for both directions) impairs that line. The DUT
    control window (:mod:`.control`) is not behind the bridge (its 256 KiB CSR space ends
    below it): it is served on its own Etherbone/UDP port ``control_port`` (``udp_port``
    chooses it), which answers nothing else. RTL DUTs (``--dut-rtl``) need the default
    flavour.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        dut: DutSpec,
        udp_port: int = 0,
        *,
        binary: Path | str | None = None,
        extra_args: list[str] | None = None,
        ready_timeout: float = 30.0,
        management: str = "udp",
        faults: UartFaults | str | None = None,
        tcp_port: int = 0,
        progress=None,
        threads: int | None = None,
    ):
        if threads is not None and threads not in (1, 2):
            raise ValueError(f"threads must be 1 or 2, got {threads!r}")
        if not 0 <= int(udp_port) <= 65535:
            raise ValueError(f"udp_port must be 0..65535, got {udp_port}")
        if management not in MANAGEMENT:
            raise ValueError(f"management must be one of {', '.join(MANAGEMENT)}, got {management!r}")
        if management == "uart":
            if not 0 <= int(tcp_port) <= 65535:
                raise ValueError(f"tcp_port must be 0..65535, got {tcp_port}")
            if hasattr(dut, "binary"):
                raise ValueError("an RTL DUT (--dut-rtl) needs the default management (udp), not uart")
            if isinstance(faults, str):
                faults = UartFaults.both(faults)
        elif faults is not None or tcp_port:
            raise ValueError("faults and tcp_port need management='uart'")
        self.management = management
        self.progress = progress          # build progress (wirespeed.sim.build), if a build is needed
        self.faults = faults
        self.tcp_port = int(tcp_port)
        self.control_port: int | None = None
        self.dut = dut
        self.udp_port = int(udp_port)
        self.binary = Path(binary) if binary is not None else None
        self.extra_args = list(extra_args or [])
        self.threads = threads
        self.ready_timeout = ready_timeout
        self.port: int | None = None
        self.stats: dict[str, Any] = {}
        self.stderr: str = ""
        self.returncode: int | None = None
        self._proc: subprocess.Popen | None = None
        self._out: IO[bytes] | None = None
        self._err: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def url(self) -> str | None:
        """Where the host reaches the tester's registers once started: ``udp://127.0.0.1:PORT``
        (Etherbone, default flavour) or ``socket://127.0.0.1:PORT`` (the UART flavour); for
        :func:`wirespeed.transport.open_target`."""
        if self.port is None:
            return None
        return f"{'socket' if self.management == 'uart' else 'udp'}://{self.host}:{self.port}"

    @property
    def command(self) -> list[str]:
        if self.management == "uart":
            return self._uart_command()
        threads = self.threads
        if self.binary is not None:
            binary = self.binary
        elif hasattr(self.dut, "binary"):          # a DUT built into the simulation (--dut-rtl)
            binary = self.dut.binary(progress=self.progress)
        else:
            binary = ensure_harness(progress=self.progress)
            threads = default_threads() if threads is None else threads
        return [str(binary), "--udp-port", str(self.udp_port), *self.dut.harness_args(),
                *([] if threads is None else ["--threads", str(threads)]), *self.extra_args]

    def _uart_command(self) -> list[str]:
        if self.binary is not None:
            binary = self.binary
        else:
            from .build import ensure_uart_harness

            binary = ensure_uart_harness(progress=self.progress)
        from wirespeed.gateware.uart_sim_top import UART_SIM_DIVISOR

        faults = self.faults.harness_args() if self.faults is not None else []
        return [str(binary), "--tcp-port", str(self.tcp_port), "--control-udp-port", str(self.udp_port),
                "--divisor", str(UART_SIM_DIVISOR), *self.dut.harness_args(), *faults, *self.extra_args]

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> SimProcess:
        if self._proc is not None:
            raise RuntimeError("SimProcess is not reentrant")
        cmd = self.command
        # Files, not pipes: the simulation must never block on a full pipe (e.g. $display).
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._out,
                                          stderr=self._err, close_fds=True)
        except OSError as e:
            self._close_files()
            raise RuntimeError(f"cannot start the simulation {cmd[0]}: {e}") from e
        try:
            self.port = self._wait_ready()
            self.dut.start(self._proc.pid)
        except BaseException:
            self._stop()
            raise
        return self

    def dut_state(self) -> dict[str, Any]:
        """What the DUT reports of itself now (:meth:`DutSpec.state`; {} once stopped)."""
        return self.dut.state(self._proc.pid) if self._proc is not None and self.alive() else {}

    def __exit__(self, exc_type, exc, tb) -> None:
        crashed = self._proc is not None and self._proc.poll() is not None
        self._stop()
        if crashed and exc_type is None and self.returncode != 0:
            raise RuntimeError(
                f"the simulation exited during the run (exit {self.returncode}):\n{self._tail()}"
            )

    def _read(self, f: IO[bytes] | None) -> str:
        if f is None:
            return ""
        f.flush()
        f.seek(0)
        return f.read().decode(errors="replace")

    def _tail(self) -> str:
        lines = self.stderr.splitlines()[-_TAIL_LINES:]
        return "\n".join(lines) if lines else "(no output on stderr)"

    def _wait_ready(self) -> int:
        assert self._proc is not None
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.management == "uart":
                m = READY_UART_RE.search(self._read(self._out))
                if m:
                    self.control_port = int(m.group(2))
            else:
                m = READY_RE.search(self._read(self._out))
                if m:
                    self.control_port = int(m.group(1))
            if m:
                return int(m.group(1))
            if self._proc.poll() is not None:
                self.returncode = self._proc.returncode
                self.stderr = self._read(self._err)
                raise RuntimeError(
                    f"the simulation exited before it was ready (exit {self.returncode}):\n"
                    f"{self._tail()}"
                )
            if time.monotonic() > deadline:
                self.stderr = self._read(self._err)
                raise RuntimeError(
                    f"the simulation was not ready after {self.ready_timeout:g} s:\n{self._tail()}"
                )
            time.sleep(0.01)

    def _stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.returncode = proc.returncode
        self.stderr = self._read(self._err)
        self.stats = parse_exit_stats(self.stderr)
        self._close_files()

    def _close_files(self) -> None:
        for f in (self._out, self._err):
            if f is not None:
                f.close()
        self._out = self._err = None

    def __repr__(self) -> str:
        state = f"pid={self.pid} port={self.port}" if self.alive() else "stopped"
        return f"SimProcess({self.dut}, {state})"

