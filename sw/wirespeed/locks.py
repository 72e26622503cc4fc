"""Who may use a tester or a results folder: one run at a time.

Two locks keep runs from interleaving:

* the **results lock**, ``DIR/.wirespeed.lock``, held by the run writing results folder DIR
  (so two runs never write one folder);
* the **tester lock**, one per board target (``udp://HOST:PORT`` by address, ``serial://``
  by device, ``socket://`` by address), in :func:`lock_dir`, held by whatever drives the
  board: a CLI run, ``calibrate``, ``capture``, or a web appliance's run, which all take the
  same lock through :func:`tester_lock`. A ``--target sim`` run starts its own simulation,
  which is its tester alone: it needs no tester lock.

A lock is an exclusive ``flock`` on its file, which the kernel drops when the holder exits
however it ends (kill -9 included), and the file holds who took it (:class:`Holder`: pid,
host, command, results folder, since when) so that a refused run names it in one line. A
file left by a dead holder is stale: the next :meth:`Lock.acquire` takes it over. The file is
removed on release (under the lock; an acquirer checks it still locks the file at the path).

Locks are advisory and local: they keep wirespeed runs apart on one machine, with one lock
folder (set ``WIRESPEED_LOCK_DIR`` to share one between users of a lab host).

API::

    holder = Holder.current(command="wirespeed rfc2544 ...", results="results/")
    with tester_lock("udp://192.168.1.50").acquire(holder), results_lock(Path("results")).acquire(holder):
        ...
    # or lock.acquire(holder) ... lock.release(); lock.holder() tells who holds it now
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from .errors import WirespeedError

__all__ = ["Holder", "Lock", "LockBusy", "lock_dir", "tester_lock", "tester_key", "results_lock",
           "RESULTS_LOCK_NAME"]

RESULTS_LOCK_NAME = ".wirespeed.lock"


@dataclass(frozen=True)
class Holder:
    """Who holds (or asks for) a lock."""

    pid: int
    host: str
    command: str
    results: str | None = None
    since: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @classmethod
    def current(cls, command: str | None = None, results: str | Path | None = None) -> "Holder":
        """This process; ``command`` defaults to its command line."""
        text = command if command is not None else " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
        return cls(pid=os.getpid(), host=socket.gethostname(), command=text,
                   results=str(results) if results is not None else None)

    def describe(self) -> str:
        """One line: pid, host, command, results folder, since when."""
        where = f", results {self.results}" if self.results else ""
        return f"pid {self.pid} on {self.host} ('{' '.join(self.command.split())}'{where}, since {self.since})"

    def alive(self) -> bool | None:
        """Whether the holder's process still runs (None: it is on another host)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @classmethod
    def parse(cls, text: str) -> "Holder | None":
        try:
            data = json.loads(text)
            return cls(**{k: data[k] for k in ("pid", "host", "command", "results", "since")})
        except (ValueError, KeyError, TypeError):
            return None


class LockBusy(WirespeedError):
    """The lock is held by another run (``holder``; None when its file says nothing)."""

    def __init__(self, what: str, holder: Holder | None):
        self.what, self.holder = what, holder
        who = holder.describe() if holder is not None else "another process (it did not say which)"
        if holder is not None and holder.alive() is False:
            who += "; that process has ended, but one it started still holds the lock"
        super().__init__(f"{what} is in use by another run: {who}")


class Lock:
    """An exclusive lock on ``path``, for ``what`` (the words a refusal starts with, e.g.
    "results folder results/")."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = Path(path), what
        self._fd: int | None = None
        #: a stale holder found in the file when the lock was taken (its process had died)
        self.stale: Holder | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, holder: Holder) -> "Lock":
        """Take the lock for ``holder`` or raise :class:`LockBusy` naming the one that has it;
        OSError when the lock file cannot be made. Returns self (a context manager that
        releases it)."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this Lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                text = _read(fd)
                os.close(fd)
                raise LockBusy(self.what, Holder.parse(text)) from None
            except BaseException:
                os.close(fd)
                raise
            # the holder before us may have removed the file after we opened it: lock the file
            # at the path, not an orphan
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = Holder.parse(_read(fd))
        self.stale = previous if previous is not None and previous.pid != holder.pid else None
        try:
            data = json.dumps(asdict(holder)).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        except OSError:
            pass    # the lock holds without its description (a full disk): a refusal then says less
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock up and remove its file (no-op when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        os.close(fd)          # drops the flock

    def follow(self, path: Path) -> None:
        """The locked file was moved (e.g. its folder renamed) to ``path``: release removes it there."""
        self.path = Path(path)

    def holder(self) -> Holder | None:
        """Who holds the lock now (None: nobody, or a stale file of a process that ended)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return Holder.parse(_read(fd))
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 4096, 0).decode(errors="replace")
    except OSError:
        return ""


def lock_dir() -> Path:
    """Where tester locks live: ``$WIRESPEED_LOCK_DIR``, else ``${WIRESPEED_CACHE:-~/.cache/wirespeed}/locks``."""
    env = os.environ.get("WIRESPEED_LOCK_DIR")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("WIRESPEED_CACHE") or Path.home() / ".cache" / "wirespeed"
    return Path(cache).expanduser() / "locks"


def tester_key(target: str) -> str | None:
    """A file name for the board ``target`` (the same board under two spellings gets the same
    key where it can be told: the host resolved, the device path resolved); None for
    ``sim``, whose runs each have their own simulation."""
    if target == "sim":
        return None
    parts = urlsplit(target)
    if parts.scheme in ("udp", "socket"):
        host = parts.hostname or ""
        try:
            host = str(socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0])    # AF_INET: (host, port)
        except (OSError, UnicodeError):
            pass
        try:
            port = parts.port
        except ValueError:
            port = None
        ident = f"{parts.scheme}-{host}-{port or ''}"
    elif parts.scheme == "serial":
        ident = "serial-" + os.path.realpath(parts.path)
    else:
        ident = target
    return re.sub(r"[^A-Za-z0-9._-]+", "_", ident).strip("_") + ".lock"


def tester_lock(target: str) -> Lock | None:
    """The lock of the board at ``target`` (None for ``sim``)."""
    key = tester_key(target)
    return None if key is None else Lock(lock_dir() / key, f"the tester {target}")


def results_lock(out_dir: Path) -> Lock:
    """The lock of results folder ``out_dir``."""
    return Lock(Path(out_dir) / RESULTS_LOCK_NAME, f"results folder {out_dir}")
