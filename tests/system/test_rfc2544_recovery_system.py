"""RFC 2544 26.5 system recovery and 26.6 reset (RFC 6201), bidirectional and multi-flow
traffic, through the whole chain (CLI -> search -> driver -> Etherbone -> Verilated gateware
-> simulated router), against figures derived from the router model's rules
(sim/harness/dut_router.h, dut_reset.h), not from a previous run.

Recovery: the router collapses to ``collapse`` fps when an overload overflows its queue and
serves at ``rate`` again from the first service that starts ``recover`` or more after the last
frame that came faster than ``rate``: the last fast frame is the last one sent before
timestamp A. Until then the queue stays full (the collapsed service is slower than the reduced
load) and arrivals are dropped; the collapsed service under way at ``recover`` still takes up
to 1 / ``collapse``; after it the queue drains and nothing more is lost. So the DUT's last drop
falls between A + ``recover`` and A + ``recover`` + 1 / ``collapse``, and the measured B - A
(the transmit time of the last frame lost) is within one frame time of the reduced rate of it.

Reset: ``reboot=TIME`` takes the router down for TIME and loses what it held. The router is
backlogged (offered above ``rate``), so its frames leave 1 / rate apart: the last one received
before the reset started at most 1 / rate before it, and one frame's wire time more when the
reset cut the frame being sent (a cut frame fails its FCS and is not received). The first frame
after starts at most one offered period after the router is back, arrives a wire time later
(store and forward: at its last byte), and leaves a service (1 / rate) and ``latency`` after
that. So the longest receive gap is TIME + 1 / rate + latency, plus at most 1 / rate + two
frames' wire times + one offered period (:func:`reset_time_bounds`); where in that range it
falls depends on when the reset lands.
"""

import csv
import json

import pytest
from records import results

from wirespeed.cli import main

pytestmark = pytest.mark.slow

RATE, QUEUE, LATENCY_NS = 400_000, 64, 2_000
RECOVER_NS, REBOOT_NS, COLLAPSE = 500_000, 1_000_000, 100_000
DUT = (f"router:rate={RATE},queue={QUEUE},latency={LATENCY_NS // 1000}us,collapse={COLLAPSE},"
       f"recover={RECOVER_NS // 1000}us,reboot={REBOOT_NS // 1_000_000}ms")


def reset_time_bounds(frame_size, offered_fps, *, rate=RATE, latency_ns=LATENCY_NS, reboot_ns=REBOOT_NS):
    """(lowest, highest) reset time in ns the router model gives (module docstring), with a
    clock cycle (8 ns) of rounding at each end of the gap."""
    expected = reboot_ns + 1e9 / rate + latency_ns
    wire_ns = (frame_size + 8) * 8          # preamble and SFD included
    return expected - 8, expected + 1e9 / rate + 2 * wire_ns + 1e9 / offered_fps + 16


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def recovery_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("recovery")
    code = main(["rfc2544", "--tests", "throughput,system-recovery,reset", "--sizes", "64", "--dut", DUT,
                 "--calibration", "none", "--latency-trials", "0", "--json", "--out", str(out)])
    assert code == 0
    return out, json.loads((out / "results.json").read_text())


def test_system_recovery_time_is_the_models_recover_delay(recovery_run):
    out, record = recovery_run
    (result,) = results(record, "system-recovery")
    (trial,) = result["trials"]
    throughput = results(record, "throughput")[0]["throughput_fps"]
    assert trial["overload_fps"] == pytest.approx(1.1 * throughput)
    period_ns = 1e9 / trial["reduced_fps"]
    assert trial["recovered"] and trial["lost_overload"] > 0 and trial["lost_reduced"] > 0
    assert RECOVER_NS - period_ns <= trial["recovery_ns"] <= RECOVER_NS + 1e9 / COLLAPSE + period_ns
    table = rows(out / "System_Recovery.csv")
    assert [r["repetition"] for r in table] == ["1", "mean"]
    assert float(table[1]["recovery_time_us"]) == pytest.approx(trial["recovery_ns"] / 1e3, abs=1e-3)


def test_reset_time_is_the_models_down_time_plus_refill(recovery_run):
    out, record = recovery_run
    (trial,) = results(record, "reset")[0]["trials"]
    period_ns = 1e9 / trial["rate_fps"]
    low, high = reset_time_bounds(64, trial["rate_fps"])
    assert low <= trial["reset_ns"] <= high
    assert trial["first_after_ns"] - trial["last_before_ns"] == trial["reset_ns"]
    # RFC 6201 frame-loss method: the frames lost while down (and those the reset cut) at the offered rate
    assert trial["frames_lost"] * period_ns == pytest.approx(trial["loss_reset_ns"])
    assert REBOOT_NS <= trial["loss_reset_ns"] <= REBOOT_NS + (QUEUE + 2) * 1e9 / RATE
    assert trial["trigger"] == "simulated DUT control window"
    table = rows(out / "Reset.csv")
    assert [r["repetition"] for r in table] == ["1", "mean"]


def test_reset_needs_a_dut_that_can_reboot(tmp_path, capsys):
    code = main(["rfc2544", "--tests", "throughput,reset", "--sizes", "1518", "--dut", "loopback",
                 "--calibration", "none", "--latency-trials", "0", "--learning-frames", "0",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and "reboot=TIME" in err[-1] and err[-1].startswith("wirespeed: error: run:")
    record = json.loads((tmp_path / "results.json").read_text())
    # kept what it measured
    assert record["status"] == "failed" and results(record, "throughput")[0]["throughput_fps"] > 0


def test_bidirectional_many_flows_throughput_per_direction(tmp_path):
    code = main(["rfc2544", "--tests", "throughput", "--sizes", "64", "--bidirectional", "--flows", "10x4",
                 "--dut", f"router:rate={RATE},queue=16", "--calibration", "none", "--latency-trials", "0",
                 "--json", "--out", str(tmp_path)])
    assert code == 0
    record = json.loads((tmp_path / "results.json").read_text())
    (result,) = results(record, "throughput")
    # each direction has its own router at RATE; 16 queued frames over a 10 ms trial add 1,600 fps
    assert RATE <= result["throughput_fps"] <= RATE + 1_600 + result["resolution_fps"]
    best = result["best"]
    for port in ("0", "1"):
        assert best["counters"][port]["tx_frames"] == best["counters"][port]["rx_frames"] > 0
    specs = [flow["spec"] for flow in best["flows"]]
    # results format 2: a flow is its StreamSpec, its 10 x 4 IPv4 flows the address walks
    walks = [[(m["field"], m["mode"], m["count"]) for m in s["modifiers"]] for s in specs]
    assert walks == [[("src_ip", "increment", 10), ("dst_ip", "increment", 4)]] * 2
    assert any("bidirectional" in n for n in record["notes"]) and any("40 IPv4 flows" in n for n in record["notes"])
