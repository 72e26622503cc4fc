"""Benchmark: CPU seconds (user + system, the process and its children) of cold simulation
builds, each in a fresh process, in a fresh cache folder (``WIRESPEED_CACHE``):

* the default simulation with nothing cached (what the first build of a CI run costs);
* then, in the same cache, a board preset's (``BOARD_25F``) and the ``--dut-rtl`` example's
  (tests/sim/rtl), which find the Verilator runtime and harness objects and, for the
  ``--dut-rtl`` build, the tester's netlist already made;
* and ``BOARD_25F`` again in a second, empty cache (what it costs without them).

CPU time, not wall time: the machine is shared. Usage: ``python sim/bench/bench_build_cost.py``
(about 6 CPU-minutes)."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RTL = Path(__file__).resolve().parents[2] / "tests" / "sim" / "rtl"

CHILD = """
import json, resource, sys
from pathlib import Path
what = sys.argv[1]
if what == "rtl":
    from wirespeed.sim.dut_rtl import RtlDutSpec
    rtl = Path(sys.argv[2])
    RtlDutSpec(sources=(rtl / "pipe_line.v", rtl / "pipe_dut.v"), include_dirs=(rtl / "include",)).binary()
else:
    from wirespeed.gateware import config
    from wirespeed.sim.build import ensure_harness
    ensure_harness(config=None if what == "sim" else getattr(config, what))
r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime))
"""


def build_cpu(cache: Path, what: str) -> float:
    env = {**os.environ, "WIRESPEED_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", CHILD, what, str(RTL)], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ws-bench-") as tmp:
        shared, empty = Path(tmp) / "shared", Path(tmp) / "empty"
        rows = [
            ("default simulation, nothing cached", build_cpu(shared, "sim")),
            ("BOARD_25F after it (objects shared)", build_cpu(shared, "BOARD_25F")),
            ("--dut-rtl example after them (objects and netlist shared)", build_cpu(shared, "rtl")),
            ("BOARD_25F, nothing cached", build_cpu(empty, "BOARD_25F")),
        ]
    width = max(len(name) for name, _ in rows)
    print(f"{'build':<{width}}  CPU s")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:6.1f}")


if __name__ == "__main__":
    main()
