"""A cache entry of the simulation build (:mod:`.build`): a folder holding the binary
:data:`BINARY_NAME` and its ``manifest.json``, which records the binary's SHA-256, so that a
binary changed or damaged since it was built (a disk error, a copy cut short) is found before
use. An entry from before manifests gets a test start (the binary must execute) and then its
manifest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

__all__ = ["BINARY_NAME", "MANIFEST_NAME", "check_entry", "write_manifest", "start_problem"]

BINARY_NAME = "wirespeed-sim"
MANIFEST_NAME = "manifest.json"
#: a binary that runs this long after ``--help`` is taken as started
_TEST_START_S = 5.0


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(folder: Path, binary: Path, key: str, seconds: float | None) -> None:
    manifest = {"key": key, "binary": binary.name, "sha256": _sha256(binary), "size": binary.stat().st_size,
                "build_seconds": None if seconds is None else round(seconds, 1)}
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{MANIFEST_NAME}.")
    with os.fdopen(fd, "w") as f:
        json.dump(manifest, f, indent=2)
    os.chmod(tmp, 0o644)
    os.replace(tmp, folder / MANIFEST_NAME)


def start_problem(binary: Path) -> str | None:
    """Why ``binary`` does not start (None: it executes; killed after a few seconds if it
    runs on), for an entry without a manifest."""
    try:
        proc = subprocess.Popen([str(binary), "--help"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
    except OSError as exc:
        return f"it does not start: {exc.strerror or exc}"
    try:
        _, err = proc.communicate(timeout=_TEST_START_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode < 0 or proc.returncode in (126, 127):
        last = (err.decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return f"it does not start: {last}"
    return None


def check_entry(folder: Path, key: str) -> str | None:
    """Why the cache entry ``folder`` cannot be used ("missing" when there is none; None:
    good). An entry without a manifest that starts gets one."""
    binary = folder / BINARY_NAME
    if not folder.exists():
        return "missing"
    if not binary.is_file():
        return f"no {BINARY_NAME} in it"
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
    except FileNotFoundError:
        problem = start_problem(binary)
        if problem is None:
            try:
                write_manifest(folder, binary, key, None)
            except OSError:
                pass            # a read-only cache: checked by a test start each time
        return problem
    except (OSError, ValueError):
        return f"its {MANIFEST_NAME} is unreadable"
    try:
        digest = _sha256(binary)
    except OSError as exc:
        return f"its binary cannot be read: {exc.strerror or exc}"
    if not isinstance(manifest, dict) or manifest.get("sha256") != digest:
        return (f"its binary changed since it was built (sha256 {digest[:12]}..., built "
                f"{str(manifest.get('sha256', '?'))[:12] if isinstance(manifest, dict) else '?'}...)")
    return None
