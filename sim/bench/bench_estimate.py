"""Benchmark: a run's estimate against its wall time, on the simulated router.

Runs ``wirespeed rfc2544`` (the one installed beside this Python, the simulation built or built on first use) for
each plan below and prints, per plan, the estimate printed before the first trial (wall
seconds and trials, from results.json's ``estimate``) and the actual wall time from the
moment the estimate was printed to the command's end (graphs and report included), and the
difference. The estimate's pace is measured on the running simulation, so it holds for the
load it was made under: run it on idle cores, or read the load average it prints.

Usage: ``python sim/bench/bench_estimate.py [NAME...]`` (all plans: about 12 minutes on two idle
cores)."""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DUT = "router:rate=400000,queue=256,latency=20us"
PLANS = {
    "readme": ["--tests", "throughput", "--sizes", "64,128,256,512,1024,1280,1518"],
    "throughput-latency": ["--tests", "throughput,latency", "--sizes", "64,1518"],
    "frame-loss": ["--tests", "frame-loss", "--sizes", "64,1518", "--loss-step", "20"],
    "back-to-back": ["--tests", "back-to-back", "--sizes", "64,512", "--b2b-trials", "3"],
}


def measure(name: str, args: list[str], out: Path) -> dict[str, float | int | str]:
    cmd = [str(Path(sys.executable).with_name("wirespeed")), "rfc2544", *args,
           "--target", "sim", "--dut", DUT, "--out", str(out)]
    load = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    estimated_at = None
    assert proc.stderr is not None
    for line in proc.stderr:
        if estimated_at is None and line.lstrip().startswith("total: about"):
            estimated_at = time.monotonic()
    if proc.wait() != 0 or estimated_at is None:
        sys.exit(f"bench_estimate: {name}: the run failed (exit {proc.returncode})")
    actual = time.monotonic() - estimated_at
    record = json.loads((out / "results.json").read_text())
    estimate = record["estimate"]
    return {"plan": name, "estimate_s": round(estimate["wall_s"]), "trials_estimated": estimate["trials"],
            "actual_s": round(actual), "trials": len(record["trials"]),
            "error_pct": round(100 * (estimate["wall_s"] - actual) / actual, 1),
            "pace_ms_per_s": round(estimate["pace"]["sim_ns_per_s"] / 1e6, 3), "load_before": round(load, 2)}


def main() -> None:
    names = sys.argv[1:] or list(PLANS)
    unknown = [n for n in names if n not in PLANS]
    if unknown:
        sys.exit(f"bench_estimate: no plan {unknown[0]!r}; plans: {', '.join(PLANS)}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            print(json.dumps(measure(name, PLANS[name], Path(tmp) / name)), flush=True)


if __name__ == "__main__":
    main()
