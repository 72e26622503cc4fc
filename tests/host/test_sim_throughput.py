"""The whole chain: CLI -> RFC 2544 search -> driver -> Etherbone -> Verilated gateware ->
simulated router DUT, with the answer derived from the router model's parameters: the
command line's reference run (tests/reference.py; the simulation's default trials of 10 ms)."""

import json

import pytest
from records import results

from wirespeed.ethernet import line_rate_fps

pytestmark = [pytest.mark.slow, pytest.mark.system]

RATE, QUEUE, TRIAL_S = 400_000, 256, 0.010


def test_router_throughput_in_simulation(reference_run):
    record = json.loads((reference_run / "results.json").read_text())
    assert (record["dut"]["rate_fps"], record["dut"]["queue_frames"]) == (RATE, QUEUE)
    assert {trial["duration_ns"] for trial in record["trials"]} == {TRIAL_S * 1e9}
    small, large = results(record, "throughput")

    # Above the router's rate its queue absorbs (rate excess) * trial frames before the
    # first loss, so a zero-loss trial of 10 ms passes up to about RATE + (QUEUE + 1) / 10 ms.
    resolution = line_rate_fps(64) * 0.001
    assert RATE <= small["throughput_fps"] <= RATE + (QUEUE + 2) / TRIAL_S + resolution
    assert small["converged"] and small["best"]["lost_frames"] == 0
    assert small["best"]["tx_frames"] == pytest.approx(small["throughput_fps"] * TRIAL_S, abs=1)
    latency = small["best"]["latency"]
    assert latency["min_ns"] >= 20_000  # the router's fixed latency, plus the tester's pipeline

    # 1518-byte line rate (81,274 frames/s) is below the router's rate: one trial at 100 %.
    assert large["trials"] == 1 and large["pct_line_rate"] == 100.0

    # latency: calibrated automatically on a zero-delay loopback simulation, both definitions
    assert record["latency_calibrated"] is True and record["calibration"]["source"].startswith("automatic")
    assert record["calibration"]["pipeline_delay_ns"]["0->1"] == {"64": 200, "1518": 200}
    measured, derived = small["latency"]
    assert measured["definition"] == "bit_forwarding" and measured["source"] == "measured"
    assert measured["calibrated"] and measured["min_ns"] == latency["min_ns"] - 200
    assert derived["definition"] == "store_and_forward" and derived["min_ns"] == measured["min_ns"] - 8 * 64
    # learning phase before the first trial: each port announced itself and sent learning frames
    learning = record["learning"]
    assert learning["gratuitous_arp"] == {"0": 1, "1": 1} and learning["unsolicited_na"] == {"0": 1, "1": 1}
    assert learning["learning_frames"] == {"0": 4, "1": 4} and learning["learning_frames_received"] == {"0": 4, "1": 4}
