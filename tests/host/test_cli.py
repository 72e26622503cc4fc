"""The wirespeed command: bad input is one line on stderr and exit code 2, never a traceback;
runs write their results; Ctrl-C keeps them."""

import dataclasses
import json
import subprocess
import sys

import pytest
from clirun import interrupt, run
from ebserver import EtherboneServer, serve_identity
from records import parameters, results

from wirespeed import __version__
from wirespeed.gateware.config import BOARD_25F, SIM
from wirespeed.gateware.regmap import RegisterMap
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.rfc2544 import registry
from wirespeed.rfc2544.plan import Plan


def assert_one_line_error(err, field):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, field", [
    (["rfc2544", "--sizes", "20"], "--sizes"),
    (["rfc2544", "--sizes", "9019"], "--sizes"),
    (["rfc2544", "--sizes", "64,abc"], "--sizes"),
    (["rfc2544", "--sizes", "64,64"], "--sizes"),
    (["rfc2544", "--trial-duration", "10parsecs"], "--trial-duration"),
    (["rfc2544", "--trial-duration", "0ms"], "--trial-duration"),
    (["rfc2544", "--wait", "soon"], "--wait"),
    (["rfc2544", "--tests", "throughput,jitter"], "--tests"),
    (["rfc2544", "--resolution", "0"], "--resolution"),
    (["rfc2544", "--resolution", "abc"], "--resolution"),
    (["rfc2544", "--max-trials", "0"], "--max-trials"),
    (["rfc2544", "--target", "tcp://10.0.0.1"], "--target"),
    (["rfc2544", "--target", "udp://host:99999"], "--target"),
    (["rfc2544", "--target", "serial://"], "--target"),
    (["rfc2544", "--target", "serial:///dev/ttyUSB0?baud=fast"], "--target"),
    (["rfc2544", "--target", "socket://127.0.0.1"], "--target"),
    (["rfc2544", "--sizes", "64,imix:aq"], "--sizes"),
    (["rfc2544", "--sizes", "imix:ag,imix:ga"], "--sizes"),
    (["rfc2544", "--target", "sim"], "--dut"),
    (["rfc2544", "--target", "sim", "--dut", "toaster"], "--dut"),
    (["rfc2544", "--target", "sim", "--dut", "router:rate=fast"], "--dut"),
    (["rfc2544", "--bogus"], "--bogus"),
    (["rfc2544", "--sizes"], "--sizes"),
    (["regmap", "--json", "--markdown"], "--markdown"),
    (["benchmark"], "usage"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, field)


def test_bad_input_from_the_installed_command_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "wirespeed.cli", "rfc2544", "--sizes", "9019"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, "--sizes")


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, f"wirespeed {__version__}\n")


def test_regmap_json_is_the_gateware_map(capsys, regmap):
    code, out, _ = run(capsys, "regmap")
    assert code == 0
    exported = RegisterMap.from_json(out)
    assert exported.hash == regmap.hash and [r.name for r in exported] == [r.name for r in regmap]


def test_regmap_markdown_to_file(capsys, tmp_path, regmap):
    target = tmp_path / "registers.md"
    code, out, _ = run(capsys, "regmap", "--markdown", "--out", str(target))
    assert code == 0 and out == ""
    text = target.read_text()
    assert f"`{regmap.hash:#010x}`" in text and "`p1.ana.last_rx_ns`" in text


def test_unreachable_target(capsys):
    with EtherboneServer() as server:
        server.silent = True
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--out", "unused")
    assert code == 2
    assert_one_line_error(err, "--target")
    assert err.strip().endswith(f"no answer from {server.url} after 3 tries")


def test_unreachable_serial_target(capsys, tmp_path):
    import socket
    with socket.socket() as probe:          # a local port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = run(capsys, "rfc2544", "--target", f"socket://127.0.0.1:{port}", "--out", str(tmp_path / "r"))
    assert code == 2 and out == ""
    assert_one_line_error(err, "--target")
    assert "cannot open socket://127.0.0.1" in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("word, args, field, message", [
    (0, [], "--target", "id.config is 0: the gateware predates id.config"),
    (dataclasses.replace(BOARD_25F, responder=False).word(), [], "--learning",
     "built without the ARP/ND responder, which the learning phase needs"),
    (dataclasses.replace(BOARD_25F, stream_stats=False).word(),
     ["--no-learning", "--tests", "throughput,system-recovery"], "--tests",
     "built without per-stream receive statistics, which system-recovery needs"),
])
def test_gateware_configuration_the_host_cannot_run(capsys, regmap, tmp_path, word, args, field, message):
    """A board build without a block a run needs is refused with one line naming the option
    that needs it (and nothing written)."""
    with EtherboneServer() as server:
        serve_identity(server, regmap, **{"id.config": word})
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "r"), *args)
    assert code == 2 and out == ""
    assert_one_line_error(err, field)
    assert message in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("stream_stats", [True, False])
def test_a_board_build_runs_what_it_can(capsys, tmp_path, stream_stats):
    """The 25F build (one way) runs throughput with --no-learning, and so does one without
    per-stream statistics, whose results say that sequence errors were not counted. (A
    register file sends no frame: every trial fails, as in the register-file test below.)"""
    config = dataclasses.replace(BOARD_25F, stream_stats=stream_stats)
    rmap = build_register_map(config)
    with EtherboneServer() as server:
        serve_identity(server, rmap, **{"id.config": config.word()})
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--no-learning", "--dut", "a cable",
                             "--out", str(tmp_path), "--json", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record["status"] == "complete"
    noted = any(note.startswith("sequence numbers not tracked") for note in record["notes"])
    assert noted == (not stream_stats), record["notes"]


def test_calibration_runs_on_a_board_build(capsys, tmp_path):
    """calibrate reads neither the per-stream statistics nor the responder, so a one-way
    board build without either is not refused: against a register file it gets as far as
    its first trial, which receives nothing (a tester with a cable would)."""
    config = dataclasses.replace(BOARD_25F, stream_stats=False, responder=False)
    rmap = build_register_map(config)
    with EtherboneServer() as server:
        serve_identity(server, rmap, **{"id.config": config.word()})
        code, out, err = run(capsys, "calibrate", "--target", server.url, "--sizes", "64",
                             "--trial-duration", "2us", "--wait", "1us", "--out", str(tmp_path / "cal.json"))
    assert code == 1 and out == ""       # a measurement that failed, not a refused input
    assert "port 0 -> port 1, 64 B: no test frame received" in err and "built without" not in err
    assert not (tmp_path / "cal.json").exists()


def test_unidirectional_gateware_refuses_bidirectional_runs(capsys, tmp_path):
    """A build whose port 0 only sends and port 1 only receives (``generators``/``analyzers``,
    the 25F board's split) cannot carry --bidirectional: one line naming the option, nothing
    written. (Without --bidirectional the run goes on to its trials: the map has every register
    a 0 -> 1 run reads.)"""
    config = dataclasses.replace(SIM, generators=0b01, analyzers=0b10)
    rmap = build_register_map(config)
    with EtherboneServer() as server:
        serve_identity(server, rmap, **{"id.config": config.word()})
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--bidirectional",
                             "--out", str(tmp_path / "r"), *FAST)
    assert code == 2 and out == ""
    assert_one_line_error(err, "--bidirectional")
    assert "port 1 of this gateware has no generator" in err and "port 1 -> port 0" in err
    assert not (tmp_path / "r").exists()


def test_unidirectional_gateware_runs_its_direction(capsys, tmp_path):
    """The same build runs 0 -> 1: the trials read only registers it has (a register file
    sends no frame, so every trial fails, as in the test below)."""
    config = dataclasses.replace(SIM, generators=0b01, analyzers=0b10)
    rmap = build_register_map(config)
    with EtherboneServer() as server:
        serve_identity(server, rmap, **{"id.config": config.word()})
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--dut", "a cable",
                             "--out", str(tmp_path), "--json", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record["status"] == "complete"


def test_mismatched_gateware(capsys, regmap, tmp_path):
    with EtherboneServer() as server:
        serve_identity(server, regmap, **{"id.map_hash": regmap.hash ^ 1})
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path))
    assert code == 2
    assert_one_line_error(err, "--target")
    assert "register map mismatch" in err


FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us"]


def test_run_against_a_register_file_writes_results(capsys, regmap, tmp_path):
    """A server that only stores registers never sends a frame: every trial fails, the search
    bisects to zero, and every file says so."""
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--dut", "a cable", "--out",
                             str(tmp_path), "--json", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record == json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "complete" and record["target"] == server.url
    assert record["dut"] == {"description": "a cable"}
    params, result = parameters(record, "throughput"), results(record, "throughput")[0]
    assert params["trial_duration_ns"] == 2000 and params["resolution_pct"] == 10
    assert result["throughput_fps"] == 0.0 and result["trials"] == 5
    assert len((tmp_path / "trials.jsonl").read_text().splitlines()) == 5
    assert "scaled down from RFC 2544" in err
    rows = (tmp_path / "Throughput.csv").read_text().splitlines()
    assert rows[1].startswith("64,0.00,0.00,,0.000,")


def test_ctrl_c_keeps_results(capsys, regmap, tmp_path, monkeypatch):
    interrupt(monkeypatch, Device, "run_trial", at_call=3)
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), *FAST)
    assert code == 130
    assert "interrupted" in err and "Traceback" not in err
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "interrupted" and len(record["trials"]) == 2
    assert len((tmp_path / "trials.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("typed, name", [
    ("throughput", "throughput"), ("latency", "throughput"), ("frame_loss", "frame-loss"),
    ("frame-loss", "frame-loss"), ("back_to_back", "back-to-back"), ("Back-to-Back", "back-to-back"),
    ("system_recovery", "system-recovery"), ("recovery", "system-recovery"), ("reset", "reset"),
])
def test_tests_takes_the_rfc2544_names_users_type(typed, name):
    """Every other tester's names for the RFC 2544 tests, as aliases of the registry's."""
    assert Plan(tests=[typed]).tests == [name]


def test_tests_latency_runs_the_throughput_test_and_a_bad_name_lists_the_names(capsys, regmap, tmp_path):
    """26.2 latency is measured by the throughput test: ``--tests latency`` runs it; a name no
    test has is one line listing every name, aliases included."""
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--dut", "a cable", "--out", str(tmp_path),
                             "--json", "--tests", "latency", *FAST)
    assert code == 0, err
    assert [t["name"] for t in json.loads(out)["tests"]] == ["throughput"]
    code, _, err = run(capsys, "rfc2544", "--tests", "throughput,jitter")
    assert code == 2
    assert err == ("wirespeed: error: --tests: one or more of throughput (or latency), frame-loss, back-to-back, "
                   "system-recovery (or recovery), reset; not 'jitter'\n")


def test_the_help_summary_lists_every_registered_test(capsys, monkeypatch):
    """``rfc2544 --help`` summarises the command from the registry, not by hand: every test by
    section and title, with what it includes (26.2 latency, RFC 9004's buffer time)."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "rfc2544", "--help")
    text = " ".join(out.split())
    assert code == 0 and f"RFC 2544 benchmarks against a simulated or real DUT: {registry.summary()}." in text
    for test in registry.all_tests():
        assert f"{test.section} {test.title.lower()}" in registry.summary()
    assert "26.1 throughput with 26.2 latency" in text and "26.4 back-to-back frames with RFC 9004 buffer time" in text


@pytest.mark.parametrize("command", ["capture", "calibrate", "report", "compare", "regmap", "build"])
def test_every_commands_help_is_whole_at_80_columns(capsys, monkeypatch, command):
    """No option's help is cut by "…" on an 80-column terminal (a long unbreakable example
    squeezed into a narrow column was)."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and "…" not in out and max(map(len, out.splitlines())) <= 80


def test_the_help_reads_at_80_columns(capsys, monkeypatch):
    """``rfc2544 --help`` on an 80-column terminal: nothing cut (no "…", every default whole),
    the options in panels by what they are for, none wrapped over more than 6 lines."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "rfc2544", "--help")
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80 and "…" not in out
    text = " ".join(" ".join(line.strip("│╭╮╰╯─ ").split()) for line in lines)
    for default in ("throughput", "64,128,256,512,1024,1280,1518", "sim", "1x1", "0.1", "loss-informed",
                    "bit-forwarding", "auto", "learning", "etherbone", "results"):
        assert f"[default: {default}]" in text
    panels = [line.strip("╭─ ").split(" ─")[0] for line in lines if line.startswith("╭─")]
    assert panels == ["Options", "Throughput (RFC 2544 26.1)", "Latency (RFC 2544 26.2)",
                      "Frame loss rate (RFC 2544 26.3)", "Back-to-back frames (RFC 2544 26.4)",
                      "System recovery (RFC 2544 26.5)", "Reset (RFC 2544 26.6)", "Verdicts (for CI)",
                      "Learning (RFC 2544 section 23)", "Simulation", "Output"]
    heights: dict[str, int] = {}
    for line in lines:
        if line.startswith("│ --"):
            option = line.split()[1]
            heights[option] = 0
        if line.startswith("│"):
            heights[option] += 1
    assert len(heights) > 30 and max(heights.values()) <= 6, heights


def test_ctrl_c_before_anything_was_written_names_no_folder(capsys, regmap, tmp_path, monkeypatch):
    """Ctrl-C during the calibration run: the results folder the run made is gone again, so the
    message names none and says nothing was written; with --force, where the earlier run went."""
    from wirespeed.cli import rfc2544

    interrupt(monkeypatch, rfc2544, "resolve_calibration")
    out = tmp_path / "run"
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST)
        assert code == 130 and not out.exists(), err
        assert err.splitlines() == ["wirespeed: interrupted before anything was measured; no results were written"]
        out.mkdir()
        (out / "results.json").write_text(json.dumps({"test": "rfc2544-throughput", "status": "complete"}))
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--force", *FAST)
    assert code == 130 and not out.exists(), err
    aside, = tmp_path.glob("run.replaced-*")
    assert (aside / "results.json").is_file()
    assert err.splitlines()[0] == "wirespeed: interrupted before anything was measured; no results were written"
    assert err.splitlines()[1].startswith(f"wirespeed: note: --force: the run that was in {out} ")
    assert err.splitlines()[1].endswith(f"is now in {aside}")


# wirespeed capture: bad input ------------------------------------------------------------------------


@pytest.mark.parametrize("argv, field", [
    (["capture"], "--out"),
    (["capture", "--out", "x.pcap", "--size", "20"], "--size"),
    (["capture", "--out", "x.pcap", "--size", "big"], "--size"),
    (["capture", "--out", "x.pcap", "--size", "imix:aaq"], "--size"),
    (["capture", "--out", "x.pcap", "--size", "rand:1518-64"], "--size"),
    (["capture", "--out", "x.pcap", "--trigger", "last"], "--trigger"),
    (["capture", "--out", "x.pcap", "--trigger", "1"], "--trigger"),
    (["capture", "--out", "x.pcap", "--rate", "0"], "--rate"),
    (["capture", "--out", "x.pcap", "--rate", "101"], "--rate"),
    (["capture", "--out", "x.pcap", "--snaplen", "8"], "--snaplen"),
    (["capture", "--out", "x.pcap", "--snaplen", "2000"], "--snaplen"),
    (["capture", "--out", "x.pcap", "--count", "0"], "--count"),
    (["capture", "--out", "x.pcap", "--port", "-1"], "--port"),
    (["capture", "--out", "x.pcap", "--target", "tcp://10.0.0.1"], "--target"),
    (["capture", "--out", "x.pcap"], "--dut"),
    (["capture", "--out", "x.pcap", "--dut", "toaster"], "--dut"),
    (["capture", "--out", "/nonexistent-dir/x.pcap", "--dut", "loopback"], "--out"),
])
def test_capture_bad_input_is_one_line_and_exit_2(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, field)


def test_capture_unreachable_target(capsys, tmp_path):
    with EtherboneServer() as server:
        server.silent = True
        code, out, err = run(capsys, "capture", "--target", server.url, "--out", str(tmp_path / "x.pcap"))
    assert code == 2 and out == ""
    assert_one_line_error(err, "--target")
    assert err.strip().endswith(f"no answer from {server.url} after 3 tries")
    assert not (tmp_path / "x.pcap").exists()


@pytest.mark.parametrize("argv, field, message", [
    (["--count", "33"], "--count", "1..32 frames"),
    (["--port", "2"], "--port", "0..1"),
])
def test_capture_bad_input_the_tester_decides(capsys, regmap, tmp_path, argv, field, message):
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "capture", "--target", server.url, "--out", str(tmp_path / "x.pcap"), *argv)
    assert code == 2 and out == ""
    assert_one_line_error(err, field)
    assert message in err
    assert not (tmp_path / "x.pcap").exists()


def test_capture_against_a_register_file_writes_an_empty_pcap(capsys, regmap, tmp_path):
    """A server that only stores registers never sends a frame and its capture never leaves
    idle: the command still ends, writes an empty pcap and says so."""
    from scapy.utils import rdpcap

    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "capture", "--target", server.url, "--out", str(tmp_path / "x.pcap"),
                             "--count", "2", "--rate", "100")
    assert code == 0, err
    assert out == f"captured 0 frames on port 1 (capture idle: fewer frames than --count): {tmp_path / 'x.pcap'}\n"
    assert len(rdpcap(str(tmp_path / "x.pcap"))) == 0


@pytest.mark.parametrize("argv, field, message", [
    (["--dut-rtl", "/nonexistent/dut.v"], "--dut-rtl", "no such file"),
    (["--dut-rtl", "PIPE", "--dut", "loopback"], "--dut-rtl", "not both"),
    (["--dut-rtl-top", "pipe_dut"], "--dut-rtl-top", "needs --dut-rtl"),
    (["--dut-rtl", "PIPE", "--dut-rtl-top", "nope"], "--dut-rtl-top", "no module 'nope'"),
    (["--dut-rtl", "PIPE", "--target", "udp://127.0.0.1:1"], "--dut-rtl", "needs --target sim"),
    (["--dut-rtl", "EMPTY"], "--dut-rtl", "declares no Verilog module"),
])
def test_dut_rtl_errors_before_any_build(capsys, tmp_path, argv, field, message):
    from pathlib import Path
    rtl = Path(__file__).resolve().parents[1] / "sim" / "rtl"
    pipe = [str(rtl / "pipe_line.v"), "--dut-rtl", str(rtl / "pipe_dut.v"), "--dut-rtl-include", str(rtl / "include")]
    empty = tmp_path / "empty.v"
    empty.write_text("// no module\n")
    argv = [x for a in argv for x in (pipe if a == "PIPE" else [str(empty)] if a == "EMPTY" else [a])]
    code, out, err = run(capsys, "rfc2544", "--out", str(tmp_path / "r"), *argv)
    assert code == 2, err
    assert_one_line_error(err, field)
    assert message in err
    assert not (tmp_path / "r").exists()
