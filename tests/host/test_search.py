"""The RFC 2544 26.1 throughput search against fake DUT functions (no hardware)."""

import math
from dataclasses import dataclass

import pytest
from fakes import FakeTester

from wirespeed.ethernet import line_rate_fps
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.search import search_throughput
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput
from wirespeed.traffic import Flow

LINE = line_rate_fps(64)
RES = LINE * 0.001  # 0.1 % of line rate


@dataclass
class Verdict:
    rate: float
    passed: bool


def threshold_dut(limit_fps):
    """A DUT that forwards everything up to ``limit_fps`` and loses frames above."""
    calls = []

    def trial(rate):
        calls.append(rate)
        return Verdict(rate, rate <= limit_fps)

    trial.calls = calls
    return trial


def expected_trials(line, resolution):
    """100 % first, then bisection of [0, line] down to the resolution."""
    return 1 + math.ceil(math.log2(line / resolution))


@pytest.mark.parametrize("limit", [400_000.0, 2 * RES, LINE * 0.5, LINE * 0.999, LINE - RES / 2, 744_047.619])
def test_converges_to_the_threshold_within_resolution(limit):
    dut = threshold_dut(limit)
    out = search_throughput(dut, LINE, RES, max_trials=50)
    assert out.converged
    assert out.throughput_fps <= limit < out.failed_fps
    assert limit - out.throughput_fps <= RES
    assert out.failed_fps - out.throughput_fps <= RES
    assert len(out.trials) == expected_trials(LINE, RES) == 11
    assert out.best.rate == out.throughput_fps and out.best.passed
    assert dut.calls[0] == LINE


def test_line_rate_dut_needs_one_trial():
    out = search_throughput(threshold_dut(LINE), LINE, RES, max_trials=50)
    assert out.converged and out.throughput_fps == LINE and out.failed_fps is None
    assert out.rates == [LINE]


def test_dut_that_never_forwards_reports_zero():
    out = search_throughput(threshold_dut(-1), LINE, RES, max_trials=50)
    assert out.converged and out.throughput_fps == 0.0 and out.best is None
    assert out.failed_fps <= RES
    assert len(out.trials) == 11


@pytest.mark.parametrize("resolution_pct, trials", [(1.0, 8), (0.1, 11), (0.01, 15)])
def test_resolution_sets_the_number_of_trials(resolution_pct, trials):
    resolution = LINE * resolution_pct / 100
    out = search_throughput(threshold_dut(123_456.0), LINE, resolution, max_trials=50)
    assert len(out.trials) == trials == expected_trials(LINE, resolution)
    assert 123_456.0 - out.throughput_fps <= resolution


def test_max_trials_stops_the_search_unconverged():
    out = search_throughput(threshold_dut(123_456.0), LINE, RES, max_trials=4)
    assert not out.converged and len(out.trials) == 4
    assert out.throughput_fps <= 123_456.0 < out.failed_fps


def test_rates_are_bisections_between_pass_and_fail():
    out = search_throughput(threshold_dut(LINE * 0.3), LINE, RES, max_trials=50)
    assert out.rates[:4] == [LINE, LINE / 2, LINE / 4, 3 * LINE / 8]


# run_throughput with a fake tester ------------------------------------------------------------------


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, event):
        if isinstance(event, ev.SizeStarted):
            self.events.append(("size", event.frame_size))
        elif isinstance(event, ev.TrialStarted):
            self.events.append(("start", event.frame_size, event.step))
        elif isinstance(event, ev.TrialDone):
            self.events.append(("done", event.result.frame_size, event.step, event.result.passed))
        elif isinstance(event, ev.SizeDone):
            self.events.append(("result", event.result.frame_size))


def test_run_throughput_per_size():
    config = ThroughputConfig(frame_sizes=[64, 1518], trial_duration_ns=10_000_000, wait_ns=1_000_000)
    tester, recorder = FakeTester(limit_pct=40), Recorder()
    results = run_throughput(tester, config, recorder)

    assert [r.frame_size for r in results] == [64, 1518]
    for r in results:
        # loss-informed: 100 %, half a resolution below what got through, half a resolution above
        assert r.converged and r.trials <= 6 and r.search == "loss-informed" and r.confirmed is None
        assert 40 - 0.1 <= r.pct_line_rate <= 40
        assert r.best.passed and r.best.offered_fps == r.throughput_fps
        assert r.throughput_mbps == pytest.approx(r.frame_size * 8 * r.throughput_fps / 1e6)
    flows, _, duration, wait = tester.calls[0]
    assert (duration, wait) == (10_000_000, 1_000_000)
    assert flows == [Flow(tx_port=0, rx_port=1, spec=flows[0].spec)] and flows[0].spec.point == 64
    assert recorder.events[:3] == [("size", 64), ("start", 64, 1), ("done", 64, 1, False)]
    assert recorder.events[1 + 2 * results[0].trials] == ("result", 64)
    assert recorder.events[-1] == ("result", 1518)


def test_config_flags_scaled_down_durations():
    short = ThroughputConfig(frame_sizes=[64], trial_duration_ns=10_000_000, wait_ns=1_000_000)
    rfc = ThroughputConfig(frame_sizes=[64], trial_duration_ns=60_000_000_000, wait_ns=2_000_000_000)
    assert short.scaled_down and "scaled down" in short.notes()[0] and "10 ms" in short.notes()[0]
    assert not rfc.scaled_down and rfc.notes() == []


@pytest.mark.parametrize("sizes", [[], [63], [9019], [64, 64]])
def test_config_rejects_bad_sizes(sizes):
    with pytest.raises(ValueError):
        ThroughputConfig(frame_sizes=sizes, trial_duration_ns=1, wait_ns=0)


def test_run_throughput_bisect_is_rfc_binary_search():
    config = ThroughputConfig(frame_sizes=[64], trial_duration_ns=10_000_000, wait_ns=0, search="bisect")
    (r,) = run_throughput(FakeTester(limit_pct=40), config)
    assert r.converged and r.trials == 11 and r.search == "bisect"
    assert 40 - 0.1 <= r.pct_line_rate <= 40


def forwarding_dut(limit_fps, queue_frames=0, duration_s=0.01):
    """Forwards up to ``limit_fps`` (plus a queue that drains after the trial); reports what
    it got through, like a real trial's received count."""
    calls = []

    def trial(rate):
        calls.append(rate)
        sent = rate * duration_s
        got = min(sent, limit_fps * duration_s + queue_frames)
        return Verdict(rate, got >= sent), got / duration_s

    trial.calls = calls
    return trial


@pytest.mark.parametrize("limit", [400_000.0, 2 * RES, LINE * 0.5, LINE * 0.999, LINE - RES / 2, 744_047.619,
                                   123_456.0, LINE * 0.013])
@pytest.mark.parametrize("queue", [0, 16, 256])
def test_loss_informed_search_finds_the_same_throughput_in_fewer_trials(limit, queue):
    dut = forwarding_dut(limit, queue)
    kwargs = dict(passed=lambda r: r[0].passed, forwarded=lambda r: r[1])
    informed = search_throughput(dut, LINE, RES, max_trials=50, **kwargs)
    plain = search_throughput(forwarding_dut(limit, queue), LINE, RES, max_trials=50, passed=kwargs["passed"])
    true = min(LINE, limit + queue / 0.01)            # the highest rate this trial length passes
    for out in (informed, plain):
        assert out.converged
        assert true - RES <= out.throughput_fps <= true
        assert out.failed_fps is None or out.failed_fps > true
        assert out.throughput_fps == max((r for r, t in zip(out.rates, out.trials) if t[0].passed), default=0.0)
    assert len(informed.trials) <= len(plain.trials)
    if queue == 0 and limit < LINE - RES:
        assert len(informed.trials) <= 3           # 100 %, just below what got through, just above


@pytest.mark.parametrize("collapse", [0.0, 50_000.0, 100_000.0])
def test_loss_informed_search_survives_a_collapsing_dut(collapse):
    """Under overload the DUT forwards only ``collapse`` fps (receive livelock), far below
    what it forwards without loss: the estimates are wrong and the search falls back to
    bisection, at most two trials worse."""
    limit = 405_000.0

    def trial(rate):
        got = rate if rate <= limit else collapse
        return Verdict(rate, rate <= limit), got

    informed = search_throughput(trial, LINE, RES, max_trials=50, passed=lambda r: r[0].passed,
                                 forwarded=lambda r: r[1])
    plain = search_throughput(trial, LINE, RES, max_trials=50, passed=lambda r: r[0].passed)
    assert informed.converged and limit - RES <= informed.throughput_fps <= limit
    assert len(informed.trials) <= len(plain.trials) + 2


def test_search_below_a_known_failure_does_not_repeat_it():
    dut = forwarding_dut(400_000.0)
    out = search_throughput(dut, LINE, RES, max_trials=50, passed=lambda r: r[0].passed, forwarded=lambda r: r[1],
                            failed=(500_000.0, dut(500_000.0)))
    assert dut.calls[0] == 500_000.0 and 500_000.0 not in dut.calls[1:]
    assert out.converged and 400_000.0 - RES <= out.throughput_fps <= 400_000.0 and out.failed_fps <= 500_000.0


def test_loss_tolerance_passes_trials_within_it():
    tolerant = ThroughputConfig(frame_sizes=[64], trial_duration_ns=10_000_000, wait_ns=0, loss_tolerance_pct=1.0)
    strict = tolerant.model_copy(update={"loss_tolerance_pct": 0.0})
    (r1,) = run_throughput(FakeTester(limit_pct=40), tolerant)
    (r0,) = run_throughput(FakeTester(limit_pct=40), strict)
    assert 40 - 0.1 <= r0.pct_line_rate <= 40 and r0.best.lost_frames == 0
    # at most 1 % lost: up to 40 / 0.99 % offered
    assert 40 / 0.99 - 0.1 <= r1.pct_line_rate <= 40 / 0.99
    assert 0 < r1.best.loss_pct <= 1.0 and r1.loss_tolerance_pct == 1.0


def test_short_search_trials_are_confirmed_by_a_full_length_trial():
    # a 256-frame queue flatters 1 ms trials (+256k fps) far more than 10 ms ones (+25.6k fps)
    config = ThroughputConfig(frame_sizes=[64], trial_duration_ns=10_000_000, wait_ns=0,
                              search_duration_ns=1_000_000)
    tester = FakeTester(limit_pct=20, queue=256)
    (r,) = run_throughput(tester, config)
    limit = LINE * 0.2
    assert r.confirmed is True and r.converged
    assert r.best.duration_ns == 10_000_000 and r.best.passed
    assert limit + 25_600 - r.resolution_fps <= r.throughput_fps <= limit + 25_600
    durations = [call[2] for call in tester.calls]
    assert durations[0] == 1_000_000 and durations[-1] == 10_000_000 and r.trials == len(tester.calls)
    first_full = durations.index(10_000_000)
    assert set(durations[:first_full]) == {1_000_000} and set(durations[first_full:]) == {10_000_000}
    assert tester.calls[first_full][1] > r.throughput_fps          # the short trials' answer did not hold


def test_confirmation_that_holds_costs_one_trial():
    config = ThroughputConfig(frame_sizes=[64], trial_duration_ns=10_000_000, wait_ns=0,
                              search_duration_ns=1_000_000)
    tester = FakeTester(limit_pct=20)
    (r,) = run_throughput(tester, config)
    assert r.confirmed is True and [c[2] for c in tester.calls].count(10_000_000) == 1
    assert tester.calls[-1][1] == r.throughput_fps


def test_search_duration_longer_than_trial_is_refused():
    with pytest.raises(ValueError, match="search_duration_ns"):
        ThroughputConfig(frame_sizes=[64], trial_duration_ns=1_000_000, wait_ns=0, search_duration_ns=2_000_000)
