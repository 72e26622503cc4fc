"""The reset test's figures from a trial's counters (RFC 6201): the timestamp method's reset
time is the longest interval between two frames received, but only when a reset was seen."""

from fakes import make_trial

from wirespeed.rfc2544.suite.reset import reset_of

RATE = 400_000.0                     # one frame every 2,500 ns


def trial(sent, received, gap_max, gap_end):
    t = make_trial(64, RATE, sent, received)
    t.counters[1] = t.counters[1].model_copy(update={"gap_max": gap_max, "gap_end_rx": gap_end})
    return t


def test_a_reset_gives_the_longest_interval_and_the_loss_method():
    r = reset_of(trial(4000, 3598, 1_004_500, 3_000_000), "hook: x")
    assert r.reset_ns == 1_004_500
    assert (r.last_before_ns, r.first_after_ns) == (1_995_500, 3_000_000)
    assert r.frames_lost == 402 and r.loss_reset_ns == 402 / RATE * 1e9


def test_no_frame_lost_and_only_the_frame_spacing_is_no_reset_seen():
    """A hook that returned after the trial, or did nothing: the longest interval is the
    frame spacing and must not be reported as a reset time."""
    r = reset_of(trial(4000, 4000, 2_504, 1_000_000), "hook: x")
    assert r.reset_ns is None and r.last_before_ns is None and r.frames_lost == 0


def test_a_dut_that_buffers_through_its_reset_loses_nothing_but_shows_the_gap():
    r = reset_of(trial(4000, 4000, 900_000, 2_000_000), "hook: x")
    assert r.reset_ns == 900_000 and r.frames_lost == 0
