"""Benchmark: machine instructions per simulated clock cycle of the Verilated tester, idle.

    python sim/bench/bench_sim_instructions.py [BINARY ...] [--modifiers N [N ...]]

Wall-clock speed on a shared machine moves by tens of percent between runs; the instruction
count does not, so it tells whether a change to the gateware's form or to the build made the
model do less work. Each binary (default: the simulation as built, and the netlist without the
profile, as ``bench_sim_speed.py`` builds it) runs under ``valgrind --tool=callgrind`` with the
loopback DUT and no host for two cycle counts; the difference of the instruction totals over
the difference of the cycles is the per-cycle figure, start-up excluded. ``--modifiers``: also
the simulated tester built (with its profile, cached) with N field modifier units per port in
place of the full configuration's, for what a block costs per clock. Needs ``valgrind`` on
PATH (Debian: ``apt install valgrind``); about a minute per binary.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CYCLES = (20_000, 60_000)


def instructions(binary: Path, cycles: int) -> int:
    """Instructions callgrind counts for ``binary`` run idle for ``cycles`` clocks."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(binary),
                          "--dut", "loopback", "--max-cycles", str(cycles)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True).stderr
    found = re.search(r"Collected : (\d+)", out)
    if not found:
        raise SystemExit(f"{binary}: no instruction count in callgrind's output:\n{out[-2000:]}")
    return int(found.group(1))


def per_cycle(binary: Path) -> float:
    (n1, n2) = CYCLES
    return (instructions(binary, n2) - instructions(binary, n1)) / (n2 - n1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="*", type=Path, help="simulation binaries (default: as built, and untrained)")
    ap.add_argument("--modifiers", type=int, nargs="+", metavar="N",
                    help="also the tester with N modifier units per port (with its profile)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on PATH (Debian: apt install valgrind)")
    from wirespeed.gateware.config import SIM
    from wirespeed.sim.build import ensure_harness

    try:
        configs = [(f"{n} modifiers per port", dataclasses.replace(SIM, n_modifiers=n)) for n in args.modifiers or []]
    except ValueError as exc:
        raise SystemExit(f"--modifiers: {exc}") from None
    binaries = [("", b) for b in args.binaries]
    if not binaries and not configs:
        from bench_sim_speed import untrained_form

        binaries = [("as built", ensure_harness()), ("without the profile", untrained_form())]
    binaries += [(name, ensure_harness(config=config)) for name, config in configs]
    for name, binary in binaries:
        label = f"{name}  ({binary})" if name else str(binary)
        print(f"{per_cycle(binary):10,.0f} instructions per cycle  {label}", flush=True)


if __name__ == "__main__":
    main()
