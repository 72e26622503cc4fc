"""Property-based fuzzing of every command's option parsing, on the command line and through
--config files: whatever the input, the command exits 0 (or reaches the point where it would
start a simulation, reach a board or build, which stands for 0 here), or exits 2 with exactly
one line on stderr; never a traceback.

Parse only: the places where a command would start its work (claiming the results folder and
the tester, opening a session, the automatic calibration, a board build or flash) are replaced
by a stop, so thousands of inputs take seconds. Hypothesis generates the inputs from each
command's own click parameters: values known to be good, known hostile ones (the hostile-user
session's), mutations of both and random text; derandomized, so CI runs the same inputs every
time."""

from __future__ import annotations

import io
import sys
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from wirespeed import cli
from wirespeed.cli.app import click_command

EXAMPLES = 2500        # CI runs at least 2,000 generated inputs

GOOD = {
    "sizes": ["64", "64,1518", "imix:aaaaaaag", "imix:64:7,576:4,1518:1", "64,128,256,512,1024,1280,1518",
              "imix:aaz,z=1500", "1518"],
    "tests": ["throughput", "frame-loss", "back-to-back", "throughput,system-recovery,reset",
              "throughput,frame-loss,back-to-back"],
    "target": ["sim", "udp://127.0.0.1:1234", "udp://10.0.0.2", "serial:///dev/ttyUSB0?baud=1000000",
               "socket://127.0.0.1:9"],
    "dut": ["loopback", "router:rate=400k,queue=256,latency=20us", "loopback:loss=0.001,dup=0.002,seed=3",
            "loopback:delay=0ns", "a cable"],
    "out": ["results", "run1", "out.pcap", "cal.json"],
    "trial-duration": ["10ms", "1us", "2s", "100us"],
    "wait": ["1ms", "0", "2s"],
    "settle": ["1ms", "0us"],
    "search-duration": ["1ms", "5ms"],
    "overload": ["4ms", "60s"],
    "recovery": ["4ms"],
    "reset-at": ["2ms"],
    "resolution": ["0.1", "1", "10"],
    "loss-tolerance": ["0", "0.001", "1"],
    "loss-step": ["10", "5"],
    "loss-points": ["100,90", "100", "100,50,25"],
    "rate": ["10", "100", "0.5"],
    "search": ["loss-informed", "bisect"],
    "management": ["etherbone", "uart"],
    "uart-faults": ["drop=20000", "drop=20000,dup=20000,late=20000,corrupt=20000"],
    "latency-definition": ["bit-forwarding", "store-and-forward"],
    "calibration": ["auto", "none"],
    "address": ["1:ipv4=198.19.0.9", "0:mac=02:00:00:00:00:09", "0:ipv6=2001:2::9", "1:mac=02:aa:00:00:00:01"],
    "flows": ["1x1", "100x20", "4x4"],
    "size": ["64", "64-1518/64", "rand:64-1518", "seq:64,1518", "imix:aaaaaaag"],
    "trigger": ["first", "fcs", "not_test"],
    "confidence": ["95", "99.5", "80"],
    "column": ["throughput_fps", "1", "offered_fps"],
    "where": ["frame_size_B=64"],
    "table": ["Throughput", "Latency", "Frame_Loss"],
    "board": ["colorlight-5a-75b-v7", "versa-ecp5"],
    "variant": ["learning"],
    "cable-delay": ["0ns", "5ns"],
}
HOSTILE = ["", " ", "0", "-1", "1e400", "nan", "inf", "-inf", "99999999999999999999", "imix:i", "imix:h", "9000",
           "drop=1000,drop=2000", "0:mac=ff:ff:ff:ff:ff:ff", "0:mac=01:00:5e:00:00:01", "0:ipv4=198.19.0.1",
           "1:ipv4=198.18.0.1", "0:ipv4=224.0.0.1", "0:ipv6=ff02::1", "0:ipv4=255.255.255.255", "2:ipv4=1.2.3.4",
           "1e200", "--", "-", "udp://", "udp://host:99999", "serial://", "router:rate=fast", "toaster", "1x0",
           "0x65537", ",", "64,,128", "imix:", "imix:zz", "10parsecs", "\u00e9\u00e8", "a" * 300, "/nonexistent/x/y",
           ".", "100,100", "imix:64:0", "+5", "0x10", "1_000"]
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=24)


class Reached(Exception):
    """The command got past its parsing to where it would start its work."""


def _stop(*args, **kwargs):
    raise Reached


def _mutate(base: str, draw) -> str:
    kind = draw(st.integers(0, 4))
    if kind == 0 or not base:
        return base + draw(TEXT)
    cut = draw(st.integers(0, len(base)))
    if kind == 1:
        return base[:cut]
    if kind == 2:
        return base[:cut] + draw(st.sampled_from(",:=x-.e/ ")) + base[cut:]
    if kind == 3:
        return base[:cut] + draw(TEXT) + base[cut + 1:]
    return base.upper()


@st.composite
def value_for(draw, name: str, param):
    good = GOOD.get(name, [])
    if param is not None and param.default not in (None, False, ()) and not isinstance(param.default, (list, tuple)):
        good = [*good, str(param.default)]
    choice = draw(st.integers(0, 9))
    if good and choice <= 3:
        return draw(st.sampled_from(good))
    if choice <= 5:
        return draw(st.sampled_from(HOSTILE))
    if good and choice <= 7:
        return _mutate(draw(st.sampled_from(good)), draw)
    if choice == 8:
        return str(draw(st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True))))
    return draw(TEXT)


def _options(command):
    return [p for p in command.params if getattr(p, "param_type_name", "") == "option" and p.name != "config_file"]


@st.composite
def invocation(draw, commands):
    """(argv, config file text or None) for one command."""
    name = draw(st.sampled_from(sorted(commands)))
    command = commands[name]
    options = _options(command)
    argv = [name]
    config = {}
    takes_config = any(p.name == "config_file" for p in command.params)
    to_file = takes_config and draw(st.booleans())
    for _ in range(draw(st.integers(0, 6))):
        param = draw(st.sampled_from(options))
        flag = max(param.opts, key=len)
        key = flag.lstrip("-")
        if getattr(param, "is_flag", False):
            if param.secondary_opts and draw(st.booleans()):
                flag = param.secondary_opts[0]
            if to_file and draw(st.booleans()) and flag.startswith("--") and flag in param.opts:
                config[key] = draw(st.booleans())
            else:
                argv.append(flag)
            continue
        value = draw(value_for(key, param))
        if to_file and draw(st.booleans()) and flag.startswith("--"):
            config[key] = value
        else:
            argv += [flag, value]
    for argument in (p for p in command.params if getattr(p, "param_type_name", "") == "argument"):
        for _ in range(draw(st.integers(0 if not argument.required else 1, 3))):
            argv.append(draw(st.one_of(st.sampled_from(["data.txt", "big.txt", "overflow.txt", "-", "runs",
                                                        "missing.txt", "bad.csv"]), TEXT)))
    extra = draw(st.integers(0, 100))
    if extra < 8:
        argv.append(draw(st.sampled_from(["--bogus", "-x", "--sizes"])))
    elif extra < 16:
        argv.insert(1, draw(TEXT))
    elif extra == 16:
        argv.append("--help")          # rarely: rendering the help takes most of a second
    text = None
    if config:
        kind = draw(st.sampled_from(["flat", "section", "garbage"]))
        if kind == "garbage":
            text = draw(st.sampled_from(["[rfc2544\n", "sizes = [64, 9000]\n", "x = 1\n", "rfc2544 = 3\n",
                                         "sizes = []\n", "config = 'a.toml'\n"]))
        else:
            lines = [f"{k} = {_toml(v)}" for k, v in config.items()]
            text = ("\n".join(lines) + "\n") if kind == "flat" else f"[{name}]\n" + "\n".join(lines) + "\n"
    return argv, text


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@pytest.mark.slow
def test_no_input_makes_a_traceback(tmp_path, monkeypatch, capsys):
    """Every command, 2,500 generated inputs: exit 0 (or the work reached) or exit 2 with one
    line on stderr; none raises out of main()."""
    from wirespeed import board

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.txt").write_text("1\n2\n3\n")
    (tmp_path / "big.txt").write_text("1e400\n2\n")
    (tmp_path / "overflow.txt").write_text("1e200\n2e200\n3e200\n")
    (tmp_path / "bad.csv").write_text("a,b\n1,x\n")
    (tmp_path / "runs").mkdir()
    from wirespeed.cli import calibrate, capture, rfc2544
    monkeypatch.setattr(rfc2544, "claim_folder", _stop)
    monkeypatch.setattr(rfc2544, "_calibration", _stop)
    for module in (rfc2544, calibrate, capture):
        monkeypatch.setattr(module, "open_tester", _stop)
    monkeypatch.setattr(board, "build", _stop)
    from wirespeed.serve import api as serve_api
    monkeypatch.setattr(serve_api, "create_app", _stop)      # serve would otherwise listen until killed
    monkeypatch.setattr(board, "flash", _stop)
    commands = click_command().commands
    seen = {"inputs": 0, "reached": 0, "exit0": 0, "exit2": 0}

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              phases=(Phase.explicit, Phase.generate, Phase.shrink),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(invocation(commands))
    def check(case):
        argv, config = case
        if config is not None:
            (tmp_path / "run.toml").write_text(config)
            argv = [argv[0], "--config", "run.toml", *argv[1:]]
        monkeypatch.setattr(sys, "stdin", io.StringIO("1\n2\n3\n"))
        seen["inputs"] += 1
        try:
            code = cli.main(argv)
        except Reached:
            seen["reached"] += 1
            capsys.readouterr()
            return
        _, err = capsys.readouterr()
        assert "Traceback" not in err, (argv, config, err)
        if code == 0:
            seen["exit0"] += 1
            return
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("wirespeed: error: "), (argv, config, code, err)
        seen["exit2"] += 1

    started = time.monotonic()
    check()
    elapsed = time.monotonic() - started
    print(f"fuzz: {seen['inputs']} inputs in {elapsed:.1f} s: {seen['reached']} reached the work, "
          f"{seen['exit0']} exit 0, {seen['exit2']} exit 2 with one line")
    assert seen["inputs"] >= 2000
    assert seen["reached"] > 50 and seen["exit2"] > 500       # the inputs reach both sides
