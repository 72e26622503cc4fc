"""Benchmark: a real bitstream build of a board with the open toolchain from pip: wall time,
achieved Fmax of every clock against 125 MHz, and utilisation (LUT4, FF, block RAM, DSP).

    python sim/bench/bench_board_build.py [--board colorlight-5a-75b-v7] [--seed N]
                                          [--config PRESET[+BLOCK...]|minimal] [--out DIR]
    python sim/bench/bench_board_build.py --from-dir DIR    # figures of a finished build
    python sim/bench/bench_board_build.py --part 45k --router router2   # diagnostic
    python sim/bench/bench_board_build.py --from-dir DIR --blocks 3     # logic per block

``--part`` places and routes the same design on another ECP5 of the same package (``45k``:
the LFE5U-45F also comes in the CABGA256): with room to spare, placement converges in minutes
and routing in a few more, where the 93 % full 25F takes an hour or more, so the design's own
slow paths show (nextpnr names one per clock) without the congestion. The figures of such a
build are a diagnosis, not the board's result (its bitstream is for the wrong part).
``--router`` picks nextpnr's router (``router1``, the default, or ``router2``); ``--pnr-opt``
adds any other nextpnr option (``--pnr-opt=--tmg-ripup``), in place of the board's own
setting of it (``Board.pnr_opts``, which every build uses; ``--pnr-plain`` leaves them out).
``--blocks N``
adds the logic of each block (hierarchy N names deep) from the synthesised netlist: LUT sites
(LUT4 + 2 per CCU2C + 6 per DPR16X4, as bench_resources.py counts them) and flip-flops;
approximate, as synthesis names a cell after a net it drives, which may be another block's.

It runs ``wirespeed.board.build`` (what ``wirespeed build`` runs), by default into
``$XDG_CACHE_HOME/wirespeed/build/<board>-bench`` (never the source tree). ``--config``
takes a TesterConfig preset of wirespeed.gateware.config (``board_25f``, ``board_45f``,
``sim``) or ``minimal`` (the smallest tester the configuration allows: 2 streams, no
modifier, one histogram, no per-stream statistics, no responder, no capture), default the
board's own preset. A build that does not fit or misses timing is a result, not a crash:
the figures are printed and the exit code is 1. Takes 5 to 40 minutes on 2 cores.
"""

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path

from wirespeed import board as wb

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_timing import _critical_path, condensed


def _config(name):
    if name is None:
        return None
    from wirespeed.gateware.config import PRESETS, TesterConfig

    if name == "minimal":
        return TesterConfig(n_streams=2, n_modifiers=0, hist_streams=1, stream_stats=False, responder=False,
                            capture=False)
    base, *blocks = name.split("+")
    if base not in PRESETS:
        raise SystemExit(f"--config: one of {', '.join([*PRESETS, 'minimal'])} (then +block...), not {name!r}")
    optional = [f.name for f in dataclasses.fields(TesterConfig) if f.type in (bool, "bool")]
    for block in blocks:
        if block not in optional:
            raise SystemExit(f"--config: +{block}: the blocks a preset may add are {', '.join(optional)}")
    return dataclasses.replace(PRESETS[base], **{block: True for block in blocks})


def _without(argv, name):
    """``argv`` without the option ``name`` and its value (if it has one)."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == name:
            i += 2 if i + 1 < len(argv) and not argv[i + 1].startswith("-") else 1
            continue
        out.append(argv[i])
        i += 1
    return out


def _pnr_args(argv, part, router, extra=(), board_opts=(), plain=False):
    """nextpnr's arguments with ``--25k``/``--45k``/... replaced by ``part``, a router and
    ``extra`` options (each replaces the same option of the board's ``board_opts``);
    ``plain``: without the board's options."""
    if part is not None:
        argv = [f"--{part}" if a in ("--12k", "--25k", "--45k", "--85k") else a for a in argv]
    names = [opt.split()[0] for opt in extra] + ([opt.split()[0] for opt in board_opts] if plain else [])
    for name in names:
        argv = _without(argv, name)
    if router is not None:
        argv += ["--router", router]
    return argv + [word for option in extra for word in option.split()]


def critical_paths(out: Path) -> str:
    """The routed critical path of each clock, as bench_timing prints a block's (nothing if
    nextpnr did not finish routing)."""
    log_path = out / f"{wb.TOP_NAME}.tim"
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    if "Routing complete" not in log and "Program finished normally" not in log:
        return ""
    lines = []
    for clock in dict.fromkeys(re.findall(r"Critical path report for clock '([^']+)'", log)):
        start = log.rfind(f"Critical path report for clock '{clock}'")
        end = log.find("Critical path report", start + 1)
        lines.append(f"critical path, {clock}:")
        lines += [f"    {line}" for line in condensed(_critical_path(log[start:end if end > 0 else None]))]
    return "\n".join(lines) + "\n" if lines else ""


_LUT_SITES = {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 6}


def blocks(out: Path, depth: int, most: int = 25) -> str:
    """LUT sites and flip-flops of each block of the synthesised netlist (cells grouped by
    the first ``depth`` parts of their hierarchical names), largest first."""
    netlist = json.loads((out / f"{wb.TOP_NAME}.json").read_text())
    top = next(m for m in netlist["modules"].values() if m.get("attributes", {}).get("top"))
    sites, ffs = {}, {}
    for name, cell in top["cells"].items():
        parts = name.lstrip("\\$").split(".")[:-1][:depth]
        block = ".".join(parts) or "(top)"
        sites[block] = sites.get(block, 0) + _LUT_SITES.get(cell["type"], 0)
        ffs[block] = ffs.get(block, 0) + (cell["type"] == "TRELLIS_FF")
    lines = [f"logic per block (depth {depth}; {sum(sites.values())} LUT sites, {sum(ffs.values())} FF in all):",
             f"  {'LUT sites':>9} {'FF':>6}  block"]
    for block in sorted(sites, key=lambda b: -sites[b])[:most]:
        lines.append(f"  {sites[block]:9d} {ffs[block]:6d}  {block}")
    return "\n".join(lines) + "\n"


def failing_endpoints(log: str) -> str:
    """How many endpoints fail, estimated from nextpnr's last slack histogram (a bin that
    spans 0 counts half)."""
    start = log.rfind("Slack histogram")
    if start < 0:
        return ""
    rows = log[start:].splitlines()
    scale = re.search(r"represents (\d+) endpoint", rows[1])
    if scale is None:
        return ""
    failing = total = 0
    for row in rows[3:]:
        bar = re.match(r"Info: \[\s*(-?\d+),\s*(-?\d+)\)\s*\|(\**)(\+?)", row)
        if bar is None:
            break
        n = len(bar.group(3)) * int(scale.group(1)) + (int(scale.group(1)) // 2 if bar.group(4) else 0)
        total += n
        if int(bar.group(2)) <= 0:
            failing += n
        elif int(bar.group(1)) < 0:
            failing += n // 2
    return f"failing endpoints: about {failing} of {total} (slack histogram)\n"


def figures_from_dir(out: Path) -> str:
    """Figures of a finished (or failed) build folder: its build_report.json if there is
    one, else nextpnr's report/log."""
    saved = out / "build_report.json"
    if saved.exists():
        data = json.loads(saved.read_text())
        clocks = [wb.ClockFmax(**c) for c in data["clocks"]]
        util = {k: (v["used"], v["available"]) for k, v in data["utilisation"].items()}
        report = wb.BuildReport(board=data["board"], seed=data["seed"], clocks=clocks, utilisation=util,
                                seconds=data["seconds"], bitstream=data["bitstream"], config=data["config"],
                                bridge=data["bridge"], notes=data["notes"], pnr_opts=data.get("pnr_opts", []))
        return report.summary()
    log = (out / f"{wb.TOP_NAME}.tim").read_text(errors="replace") if (out / f"{wb.TOP_NAME}.tim").exists() else ""
    notes = []
    try:
        clocks, util = wb.parse_nextpnr_report((out / f"{wb.TOP_NAME}_report.json").read_text())
    except (OSError, ValueError):
        clocks, util = wb.parse_nextpnr_log(log), wb.parse_log_utilisation(log)
        if "Routing complete" not in log:
            notes.append("nextpnr did not finish routing: the Fmax figures are its post-placement estimate"
                         if clocks else "nextpnr stopped before placement: no Fmax figure")
    return wb.BuildReport(board=str(out), seed=-1, clocks=clocks, utilisation=util, notes=notes).summary()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="colorlight-5a-75b-v7")
    ap.add_argument("--seed", type=int, default=None, help="nextpnr's seed (default: the board's)")
    ap.add_argument("--config", default=None,
                    help="board_25f, board_45f, sim or minimal (default: the board's), a preset with optional "
                         "blocks added: board_25f+stream_stats+responder")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--from-dir", type=Path, default=None, help="only print the figures of this build folder")
    ap.add_argument("--part", choices=["25k", "45k"], default=None,
                    help="place and route on this ECP5 instead of the board's (diagnostic)")
    ap.add_argument("--router", choices=["router1", "router2"], default=None, help="nextpnr's router")
    ap.add_argument("--pnr-opt", action="append", default=[], metavar="OPTION",
                    help="an extra nextpnr option, e.g. '--tmg-ripup' or '--placer-heap-timingweight 30', "
                         "replacing the board's own setting of it (repeatable; diagnostic)")
    ap.add_argument("--pnr-plain", action="store_true",
                    help="without the board's nextpnr options (Board.pnr_opts): nextpnr's defaults")
    ap.add_argument("--blocks", type=int, default=None, metavar="DEPTH",
                    help="also print the logic of each block, hierarchy DEPTH names deep")
    args = ap.parse_args()
    if args.from_dir is not None:
        print(figures_from_dir(args.from_dir), end="")
        print(_details(args.from_dir, args.blocks), end="")
        return 0
    out = args.out or wb.default_out_dir(args.board).with_name(f"{args.board}-bench")
    t0 = time.monotonic()
    try:
        report = wb.build(args.board, seed=args.seed, out=out, config=_config(args.config),
                          log=lambda line: print(f"[{time.monotonic() - t0:6.0f} s] {line}", flush=True),
                          pnr_args=lambda argv: _pnr_args(argv, args.part, args.router, args.pnr_opt,
                                                          wb.get_board(args.board).pnr_opts, args.pnr_plain))
    except wb.BoardError as exc:
        print(f"build failed after {time.monotonic() - t0:.0f} s: {exc}")
        if (out / f"{wb.TOP_NAME}.tim").exists():
            print(figures_from_dir(out), end="")
            print(_details(out, args.blocks), end="")
        return 1
    print(report.summary(), end="")
    print(_details(out, args.blocks), end="")
    return 0


def _details(out: Path, depth) -> str:
    """Failing endpoints, the critical paths and (``depth``) the logic per block."""
    log_path = out / f"{wb.TOP_NAME}.tim"
    text = failing_endpoints(log_path.read_text(errors="replace")) if log_path.exists() else ""
    text += critical_paths(out)
    if depth is not None and (out / f"{wb.TOP_NAME}.json").exists():
        text += blocks(out, depth)
    return text


if __name__ == "__main__":
    sys.exit(main())
