"""Expectations and verdicts (--expect, --max-latency, --max-loss) and the JUnit file (--junit):
the parser says what is allowed, a verdict compares the recorded figure, a missed one makes the
exit code 3 after every result is written, and the JUnit file reads back with a JUnit reader
as a CI system reads it."""

import json

import pytest
from clirun import FAST, run
from fakes import FakeTester
from junitparser import Error, Failure, JUnitXml

from wirespeed.rfc2544.expect import format_value, parse_expectation, verdicts
from wirespeed.rfc2544.plan import Plan, PlanError
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput

pytestmark = pytest.mark.usefixtures("own_lock_dir")


def test_an_expectation_parses_into_metric_op_limit_and_sizes():
    e = parse_expectation(" throughput_pct >= 99.5 % @ 64,imix:aaaaaaag ")
    assert (e.test, e.metric, e.op, e.limit, e.unit) == ("throughput", "throughput_pct", ">=", 99.5, "%")
    assert e.sizes == [64, "imix:aaaaaaag"]
    assert parse_expectation("loss_pct<0.1").test == "frame-loss"
    assert parse_expectation("b2b_frames>1000@1518").sizes == [1518]
    assert parse_expectation("latency_us<=50us").limit == 50


@pytest.mark.parametrize("text, says", [
    ("latency<=50", "METRIC one of throughput_pct,"),
    ("throughput_pct=>99", "OP one of >=, <=, >, <, =="),
    ("latency_us<=5ms", "latency_us is in us: write the value in us or without a unit, not '5ms'"),
    ("throughput_pct>=99@63", "@SIZES of 'throughput_pct>=99@63': frame size 63"),
])
def test_a_bad_expectation_says_what_is_allowed(text, says):
    with pytest.raises(ValueError, match=None) as exc:
        parse_expectation(text)
    assert says in str(exc.value)


def test_an_expectation_needs_its_test_and_its_sizes_in_the_plan():
    with pytest.raises(PlanError, match="--expect: loss_pct is a figure of the frame-loss test: add frame-loss"):
        Plan(tests=["throughput"], sizes=[64], expect=["loss_pct<=1"]).configs()
    with pytest.raises(PlanError, match="names frame size 1518, which --sizes does not have"):
        Plan(tests=["throughput"], sizes=[64], expect=["throughput_pct>=1@1518"]).configs()


def test_verdicts_compare_each_size_and_a_size_not_measured_fails():
    config = ThroughputConfig(frame_sizes=[64, 1518], trial_duration_ns=10_000_000, wait_ns=0, resolution_pct=1)
    results = run_throughput(FakeTester(limit_pct=40), config)
    pct = {r.frame_size: r.pct_line_rate for r in results}
    assert 39 <= pct[64] <= 40 and 39 <= pct[1518] <= 40
    got = verdicts([parse_expectation("throughput_pct>=39"), parse_expectation(f"throughput_pct>{pct[1518]}@1518"),
                    parse_expectation("latency_us<=1.05@64"), parse_expectation("throughput_fps>0@128")],
                   {"throughput": results})
    assert [(v.expectation, v.frame_size, v.passed) for v in got] == [
        ("throughput_pct>=39", 64, True), ("throughput_pct>=39", 1518, True),
        (f"throughput_pct>{pct[1518]}@1518", 1518, False),
        ("latency_us<=1.05@64", 64, True),          # the fake's frames average 1,000 ns
        ("throughput_fps>0@128", 128, False)]
    assert got[-1].value is None and format_value(None, "fps") == "not measured"
    assert format_value(424854.59, "fps") == "424,854.59 fps"


def test_a_missed_expectation_is_exit_code_3_with_the_results_and_junit_written(capsys, server, tmp_path):
    out, junit = tmp_path / "run", tmp_path / "junit.xml"
    # the register-file server forwards nothing: every trial loses all, throughput 0
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST,
                       "--expect", "throughput_pct>=0", "--expect", "throughput_fps>=1000@64",
                       "--junit", str(junit))
    assert code == 3, err
    assert err.splitlines()[-1] == "wirespeed: 1 of 2 verdicts failed (exit code 3)"
    record = json.loads((out / "results.json").read_text())
    assert record["status"] == "complete"
    assert record["plan"]["expect"] == ["throughput_pct>=0", "throughput_fps>=1000@64"]
    assert (out / "Throughput.csv").is_file() and (out / "report.html").is_file()
    assert "<h3>Verdicts <small>(1 of 2 failed)</small></h3>" in (out / "report.html").read_text()

    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert [s.name for s in suites] == ["rfc2544.throughput"]
    (case,) = list(suites[0])
    assert case.name == "Throughput 64 B" and case.classname == "rfc2544.throughput"
    (failure,) = case.result
    assert isinstance(failure, Failure)
    assert failure.message == "FAIL: throughput_fps>=1000@64 at 64 B: 0.00 fps"
    assert xml.tests == 1 and xml.failures == 1 and xml.errors == 0


def test_met_expectations_exit_0_and_the_junit_case_passes(capsys, server, tmp_path):
    junit = tmp_path / "junit.xml"
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "run"), *FAST,
                       "--expect", "throughput_pct<=0", "--junit", str(junit), "--json")
    assert code == 0, err
    (case,) = list(list(JUnitXml.fromfile(str(junit)))[0])
    assert case.is_passed and "pass: throughput_pct<=0 at 64 B: 0.000 %" in case.system_out


def test_a_failed_run_gives_junit_errors_for_the_sizes_not_measured(capsys, server, tmp_path, monkeypatch):
    from wirespeed.errors import TransportError
    from wirespeed.host.device import Device

    calls = []

    def broken(self, *args, **kw):
        calls.append(1)
        if len(calls) > 1:
            raise TransportError("the tester went away")
        return real(self, *args, **kw)

    real = Device.run_trial
    monkeypatch.setattr(Device, "run_trial", broken)
    junit = tmp_path / "junit.xml"
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "run"), *FAST[2:],
                       "--sizes", "64,1518", "--junit", str(junit))
    assert code == 1, err
    cases = list(list(JUnitXml.fromfile(str(junit)))[0])
    assert [c.name for c in cases] == ["Throughput 64 B", "Throughput 1518 B"]
    assert all(isinstance(r, Error) and r.message.startswith("not measured: the run failed")
               for c in cases for r in c.result)


@pytest.mark.parametrize("argv, field, says", [
    (["--max-loss", "1"], "--max-loss", "checks a figure of the frame-loss test: add frame-loss to --tests"),
    (["--max-latency", "50"], "--max-latency", ""),
    (["--expect", "throughput>=1"], "--expect", "METRIC one of"),
])
def test_bad_verdict_options_are_one_line(capsys, server, tmp_path, argv, field, says):
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "run"), *FAST, *argv)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"wirespeed: error: {field}: ") and says in line
    assert not (tmp_path / "run").exists()


def test_a_config_file_sets_expectations_and_junit_like_the_flags(capsys, server, tmp_path):
    junit = tmp_path / "junit.xml"
    config = tmp_path / "ci.toml"
    config.write_text(f'[rfc2544]\nexpect = ["throughput_pct>=0", "throughput_pct>=50@64"]\njunit = "{junit}"\n')
    code, _, err = run(capsys, "rfc2544", "--config", str(config), "--target", server.url,
                       "--out", str(tmp_path / "run"), *FAST)
    assert code == 3, err
    assert JUnitXml.fromfile(str(junit)).failures == 1
