"""Bad input the hostile-user session got through: each is one line on stderr and exit 2, on
the command line and through a --config file alike, before anything runs; compare never
tracebacks nor prints inf/nan; report reads only the results format it knows."""

import json
import math
import re

import pytest
from clirun import run

from wirespeed.compare import DataSet, format_report, report_json
from wirespeed.rfc2544.plan import Plan, PlanError

BOARD = ["--target", "udp://127.0.0.1:9", "--out", "unused"]    # refused before it is reached



def one_line(err, field):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("args, field, text", [
    (["--sizes", "imix:aj"], "--sizes", "16000 bytes is outside the tester's frame sizes 64..9018"),
    (["--sizes", "64,9019"], "--sizes", "frame size 9019: the tester sends 64..9018 bytes (FCS included)"),
    (["--address", "0:mac=ff:ff:ff:ff:ff:ff"], "--address", "mac: a unicast address"),
    (["--address", "1:mac=01:00:5e:00:00:01"], "--address", "mac: a unicast address"),
    (["--address", "0:ipv4=224.0.0.5"], "--address", "ipv4: a unicast address"),
    (["--address", "0:ipv4=255.255.255.255"], "--address", "ipv4: a unicast address"),
    (["--address", "1:ipv6=ff02::1"], "--address", "ipv6: a unicast address"),
    (["--address", "0:ipv4=198.19.0.1"], "--address", "ports 0 and 1 have the same ipv4 198.19.0.1"),
    (["--address", "0:ipv4=198.18.0.7", "--address", "1:ipv4=198.18.0.7"], "--address", "the same ipv4"),
    (["--address", "1:mac=02:00:00:00:00:01"], "--address", "the same mac"),
    (["--address", "0:ipv4=198.18.0.2", "--address", "0:ipv4=198.18.0.3"], "--address", "port 0 is given twice"),
    (["--uart-faults", "drop=1000,drop=2000"], "--uart-faults", "drop is given twice"),
    (["--uart-faults", ""], "--uart-faults", "at least one KIND=PPM"),
    (["--uart-faults", "drop=1000,"], "--uart-faults", "KIND=PPM"),
    (["--ip-version", "5"], "--ip-version", "4 or 6; not '5'"),
    (["--ip-version", "6", "--sizes", "64,128"], "--sizes", "IPv6 test frames are at least 82 bytes (headers, "
                                                            "signature, FCS); not 64"),
    (["--ip-version", "6", "--sizes", "imix:aaaaaaag"], "--sizes", "IPv6 test frames are at least 82 bytes"),
])
def test_bad_input_that_got_through_is_refused(capsys, tmp_path, args, field, text):
    code, out, err = run(capsys, "rfc2544", *BOARD, *args)
    assert code == 2 and out == "" and text in one_line(err, field)
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize("toml, key, text", [
    ('sizes = "imix:aj"\n', "sizes", "16000 bytes is outside"),
    ('sizes = ["64", "9019"]\n', "sizes", "the tester sends 64..9018 bytes"),
    ('address = "0:mac=ff:ff:ff:ff:ff:ff"\n', "address", "mac: a unicast address"),
    ('address = ["0:ipv4=198.18.0.9", "1:ipv4=198.18.0.9"]\n', "address", "the same ipv4"),
    ('address = ["0:ipv4=198.18.0.2", "0:ipv6=2001:2::7"]\n', "address", "port 0 is given twice"),
    ('uart-faults = "drop=1000,drop=2000"\n', "uart-faults", "drop is given twice"),
    ('uart-faults = ""\n', "uart-faults", "at least one KIND=PPM"),
    ("ip-version = 5\n", "ip-version", "4 or 6; not '5'"),
])
def test_the_same_input_from_a_config_file_names_the_file_and_key(capsys, tmp_path, monkeypatch, toml, key, text):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(toml)
    code, out, err = run(capsys, "rfc2544", "--config", "run.toml", *BOARD)
    assert code == 2 and out == "" and text in one_line(err, f"run.toml: {key}")


@pytest.mark.parametrize("text", ["1\n1e400\n2\n", "-1e400\n1\n"])
def test_compare_refuses_numbers_beyond_a_double(capsys, tmp_path, text):
    (tmp_path / "a.txt").write_text(text)
    for extra in ([], ["-n"], ["--json"]):
        code, out, err = run(capsys, "compare", str(tmp_path / "a.txt"), *extra)
        assert code == 2 and out == "" and "is beyond the range of a double" in one_line(err, str(tmp_path / "a.txt"))


def test_compare_handles_a_variance_beyond_a_double(capsys, tmp_path):
    """1e200 2e200 3e200: the variance (1e400) overflows, the standard deviation (1e200) does
    not: it is computed and printed; nothing prints inf or nan."""
    (tmp_path / "big.txt").write_text("1e200\n2e200\n3e200\n")
    (tmp_path / "small.txt").write_text("1\n2\n3\n")
    (tmp_path / "one.txt").write_text("5\n")
    for args in (["big.txt"], ["big.txt", "-n"], ["big.txt", "small.txt"], ["small.txt", "big.txt"],
                 ["one.txt", "-n"], ["big.txt", "small.txt", "-A"]):
        code, out, err = run(capsys, "compare", *(str(tmp_path / a) if a.endswith(".txt") else a for a in args))
        assert code == 0 and err == "", (args, err)
        assert not re.search(r"\b(inf|nan)\b", out, re.I), (args, out)
    code, out, _ = run(capsys, "compare", str(tmp_path / "big.txt"), "-n")
    assert out.splitlines()[-1].split()[1:] == ["3", "1e+200", "3e+200", "2e+200", "2e+200", "1e+200"]
    code, out, _ = run(capsys, "compare", str(tmp_path / "big.txt"), str(tmp_path / "small.txt"), "--json")
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_compare_refuses_a_spread_beyond_a_double(capsys, tmp_path):
    (tmp_path / "wide.txt").write_text("1.7e308\n-1.7e308\n")
    code, out, err = run(capsys, "compare", str(tmp_path / "wide.txt"), "-n")
    assert code == 2 and "the standard deviation is beyond a double" in one_line(err, str(tmp_path / "wide.txt"))


def test_compare_functions_print_no_inf_or_nan():
    sets = [DataSet("zero mean", (-1.0, 1.0, 0.0)), DataSet("b", (10.0, 11.0, 12.0))]
    text = format_report(sets)
    assert not re.search(r"\b(inf|nan)\b", text, re.I) and "undefined" in text
    out = report_json(sets)
    assert all(v is None or math.isfinite(v) for c in out["comparisons"] for v in c.values()
               if isinstance(v, float))


def test_report_refuses_a_format_it_does_not_know(capsys, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"format": "wirespeed-results/99", "status": "complete"}))
    code, out, err = run(capsys, "report", str(tmp_path))
    line = one_line(err, "RESULTS_DIR")
    assert code == 2 and "format 'wirespeed-results/99' is not one this wirespeed" in line
    assert "'wirespeed-results/1'" in line and not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(("options", "error"), [
    ({"search_duration": "500us", "max_trials": "7"}, None),
    ({"search_duration": "5 parsecs"}, "--search-duration: "),
    ({"max_trials": "many"}, "--max-trials: an integer, not 'many'"),
    ({"max_trials": 0}, "--max-trials: at least 1, not 0"),
    ({"resolutoin": 0.5}, "options: no test option named 'resolutoin'"),
])
def test_a_scripts_option_values_are_parsed_and_checked_as_the_command_lines(options, error):
    """A script's Plan(options=...): text as a user types it is parsed; a value out of range or
    not of the option's kind, or a name no test has, is a PlanError naming the option (not a
    TypeError from inside a test's configuration)."""
    plan = Plan(tests=["throughput"], sizes=[64], target="sim", options=options)
    if error is None:
        config = plan.configs()["throughput"]
        assert (config.search_duration_ns, config.max_trials) == (500_000, 7)
        return
    with pytest.raises(PlanError) as caught:
        plan.configs()
    assert str(caught.value).startswith(error) and "\n" not in str(caught.value)


def test_an_options_parsed_text_value_parses_to_itself():
    """Plan(options=...) parses text; the command line hands it values already parsed, so a
    parser whose value is text must take that value back unchanged."""
    from wirespeed.rfc2544 import registry

    for test in registry.all_tests():
        for opt in test.options:
            if opt.parse is not None and opt.default is not None and isinstance(opt.parse(opt.default), str):
                assert opt.parse(opt.parse(opt.default)) == opt.parse(opt.default), opt.flag
