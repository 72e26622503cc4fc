"""--config FILE: a TOML or YAML file is equivalent to the flags, the command line overrides it,
and every bad file is one line naming the file and the key, exit code 2, never a traceback."""

import json
import textwrap

import pytest
from clirun import run
from ebserver import EtherboneServer, serve_identity
from records import parameters
from typer.main import get_command

from wirespeed import cli
from wirespeed.cli import configfile as config
from wirespeed.cli.app import defaults_for

RUN_TOML = """\
tests = ["throughput", "frame-loss"]
sizes = [64, 128, 1518]
dut = "router:rate=400k,queue=256,latency=20us"
trial-duration = "10ms"
wait = "2ms"
resolution = 0.5
max_trials = 7
latency-definition = "store-and-forward"
learning = false
address = ["0:mac=02:00:00:00:00:01,ipv4=198.18.0.1"]
loss-points = [100, 90.5, 50]
"""

RUN_YAML = """\
tests: [throughput, frame-loss]
sizes: [64, 128, 1518]
dut: "router:rate=400k,queue=256,latency=20us"
trial_duration: 10ms
wait: 2ms
resolution: 0.5
max-trials: 7
latency-definition: store-and-forward
learning: false
address:
  - "0:mac=02:00:00:00:00:01,ipv4=198.18.0.1"
loss_points: "100,90.5,50"
"""

RUN_FLAGS = ["--tests", "throughput,frame-loss", "--sizes", "64,128,1518",
             "--dut", "router:rate=400k,queue=256,latency=20us", "--trial-duration", "10ms", "--wait", "2ms",
             "--resolution", "0.5", "--max-trials", "7", "--latency-definition", "store-and-forward",
             "--no-learning", "--address", "0:mac=02:00:00:00:00:01,ipv4=198.18.0.1",
             "--loss-points", "100,90.5,50"]



def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("wirespeed: error: "), lines[0]
    assert "Traceback" not in err
    return lines[0].removeprefix("wirespeed: error: ")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def params(command_name, *argv):
    """Every parameter of a command (parsed, defaults filled in) as click resolves it."""
    command = get_command(cli.app).commands[command_name]
    try:
        with command.make_context(command_name, [str(a) for a in argv]) as ctx:
            return {k: v for k, v in ctx.params.items() if k != "config_file"}
    finally:
        config.reset()


# The same parameters as the flags -----------------------------------------------------------------------


@pytest.mark.parametrize("name, text", [("run.toml", RUN_TOML), ("run.yaml", RUN_YAML), ("run.yml", RUN_YAML)])
def test_file_gives_the_parameters_of_the_flags(tmp_path, name, text):
    path = write(tmp_path, name, text)
    from_file = defaults_for("rfc2544", path)
    assert from_file == {k: v for k, v in params("rfc2544", *RUN_FLAGS).items() if k in from_file}
    assert from_file["sizes"] == [64, 128, 1518] and from_file["trial_duration"] == 10_000_000
    assert from_file["learning"] is False and from_file["loss_points"] == [100.0, 90.5, 50.0]
    assert len(from_file) == 11
    # and the whole parameter set of the command, defaults included
    assert params("rfc2544", "--config", path) == params("rfc2544", *RUN_FLAGS)


@pytest.mark.parametrize("text", ["ip-version = 6\n", 'ip-version = "6"\n', "ip_version: 6\n"])
def test_the_ip_version_in_a_file_is_the_flags(tmp_path, text):
    path = write(tmp_path, "v.yaml" if ":" in text else "v.toml", text)
    assert params("rfc2544", "--config", path) == params("rfc2544", "--ip-version", "6")
    assert params("rfc2544", "--config", path)["ip_version"] == 6 != params("rfc2544")["ip_version"]


def test_toml_and_yaml_agree(tmp_path):
    assert (defaults_for("rfc2544", write(tmp_path, "a.toml", RUN_TOML))
            == defaults_for("rfc2544", write(tmp_path, "a.yaml", RUN_YAML)))


def test_command_line_overrides_the_file(tmp_path):
    path = write(tmp_path, "run.toml", RUN_TOML)
    got = params("rfc2544", "--config", path, "--sizes", "256", "--learning", "--resolution", "1",
                 "--address", "1:ipv4=198.19.0.9")
    assert got["sizes"] == [256] and got["learning"] is True and got["resolution"] == 1.0
    assert got["address"] == ["1:ipv4=198.19.0.9"]           # replaces the file's list, no merge
    assert got["max_trials"] == 7 and got["trial_duration"] == 10_000_000   # the rest from the file
    # the order does not matter: --config is read first
    assert params("rfc2544", "--sizes", "256", "--config", path)["sizes"] == [256]


def test_sections_for_several_commands(tmp_path):
    path = write(tmp_path, "lab.toml", """\
        target = "sim"
        [rfc2544]
        sizes = [64, 1518]
        dut = "bsdrp-306m"
        [calibrate]
        sizes = "64,1518"
        cable_delay = "5ns"
        dut = "loopback:delay=5ns"
        [capture]
        out = "x.pcap"
        size = "imix:aaaaaaag"
        udp-checksum = true
        """)
    assert defaults_for("rfc2544", path) == {"target": "sim", "sizes": [64, 1518], "dut": "bsdrp-306m"}
    assert defaults_for("calibrate", path) == {"target": "sim", "sizes": [64, 1518], "cable_delay": 5,
                                                      "dut": "loopback:delay=5ns"}
    cap = defaults_for("capture", path)
    assert cap["udp_checksum"] is True and str(cap["out"]) == "x.pcap"


def test_a_section_overrides_the_top_level(tmp_path):
    path = write(tmp_path, "run.yaml", """\
        sizes: [64]
        rfc2544:
          sizes: [128]
        """)
    assert defaults_for("rfc2544", path) == {"sizes": [128]}


def test_an_empty_file_changes_nothing(tmp_path):
    for name in ("empty.toml", "empty.yaml"):
        path = write(tmp_path, name, "")
        assert defaults_for("rfc2544", path) == {}
        assert params("rfc2544", "--config", path) == params("rfc2544")


def test_the_run_sees_the_file_values(capsys, tmp_path, monkeypatch):
    """Through main(): the command body gets what the flags give it (stopped before any simulation)."""
    seen = []

    def stop(dut, *args):
        seen.append(dut)
        raise cli.InputError("--dut", "stopped by the test")

    monkeypatch.setattr(cli.rfc2544, "rtl_dut", stop)
    code, _, err = run(capsys, "rfc2544", "--config", write(tmp_path, "run.toml", RUN_TOML))
    assert code == 2 and seen == ["router:rate=400k,queue=256,latency=20us"]
    assert one_line_error(err) == "run.toml: dut: stopped by the test".replace(
        "run.toml", str(tmp_path / "run.toml"))
    code, _, err = run(capsys, "rfc2544", "--config", tmp_path / "run.toml", "--dut", "bsdrp-306m")
    assert code == 2 and seen[-1] == "bsdrp-306m"
    assert one_line_error(err) == "--dut: stopped by the test"     # given as a flag: named as the flag


def test_a_bad_dut_from_the_file_names_the_file_and_key(capsys, tmp_path):
    path = write(tmp_path, "run.toml", 'dut = "toaster"\n')
    code, out, err = run(capsys, "rfc2544", "--config", path)
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(f"{path}: dut: dut 'toaster': unknown model")


def test_a_whole_run_from_a_file(capsys, regmap, tmp_path):
    """A register-file server never forwards a frame: the search ends at zero; the parameters come
    from the file (same check as test_cli's flag-driven run)."""
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        path = write(tmp_path, "run.toml", f"""\
            target = "{server.url}"
            dut = "a cable"
            out = "{tmp_path / 'r'}"
            json = true
            sizes = 64
            trial-duration = "2us"
            wait = "1us"
            resolution = 10
            settle = "1us"
            """)
        code, out, err = run(capsys, "rfc2544", "--config", path)
    assert code == 0, err
    record = json.loads(out)
    assert record["dut"] == {"description": "a cable"} and record["target"] == server.url
    params = parameters(record, "throughput")
    assert params["trial_duration_ns"] == 2000 and params["resolution_pct"] == 10
    assert params["frame_sizes"] == [64]
    kept = record["config_file"]           # the run's file, whole, in the self-describing results
    assert kept["path"].endswith("run.toml") and "resolution = 10" in kept["text"] and len(kept["sha256"]) == 64


def test_the_loaded_file_is_kept_for_the_results(tmp_path):
    path = write(tmp_path, "run.toml", RUN_TOML)
    cfg = config.load(path)
    record = cfg.record()
    assert record["path"] == str(path) and record["format"] == "TOML" and record["text"] == RUN_TOML
    assert len(record["sha256"]) == 64


# Errors: one line naming the file and the key, exit code 2 ----------------------------------------------


@pytest.mark.parametrize("name, text, expected", [
    # unknown key, with a suggestion
    ("run.toml", 'trial-durations = "1ms"\n',
     "run.toml: trial-durations: not an option of 'rfc2544'; did you mean 'trial-duration'? the keys are its long "
     "options (see wirespeed rfc2544 --help)"),
    ("run.toml", "bogus = 1\n", "run.toml: bogus: not an option of 'rfc2544'; the keys are its long options"),
    ("run.toml", '[rfc2544]\nfoo = 1\n', "run.toml: rfc2544.foo: not an option of 'rfc2544'"),
    # a key of another command at the top level is an error (top-level keys apply to every command)
    ("run.toml", 'cable-delay = "5ns"\n', "run.toml: cable-delay: not an option of 'rfc2544'"),
    # wrong types
    ("run.toml", "sizes = { a = 1 }\n", "run.toml: sizes: one value (or a list) as --sizes LIST takes; not a table"),
    ("run.toml", "resolution = [1, 2]\n", "run.toml: resolution: one value as --resolution PCT takes; not a list"),
    ("run.toml", "dut = true\n", "run.toml: dut: one value as --dut takes; not true/false"),
    ("run.toml", "learning = 1\n",
     "run.toml: learning: true or false (as --learning / --no-learning); not the number 1"),
    ("run.toml", "sizes = []\n", "run.toml: sizes: a list of values or comma-separated text (as --sizes LIST); "
                                 "not an empty list"),
    ("run.toml", "sizes = [64, [128]]\n", "run.toml: sizes: a list of values or comma-separated text (as --sizes "
                                          "LIST); not a list holding a list"),
    ("run.toml", "address = [{ a = 1 }]\n", "run.toml: address: text, or a list of texts each as one --address"),
    ("run.toml", "rfc2544 = 3\n", "run.toml: rfc2544: a table of the 'rfc2544' command's options; not the number 3"),
    ("run.yaml", "dut: ~\n", "run.yaml: dut: one value as --dut takes; not null"),
    ("run.yaml", "- 1\n- 2\n", "run.yaml: a mapping of option names to values at the top; not a list"),
    # refused by the option's own parser: the flag's message
    ("run.toml", "resolution = 0\n", "run.toml: resolution: a percentage of line rate in (0, 100], e.g. 0.1; "
                                     "not '0'"),
    ("run.toml", "sizes = [64, 9100]\n", "run.toml: sizes: frame size 9100: the tester sends 64..9018 bytes"),
    ("run.toml", 'tests = ["jitter"]\n', "run.toml: tests: one or more of throughput (or latency), frame-loss, "
                                         "back-to-back, system-recovery (or recovery), reset; not 'jitter'"),
    ("run.toml", "max-trials = 0\n", "run.toml: max-trials: "),
    ("run.yaml", "trial-duration: 10 parsecs\n", "run.yaml: trial-duration: "),
    ("run.toml", 'address = ["5"]\n', "run.toml: address: PORT:mac=MAC,ipv4=ADDR,ipv6=ADDR"),
    # twice
    ("run.toml", 'trial-duration = "1ms"\ntrial_duration = "2ms"\n',
     "run.toml: trial_duration: given twice (also as 'trial-duration')"),
    ("run.yaml", "sizes: 64\nsizes: 128\n", "run.yaml: line 2, column 1: not valid YAML: key 'sizes' given twice"),
    # malformed, with the line
    ("run.toml", 'sizes = [64, 128\nwait = "1ms"\n', "run.toml: line 2, column 1: not valid TOML: "),
    ("run.toml", 'sizes = [64,\n', "run.toml: line 1: not valid TOML: "),
    ("run.yaml", "sizes: [64\nwait: 1ms\n", "run.yaml: line 2, column 5: not valid YAML: "),
    ("run.yaml", "a: b: c\n", "run.yaml: line 1, column 5: not valid YAML: mapping values are not allowed here"),
    # --config inside the file
    ("run.toml", 'config = "other.toml"\n', "run.toml: config: not in a config file"),
    ("run.yaml", "rfc2544:\n  config: other.yaml\n", "run.yaml: rfc2544.config: not in a config file"),
])
def test_bad_file_is_one_line_naming_file_and_key(capsys, tmp_path, monkeypatch, name, text, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    code, out, err = run(capsys, "rfc2544", "--config", name)
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(expected)


def test_a_bad_file_value_is_refused_even_when_the_flag_overrides_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text("resolution = 200\n")
    code, _, err = run(capsys, "rfc2544", "--config", "run.toml", "--resolution", "1")
    assert code == 2 and one_line_error(err).startswith("run.toml: resolution: a percentage")


@pytest.mark.parametrize("argv, expected", [
    (["--config", "missing.toml"], "--config: cannot read missing.toml: No such file or directory"),
    (["--config", "run.json"], "--config: a .toml, .yaml or .yml file; not 'run.json'"),
    (["--config", "."], "--config: a .toml, .yaml or .yml file"),
    (["--config", "dir.toml"], "--config: cannot read dir.toml: Is a directory"),
    (["--config"], "--config: "),
])
def test_bad_config_option(capsys, tmp_path, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text("{}")
    (tmp_path / "dir.toml").mkdir()
    code, out, err = run(capsys, "rfc2544", *argv)
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(expected)


def test_not_utf8(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_bytes(b"dut = '\xff'\n")
    code, _, err = run(capsys, "rfc2544", "--config", "run.toml")
    assert code == 2 and one_line_error(err) == "run.toml: not UTF-8 text (byte 7)"


@pytest.mark.parametrize("command, text, expected", [
    ("calibrate", 'cable_delay = "x"\n', "run.toml: cable_delay: a number with a unit"),
    ("calibrate", 'tests = "throughput"\n', "run.toml: tests: not an option of 'calibrate'"),
    ("calibrate", '[calibrate]\ndut = "router:rate=1k"\n', "run.toml: calibrate.dut: a loopback without"),
    ("capture", 'out = "x.pcap"\nsnaplen = 8\n', "run.toml: snaplen: "),
    ("capture", 'out = "/nonexistent-dir/x.pcap"\ndut = "loopback"\n', "run.toml: out: no directory"),
    ("capture", 'dut = "loopback"\n', "--out: required"),
])
def test_other_commands(capsys, tmp_path, monkeypatch, command, text, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(text)
    code, out, err = run(capsys, command, "--config", "run.toml")
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(expected)


def test_errors_of_an_earlier_call_are_not_attributed_to_a_file(capsys, tmp_path):
    run(capsys, "rfc2544", "--config", write(tmp_path, "run.toml", 'dut = "toaster"\n'))
    code, _, err = run(capsys, "rfc2544", "--dut", "toaster")
    assert code == 2 and one_line_error(err).startswith("--dut: ")


def test_the_examples_of_the_docs_are_valid(tmp_path):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "config.md").read_text()
    blocks = re.findall(r"```(toml|yaml)\n(.*?)```", doc, re.S)
    assert [lang for lang, _ in blocks] == ["toml", "yaml"]
    toml = defaults_for("rfc2544", write(tmp_path, "bsdrp.toml", blocks[0][1]))
    yaml = defaults_for("rfc2544", write(tmp_path, "lab.yaml", blocks[1][1]))
    assert toml["dut"] == yaml["dut"] == "bsdrp-306m"
    assert toml["sizes"] == yaml["sizes"] == [64, 128, 256, 512, 1024, 1280, 1518]
    assert str(defaults_for("calibrate", tmp_path / "lab.yaml")["out"]) == "calibration.json"
