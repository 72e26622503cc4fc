"""Writing results so that a failure (a full disk, a permission, a path) loses nothing already
written and is reported in one line naming the file.

* :func:`atomic_write_text` (:func:`atomic_file` for any writer): a reader sees the old or
  the new file, whole (temporary file in the same folder, fsync, rename); on failure the
  temporary file is removed, which gives its space back. The file gets the mode any new file
  gets (0666 less the umask: 0644 under umask 022), so colleagues and a web server can read
  results.
* :func:`append_line`: one line at the end of a log file, on disk before it returns; on
  failure the file is cut back to where it was, so it never ends in half a line.
* :func:`patch_status`: the last resort when a full rewrite cannot be written: the record's
  top-level ``"status"`` value rewritten in place, in the bytes it already has (no new space
  needed), padded with spaces.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import WirespeedError

__all__ = ["WriteError", "atomic_write_text", "atomic_file", "append_line", "patch_status", "describe_os_error"]


class WriteError(WirespeedError):
    """A results file could not be written: ``path`` and why, in one line."""

    def __init__(self, path: Path, exc: OSError):
        self.path, self.reason = Path(path), describe_os_error(exc)
        super().__init__(f"cannot write {self.path}: {self.reason}")


def describe_os_error(exc: OSError) -> str:
    """``strerror`` (errno name) of an OSError, on one line."""
    import errno as errno_names

    text = exc.strerror or str(exc) or type(exc).__name__
    name = errno_names.errorcode.get(exc.errno or 0)
    return " ".join(f"{text} ({name})".split()) if name else " ".join(text.split())


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old or the new file, whole.
    Raises OSError (nothing changed at ``path``)."""
    with atomic_file(path) as f:
        f.write(text)


@contextlib.contextmanager
def atomic_file(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A new file open for writing (text, UTF-8, or ``binary``) that replaces ``path`` whole
    when the block ends, fsynced; if the block raises, ``path`` is left as it was. OSError
    when it cannot be written (nothing changed at ``path``)."""
    path = Path(path)
    fd, tmp = _new_temp(path)
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _new_temp(path: Path) -> tuple[int, Path]:
    """A temporary file beside ``path``, created as a new file is (mode 0666 less the umask;
    ``tempfile.mkstemp`` would make it 0600, and the rename keeps that)."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:     # another writer's name: draw again
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def append_line(fd: int, path: Path, line: str) -> None:
    """Append ``line`` to the file open as ``fd`` (``path``, for the message) and fsync it;
    WriteError on failure, the file cut back to its size before."""
    data = line.encode("utf-8")
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, start)     # frees what was written of the line
        except OSError:
            pass
        raise WriteError(path, exc) from None


_STATUS_KEY = b'\n  "status": "'     # the top-level key of an indent=2 record (nested keys are deeper)


def patch_status(path: Path, status: str) -> bool:
    """Set the top-level ``"status"`` of the JSON record ``path`` (written with indent=2) to
    ``status`` in place, if it fits in the bytes of the value there now; True if written."""
    try:
        with open(path, "r+b") as f:
            data = f.read()
            at = data.find(_STATUS_KEY)
            if at < 0:
                return False
            start = at + len(_STATUS_KEY)
            end = data.find(b'"', start)
            new = status.encode()
            if end < 0 or len(new) > end - start:
                return False
            f.seek(start)
            f.write(new + b'"' + b" " * (end - start - len(new)))
            f.flush()
            os.fsync(f.fileno())
        return True
    except OSError:
        return False
