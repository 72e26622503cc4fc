"""Figures of the Verilated tester through simulated DUTs, checked against what the DUT
model's parameters predict (issue 2's acceptance criteria)."""

import pytest

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.port import PIPELINE_NS
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput

pytestmark = pytest.mark.slow

TRIAL_NS = 10_000_000   # 10 ms of simulated time
WAIT_NS = 1_000_000
CLK_NS = 8


def throughput(dev, sizes, resolution_pct=0.1):
    config = ThroughputConfig(frame_sizes=sizes, trial_duration_ns=TRIAL_NS, wait_ns=WAIT_NS,
                              resolution_pct=resolution_pct)
    return {r.frame_size: r for r in run_throughput(dev, config)}


def test_loopback_is_line_rate_with_exact_counts(tester):
    dev = tester("loopback:delay=40ns")
    results = throughput(dev, [64, 1518])
    for size, want_fps in ((64, 1_488_095), (1518, 81_274)):
        r = results[size]
        assert r.trials == 1 and r.pct_line_rate == 100.0
        assert round(r.throughput_fps) == want_fps
        best = r.best
        # the trial timer sends exactly ceil(duration / period) frames at line rate
        period_cycles = size + 20
        want_frames = -(-(TRIAL_NS // CLK_NS) // period_cycles)
        assert best.tx_frames == best.rx_frames == want_frames
        assert best.lost_frames == 0 and best.seq_errors == 0 and best.fcs_errors == 0


@pytest.mark.parametrize("delay_ns", [0, 40, 1000])
def test_loopback_latency_is_cable_plus_pipeline(tester, delay_ns):
    dev = tester(f"loopback:delay={delay_ns}ns")
    r = throughput(dev, [64])[64]
    lat = r.best.latency
    want = delay_ns + PIPELINE_NS
    assert lat.min_ns == lat.max_ns == want
    # a constant latency: no spread, no jitter, and every percentile that latency (a percentile
    # lies within the measured min and max, not at its bin's upper edge)
    assert lat.stddev_ns == 0 and lat.jitter_ns == 0
    assert all(p == want for p in lat.percentiles_ns.values())
    hist = r.best.histograms[1]
    assert sum(hist.counts.values()) == lat.frames and hist.underflow == hist.overflow == 0


def test_router_throughput_matches_model_prediction(tester):
    rate, queue = 400_000, 16
    dev = tester(f"router:rate={rate},queue={queue},latency=20us")
    sizes = [64, 128, 256, 512, 1024, 1280, 1518]
    results = throughput(dev, sizes)
    trial_s = TRIAL_NS / 1e9
    for size in sizes:
        r = results[size]
        line = line_rate_fps(size)
        predicted = min(line, rate + queue / trial_s)
        resolution = line * 0.001
        print(f"{size:5d} B: predicted {predicted:12,.1f} fps, measured {r.throughput_fps:12,.1f} fps "
              f"(resolution {resolution:,.1f}, {r.trials} trials)")
        assert r.converged
        assert abs(r.throughput_fps - predicted) <= resolution, (size, predicted, r.throughput_fps)
        if line < rate:
            assert r.pct_line_rate == 100.0 and r.trials == 1
        else:
            assert r.best.lost_frames == 0 and r.failed_fps is not None
