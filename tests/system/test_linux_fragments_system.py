"""IP fragments through the Linux kernel as the DUT (``--dut linux-router:mtu=N``): the kernel
fragments each test packet longer than the egress MTU (the tester's IPv4 header leaves DF
clear); the last fragment ends with the packet's signature, and the analyzer counts every
fragment in ``fragment_frames``, none as a received test frame, so the loss is exact."""

import json

import pytest
from records import snmp

from wirespeed.cli import main
from wirespeed.gateware import frame as F
from wirespeed.sim.netns import unavailable

WHY = unavailable()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=f"Linux DUT: {WHY}")]

SIZE, MTU = F.MAX_FRAME, 1000


def _fragments(size: int, mtu: int) -> int:
    """Fragments of the IPv4 packet of a ``size``-byte Appendix C frame on an ``mtu``-byte link
    (RFC 791: every fragment's data but the last a multiple of 8 bytes)."""
    data = size - F.ETH_HDR - F.FCS - F.IPV4_HDR
    per_fragment = (mtu - F.IPV4_HDR) // 8 * 8
    return -(-data // per_fragment)


def test_fragmented_test_frames_are_counted_apart_and_lost(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["rfc2544", "--tests", "frame-loss", "--loss-points", "100", "--sizes", str(SIZE),
                 "--trial-duration", "1ms", "--calibration", "none", "--wait", "200us", "--settle", "200us",
                 "--dut", f"linux-router:mtu={MTU}", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    (t,) = record["trials"]
    fragments = _fragments(SIZE, MTU)
    assert fragments == 2
    # no test frame arrived whole: 100 % loss, though every packet's last fragment carries its signature
    assert t["tx_frames"] > 0 and t["rx_frames"] == 0 and t["lost_frames"] == t["tx_frames"]
    assert t["loss_pct"] == pytest.approx(100.0)
    rx = t["counters"]["1"]
    assert rx["rx_frames"] == 0 and rx["fcs_errors"] == 0 and rx["lat_max"] == 0
    assert rx["fragment_frames"] == fragments * t["tx_frames"]
    # the kernel's own account, over the whole run: the learning frames (of the same size) too
    learning = sum(record["learning"]["learning_frames"].values())
    ip = snmp(record, "Ip")
    assert ip["FragOKs"] == t["tx_frames"] + learning and ip["FragFails"] == 0
    assert ip["FragCreates"] == fragments * ip["FragOKs"]
