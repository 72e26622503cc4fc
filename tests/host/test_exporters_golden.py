"""Every table of a results folder against golden files: a run of the RFC 2544 throughput
test with repeated latency trials (26.2) against a fake DUT forwarding 40 % of line rate, at two
frame sizes and an RFC 6985 IMIX."""

from pathlib import Path

import pytest
from fakes import FakeTester

from wirespeed.results.tables import trials_csv
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.suite.throughput import (
    ThroughputConfig,
    latency_csv,
    latency_histograms_csv,
    latency_trials_csv,
    run_throughput,
    throughput_csv,
)

GOLDEN = Path(__file__).parent / "golden"


class Tags:
    def __init__(self):
        self.trials, self.tags = [], []

    def __call__(self, event):
        if isinstance(event, ev.TrialDone):
            self.trials.append(event.result)
            self.tags.append({"test": "throughput", "step": event.step} if event.tags["test"] == "throughput"
                             else event.tags)


@pytest.fixture(scope="module")
def run():
    config = ThroughputConfig(frame_sizes=[64, 1518, "imix:aaaaaaag"], trial_duration_ns=10_000_000, wait_ns=1_000_000,
                              latency_trials=2)
    tags = Tags()
    results = run_throughput(FakeTester(limit_pct=40), config, tags, pipeline=lambda tx, rx, size: 200)
    return results, tags


@pytest.mark.parametrize("name, table", [
    ("Throughput.csv", lambda results, tags: throughput_csv(results)),
    ("Latency.csv", lambda results, tags: latency_csv(results)),
    ("Latency_Trials.csv", lambda results, tags: latency_trials_csv(results)),
    ("Latency_Histograms.csv", lambda results, tags: latency_histograms_csv(results)),
    ("Trials.csv", lambda results, tags: trials_csv(tags.trials, tags.tags)),
])
def test_table_matches_golden_file(run, name, table):
    results, tags = run
    assert table(results, tags) == (GOLDEN / name).read_text()


def test_repeated_latency_is_the_mean_of_the_trials(run):
    results, _ = run
    for r in results:
        assert len(r.latency_repeats) == 2 and r.trials == 3      # the repeats are not search trials
        measured = r.repeated_latency[0]
        # the fake DUT's frames: 900/1100 ns raw, 200 ns pipeline: 800 mean after calibration
        assert measured.trials == 2 and measured.mean_ns == 800.0 and measured.stddev_of_means_ns == 0.0
        assert (measured.min_ns, measured.max_ns) == (700, 900)
        assert all(t.offered_fps == r.throughput_fps for t in r.latency_repeats)
