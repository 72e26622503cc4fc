"""A results folder with all six RFC 2544 tests (26.1 to 26.6: throughput with its latency,
frame loss, back-to-back, system recovery, reset), written by the real results writer from
fake trials, with a title, an operator and DUT facts: what the report tests render."""

from __future__ import annotations

from fakes import make_trial
from test_report import header, write_run

from wirespeed.ethernet import line_rate_fps
from wirespeed.results import ResultsWriter
from wirespeed.rfc2544.suite.recovery import RecoveryConfig, RecoveryResult, RecoveryTrial
from wirespeed.rfc2544.suite.reset import ResetConfig, ResetResult, ResetTrial

TESTS = ("throughput", "frame-loss", "back-to-back", "system-recovery", "reset")
SIZES = (64, 512, 1518)
TITLE = "Edge router XS-1930 acceptance"
OPERATOR = "J. Example"
DUT_INFO = {"model": "XS-1930", "serial": "S/N 0042-7781", "firmware": "4.2.1"}


def write_six(out_dir):
    """The run of :func:`test_report.write_run` (26.1 to 26.4), then 26.5 and 26.6 added to
    the same record."""
    from wirespeed.results import load_record

    record = load_record(write_run(out_dir.parent / f"{out_dir.name}-first-four"))
    head = header(("throughput", "frame-loss", "back-to-back"), SIZES)
    recovery = RecoveryConfig(frame_sizes=list(SIZES), overload_ns=2_000_000, recovery_ns=2_000_000, wait_ns=100_000,
                              repetitions=2)
    reset = ResetConfig(frame_sizes=[64], trial_duration_ns=4_000_000, reset_at_ns=1_000_000, wait_ns=100_000,
                        repetitions=2)
    head.tests = [{"name": e.name, "parameters": e.parameters} for e in record.tests]
    head.tests += [{"name": "system-recovery", "parameters": recovery}, {"name": "reset", "parameters": reset}]
    head.test = "rfc2544-" + "+".join(TESTS)
    head.title, head.operator, head.dut_info = TITLE, OPERATOR, dict(DUT_INFO)
    head.plan = {"expect": ["throughput_pct>=25@64", "loss_pct<=10"]}
    head.notes = record.notes + recovery.notes()
    writer = ResultsWriter(out_dir, head)
    for trial, tag in zip(record.trials, record.trial_tags):
        writer.record_trial(trial, **tag)
    for entry in record.tests:
        for result in entry.results:
            writer.record_result(entry.name, result)
    for size, recovery_ns in zip(SIZES, (12_345_678, 2_500_000, 0)):
        trials = []
        for rep in (1, 2):
            trial = make_trial(size, 440_000.0, 2000, 1800 + rep, duration_ns=4_000_000)
            writer.record_trial(trial, test="system-recovery", repetition=rep)
            trials.append(RecoveryTrial(overload_fps=440_000.0, reduced_fps=220_000.0, timestamp_a_ns=2_000_104,
                                        timestamp_b_ns=None if recovery_ns == 0 else 2_000_104 + recovery_ns + rep,
                                        recovery_ns=0 if recovery_ns == 0 else recovery_ns + rep,
                                        recovered=True, lost_overload=199 - rep, lost_reduced=1, trial=trial))
        writer.record_result("system-recovery", RecoveryResult(frame_size=size, throughput_fps=400_000.0,
                                                               trials=trials))
    trials = []
    for rep, gap in ((1, 1_234_567), (2, 1_300_001)):
        trial = make_trial(64, 400_000.0, 1600, 1100, duration_ns=4_000_000)
        writer.record_trial(trial, test="reset", repetition=rep)
        trials.append(ResetTrial(rate_fps=400_000.0, reset_ns=gap, last_before_ns=1_000_008,
                                 first_after_ns=1_000_008 + gap, frames_lost=500,
                                 loss_reset_ns=500 / 400_000.0 * 1e9, trigger="simulated DUT control window",
                                 trial=trial))
    writer.record_result("reset", ResetResult(frame_size=64, trials=trials))
    writer.finish("complete")
    assert line_rate_fps(64) > 400_000
    return out_dir
