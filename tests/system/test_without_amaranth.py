"""The host needs no Amaranth once a simulation is built: it reads the build's register map as
data (wirespeed.host.maps), so a throughput run on a prebuilt simulation completes with every
import of Amaranth refused, and never even tries one."""

import csv
import subprocess
import sys

from wirespeed.sim.build import ensure_harness

# Runs the command line with a finder in front of sys.meta_path that refuses Amaranth (and the
# board definitions built on it) and records each attempt; the attempts go to stderr's last line.
BLOCKED_CLI = """
import importlib.abc, sys
attempts = []
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("amaranth", "amaranth_boards"):
            attempts.append(name)
            raise ImportError(f"{name} is blocked in this test")
        return None
sys.meta_path.insert(0, Refuse())
from wirespeed.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in ("amaranth", "amaranth_boards"))
print("attempts:", attempts, "loaded:", loaded, file=sys.stderr)
sys.exit(code)
"""


def test_a_throughput_run_on_a_prebuilt_simulation_imports_no_amaranth(tmp_path):
    ensure_harness()            # the build itself elaborates the design: done here, beforehand
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", BLOCKED_CLI, "rfc2544", "--tests", "throughput", "--sizes", "64",
                           "--dut", "router:rate=400k,queue=256,latency=20us", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert last == "attempts: [] loaded: []", proc.stderr[-3000:]
    with open(out / "Throughput.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["frame_size_B"] for r in rows] == ["64"]
    # the router model serves 400,000 frames/s and queues 256 frames, which a short trial passes
    # on top (the README's run of the same DUT gives 424,854.6 frames/s at 64 bytes)
    assert 400_000 <= float(rows[0]["offered_fps"]) <= 426_000
