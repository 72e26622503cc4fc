"""Benchmark: where the Verilated tester's time goes, per gateware block.

    python sim/bench/bench_sim_profile.py [--depth 3] [--idle-s 4] [--trial-ms 10] [--rows 30]

Builds the simulation from this tree's netlist form with debug line information (``-g``
changes no generated code; kept under ``<cache>/sim/profile-<key>`` with its C++), then
samples it with ``perf`` (needs ``perf`` on PATH and ``perf_event_paranoid`` allowing it) in
two workloads: the idle tester (host connected, no traffic) and a bidirectional 64-byte trial
at 100 % of line rate through the loopback DUT.

Each sample's source line in Verilator's C++ is charged to the gateware signal its statement
assigns (Verilator keeps the hierarchical names of the flattened netlist: ``port0.gen.sched``).
A statement that assigns one of Verilator's temporaries (a subexpression it computes apart,
on every clock) is charged to the block whose signals it reads most; Yosys's anonymous wires
are charged to the next named statement, which is the one that uses them. Both ports are
summed (``portN``) unless ``--per-port``. Rows: share of the simulation process's samples;
"Verilator runtime" is the inlined library (wide-word shifts, adds), "harness" the clock
loop, DUT models and Etherbone.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.build import BINARY_NAME, build_harness, cache_root, harness_key
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport

PREFIX = "wirespeed_sim_top__DOT__"
#: Verilator's escapes for the characters of Yosys/Amaranth names
ESCAPES = (("__02e", "."), ("__024", "$"), ("__05c", "\\"), ("__03a", ":"))
ASSIGN = re.compile(r"\s*(?:vlSelfRef|vlSelf->)\.?(\w+)")
#: a statement that assigns one of Verilator's temporaries (a subexpression it keeps apart)
TEMPORARY = re.compile(r"\s*(?:vlSelfRef\.|vlSelf->)?__V(?!dly)\w*\s*=")
READ = re.compile(r"(?:vlSelfRef\.|vlSelf->)(\w+)")
HARNESS_FILES = re.compile(r"^(dut_\w+|sim_harness|etherbone|main|udp_server|uart_link|gmii)\.(h|cpp)$")


def profile_build() -> Path:
    """The netlist-form simulation with line information, built once per source key."""
    folder = cache_root() / f"profile-{harness_key()}"
    binary = folder / BINARY_NAME
    if binary.is_file():
        return binary
    from wirespeed.sim.netlist import write_sim_verilog

    cache_root().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".profile-", dir=cache_root()))
    try:
        print(f"building the profiling simulation in {folder} (a few minutes)", flush=True)
        build_harness(write_sim_verilog(tmp / "verilog"), tmp, cflags="-g")
        for f in (tmp / "obj_dir").iterdir():     # keep the C++ the line numbers refer to
            if f.suffix not in (".cpp", ".h"):
                f.unlink()
        os.rename(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return binary


def signal_name(mangled: str) -> str:
    name = re.sub(r"^__Vdly(Set|Val)?__", "", mangled)
    if not name.startswith(PREFIX):
        return ""
    name = name[len(PREFIX):]
    for code, char in ESCAPES:
        name = name.replace(code, char)
    return name


def block_of(name: str, depth: int, per_port: bool) -> str | None:
    """The component a signal belongs to: ``port0.gen.sched.dues`` -> ``portN.gen.sched``
    (at most ``depth`` levels); None for an anonymous wire."""
    name = name.replace("$flatten\\", "").replace("\\", "")
    if "__DOT__" in name:               # the LiteEth MAC keeps its Migen hierarchy
        name = name.split("__DOT__")[0]
    parts = [p for p in name.split(".") if p and not p.startswith("$") and not re.fullmatch(r"_\d+_", p)]
    if not parts or name.startswith("$auto"):
        return None
    if not per_port:
        parts[0] = re.sub(r"^port\d+$", "portN", parts[0])
    return ".".join(parts[:-1][:depth]) or "(top level)"


def most_read(text: str, depth: int, per_port: bool) -> str | None:
    """The block whose signals the C++ ``text`` reads most often."""
    blocks = collections.Counter(block_of(signal_name(name), depth, per_port) for name in READ.findall(text))
    blocks.pop(None, None)
    return blocks.most_common(1)[0][0] if blocks else None


def statements(lines: list[str]):
    """The line numbers (from 1) of each statement of Verilator's C++ ``lines``: up to a line
    that ends one (``;``, ``{`` or ``}``)."""
    statement: list[int] = []
    for n, line in enumerate(lines, 1):
        statement.append(n)
        if line.strip().endswith((";", "{", "}")):
            yield statement
            statement = []


def line_owners(obj_dir: Path, depth: int, per_port: bool) -> dict[tuple[str, int], str]:
    """(file, line) of the model's C++ -> the block whose signal that statement assigns; a
    statement that assigns a Verilator temporary -> the block it reads most."""
    owners: dict[tuple[str, int], str] = {}
    for f in sorted(obj_dir.glob("V*.cpp")):
        pending: list[int] = []
        lines = f.read_text().splitlines()
        for statement in statements(lines):
            first = lines[statement[0] - 1]
            m = ASSIGN.match(first)
            target = block_of(signal_name(m.group(1)), depth, per_port) if m else None
            if target is None and TEMPORARY.match(first) is not None:
                target = most_read(" ".join(lines[k - 1] for k in statement), depth, per_port)
            if target is None:
                pending += statement
            else:
                for k in pending + statement:
                    owners[(f.name, k)] = target
                pending = []
        for k in pending:
            owners[(f.name, k)] = "(temporaries at function end)"
    return owners


@contextlib.contextmanager
def perf_record(pid: int, out: Path):
    proc = subprocess.Popen(["perf", "record", "-q", "-F", "1999", "-o", str(out), "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)                      # perf attaches before the workload starts
    if proc.poll() is not None:
        raise SystemExit(f"perf record failed: {proc.stderr.read().strip() if proc.stderr else ''}")
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait()


def shares(data: Path, owners: dict[tuple[str, int], str]) -> collections.Counter:
    out = subprocess.run(["perf", "report", "-i", str(data), "--comm", BINARY_NAME, "--no-children",
                          "--sort", "srcline", "--stdio", "-q", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    counts: collections.Counter = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?):(\d+)\s*$", line)
        if not m:
            m2 = re.match(r"\s*([\d.]+)%", line)
            if m2:
                counts["(no line: system, libc)"] += float(m2.group(1))
            continue
        pct, fname, n = float(m.group(1)), Path(m.group(2)).name, int(m.group(3))
        if (fname, n) in owners:
            counts[owners[(fname, n)]] += pct
        elif fname.startswith("verilated"):
            counts["(Verilator runtime)"] += pct
        elif HARNESS_FILES.match(fname):
            counts["(harness, DUT model, Etherbone)"] += pct
        else:
            counts["(no line: system, libc)"] += pct
    total = sum(counts.values()) or 1.0
    return collections.Counter({k: 100.0 * v / total for k, v in counts.items()})


def profile(binary: Path, owners, idle_s: float, trial_ns: int, tmp: Path) -> tuple[dict, dict]:
    result, speed = {}, {}
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut("loopback:delay=40ns"), binary=binary))
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()
        pid = sim.pid
        with perf_record(pid, tmp / "idle.data"):
            w0, s0 = time.perf_counter(), dev.now_ns()
            time.sleep(idle_s)
            w1, s1 = time.perf_counter(), dev.now_ns()
        speed["idle"] = (s1 - s0) / 8 / (w1 - w0)
        flows = [Flow(tx_port=tx, rx_port=1 - tx, spec=flow_stream(tx, 1 - tx, 64)) for tx in (0, 1)]
        with perf_record(pid, tmp / "trial.data"):
            w0 = time.perf_counter()
            dev.run_trial(flows, line_rate_fps(64), trial_ns, 100_000)
            speed["64 B both ways"] = (trial_ns + 100_000) / 8 / (time.perf_counter() - w0)
    result["idle"] = shares(tmp / "idle.data", owners)
    result["64 B both ways"] = shares(tmp / "trial.data", owners)
    return result, speed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=3, help="hierarchy levels per row (default 3)")
    ap.add_argument("--idle-s", type=float, default=4.0, help="wall seconds sampled idle (default 4)")
    ap.add_argument("--trial-ms", type=float, default=10.0, help="simulated 64-byte trial (default 10)")
    ap.add_argument("--rows", type=int, default=30, help="rows shown (default 30)")
    ap.add_argument("--per-port", action="store_true", help="a row per port instead of both summed")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("bench_sim_profile: perf is not on PATH (Debian: apt install linux-perf)")

    binary = profile_build()
    owners = line_owners(binary.parent / "obj_dir", args.depth, args.per_port)
    with tempfile.TemporaryDirectory() as tmp:
        result, speed = profile(binary, owners, args.idle_s, int(args.trial_ms * 1e6), Path(tmp))

    columns = list(result)
    print("\nshare of the simulation's samples, % (Mcycles per wall second: "
          + ", ".join(f"{c} {speed[c] / 1e6:.3f}" for c in columns) + ")")
    rows = sorted(set().union(*result.values()), key=lambda k: -result[columns[-1]].get(k, 0.0))
    width = max(len(r) for r in rows[:args.rows])
    print(f"{'block':{width}}" + "".join(f"{c:>16}" for c in columns))
    for r in rows[:args.rows]:
        print(f"{r:{width}}" + "".join(f"{result[c].get(r, 0.0):16.1f}" for c in columns))
    rest = rows[args.rows:]
    if rest:
        print(f"{f'({len(rest)} more rows)':{width}}"
              + "".join(f"{sum(result[c].get(r, 0.0) for r in rest):16.1f}" for c in columns))


if __name__ == "__main__":
    sys.exit(main())
