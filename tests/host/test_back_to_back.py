"""RFC 2544 26.4 back-to-back: the burst search against fake DUTs (no hardware), the runner,
RFC 9004's buffer time and Back_to_Back.csv."""

import math
import statistics
from dataclasses import dataclass

import pytest
from fakes import make_trial

from wirespeed.ethernet import line_rate_fps
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.search import search_burst
from wirespeed.rfc2544.suite.back_to_back import (
    TEST,
    BackToBackConfig,
    BackToBackResult,
    BurstRepetition,
    back_to_back_csv,
    buffer_time,
    run_back_to_back,
)


@dataclass
class Verdict:
    burst: int
    passed: bool


def buffer_dut(limit):
    """A DUT that forwards any burst of up to ``limit`` frames and loses frames of longer ones."""
    calls = []

    def trial(burst):
        calls.append(burst)
        return Verdict(burst, burst <= limit)

    trial.calls = calls
    return trial


@pytest.mark.parametrize("limit", [1, 2, 22, 351, 499, 500, 998, 999])
def test_bisection_finds_the_longest_passing_burst_to_one_frame(limit):
    dut = buffer_dut(limit)
    out = search_burst(dut, 1000, max_trials=64)
    assert out.converged and not out.capped
    assert out.burst_frames == limit and out.failed_frames == limit + 1
    assert dut.calls[0] == 1000
    assert len(out.trials) <= 1 + math.ceil(math.log2(1000))
    assert all(t.passed == (t.burst <= limit) for t in out.trials)


def test_bursts_are_bisections_between_pass_and_fail():
    out = search_burst(buffer_dut(22), 1000)
    assert out.bursts == [1000, 500, 250, 125, 62, 31, 15, 23, 19, 21, 22]


def test_dut_forwarding_the_longest_burst_is_capped_after_one_trial():
    out = search_burst(buffer_dut(10**9), 1000)
    assert out.bursts == [1000] and out.capped and out.converged
    assert out.burst_frames == 1000 and out.failed_frames is None


def test_dut_losing_a_single_frame_reports_zero():
    out = search_burst(buffer_dut(0), 1000)
    assert out.converged and out.burst_frames == 0 and out.failed_frames == 1


@pytest.mark.parametrize("hint, limit, trials", [(22, 22, 2), (21, 22, 4), (23, 22, 2), (10, 22, 8), (40, 22, 10),
                                                 (22, 0, 6), (999, 1000, 2), (1000, 1000, 1)])
def test_a_hint_gallops_to_a_bracket_then_bisects(hint, limit, trials):
    dut = buffer_dut(limit)
    out = search_burst(dut, 1000, start=hint)
    assert out.converged and out.burst_frames == limit
    assert out.failed_frames == (None if limit >= 1000 else limit + 1)
    assert dut.calls[0] == hint and len(out.trials) == trials


def test_gallop_from_a_failing_hint_doubles_its_steps_down():
    out = search_burst(buffer_dut(22), 1000, start=40)
    assert out.bursts == [40, 39, 37, 33, 25, 9, 17, 21, 23, 22]


def test_max_trials_stops_the_search_unconverged():
    out = search_burst(buffer_dut(123), 1000, max_trials=3)
    assert not out.converged and len(out.trials) == 3
    assert out.burst_frames <= 123 < out.failed_frames
    out = search_burst(buffer_dut(900), 1000, max_trials=3, start=1)   # galloping up, no failure yet
    assert not out.converged and out.failed_frames is None and out.burst_frames == 4


def test_buffer_time_rfc9004():
    line = line_rate_fps(64)
    implied, corrected = buffer_time(22.0, line, None)
    assert implied == pytest.approx(22 * 672e-9) and corrected is None
    implied, corrected = buffer_time(22.0, line, 400_000.0)
    assert corrected == pytest.approx(implied * (1 - 400_000 / line))
    assert buffer_time(1000.0, line, line)[1] == 0.0      # a line-rate DUT buffers nothing


# the runner with a fake tester ---------------------------------------------------------------------------


class FakeBurstTester:
    """Answers run_burst_trial like a DUT whose buffer absorbs ``limits[size]`` frames of a
    burst (the frames after that are lost)."""

    def __init__(self, limits):
        self.limits, self.calls = limits, []

    def run_burst_trial(self, flow, burst_frames, wait_ns, **kwargs):
        size = flow.spec.point
        self.calls.append((size, burst_frames, wait_ns))
        received = min(burst_frames, self.limits[size])
        return make_trial(size, line_rate_fps(size), burst_frames, received, duration_ns=burst_frames * 672)

    def learn(self, *args, **kwargs):
        raise AssertionError("no learning asked for")


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, event):
        if isinstance(event, ev.TrialDone):
            self.events.append((event.result.frame_size, event.tags["repetition"], event.step,
                                event.tags["burst_frames"], event.result.passed))
        elif isinstance(event, ev.SizeDone):
            self.events.append(("result", event.result.frame_size))


def test_run_back_to_back_repeats_the_search_per_size():
    config = BackToBackConfig(frame_sizes=[64, 128], repetitions=4, max_burst=1000, wait_ns=100_000)
    tester, recorder = FakeBurstTester({64: 22, 128: 31}), Recorder()
    results = run_back_to_back(tester, config, recorder, throughput_fps={64: 400_000.0})
    small, large = results
    assert [r.burst_frames for r in small.repetitions] == [22] * 4
    assert small.mean_burst_frames == 22 and small.stddev_burst_frames == 0 and not small.capped
    assert [r.bursts for r in small.repetitions[1:]] == [[22, 23]] * 3     # later repetitions start at 22
    assert small.trials == 11 + 3 * 2
    assert small.corrected_buffer_time_s == pytest.approx(22 / line_rate_fps(64) * (1 - 400_000 / line_rate_fps(64)))
    assert large.mean_burst_frames == 31 and large.throughput_fps is None and large.corrected_buffer_time_s is None
    assert {c[2] for c in tester.calls} == {100_000}
    assert recorder.events[0] == (64, 1, 1, 1000, False) and recorder.events[-1] == ("result", 128)


def test_mean_and_sample_stddev_over_repetitions():
    reps = [BurstRepetition(burst_frames=b, failed_frames=b + 1, converged=True, bursts=[b], passed=[True])
            for b in (20, 22, 24, 22)]
    r = BackToBackResult(frame_size=64, theoretical_max_fps=line_rate_fps(64), max_burst=1000, repetitions=reps)
    assert r.mean_burst_frames == 22 and r.stddev_burst_frames == pytest.approx(statistics.stdev([20, 22, 24, 22]))
    assert (r.min_burst_frames, r.max_burst_frames, r.trials) == (20, 24, 4)


def test_config_defaults_and_notes():
    board = BackToBackConfig(frame_sizes=[64, 1518], wait_ns=2_000_000_000)
    assert board.repetitions == 50 and board.max_burst_frames(64) == 2_976_190
    assert board.max_burst_frames(1518) == 162_548 and board.notes() == [] and not board.scaled_down
    sim = BackToBackConfig(frame_sizes=[64], repetitions=5, max_burst=1000, wait_ns=1_000_000)
    notes = " | ".join(sim.notes())
    assert sim.scaled_down and "5 repetitions" in notes and "1,000 frames" in notes and "1 ms" in notes


# Back_to_Back.csv ---------------------------------------------------------------------------------------

GOLDEN = """\
frame_size_B,mean_burst_frames,stddev_burst_frames,min_burst_frames,max_burst_frames,repetitions,\
max_burst_tried_frames,capped,theoretical_max_fps,implied_buffer_time_us,throughput_fps,\
corrected_buffer_time_us,trials
64,22.00,1.00,21,23,3,1000,no,1488095.24,14.784,400000.00,10.810,5
1518,1000.00,0.00,1000,1000,1,1000,yes,81274.38,,,,1
"""


def test_back_to_back_csv_golden():
    def rep(b, n):
        return BurstRepetition(burst_frames=b, failed_frames=b + 1, converged=True, bursts=[b] * n, passed=[True] * n)
    small = BackToBackResult(frame_size=64, theoretical_max_fps=line_rate_fps(64), max_burst=1000,
                             repetitions=[rep(21, 2), rep(22, 1), rep(23, 2)], throughput_fps=400_000.0)
    large = BackToBackResult(frame_size=1518, theoretical_max_fps=line_rate_fps(1518), max_burst=1000,
                             repetitions=[rep(1000, 1)])
    assert back_to_back_csv([small, large]) == GOLDEN


def test_a_capped_size_has_no_buffer_time():
    """The DUT forwarded the longest burst tried (1000 frames) every time: RFC 9004's buffer
    time was not measured (the cap ended the bursts), so the CSV and results.json leave both
    figures empty and the console gives the lower bound the cap shows, as such."""
    rep = BurstRepetition(burst_frames=1000, failed_frames=None, converged=True, bursts=[1000], passed=[True])
    line = line_rate_fps(512)
    capped = BackToBackResult(frame_size=512, theoretical_max_fps=line, max_burst=1000, repetitions=[rep] * 5,
                              throughput_fps=line / 2)
    assert capped.capped
    assert capped.implied_buffer_time_s is None and capped.corrected_buffer_time_s is None
    record = capped.model_dump(mode="json")
    assert record["implied_buffer_time_s"] is None and record["corrected_buffer_time_s"] is None
    row = back_to_back_csv([capped]).splitlines()[1].split(",")
    assert row[7] == "yes" and row[9] == "" and row[11] == ""    # capped, implied and corrected buffer time
    (table,) = TEST.summary([capped], None)
    implied, corrected = table.rows[0][-2:]
    assert implied == f"at least {1000 / line * 1e6:,.3f}" == "at least 4,256.000"
    assert corrected == "at least 2,128.000"
