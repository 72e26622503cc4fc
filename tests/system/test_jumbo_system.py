"""A jumbo frame size through the whole chain: one short throughput trial at 9018 bytes (the
generator's and analyzer's largest frame) through the router model, which forwards every frame
of that size at line rate (400,000 frames/s is far above 13,830.49)."""

import math

import pytest

from wirespeed.ethernet import line_rate_fps
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput

JUMBO = 9018
TRIAL_NS = 1_000_000

pytestmark = pytest.mark.slow


def test_throughput_trial_at_9018_bytes(tester):
    dev = tester("router:rate=400k,queue=16,latency=2us")
    config = ThroughputConfig(frame_sizes=[JUMBO], trial_duration_ns=TRIAL_NS, wait_ns=200_000, latency_trials=0)
    result, = run_throughput(dev, config)
    trial = result.best
    assert trial is not None and result.trials == 1 and result.pct_line_rate == 100.0
    assert result.theoretical_max_fps == line_rate_fps(JUMBO)
    sent = math.ceil(line_rate_fps(JUMBO) * TRIAL_NS / 1e9)
    assert trial.tx_frames == trial.rx_frames == sent and trial.lost_frames == 0
    rx = trial.counters[config.rx_port]
    assert rx.rx_bytes == JUMBO * sent and rx.fcs_errors == 0 and rx.seq_errors == 0
