"""The run estimate (wirespeed.rfc2544.estimate): each test's estimator against known plans and
against its own procedure on a fake DUT, the wall time from the pace, the refinement while a run
goes on (wirespeed.rfc2544.eta), and the trial lines' width."""

import json
import re

import pytest
from ebserver import EtherboneServer, serve_identity
from fakes import FakeTester, make_trial
from rich.text import Text

from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.estimate import (
    PILOT_NS,
    PILOT_SHARE,
    PRIOR_PCT,
    SIM_TRIAL_OVERHEAD_NS,
    WARMUP_NS,
    DutHint,
    Pace,
    RunEstimate,
    burst_ns,
    estimate_configs,
    format_seconds,
    measure_pace,
    pilot_trial,
)
from wirespeed.rfc2544.eta import RunProgress
from wirespeed.rfc2544.plan import Plan
from wirespeed.rfc2544.suite.frame_loss import FrameLossConfig, run_frame_loss
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput
from wirespeed.trial_lines import COLUMNS

ROUTER = {"model": "router", "spec": "router:rate=400000,queue=256,latency=20us", "rate_fps": 400000,
          "queue_frames": 256, "latency_ns": 20000}
SIM = {"trial": 10_000_000, "wait": 1_000_000}


def sizes_of(estimate, test):
    return {s.frame_size: s for s in estimate.of(test).sizes}


def test_hints_from_the_simulated_models():
    router = DutHint.from_dut(ROUTER)
    assert router.known and router.forwarding_fps(64) == 400_000 and router.forwarding_fps(1518) == line_rate_fps(1518)
    # the queue flatters a 10 ms trial by (256 + 1) frames / 10 ms
    assert router.passing_fps(64, 10_000_000) == pytest.approx(400_000 + 25_700)
    assert DutHint.from_dut({"model": "loopback", "spec": "loopback"}).forwarding_fps(64) == line_rate_fps(64)
    for dut in (None, {"description": "a cable"}, {"model": "loopback", "impairments": {"loss": 0.01}}):
        hint = DutHint.from_dut(dut)
        assert not hint.known and hint.basis.startswith("prior")
        assert hint.forwarding_fps(512) == pytest.approx(line_rate_fps(512) * PRIOR_PCT / 100)


def test_throughput_router_plan():
    """A router below line rate at 64 B: the loss-informed search takes 3 trials, then the 2
    latency trials of the simulation defaults; at line rate (512 B, 1518 B) one trial."""
    plan = Plan(tests=["throughput"], sizes=[64, 512, 1518], target="sim")
    estimate = plan.estimate(DutHint.from_dut(ROUTER))
    by_size = sizes_of(estimate, "throughput")
    assert [by_size[s].trials for s in (64, 512, 1518)] == [5, 3, 3]
    assert all(s.most_trials == 32 + 2 for s in by_size.values())
    per_trial = SIM["trial"] + SIM["wait"]
    # at 64 B every trial fills the queue: (256 frames / 400k/s + 20 us) to drain, past the wait's
    # first half (0.5 ms), so the wait goes on by a half
    assert by_size[64].wire_ns == 5 * (per_trial + 500_000)
    assert estimate.of("throughput").wire_ns == 11 * per_trial + 5 * 500_000
    assert estimate.basis.startswith("simulated router")


def test_throughput_bisection_and_short_search_trials():
    plan = Plan(tests=["throughput"], sizes=[64], target="sim",
                options={"search": "bisect", "latency_trials": 0, "search_duration": 2_000_000})
    size = sizes_of(plan.estimate(DutHint.prior()), "throughput")[64]
    # 100 %, then bisection to 0.1 % of line rate: 11 search trials of 2 ms, a 10 ms confirmation
    assert size.trials == 12 and size.wire_ns == 11 * (2_000_000 + 1_000_000) + 11_000_000


@pytest.mark.parametrize("limit_pct", [40.0, 70.0])
@pytest.mark.parametrize("search", ["loss-informed", "bisect"])
def test_throughput_estimate_is_what_the_procedure_runs(limit_pct, search):
    config = ThroughputConfig(frame_sizes=[512], trial_duration_ns=10_000_000, wait_ns=1_000_000, search=search,
                              latency_trials=2)
    results = run_throughput(FakeTester(limit_pct=limit_pct), config)
    hint = DutHint(known=True, rate_fps=line_rate_fps(512) * limit_pct / 100, basis="the fake")
    estimate = estimate_configs({"throughput": config}, hint)
    assert estimate.trials == results[0].trials + len(results[0].latency_repeats)


@pytest.mark.parametrize("limit_pct", [35.0, 62.0])
def test_frame_loss_estimate_is_what_the_procedure_runs(limit_pct):
    config = FrameLossConfig(frame_sizes=[128], trial_duration_ns=10_000_000, wait_ns=1_000_000)
    results = run_frame_loss(FakeTester(limit_pct=limit_pct), config)
    hint = DutHint(known=True, rate_fps=line_rate_fps(128) * limit_pct / 100, basis="the fake")
    size = sizes_of(estimate_configs({"frame-loss": config}, hint), "frame-loss")[128]
    assert size.trials == len(results[0].points) and size.most_trials == 10
    assert size.wire_ns == size.trials * 11_000_000


def test_frame_loss_points_and_back_to_back():
    plan = Plan(tests=["frame-loss", "back-to-back"], sizes=[64, 1518], target="sim",
                options={"loss_points": [100.0, 50.0, 20.0], "b2b_trials": 3, "b2b_max_burst": 1000})
    estimate = plan.estimate(DutHint.from_dut(ROUTER))
    assert [s.trials for s in estimate.of("frame-loss").sizes] == [3, 3]
    b2b = sizes_of(estimate, "back-to-back")
    # 64 B: the router's longest burst is (256 + 1) / (1 - 400k / line rate) = 351 frames: 1000
    # first, bisection to one frame (10 more), then a pass and a failure per repetition
    assert b2b[64].trials == 11 + 2 * 2
    # every burst but the 250-frame one leaves more queued than half the wait drains (250 frames
    # queue 183: 0.46 ms at 400k/s, plus 20 us): the wait grows by its half, as a run's does
    bursts = [1000, 500, 250, 375, 312, 343, 359, 351, 355, 353, 352] + [351, 352] * 2
    assert b2b[64].wire_ns == sum(burst_ns(64, b) for b in bursts) + 15 * 1_000_000 + 14 * 500_000
    # 1518 B is forwarded at line rate: every repetition is one burst of the cap
    assert b2b[1518].trials == 3 and b2b[1518].most_trials == 3 * 64
    assert b2b[1518].wire_ns == 3 * (round(1000 * 1e9 / line_rate_fps(1518)) + 1_000_000)


def test_recovery_and_reset():
    plan = Plan(tests=["throughput", "system-recovery", "reset"], sizes=[64, 512], target="sim",
                options={"recovery_trials": 2})
    estimate = plan.estimate(DutHint.from_dut(ROUTER))
    recovery = estimate.of("system-recovery")
    assert [s.trials for s in recovery.sizes] == [2, 2]
    config = plan.configs()["system-recovery"]
    assert recovery.wire_ns == 4 * (config.overload_ns + config.recovery_ns + config.wait_ns)
    reset = estimate.of("reset")
    assert [(s.frame_size, s.trials) for s in reset.sizes] == [(64, 1)]


def test_wall_time_from_the_pace():
    plan = Plan(tests=["throughput"], sizes=[1518], target="sim", options={"latency_trials": 0})
    pace = Pace(sim_ns_per_s=2_000_000, trial_overhead_s=0.5)
    estimate = plan.estimate(DutHint.from_dut(ROUTER), pace)
    # one trial of 11 ms at 2 ms per wall second, 0.5 s overhead; learning: 4 frames at 10k/s and 1 ms settle
    assert estimate.of("throughput").wall_s == pytest.approx(11 / 2 + 0.5)
    assert estimate.learning_wire_ns == 400_000 + 1_000_000
    assert estimate.wall_s == pytest.approx(6.0 + 1.4 / 2 + 0.5)
    assert json.loads(RunEstimate.model_validate_json(estimate.model_dump_json()).model_dump_json()) == \
        estimate.model_dump(mode="json")
    board = Plan(tests=["throughput"], sizes=[1518], target="board", options={"latency_trials": 0})
    assert board.estimate(DutHint.from_dut(ROUTER), Pace()).of("throughput").wall_s == pytest.approx(62.1)
    # in simulation the overhead is simulated time: SIM_TRIAL_OVERHEAD_NS a trial at 2 ms per wall second
    assert Pace.simulation(2_000_000).wall_s(11_000_000, 1) == pytest.approx((11 + SIM_TRIAL_OVERHEAD_NS / 1e6) / 2)
    assert [format_seconds(s) for s in (4.4, 130, 3725)] == ["4 s", "2 min 10 s", "1 h 02 min"]


class PilotTester:
    """A simulation whose clock moves 2 ms per trial and 1 us per read, for measure_pace."""

    def __init__(self):
        self.ns, self.trials = 0, []

    def now_ns(self):
        self.ns += 1_000
        return self.ns

    def run_trial(self, flows, rate_fps, duration_ns, wait_ns):
        self.trials.append((flows, rate_fps, duration_ns, wait_ns))
        self.ns += 2_000_000


def test_the_pace_is_measured_over_a_pilot_trial_of_the_plan(monkeypatch):
    plan = Plan(tests=["throughput"], sizes=[64, 1518], target="sim")
    config = plan.configs()["throughput"]
    tester = PilotTester()
    pilot = pilot_trial(tester, config, DutHint.from_dut(ROUTER))
    wall = iter([10.0, 10.0, 14.0, 14.0])      # each read timed at the middle of its round trip
    monkeypatch.setattr("wirespeed.rfc2544.estimate.time.monotonic", lambda: next(wall))
    pace = measure_pace(tester, pilot)
    # a short warm-up, unmeasured, then the pilot: the plan's first size and flows, below what
    # the router forwards (no queue, no loss), its trials' duration cut to PILOT_NS and their
    # wait cut in proportion (the same share of waiting as the trials)
    (warm_flows, warm_rate, warm_duration, warm_wait), (flows, rate, duration, wait) = tester.trials
    assert flows == warm_flows == config.flows(64)
    assert rate == warm_rate == pytest.approx(400_000 * PILOT_SHARE) and rate < 400_000
    assert config.trial_duration_ns > PILOT_NS and (duration, warm_duration) == (PILOT_NS, WARMUP_NS)
    assert wait / duration == warm_wait / warm_duration == config.wait_ns / config.trial_duration_ns
    assert pace.sim_ns_per_s == pytest.approx((2_000_000 + 1_000) / 4.0) and pace.measured == "pilot trial"
    assert pace.trial_overhead_s == pytest.approx(SIM_TRIAL_OVERHEAD_NS / pace.sim_ns_per_s)


def test_a_short_trial_is_its_own_pilot():
    """Trials shorter than PILOT_NS are piloted whole, search trials by their own length."""
    plan = Plan(tests=["throughput"], sizes=[64], target="sim", trial_duration_ns=1_000_000, wait_ns=300_000,
                options={"search_duration": 500_000})
    config = plan.configs()["throughput"]
    pilot = pilot_trial(PilotTester(), config, DutHint.from_dut(ROUTER))
    assert pilot is not None and (pilot.duration_ns, pilot.wait_ns) == (500_000, 300_000)


@pytest.mark.parametrize("dut", [None, {"model": "loopback", "impairments": {"loss": 0.01}},
                                 {"model": "router", "rate_fps": 400_000,
                                  "impairments": {"blackout_start_ns": 5_000_000, "blackout_len_ns": 2_000_000}}])
def test_no_pilot_when_the_dut_is_not_known(dut):
    """A DUT without a model (a Verilog design, random impairments, a blackout at a set time)
    is left alone: the pace is measured on the idle simulation."""
    plan = Plan(tests=["throughput"], sizes=[64], target="sim")
    tester = PilotTester()
    assert pilot_trial(tester, plan.configs()["throughput"], DutHint.from_dut(dut)) is None
    pace = measure_pace(tester, None, interval_s=0.001)
    assert pace.measured == "idle simulation" and not tester.trials


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_refines_by_the_pace_of_finished_trials():
    plan = Plan(tests=["throughput"], sizes=[64, 1518], target="sim", options={"latency_trials": 0},
                learning=False)
    hint = DutHint(known=True, rate_fps=400_000, basis="a router without a queue")
    estimate = plan.estimate(hint, Pace(sim_ns_per_s=1_000_000, trial_overhead_s=1.0))
    # 64 B: 3 trials, 1518 B: 1 trial, each 11 s + 1 s
    assert estimate.wall_s == pytest.approx(48)
    clock = Clock()
    follow = RunProgress(clock)
    follow(ev.RunStarted(tests=["throughput"], frame_sizes=[64, 1518], target="sim",
                         estimate=estimate.model_dump(mode="json")))
    follow(ev.TestStarted(test="throughput", frame_sizes=[64, 1518]))
    assert follow.remaining_s() == pytest.approx(48) and follow.fraction("throughput") == 0
    follow(ev.TrialStarted(test="throughput", frame_size=64, step=1, rate_fps=1.0))
    clock.now = 6.0
    assert follow.remaining_s("throughput") == pytest.approx(42)       # the trial in progress counts down
    clock.now = 24.0                                                   # twice as slow as estimated
    follow(ev.TrialDone(test="throughput", frame_size=64, step=1, result=make_trial(64, 1.0, 10, 10)))
    assert follow.pace_factor == pytest.approx(2.0)
    assert follow.remaining_s() == pytest.approx(2 * 36)
    assert follow.fraction() == pytest.approx(24 / (24 + 72))
    for step in (2, 3, 4):                                             # one more trial than expected
        follow(ev.TrialStarted(test="throughput", frame_size=64, step=step, rate_fps=1.0))
        follow(ev.TrialDone(test="throughput", frame_size=64, step=step, result=make_trial(64, 1.0, 10, 10)))
    assert follow.remaining_s() == pytest.approx(12 * follow.pace_factor * 2)   # at least one more at 64 B
    follow(ev.SizeDone(test="throughput", frame_size=64, result={}))
    assert follow.remaining_s() == pytest.approx(12 * follow.pace_factor)
    follow(ev.TestDone(test="throughput"))
    assert follow.remaining_s() == 0 and follow.fraction("throughput") == 1.0
    assert follow.trials_done() == 4


def test_without_an_estimate_nothing_is_promised():
    follow = RunProgress(Clock())
    follow(ev.RunStarted(tests=["throughput"], frame_sizes=[64], target="udp://x"))
    assert follow.remaining_s() is None and follow.fraction() is None


# trial lines ------------------------------------------------------------------------------------------

def columns(text):
    return [Text.from_markup(line).cell_len for line in text.splitlines()]


@pytest.mark.parametrize("size", [64, 1518, 9000])
def test_trial_lines_fit_80_columns(size):
    from wirespeed.rfc2544.suite import back_to_back, frame_loss, throughput

    board = 89_285_714        # 60 s at 64 B
    lossy = make_trial(size, 1_488_095.2, board, board // 3, sequence={"lost": board - board // 3})
    clean = make_trial(size, 1_488_095.2, board, board, latency_ns=(1_234_567, 1_300_000.5, 9_876_543))
    odd = make_trial(size, 10.0, 100, 130, sequence={"duplicate": 30})
    odd.control = {"retries": 2, "timeouts": 2, "duplicates": 1}
    for result in (lossy, clean, odd):
        lines = [throughput._trial_line(12, result, line_rate_fps(size)), throughput._latency_line(20, result),
                 frame_loss._trial_line(10, 100.0, result), back_to_back._trial_line(50, 64, 4_294_967, result)]
        for line in lines:
            assert max(columns(line)) <= COLUMNS, line
    assert len(columns(throughput._trial_line(12, lossy, line_rate_fps(size)))) == 1
    assert "fail" in throughput._trial_line(1, lossy, line_rate_fps(size))
    line = throughput._trial_line(1, odd, line_rate_fps(size))
    assert "control: 2 retries, 2 timeouts" in line and "dup 30" in line and "more received than sent" not in line


FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us"]


def test_the_command_prints_the_estimate_first(capsys, regmap, tmp_path):
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code = main(["rfc2544", "--target", server.url, "--dut", "a cable", "--out", str(tmp_path), *FAST])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = err.splitlines()
    trials = [i for i, line in enumerate(lines) if re.match(r" *64 B trial ", line)]
    first_trial = trials[0]
    start = next(i for i, line in enumerate(lines) if line.startswith("estimate: prior"))
    assert start < first_trial
    # a board: the prior (a loss, then 2 more search trials) and the RFC's 20 latency trials
    assert lines[start + 1] == "  pace: real time, 0.1 s a trial for the control path"
    assert lines[start + 2].startswith("  throughput: 1 size, about 23 trials (at most 52), 69 us on the wire, about ")
    assert lines[start + 3].startswith("  total: about 23 trials (at most 52), ")
    assert "throughput 64 B: 0.0 fps (0.0 % of line rate), 5 trials" in err
    assert len(trials) == 5 and all(len(lines[i]) <= COLUMNS and len(lines[i + 1]) <= COLUMNS for i in trials)
    # results.json keeps the estimate, for the report and other faces
    recorded = json.loads((tmp_path / "results.json").read_text())["estimate"]
    assert (recorded["trials"], recorded["most_trials"]) == (23, 52) and recorded["wall_s"] > 0
