"""Benchmark: simulated clock cycles per wall second of the Verilated tester, in several builds
side by side: from Amaranth's own Verilog (one module per component, what the cocotb benches
use, ``amaranth``), from the flattened, optimised netlist (``wirespeed.sim.netlist``)
compiled without a profile (``netlist``) and with the profile of a training run
(``wirespeed.sim.pgo``, ``whole``), and the simulation as it is built: that netlist cut in two
parts (``wirespeed.sim.partition``), compiled with the profile, on one thread (``1 thread``)
and on two (``as built``, what a run on two free cores gets).

    python sim/bench/bench_sim_speed.py [--rounds 3] [--trial-ms 5] [--baseline REV]

The binaries come from this tree and are cached like any build (the first run builds the
others once; their build times are printed). ``--baseline REV`` adds one more: the simulation
exactly as git revision ``REV`` of this repository built it (its gateware, harness and build
flags: the sources are exported to a temporary folder and built by that revision's own
``ensure_harness``, cached under its own key). Each round measures, for each build in turn:
idle (3 wall seconds, no traffic, the host reading the cycle counter only), a trial's control
path alone (a 10 us trial with the same 100 us settle: its simulated cycles and wall time), then a
bidirectional trial at 100 % of line rate through the loopback DUT with 64-byte and with
1518-byte frames. A trial's figure is its simulated cycles over the wall time of
:meth:`Device.run_trial` (host polling included). The table shows the median of the rounds
and each build's speed-up over the Amaranth form's; all must send and receive the same
frames.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.config import NS_PER_CYCLE
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.build import MANIFEST_NAME, ensure_binary, ensure_harness, harness_key
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess, default_threads
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport

SIZES = (64, 1518)
IDLE_S = 3.0
CONTROL_TRIAL_NS = 10_000


def amaranth_form() -> Path:
    """The tester built from Amaranth's own Verilog (cached under a key of its own)."""
    from wirespeed.gateware.build import write_sim_sources

    key = hashlib.sha256(f"{harness_key()}\0form\0amaranth".encode()).hexdigest()[:32]
    return ensure_binary(key, lambda outdir: list(write_sim_sources(outdir)))


def untrained_form() -> Path:
    """The tester built from the netlist without a profile (cached under a key of its own)."""
    from wirespeed.gateware.config import SIM
    from wirespeed.sim.build import TOP_MODULE
    from wirespeed.sim.verilog_cache import write_tester_verilog

    key = hashlib.sha256(f"{harness_key()}\0form\0untrained".encode()).hexdigest()[:32]
    return ensure_binary(key, lambda outdir: list(write_tester_verilog(outdir, TOP_MODULE, SIM)))


def revision_form(rev: str) -> Path:
    """The simulation as revision ``rev`` built it: its sources exported from git and laid out
    as the installed package (``pyproject.toml``'s package-dir), its ``ensure_harness`` run by
    this Python in a child process (only the package's sources differ)."""
    repo = Path(__file__).resolve().parents[2]
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "sw", "gateware", "sim", "hw"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {rev}: git archive failed: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="ws-baseline-") as tmp:
        root = Path(tmp)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(root, filter="data")
        package = root / "sw" / "wirespeed"
        for name in ("gateware", "sim", "hw"):
            (package / name).symlink_to(root / name, target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": str(root / "sw")}
        built = subprocess.run([sys.executable, "-c", "from wirespeed.sim.build import ensure_harness; "
                                "print(ensure_harness())"], env=env, cwd=root, capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"--baseline {rev}: its build failed:\n{built.stderr[-3000:]}")
        return Path(built.stdout.strip().splitlines()[-1])


def build_seconds(binary: Path) -> float | None:
    try:
        return json.loads((binary.parent / MANIFEST_NAME).read_text())["build_seconds"]
    except (OSError, ValueError, KeyError):
        return None


def flows_of(size: int) -> list[Flow]:
    """One flow each way between the two ports, frames of ``size`` bytes."""
    return [Flow(tx_port=tx, rx_port=1 - tx, spec=flow_stream(tx, 1 - tx, size)) for tx in (0, 1)]


def trained_whole_form() -> Path:
    """The tester built from the netlist whole, with the profile (cached under a key of its own)."""
    from wirespeed.gateware.config import SIM
    from wirespeed.sim import pgo
    from wirespeed.sim.build import TOP_MODULE
    from wirespeed.sim.verilog_cache import write_tester_verilog

    key = hashlib.sha256(f"{harness_key()}\0form\0whole".encode()).hexdigest()[:32]
    return ensure_binary(key, lambda outdir: list(write_tester_verilog(outdir, TOP_MODULE, SIM)),
                         train=pgo.training_run())


def measure(binary: Path, threads: int | None, trial_ns: int,
            control: list[tuple[float, float]]) -> tuple[dict[str, float], list]:
    """Cycles per wall second idle and per trial, and each trial's received frames; appends
    the control path's (simulated cycles, wall seconds) to ``control``. ``threads``: the
    harness's ``--threads`` (None: not given)."""
    speeds, frames = {}, []
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut("loopback:delay=40ns"), binary=binary, threads=threads))
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()
        w0, s0 = time.perf_counter(), dev.now_ns()
        time.sleep(IDLE_S)
        w1, s1 = time.perf_counter(), dev.now_ns()
        speeds["idle"] = (s1 - s0) / NS_PER_CYCLE / (w1 - w0)
        # a trial's control path alone: a 10 us trial, its simulated cycles and wall seconds
        w0, s0 = time.perf_counter(), dev.now_ns()
        dev.run_trial(flows_of(SIZES[0]), line_rate_fps(SIZES[0]), CONTROL_TRIAL_NS, 100_000)
        w1, s1 = time.perf_counter(), dev.now_ns()
        control.append(((s1 - s0) / NS_PER_CYCLE, w1 - w0))
        for size in SIZES:
            w0 = time.perf_counter()
            r = dev.run_trial(flows_of(size), line_rate_fps(size), trial_ns, 100_000)
            speeds[f"{size} B"] = (trial_ns + 100_000) / NS_PER_CYCLE / (time.perf_counter() - w0)
            frames.append((size, sorted((port, c.rx_frames) for port, c in r.counters.items()), r.lost_frames))
    return speeds, frames


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds per form (default 3)")
    ap.add_argument("--trial-ms", type=float, default=5.0, help="simulated trial length (default 5)")
    ap.add_argument("--baseline", metavar="REV", help="also the simulation as git revision REV built it")
    args = ap.parse_args()
    trial_ns = int(args.trial_ms * 1e6)

    built = ensure_harness()
    # name: (binary, --threads)
    forms: dict[str, tuple[Path, int | None]] = {
        "amaranth": (amaranth_form(), None), "netlist": (untrained_form(), None),
        "whole": (trained_whole_form(), None), "1 thread": (built, 1), "as built": (built, default_threads())}
    if args.baseline:
        forms[args.baseline[:9]] = (revision_form(args.baseline), None)
    print(f"as built: {forms['as built'][1]} threads")
    for name, (binary, _) in forms.items():
        seconds = build_seconds(binary)
        print(f"{name:9} {binary}  (built in {seconds:.0f} s)" if seconds else f"{name:9} {binary}")

    runs: dict[str, list[dict[str, float]]] = {name: [] for name in forms}
    control: dict[str, list[tuple[float, float]]] = {name: [] for name in forms}
    seen: dict[str, list] = {}
    for _ in range(args.rounds):
        for name, (binary, threads) in forms.items():
            speeds, frames = measure(binary, threads, trial_ns, control[name])
            runs[name].append(speeds)
            if seen.setdefault(name, frames) != frames:
                raise SystemExit(f"{name}: a round received other frames than the first: {frames}")
    if len({repr(frames) for frames in seen.values()}) != 1:
        raise SystemExit(f"the builds received different frames: {seen}")

    columns = list(runs["netlist"][0])
    print(f"\nMcycles per wall second, median of {args.rounds} rounds "
          f"(trials: both directions at line rate, {args.trial_ms:g} ms)")
    print(f"{'form':9}" + "".join(f"{c:>10}" for c in columns))
    med = {name: {c: statistics.median(r[c] for r in rs) for c in columns} for name, rs in runs.items()}
    for name in forms:
        print(f"{name:9}" + "".join(f"{med[name][c] / 1e6:10.3f}" for c in columns))
    for name in forms:
        if name != "amaranth":
            print(f"{name[:9]:9}" + "".join(f"{med[name][c] / med['amaranth'][c]:9.2f}x" for c in columns)
                  + "  (speed-up over amaranth)")
    if args.baseline:
        base = args.baseline[:9]
        for name in ("whole", "1 thread", "as built"):
            print(f"{name:9}" + "".join(f"{med[name][c] / med[base][c]:9.2f}x" for c in columns)
                  + f"  (speed-up over {args.baseline})")
    print(f"a trial's control path (a {CONTROL_TRIAL_NS // 1000} us trial: program, clear, start, wait, "
          "counters, histograms), median:")
    for name in forms:
        cycles = statistics.median(c for c, _ in control[name])
        wall = statistics.median(w for _, w in control[name])
        print(f"{name:9}{cycles:10,.0f} simulated cycles {wall:6.2f} s")
    print("frames received per trial (size, (port, frames), lost):", seen["as built"])


if __name__ == "__main__":
    main()
