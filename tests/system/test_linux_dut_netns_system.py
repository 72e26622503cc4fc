"""``--dut tap:netns=PATH,if0=..,if1=..``: the simulated tester's two TAP-facing ports in a network
namespace the user built. The test builds one (``ip netns add``) and deletes it; wirespeed must
attach to the TAPs it finds there and leave them, create the ones missing and remove those,
and never delete the namespace."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from wirespeed.cli import main
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.sim.netns import unavailable

WHY = unavailable() or (None if os.geteuid() == 0 else "entering a namespace of ip netns add needs root")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=f"Linux DUT: {WHY}")]

FAST = ["--tests", "throughput", "--bidirectional", "--trial-duration", "1ms", "--calibration", "none",
        "--latency-trials", "0", "--wait", "200us", "--settle", "200us"]


def _ip(ns: str, *args: str) -> str:
    r = subprocess.run(["ip", "-n", ns, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _links(ns: str) -> dict[str, dict]:
    return {link["ifname"]: link for link in json.loads(_ip(ns, "-j", "link", "show"))}


@pytest.fixture
def lab():
    """A namespace of the test's: a bridge of two persistent TAPs t0 and t1, as a user builds it."""
    name = f"wirespeed-lab-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    try:
        _ip(name, "link", "add", "br0", "type", "bridge")
        for tap in ("t0", "t1"):
            _ip(name, "tuntap", "add", "dev", tap, "mode", "tap")
            _ip(name, "link", "set", tap, "master", "br0")
            _ip(name, "link", "set", tap, "up")
        _ip(name, "link", "set", "br0", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], timeout=30)


def test_a_bridge_in_the_users_namespace_forwards_and_is_left_as_built(lab, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["rfc2544", *FAST, "--sizes", "64", "--dut", f"tap:netns=/run/netns/{lab},if0=t0,if1=t1",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    (r,) = record["tests"][0]["results"]
    assert r["pct_line_rate"] == pytest.approx(100.0)
    assert all(t["lost_frames"] == 0 for t in record["trials"] if t["passed"])
    assert record["dut"]["netns"] == f"/run/netns/{lab}" and record["dut"]["taps"] == ["t0", "t1"]
    links = {link["ifname"]: link for link in record["dut_state"]["links"]}
    assert links["t0"]["stats64"]["rx"]["packets"] >= sum(t["tx_frames"] for t in record["trials"]) // 2
    # the user's TAPs, bridge and namespace are still there, as built
    assert Path(f"/run/netns/{lab}").exists()
    after = _links(lab)
    assert after["t0"].get("master") == after["t1"].get("master") == "br0"


def test_taps_missing_from_the_namespace_are_created_up_and_removed(lab):
    with SimProcess(parse_dut(f"tap:netns=/run/netns/{lab},if0=n0,if1=n1")):
        during = _links(lab)
        assert "UP" in during["n0"]["flags"] and "UP" in during["n1"]["flags"]
    after = _links(lab)
    assert "n0" not in after and "n1" not in after
    assert {"t0", "t1", "br0"} <= set(after) and Path(f"/run/netns/{lab}").exists()
