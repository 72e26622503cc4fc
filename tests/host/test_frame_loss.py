"""RFC 2544 26.3 frame loss rate: the stepping against fake DUTs (no hardware), the runner and
Frame_Loss.csv."""

from dataclasses import dataclass

import pytest
from fakes import FakeTester, make_trial

from wirespeed.ethernet import line_rate_fps
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.search import load_steps, step_frame_loss
from wirespeed.rfc2544.suite.frame_loss import (
    FrameLossConfig,
    FrameLossPoint,
    FrameLossResult,
    frame_loss_csv,
    run_frame_loss,
)


@dataclass
class Verdict:
    pct: float
    lost_frames: int
    tx_frames: int = 1000


def capacity_dut(limit_pct, frames=1000):
    """Loses the share of frames above ``limit_pct`` of line rate."""
    calls = []

    def trial(pct):
        calls.append(pct)
        return Verdict(pct, max(0, round(frames * (pct - limit_pct) / pct)))

    trial.calls = calls
    return trial


def test_steps_of_ten_from_100_until_two_clean_trials():
    dut = capacity_dut(67.2)
    out = step_frame_loss(dut, 10)
    assert out.loads_pct == [100, 90, 80, 70, 60, 50] and out.settled
    assert [t.lost_frames > 0 for t in out.trials] == [True] * 4 + [False] * 2


def test_one_clean_trial_between_losses_does_not_stop_it():
    losses = {100: 5, 90: 0, 80: 3, 70: 0, 60: 0, 50: 9}
    out = step_frame_loss(lambda pct: Verdict(pct, losses[pct]), 10)
    assert out.loads_pct == [100, 90, 80, 70, 60] and out.settled


def test_a_dut_losing_everywhere_runs_down_to_the_last_step():
    out = step_frame_loss(capacity_dut(0.5), 25)
    assert out.loads_pct == [100, 75, 50, 25] and not out.settled


def test_trials_that_send_nothing_are_not_loss_free():
    out = step_frame_loss(lambda pct: Verdict(pct, 0, tx_frames=0), 20)
    assert out.loads_pct == [100, 80, 60, 40, 20] and not out.settled


def test_line_rate_dut_needs_two_trials():
    out = step_frame_loss(capacity_dut(100), 10)
    assert out.loads_pct == [100, 90] and out.settled


@pytest.mark.parametrize("step, loads", [(10, [100, 90, 80, 70, 60, 50, 40, 30, 20, 10]), (33, [100, 67, 34, 1]),
                                         (100, [100]), (2.5, [100 - 2.5 * k for k in range(40)])])
def test_load_steps(step, loads):
    assert load_steps(step) == loads


def test_explicit_points_are_all_measured_highest_first():
    dut = capacity_dut(67.2)
    out = step_frame_loss(dut, 10, points_pct=[50, 100, 95, 20, 30])
    assert dut.calls == [100, 95, 50, 30, 20] and out.loads_pct == dut.calls and not out.settled


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, event):
        if isinstance(event, ev.TrialStarted):
            self.events.append(("start", event.frame_size, event.step, event.labels["pct_line_rate"],
                                round(event.rate_fps, 2)))
        elif isinstance(event, ev.SizeDone):
            self.events.append(("result", event.result.frame_size))


def test_run_frame_loss_per_size():
    config = FrameLossConfig(frame_sizes=[64, 1518], trial_duration_ns=1_000_000, wait_ns=100_000)
    tester, recorder = FakeTester(limit_pct=45), Recorder()
    small, large = run_frame_loss(tester, config, recorder)
    for r in (small, large):
        assert [p.offered_pct for p in r.points] == [100, 90, 80, 70, 60, 50, 40, 30] and r.settled
        assert [p.loss_pct > 0 for p in r.points] == [True] * 6 + [False] * 2
        assert r.points[0].loss_pct == pytest.approx(55, abs=1.5)   # few frames of 1518 B in 1 ms
    assert recorder.events[0] == ("start", 64, 1, 100, round(line_rate_fps(64), 2))
    assert tester.calls[1][1:] == (line_rate_fps(64) * 0.9, 1_000_000, 100_000)
    assert recorder.events[-1] == ("result", 1518)


def test_config_checks_and_notes():
    with pytest.raises(ValueError):
        FrameLossConfig(frame_sizes=[64], trial_duration_ns=1, wait_ns=0, points_pct=[0])
    with pytest.raises(ValueError):
        FrameLossConfig(frame_sizes=[64], trial_duration_ns=1, wait_ns=0, step_pct=0)
    rfc = FrameLossConfig(frame_sizes=[64], trial_duration_ns=60_000_000_000, wait_ns=2_000_000_000)
    assert rfc.notes() == [] and not rfc.scaled_down
    sim = FrameLossConfig(frame_sizes=[64], trial_duration_ns=1_000_000, wait_ns=100_000, step_pct=20,
                          points_pct=None)
    notes = " | ".join(sim.notes())
    assert "1 ms" in notes and "coarser" in notes


GOLDEN = """\
frame_size_B,offered_pct_line_rate,offered_fps,theoretical_max_fps,duration_ms,frames_sent,frames_received,\
frames_lost,loss_pct,frames_duplicated,frames_out_of_order,frames_late,fcs_errors,measured_rx_fps
64,100.000,1488095.24,1488095.24,1.000,1489,1016,473,31.7663,,,,0,1016000.00
64,90.000,1339285.71,1488095.24,1.000,14881,14889,19,0.1277,27,0,0,0,14889000.00
64,60.000,892857.14,1488095.24,1.000,893,893,0,0.0000,,,,0,893000.00
"""


def test_frame_loss_csv_golden():
    """A build without sequence tracking (empty sequence columns), and one with: a DUT that lost
    19 frames and duplicated 27 (1000 sent - 8 more received) shows 19 lost, not -8."""
    line = line_rate_fps(64)
    points = [FrameLossPoint(offered_pct=pct, offered_fps=line * pct / 100,
                             trial=make_trial(64, line * pct / 100, sent, received, duration_ns=1_000_000,
                                              sequence=sequence))
              for pct, sent, received, sequence in ((100, 1489, 1016, None),
                                                    (90, 14881, 14889, {"lost": 19, "duplicate": 27}),
                                                    (60, 893, 893, None))]
    result = FrameLossResult(frame_size=64, theoretical_max_fps=line, settled=False, points=points)
    assert frame_loss_csv([result]) == GOLDEN
    assert [p.loss_pct >= 0 for p in points] == [True] * 3
