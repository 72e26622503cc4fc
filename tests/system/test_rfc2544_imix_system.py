"""RFC 2544 with an RFC 6985 IMIX as the size (``--sizes imix:aaaaaaag``: seven 64-byte frames
then one 1518-byte frame, again and again) through the whole chain, against figures derived
from the router model's rules (sim/harness/dut_router.h): one service of 1/R s per frame
whatever its size, Q frames waiting at most (the frame in service not counted), store and
forward (a frame is there once its last byte is in).

The mix's line rate is 1e9 / 8 / (mean L + 20) = 470,366.9 frames/s (mean L = 245.75 B)."""

import json
import math
from fractions import Fraction

import pytest
from records import results
from test_rfc2544_b2b_loss_system import analytic_forwarded

from wirespeed import sizes
from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps

pytestmark = pytest.mark.slow

CLK = 125_000_000
MIX = "imix:aaaaaaag"
RATE, QUEUE, TRIAL_S = 300_000, 64, 0.002


def analytic_back_to_back(sequence, rate: int, queue: int) -> int:
    """The longest loss-free burst of ``sequence``'s sizes at minimum gap: frame i starts at
    the sum of the wire times (L + 20 cycles) before it and is in once its preamble (8) and
    L bytes are; service k starts at max(its arrival, end of service k - 1) and lasts clk / R."""
    service, start_at, free, in_service_later = Fraction(CLK, rate), 0, Fraction(0), []
    for i in range(1_000_000):
        size = sequence[i % len(sequence)]
        arrival = start_at + 8 + size
        in_service_later = [s for s in in_service_later if s > arrival]     # still waiting
        if len(in_service_later) >= queue:
            return i
        begin = max(Fraction(arrival), free)
        in_service_later.append(begin)
        free = begin + service
        start_at += size + 20
    raise AssertionError("never lost")


def analytic_throughput(rate: int, queue: int, trial_s: float, line: float) -> float:
    """The highest rate whose trial of N = ceil(r * trial_s) evenly spaced frames loses none."""
    best, r = 0.0, float(rate)
    while r <= line:
        n = math.ceil(r * trial_s)
        if analytic_forwarded(n, r, rate, queue) == n:
            best = r
        r += 10.0
    return best


def test_analytic_values():
    seq = sizes.sizes_of(MIX)
    assert analytic_back_to_back((64,), 400_000, 16) == 22        # agrees with the fixed-size formula
    assert analytic_back_to_back(seq, RATE, QUEUE) == 172
    assert 331_900 <= analytic_throughput(RATE, QUEUE, TRIAL_S, line_rate_fps(MIX)) <= 332_100


def test_imix_throughput_frame_loss_and_back_to_back(tmp_path, capsys):
    code = main(["rfc2544", "--target", "sim", "--dut", f"router:rate={RATE},queue={QUEUE},latency=2us",
                 "--tests", "throughput,frame-loss,back-to-back", "--sizes", MIX, "--trial-duration", "2ms",
                 "--resolution", "1", "--wait", "100us", "--settle", "100us", "--calibration", "none",
                 "--loss-step", "20", "--b2b-trials", "1", "--b2b-max-burst", "2000", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    line = line_rate_fps(MIX)
    assert line == pytest.approx(470_366.886, abs=0.01)

    # 26.1: within the search resolution (1 % of the mix's line rate) below the model's threshold;
    # the 1518-byte frame holds the next ones up to 1,538 cycles, so arrivals bunch and the
    # queue holds up to 3 frames more than with even spacing (1,500 frames/s over 2 ms)
    result, = results(record, "throughput")
    assert result["frame_size"] == MIX and result["theoretical_max_fps"] == pytest.approx(line)
    threshold = analytic_throughput(RATE, QUEUE, TRIAL_S, line)
    got = result["throughput_fps"]
    assert threshold - line / 100 - 1_500 <= got <= threshold, (got, threshold)
    best = result["best"]
    # the flow's stream (results format 2: a StreamSpec) sends the mix, by its label
    assert best["flows"][0]["spec"]["size"]["label"] == MIX
    # the frames sent are the mix: bytes = whole passes of the genome (and a part)
    seq = sizes.sizes_of(MIX)
    sent = best["counters"]["0"]["tx_frames"]
    whole, part = divmod(sent, len(seq))
    assert best["counters"]["0"]["tx_bytes"] == whole * sum(seq) + sum(seq[:part])
    assert result["throughput_mbps"] == pytest.approx(result["throughput_fps"] * 245.75 * 8 / 1e6)
    # latency: measured (bit forwarding) only; a mix has no single 8 * L shift to derive the other
    measured, other = result["latency"]
    assert measured["source"] == "measured" and measured["min_ns"] >= 2_000
    assert not other["available"] and "mixes frame sizes" in other["how"]

    # 26.3: from 100 % of the mix's line rate down until two trials lose nothing
    loss, = results(record, "frame-loss")
    assert [p["offered_pct"] for p in loss["points"]] == [100, 80, 60, 40] and loss["settled"]
    for p in loss["points"]:
        trial = p["trial"]
        assert p["offered_fps"] == pytest.approx(line * p["offered_pct"] / 100)
        expected = analytic_forwarded(trial["tx_frames"], p["offered_fps"], RATE, QUEUE)
        assert abs(trial["rx_frames"] - expected) <= 2, (p["offered_pct"], trial["rx_frames"], expected)

    # 26.4: the burst leaves at minimum gap (burst mode), so the model's exact figure
    b2b, = results(record, "back-to-back")
    assert abs(b2b["mean_burst_frames"] - analytic_back_to_back(seq, RATE, QUEUE)) <= 1, b2b["mean_burst_frames"]
    assert b2b["implied_buffer_time_s"] == pytest.approx(b2b["mean_burst_frames"] / line)

    # the tables name the mix and give its mean size
    rows = (tmp_path / "Throughput.csv").read_text().splitlines()
    assert rows[0].endswith(",mean_frame_B") and rows[1].startswith(f"{MIX},") and rows[1].endswith(",245.75")
    assert (tmp_path / "Frame_Loss.csv").read_text().splitlines()[1].startswith(f"{MIX},100.000,470366.89,")
    assert f"{MIX}  trial" in err or f"{MIX} trial" in err.replace("  ", " ")
