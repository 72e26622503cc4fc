"""RFC 2544 26.4 back-to-back and 26.3 frame loss rate through the whole chain (CLI -> search
-> driver -> Etherbone -> Verilated gateware -> simulated router), checked against figures
derived from the router model's rules (sim/harness/dut_router.h), not from a previous run.

The router, for a burst at line rate from idle: frames arrive every T = L + 20 cycles (8 ns
cycles, one byte each) and each service takes clk / R cycles, back to back from the first
arrival; so when frame i (0-based) arrives, frames 0 .. floor(i * T * R / clk) have started
service and i - 1 - floor(i * T * R / clk) are waiting. Frame i is dropped when Q are already
waiting, i.e. at the first i with i - floor(i * T * R / clk) > Q; the longest loss-free burst
is that i. With R >= the line rate no queue ever builds: every burst passes.

Over a trial of N frames offered at r > R frames/s, the server is busy from the first arrival:
by the last arrival, (N - 1) / r later, floor((N - 1) * R / r) + 1 frames have started service
and the queue holds Q more; every later arrival was dropped, so the DUT forwards
min(N, floor((N - 1) * R / r) + 1 + Q) (within a frame: the generator's arrivals are whole
cycles)."""

import json
import math

import pytest
from records import names, results

from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps

pytestmark = pytest.mark.slow

CLK = 125_000_000


def analytic_back_to_back(size: int, rate: int, queue: int) -> int | None:
    """The longest loss-free burst at line rate (None: unbounded, the router keeps up)."""
    cycles = size + 20
    if cycles * rate >= CLK:
        return None
    i = 0
    while True:
        i += 1
        if i - (i * cycles * rate) // CLK > queue:
            return i


def analytic_forwarded(sent: int, offered_fps: float, rate: int, queue: int) -> int:
    return min(sent, math.floor((sent - 1) * rate / offered_fps) + 1 + queue)


def test_analytic_back_to_back_values():
    assert analytic_back_to_back(64, 400_000, 16) == 22      # about (Q + 1) / (1 - R / line rate) = 23.2
    assert analytic_back_to_back(128, 400_000, 16) == 31
    assert analytic_back_to_back(1518, 400_000, 16) is None


def test_back_to_back_against_the_router_model(tmp_path, capsys):
    rate, queue, cap = 400_000, 16, 200
    code = main(["rfc2544", "--target", "sim", "--dut", f"router:rate={rate},queue={queue},latency=2us",
                 "--tests", "back-to-back,throughput", "--sizes", "64,128,1518", "--trial-duration", "2ms",
                 "--resolution", "1", "--wait", "100us", "--settle", "100us", "--calibration", "none",
                 "--b2b-trials", "3", "--b2b-max-burst", str(cap), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    assert names(record) == ["throughput", "back-to-back"]
    by_size = {r["frame_size"]: r for r in results(record, "back-to-back")}
    throughput = {r["frame_size"]: r["throughput_fps"] for r in results(record, "throughput")}
    for size in (64, 128):
        r, expected = by_size[size], analytic_back_to_back(size, rate, queue)
        assert abs(r["mean_burst_frames"] - expected) <= 1, (size, r["mean_burst_frames"], expected)
        assert len(r["repetitions"]) == 3 and not r["capped"]
        for rep in r["repetitions"]:      # each figure is bracketed by a failure one frame longer
            assert rep["converged"] and rep["failed_frames"] == rep["burst_frames"] + 1
        line = line_rate_fps(size)
        assert r["throughput_fps"] == throughput[size]
        assert r["implied_buffer_time_s"] == pytest.approx(r["mean_burst_frames"] / line)
        # RFC 9004's corrected buffer time, in frames at line rate, is the router's queue (Q
        # waiting + 1 in service) within the rounding of the burst and the throughput search
        assert r["corrected_buffer_time_s"] * line == pytest.approx(queue + 1, abs=2)
    large = by_size[1518]      # 81,274 frames/s at line rate: below the router's rate, never loses
    assert large["capped"] and large["mean_burst_frames"] == cap and large["trials"] == 3
    # every burst trial in trials.jsonl with its burst; the files were written
    lines = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    bursts = [line for line in lines if line["test"] == "back-to-back"]
    assert sum(r["trials"] for r in by_size.values()) == len(bursts)
    assert all(line["tx_frames"] == line["burst_frames"] for line in bursts)
    rows = (tmp_path / "Back_to_Back.csv").read_text().splitlines()
    assert rows[0].startswith("frame_size_B,mean_burst_frames,") and len(rows) == 4
    assert "b2b rep" in err


def test_frame_loss_against_the_router_model(tmp_path, capsys):
    rate, queue = 1_000_000, 16       # 67.2 % of the 64-byte line rate
    code = main(["rfc2544", "--target", "sim", "--dut", f"router:rate={rate},queue={queue},latency=2us",
                 "--tests", "frame-loss", "--sizes", "64", "--trial-duration", "1ms", "--wait", "100us",
                 "--settle", "100us", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    loss, = results(record, "frame-loss")
    assert [p["offered_pct"] for p in loss["points"]] == [100, 90, 80, 70, 60, 50] and loss["settled"]
    for p in loss["points"]:
        trial = p["trial"]
        expected = analytic_forwarded(trial["tx_frames"], p["offered_fps"], rate, queue)
        assert abs(trial["rx_frames"] - expected) <= 1, (p["offered_pct"], trial["rx_frames"], expected)
        assert trial["tx_frames"] == math.ceil(p["offered_fps"] * 1e-3)
        assert p["loss_pct"] == pytest.approx(100 * (trial["tx_frames"] - trial["rx_frames"]) / trial["tx_frames"])
    rows = (tmp_path / "Frame_Loss.csv").read_text().splitlines()
    assert len(rows) == 7 and rows[1].startswith("64,100.000,1488095.24,")
    assert "loss trial" in err


def test_frame_loss_at_explicit_points(tmp_path, capsys):
    rate, queue = 1_000_000, 16
    code = main(["rfc2544", "--target", "sim", "--dut", f"router:rate={rate},queue={queue},latency=2us",
                 "--tests", "frame-loss", "--sizes", "64", "--trial-duration", "1ms", "--wait", "100us",
                 "--settle", "100us", "--loss-points", "66,95,72.5", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 0, err
    loss, = results(json.loads((tmp_path / "results.json").read_text()), "frame-loss")
    assert [p["offered_pct"] for p in loss["points"]] == [95, 72.5, 66]
    lost = [p["trial"]["tx_frames"] - p["trial"]["rx_frames"] for p in loss["points"]]
    for p, n in zip(loss["points"], lost):
        expected = p["trial"]["tx_frames"] - analytic_forwarded(p["trial"]["tx_frames"], p["offered_fps"], rate, queue)
        assert abs(n - expected) <= 1
    assert lost[0] > lost[1] > 0 and lost[2] == 0     # 66 % of line rate is below the router's 67.2 %
