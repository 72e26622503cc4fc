"""Run the simulation harness as a subprocess.

    with SimProcess(parse_dut("router:rate=400k")) as sim:
        transport = EtherboneTransport(sim.host, sim.port)
        ...
    print(sim.stats["cycles_per_s"])

The harness dies with the process that started it (PR_SET_PDEATHSIG; note that Linux ties
this to the starting *thread*).
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from .build import ensure_harness
from .dut import DutSpec

__all__ = ["SimProcess", "parse_exit_stats"]

READY_RE = re.compile(r"^WIRESPEED-SIM READY udp=(\d+)$", re.M)
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
    "etherbone": {...}}``; keys are missing for lines that were not printed.
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
    return stats


class SimProcess:
    """The simulated tester with its DUT models, serving Etherbone on ``host``:``port``.

    ``binary`` overrides the executable (default: :func:`ensure_harness`); ``extra_args``
    are appended to the harness command line (e.g. ``["--max-cycles", "1000000"]``).
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
    ):
        if not 0 <= int(udp_port) <= 65535:
            raise ValueError(f"udp_port must be 0..65535, got {udp_port}")
        self.dut = dut
        self.udp_port = int(udp_port)
        self.binary = Path(binary) if binary is not None else None
        self.extra_args = list(extra_args or [])
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
    def command(self) -> list[str]:
        if self.binary is not None:
            binary = self.binary
        elif hasattr(self.dut, "binary"):          # a DUT built into the simulation (--dut-rtl)
            binary = self.dut.binary()
        else:
            binary = ensure_harness()
        return [str(binary), "--udp-port", str(self.udp_port), *self.dut.harness_args(),
                *self.extra_args]

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
        except BaseException:
            self._stop()
            raise
        return self

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
            m = READY_RE.search(self._read(self._out))
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

