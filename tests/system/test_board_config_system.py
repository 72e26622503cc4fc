"""The Colorlight's tester (``BOARD_25F``: one way, port 0 sends and port 1 receives, 8
streams, one histogram, neither the ARP/ND responder nor per-stream statistics) Verilated and
driven by the unmodified CLI over its Etherbone target, as a board would be: RFC 2544
throughput and back-to-back through the simulated router, checked against figures derived
from the router model's rules (see test_rfc2544_b2b_loss_system.py), and the runs this build
cannot carry refused with one line."""

import contextlib
import json

import pytest
from test_rfc2544_b2b_loss_system import analytic_back_to_back

from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.config import BOARD_25F
from wirespeed.sim.build import ensure_harness
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess

pytestmark = pytest.mark.slow

RATE, QUEUE = 400_000, 16
DUT = f"router:rate={RATE},queue={QUEUE},latency=2us"


@pytest.fixture(scope="module")
def board_tester():
    """The URL of a simulation of the 25F build behind the router."""
    binary = ensure_harness(config=BOARD_25F)
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut(DUT), binary=binary, ready_timeout=60))
        yield sim.url


def _run(capsys, *args):
    code = main(["rfc2544", *args])
    return code, capsys.readouterr().err


def test_throughput_and_back_to_back_on_the_board_build(board_tester, tmp_path, capsys):
    code, err = _run(capsys, "--target", board_tester, "--no-learning", "--tests", "throughput,back-to-back",
                     "--sizes", "64,1518", "--trial-duration", "2ms", "--wait", "100us", "--resolution", "1",
                     "--calibration", "none", "--latency-trials", "1", "--b2b-trials", "2",
                     "--b2b-max-burst", "200", "--out", str(tmp_path))
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "complete"
    assert any(note.startswith("sequence errors not counted") for note in record["notes"])
    throughput = {r["frame_size"]: r["throughput_fps"] for r in record["results"]}
    # 64 B: the router's rate (its 16-frame queue hides up to 8 kfps more over 2 ms);
    # 1518 B: line rate, above which nothing is offered
    assert 0.97 * RATE <= throughput[64] <= 1.03 * RATE, throughput
    assert throughput[1518] == pytest.approx(line_rate_fps(1518), rel=0.005), throughput
    by_size = {r["frame_size"]: r for r in record["back_to_back"]}
    assert abs(by_size[64]["mean_burst_frames"] - analytic_back_to_back(64, RATE, QUEUE)) <= 1, by_size[64]
    for row in record["results"]:       # the analyzer on port 1 measured every latency past the router's 2 us
        measured = [lat for lat in row["latency"] if lat["source"] == "measured"]
        assert measured and measured[0]["frames"] > 0 and measured[0]["min_ns"] >= 2000, row["latency"]


@pytest.mark.parametrize("args, field, message", [
    (["--no-learning", "--bidirectional"], "--bidirectional", "port 1 of this gateware has no generator"),
    ([], "--learning", "built without the ARP/ND responder"),
    (["--no-learning", "--tests", "throughput,system-recovery"], "--tests",
     "built without per-stream receive statistics, which system-recovery needs"),
])
def test_what_the_board_build_cannot_carry_is_refused(board_tester, tmp_path, capsys, args, field, message):
    code, err = _run(capsys, "--target", board_tester, "--sizes", "64", "--trial-duration", "100us",
                     "--out", str(tmp_path / "r"), *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wirespeed: error: {field}: ") and message in lines[0], err
    assert not (tmp_path / "r").exists()
