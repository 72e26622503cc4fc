"""Object files shared between Verilator builds of the harness.

Every build of a simulation compiles the same Verilator runtime (``verilated.cpp``,
``verilated_threads.cpp``) and the same harness files (DUT models, Etherbone, UDP, UART
link) with the same flags; only the model and the file that includes it (``main.cpp``)
differ. Those shared objects are kept in ``<cache>/sim/objects/`` and copied into the next
build's object folder after Verilator has written its makefile, so that ``make`` finds them
up to date and compiles only the rest.

An object's key is a SHA-256 over the exact command ``make`` would run for it (the build
folder's path replaced by a placeholder), the compiler's ``--version``, the Verilator
version, the source file and every file of the harness folder and of the generated-headers
folder, and the environment variables ``make`` reads. A harness file is shared only when
none of its ``#include "..."`` files (followed transitively) lies outside those folders: a
file that includes the model or ``verilated.h`` is compiled in every build.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["SharedObjects", "make_list"]

#: environment variables that change what make compiles
_ENV = ("CXX", "CXXFLAGS", "CPPFLAGS", "OBJCACHE", "CCACHE_DIR", "MAKEFLAGS", "VERILATOR_ROOT")
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_OUT_RE = re.compile(r"\s-o\s+(\S+\.o)\b")


def _folder_digest(h, folders: Sequence[Path]) -> None:
    for folder in folders:
        for f in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = f.read_bytes()
            h.update(f"file\0{f.relative_to(folder).as_posix()}\0{len(data)}\0".encode() + data)


def make_list(text: str, var: str) -> list[str]:
    """The words of ``VAR += \\`` and its continuation lines in a Verilator makefile."""
    m = re.search(rf"^{var}\s*\+?=\s*\\\n((?:[ \t]+\S+[ \t]*\\\n)*)", text, re.M)
    return m.group(1).replace("\\", " ").split() if m else []


def _self_contained(source: Path, folders: Sequence[Path]) -> bool:
    """Whether every quoted include of ``source``, transitively, is a file of ``folders``
    (or of the including file's own folder inside them)."""
    seen: set[Path] = set()
    todo = [source]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for name in _INCLUDE_RE.findall(f.read_text(errors="replace")):
            found = next((d / name for d in (f.parent, *folders) if (d / name).is_file()), None)
            if found is None or not any(found.resolve().is_relative_to(d.resolve()) for d in folders):
                return False
            todo.append(found.resolve())
    return True


class SharedObjects:
    """The shareable objects of one Verilated build: :meth:`seed` before its ``make``,
    :meth:`keep` after a successful one.

    ``obj_dir``: Verilator's output folder (its makefile written); ``make``: the make command
    of the build (without targets); ``build_dir``: the build's folder (replaced in commands by a
    placeholder); ``cpp``: the build's C++ files; ``folders``: the folders a shared file may
    include from (the harness, the generated headers); ``store``: where objects are kept."""

    def __init__(self, obj_dir: Path, prefix: str, make: Sequence[str], env: dict[str, str], build_dir: Path,
                 cpp: Sequence[Path], folders: Sequence[Path], store: Path):
        self.obj_dir, self.store = Path(obj_dir), Path(store)
        self.keys: dict[str, str] = {}
        classes = (self.obj_dir / f"{prefix}_classes.mk").read_text()
        runtime = make_list(classes, "VM_GLOBAL_FAST") + make_list(classes, "VM_GLOBAL_SLOW")
        user = [Path(p) for p in cpp if _self_contained(Path(p), folders)]
        targets = [f"{name}.o" for name in runtime] + [f"{p.stem}.o" for p in user]
        if not targets:
            return
        proc = subprocess.run([*make, "-n", "-B", *targets], env=env, cwd=self.obj_dir, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            return                              # nothing shared: the build compiles everything
        commands = {}
        for line in proc.stdout.splitlines():
            out = _OUT_RE.search(line)
            if out and out.group(1) in targets:
                commands[out.group(1)] = line.replace(str(Path(build_dir).resolve()), "<build>")
        common = hashlib.sha256(b"wirespeed-objects\0")
        try:
            common.update(importlib.metadata.version("verilator").encode())
        except importlib.metadata.PackageNotFoundError:
            common.update(b"verilator absent")
        for var in _ENV:
            common.update(f"env\0{var}\0{env.get(var, '')}\0".encode())
        _folder_digest(common, folders)
        versions: dict[str, bytes] = {}
        for target, command in commands.items():
            words = shlex.split(command)
            compiler = next((w for w in words if w != "ccache"), "")
            if compiler not in versions:
                try:
                    versions[compiler] = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE,
                                                        stderr=subprocess.STDOUT, env=env, check=True).stdout
                except (OSError, subprocess.CalledProcessError):
                    continue
            source = Path(words[-1])
            if not source.is_absolute():
                source = self.obj_dir / source
            if not source.is_file():
                continue
            h = common.copy()
            h.update(b"command\0" + command.encode() + b"\0compiler\0" + versions[compiler])
            data = source.read_bytes()
            h.update(f"source\0{len(data)}\0".encode() + data)
            self.keys[target] = h.hexdigest()[:32]

    def seed(self) -> list[str]:
        """Copy the kept objects into the build's folder; the objects copied."""
        seeded = []
        for target, key in self.keys.items():
            kept = self.store / f"{key}.o"
            try:
                data = kept.read_bytes()
            except OSError:
                continue
            (self.obj_dir / target).write_bytes(data)      # mtime now: newer than the makefile
            seeded.append(target)
        return seeded

    def forget(self, targets: Sequence[str]) -> None:
        """Remove ``targets`` from the build's folder and their kept copies (a build that
        failed with them: compiled afresh on the next try)."""
        for target in targets:
            (self.obj_dir / target).unlink(missing_ok=True)
            if target in self.keys:
                (self.store / f"{self.keys[target]}.o").unlink(missing_ok=True)

    def keep(self) -> None:
        """Keep the build's shareable objects that the store lacks (each written whole)."""
        self.store.mkdir(parents=True, exist_ok=True)
        for target, key in self.keys.items():
            kept = self.store / f"{key}.o"
            built = self.obj_dir / target
            if kept.exists() or not built.is_file():
                continue
            fd, tmp = tempfile.mkstemp(dir=self.store, prefix=f".{key}.")
            with os.fdopen(fd, "wb") as f:
                f.write(built.read_bytes())
            os.chmod(tmp, 0o644)
            os.replace(tmp, kept)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m wirespeed.sim.objcache seed|keep OBJ_DIR PREFIX STORE -- MAKE...``: the
    same for a build that another tool drives (the cocotb runner's two commands), its Verilator
    runtime shared; the environment is make's."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 6 or args[0] not in ("seed", "keep") or args[4] != "--":
        print("usage: python -m wirespeed.sim.objcache seed|keep OBJ_DIR PREFIX STORE -- MAKE...", file=sys.stderr)
        return 2
    action, obj_dir, prefix, store, make = args[0], Path(args[1]), args[2], Path(args[3]), args[5:]
    shared = SharedObjects(obj_dir, prefix, make, dict(os.environ), obj_dir, [], [], store)
    if action == "seed":
        shared.seed()
    else:
        shared.keep()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
