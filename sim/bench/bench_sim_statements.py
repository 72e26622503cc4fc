"""Benchmark: the Verilated tester's statements by the instructions they cost per clock, idle.

    python sim/bench/bench_sim_statements.py [--match REGEX] [--rows 40] [--each]

Where bench_sim_profile.py samples whole blocks, this counts: the simulation built with line
information (bench_sim_profile.py's build, cached) runs idle with the loopback DUT and no host
under valgrind's callgrind for two cycle counts, each source line's instructions are added to
the statement of Verilator's C++ it belongs to, and the difference of the two runs over the
difference of their cycles is a statement's cost per clock (start-up excluded). A flip-flop's
enable test, its next value and a temporary of Verilator's DFG pass are statements of their
own, so this shows what a block computes on every clock while it is idle. Statements that
differ only in their numbers (``port0``/``port1``, ``mod3``/``mod5``, a register group's index)
are one row with their count, unless ``--each``; ``--match`` keeps the statements whose text
matches REGEX (``bank\\.``, ``gen\\.prep\\.mod``). Needs ``valgrind``; about a minute.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sim_profile import ESCAPES, PREFIX, profile_build, statements

CYCLES = (10_000, 40_000)
#: callgrind's compressed names, "(id) name" or "(id)"
NAME = re.compile(r"\((\d+)\)(?: (.*))?")


def line_costs(out: Path) -> collections.Counter:
    """(file name, line) -> instructions, from a callgrind output file (positions: line); the
    inclusive cost of calls is left out (it is counted where it is spent)."""
    names: dict[str, str] = {}
    costs: collections.Counter = collections.Counter()
    current, last, skip = "", 0, False
    for raw in out.read_text(errors="replace").splitlines():
        key, eq, value = raw.partition("=")
        if key in ("fl", "fi", "fe", "cfl", "cfi") and eq:
            m = NAME.match(value)
            if m is None:
                continue
            if m.group(2):
                names[m.group(1)] = Path(m.group(2)).name
            if key in ("fl", "fi", "fe"):
                current = names.get(m.group(1), "")
            continue
        if key == "calls" and eq:
            skip = True
            continue
        if not raw or not (raw[0].isdigit() or raw[0] in "+-*"):
            continue
        fields = raw.split()
        pos = fields[0]            # a line number, relative to the last (+N, -N) or the same (*)
        if pos != "*":
            last = last + int(pos) if pos[0] in "+-" else int(pos)
        if skip:
            skip = False
        elif len(fields) > 1:
            costs[(current, last)] += int(fields[1])
    return costs


def run(binary: Path, cycles: int, tmp: Path) -> collections.Counter:
    out = tmp / f"callgrind.{cycles}"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary),
                    "--dut", "loopback", "--max-cycles", str(cycles)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return line_costs(out)


def readable(text: str) -> str:
    text = " ".join(text.split()).replace("vlSelfRef.", "").replace(PREFIX, "")
    for code, char in ESCAPES:
        text = text.replace(code, char)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--match", default="", help="only statements whose text matches this regular expression")
    ap.add_argument("--rows", type=int, default=40, help="rows shown (default 40)")
    ap.add_argument("--each", action="store_true", help="a row per statement, not per statement shape")
    args = ap.parse_args()
    try:
        match = re.compile(args.match)
    except re.error as exc:
        raise SystemExit(f"--match: not a regular expression: {exc}") from None
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on PATH (Debian: apt install valgrind)")

    binary = profile_build()
    with tempfile.TemporaryDirectory() as tmp:
        short, long = (run(binary, n, Path(tmp)) for n in CYCLES)
    span = CYCLES[1] - CYCLES[0]
    rows: collections.Counter = collections.Counter()
    count: collections.Counter = collections.Counter()
    total = 0.0
    for f in sorted((binary.parent / "obj_dir").glob("V*.cpp")):
        lines = f.read_text().splitlines()
        for statement in statements(lines):
            cost = sum(long[(f.name, k)] - short[(f.name, k)] for k in statement) / span
            total += cost
            text = readable(" ".join(lines[k - 1] for k in statement))
            if cost <= 0 or not match.search(text):
                continue
            key = text if args.each else re.sub(r"\d+", "#", text)
            rows[key] += cost
            count[key] += 1
    shown = sum(rows.values())
    print(f"instructions per idle cycle in the model's statements: {total:,.0f}; "
          f"{shown:,.0f} in the {len(rows)} rows{' matching ' + repr(args.match) if args.match else ''}")
    print(f"{'per cycle':>10} {'count':>6}  statement")
    for key, cost in rows.most_common(args.rows):
        print(f"{cost:10.1f} {count[key]:6}  {key[:150]}")


if __name__ == "__main__":
    main()
