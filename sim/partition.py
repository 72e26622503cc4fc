"""The simulated tester in two parts, which the harness evaluates on two threads.

The flattened netlist (:mod:`.netlist`, as Yosys' JSON) is cut at its state: every
flip-flop, memory and LiteEth MAC instance goes to part A or part B, and each part keeps the
logic that computes its own state's next value and its own outputs, whatever state that
logic reads. A part reads the other part's state through an input port named like the
other's output port that carries it (``xpart_<n>``); the harness copies those ports across
after every clock (the generated ``part_exchange.h``). What crosses is only ever a state
element's value after the last clock edge, never logic of the cycle, so the two parts
evaluated one after the other or at the same time compute what the whole netlist computes,
cycle for cycle.

Which part: a state element of port 0 (its block ``port0.`` or its bank registers
``bank.p0_``) is in A, of port 1 in B, the last two stages of the bank's read path
(``rd_regs``, ``bus__r_data``) in A; a memory goes with the readers of its asynchronous read
ports (which cannot cross), any other state with most of the state it reads, or, if it reads
none, with its readers. So a port's read groups and the chunks they are ORed in stay with
it, and a few words cross. A GMII port's pins are on the part of its port; the CSR bus
inputs reach both, ``csr_r_data`` comes from A. The cut is the same for the same netlist
(no choice depends on the order of a set).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Parts", "split", "write_parts", "PART_B_SUFFIX", "EXCHANGE_HEADER", "REPORT_NAME"]

#: part B's module is the top's name with this suffix
PART_B_SUFFIX = "_b"
#: the generated header of the harness's copy between the parts
EXCHANGE_HEADER = "part_exchange.h"
#: the file of :func:`write_parts`' report
REPORT_NAME = "partition.txt"
_CROSS = "xpart_{}"
#: name prefixes of the state that decides its own part (the names SimTop and the register
#: bank give: port N's submodule ``portN``, its registers ``pN.*`` as ``bank.pN_*``)
_SEEDS = (("port0.", "A"), ("bank.p0_", "A"), ("bank.bus__r_data", "A"), ("bank.rd_regs", "A"),
          ("port1.", "B"), ("bank.p1_", "B"))
_OUTPUTS = {"p0_": "A", "p1_": "B", "csr_": "A"}
_CLOCKS = ("CLK", "RD_CLK", "WR_CLK", "sys_clk", "eth_rx_clk", "eth_tx_clk")


@dataclass(frozen=True)
class Parts:
    """A split tester: each part's Verilog (its top first), the exchange header, and what
    crossed (state bits per part, bits copied each way)."""

    a: list[Path]
    b: list[Path]
    header: Path
    report: str


class _Netlist:
    def __init__(self, module: dict, instance_dirs: dict[str, str]):
        self.cells, self.ports = module["cells"], module["ports"]
        self.instance_dirs = instance_dirs
        self.names: dict[int, str] = {}
        for name, net in module["netnames"].items():
            if not net.get("hide_name"):
                for b in net["bits"]:
                    if isinstance(b, int):
                        self.names.setdefault(b, name)
        self.driver: dict[int, str] = {}
        for cn in self.cells:
            for b in self.outputs(cn):
                self.driver[b] = cn
        self.inputs_of_top = {b for p in self.ports.values() if p["direction"] == "input"
                              for b in p["bits"] if isinstance(b, int)}
        self.state = [cn for cn, c in self.cells.items() if self.is_state(c)]
        self._cones: dict[str, frozenset[str]] = {}

    def dirs(self, cell: dict) -> dict[str, str]:
        return cell.get("port_directions") or self.instance_dirs

    @staticmethod
    def is_state(cell: dict) -> bool:
        t = cell["type"]
        return "dff" in t or t == "$mem_v2" or not t.startswith("$")

    def outputs(self, cn: str) -> list:
        cell = self.cells[cn]
        dirs = self.dirs(cell)
        return [b for p, bits in cell["connections"].items() if dirs[p] == "output" for b in bits]

    def inputs(self, cn: str) -> list[int]:
        cell = self.cells[cn]
        dirs = self.dirs(cell)
        return [b for p, bits in cell["connections"].items()
                if dirs[p] == "input" and p not in _CLOCKS for b in bits if isinstance(b, int)]

    def cone(self, bit: int) -> frozenset[str]:
        """The state elements whose values reach ``bit`` through logic of the cycle."""
        cn = self.driver.get(bit)
        if cn is None or bit in self.inputs_of_top:
            return frozenset()
        if self.is_state(self.cells[cn]):
            return frozenset([cn])
        done = self._cones.get(cn)
        if done is not None:
            return done
        # depth-first without recursion: the logic between registers can be deep
        stack, order = [cn], []
        while stack:
            c = stack.pop()
            if c in self._cones:
                continue
            self._cones[c] = frozenset()
            order.append(c)
            for b in self.inputs(c):
                d = self.driver.get(b)
                if d is not None and b not in self.inputs_of_top and not self.is_state(self.cells[d]) \
                        and d not in self._cones:
                    stack.append(d)
        for c in reversed(order):
            acc: set[str] = set()
            for b in self.inputs(c):
                d = self.driver.get(b)
                if d is None or b in self.inputs_of_top:
                    continue
                acc |= {d} if self.is_state(self.cells[d]) else self._cones[d]
            self._cones[c] = frozenset(acc)
        return self._cones[cn]

    def reads(self, cn: str) -> set[str]:
        out: set[str] = set()
        for b in self.inputs(cn):
            out |= self.cone(b)
        return out

    def label(self, cn: str) -> str:
        if not cn.startswith("$"):
            return cn
        return next((self.names[b] for b in self.outputs(cn) if b in self.names), cn)

    def width(self, cn: str) -> int:
        return len(self.outputs(cn))


def _assign(net: _Netlist) -> dict[str, str]:
    part: dict[str, str | None] = {}
    for cn in net.state:
        label = net.label(cn)
        part[cn] = next((p for prefix, p in _SEEDS if label.startswith(prefix)), None)
    reads = {cn: net.reads(cn) for cn in net.state}
    readers = defaultdict(set)
    for cn, srcs in reads.items():
        for s in srcs:
            readers[s].add(cn)
    memories = [cn for cn in net.state if net.cells[cn]["type"] == "$mem_v2"]

    def vote(cn: str, sources: set[str]) -> str | None:
        votes: Counter[str] = Counter()
        for s in sources:
            if part[s]:
                # a memory's asynchronous read cannot cross: its readers follow it
                votes[part[s]] += net.width(s) * (1000 if net.cells[s]["type"] == "$mem_v2" else 1)
        # ties go to A: the choice must not depend on the order of a set
        return max(sorted(votes), key=lambda p: (votes[p], p == "A")) if votes else None

    def settle(group: list[str], sources) -> bool:
        """Assign what ``sources(cn)`` decides, until nothing more is decided."""
        any_change = False
        for _ in range(len(net.state)):
            changed = False
            for cn in group:
                if part[cn] is None and (p := vote(cn, sources(cn))) is not None:
                    part[cn] = p
                    changed = any_change = True
            if not changed:
                return any_change
        return any_change

    # memories by their readers; then all else by what it reads, and only what reads nothing
    # decided by its readers
    settle(memories, lambda cn: readers[cn])
    while settle(net.state, lambda cn: reads[cn]) | settle(net.state, lambda cn: readers[cn]):
        pass
    return {cn: p or "A" for cn, p in part.items()}


def _output_part(name: str) -> str:
    return next((p for prefix, p in _OUTPUTS.items() if name.startswith(prefix)), "A")


def _instance_dirs(verilog: Path) -> dict[str, str]:
    """The port directions of the module in ``verilog`` (the MAC, which Yosys sees as an
    instance of a module it has not read)."""
    pattern = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[[^]]*\]\s*)?(\w+)", re.M)
    return {name: direction for direction, name in pattern.findall(verilog.read_text())}


def split(netlist_json: Path, instance_verilog: Path, top: str) -> tuple[dict, dict, str, str]:
    """Cut module ``top`` of ``netlist_json`` into two; returns the two parts as Yosys JSON
    designs (part B's module named ``top`` + :data:`PART_B_SUFFIX`), the exchange header's
    text and a report. ``instance_verilog``: the module instantiated as a cell (the MAC)."""
    design = json.loads(Path(netlist_json).read_text())
    module = design["modules"][top]
    net = _Netlist(module, _instance_dirs(instance_verilog))
    part = _assign(net)
    outputs = {name: _output_part(name) for name, p in module["ports"].items() if p["direction"] == "output"}

    need: dict[str, set[str]] = {}
    for p in "AB":
        roots = [b for cn in net.state if part[cn] == p for b in net.inputs(cn)]
        roots += [b for name, owner in outputs.items() if owner == p
                  for b in module["ports"][name]["bits"] if isinstance(b, int)]
        seen: set[str] = set()
        for b in roots:
            seen |= net.cone(b)
        need[p] = {cn for cn in seen if part[cn] != p}
        for cn in need[p]:
            cell = net.cells[cn]
            synchronous = cell["type"] != "$mem_v2" or set(cell["parameters"]["RD_CLK_ENABLE"]) <= {"1"}
            if not cell["type"].startswith("$") or not synchronous:
                raise RuntimeError(f"partition: {net.label(cn)} ({cell['type']}) in part {part[cn]} is read "
                                   f"by logic of the cycle in part {p}")

    crossing = sorted(need["A"] | need["B"], key=net.label)
    port_of = {cn: _CROSS.format(i) for i, cn in enumerate(crossing)}
    designs = {}
    for p, other in (("A", "B"), ("B", "A")):
        mod = json.loads(json.dumps(module))
        for cn in net.state:
            if part[cn] != p:
                del mod["cells"][cn]
        for name, owner in outputs.items():
            if owner != p:
                del mod["ports"][name]
        for cn in crossing:
            if cn in need[p]:
                mod["ports"][port_of[cn]] = {"direction": "input", "bits": net.outputs(cn)}
            elif cn in need[other]:
                mod["ports"][port_of[cn]] = {"direction": "output", "bits": net.outputs(cn)}
        name = top if p == "A" else top + PART_B_SUFFIX
        designs[p] = {"creator": design.get("creator", ""), "modules": {name: mod}}

    lines = ["// The state each part of the simulated tester reads from the other, copied after",
             "// every clock (generated by sim/partition.py).", "#pragma once", "", "namespace ws {", "",
             "template <typename A, typename B>", "inline void exchange_parts(A& a, B& b) {"]
    for cn in crossing:
        src, dst = ("a", "b") if part[cn] == "A" else ("b", "a")
        lines.append(f"    {dst}.{port_of[cn]} = {src}.{port_of[cn]};  // {net.label(cn)}")
    lines += ["}", "", "}  // namespace ws", ""]

    bits = Counter()
    for cn in net.state:
        bits[part[cn]] += net.width(cn)
    cross_bits = {p: sum(net.width(cn) for cn in need[p]) for p in "AB"}
    report = (f"state bits: A {bits['A']}, B {bits['B']}; copied each clock: A to B {cross_bits['B']} bits "
              f"({len(need['B'])} ports), B to A {cross_bits['A']} bits ({len(need['A'])} ports)")
    return designs["A"], designs["B"], "\n".join(lines), report


_PART_SCRIPT = """\
read_json {name}.json
opt_clean
write_verilog -norename {name}.v
"""


def write_parts(netlist_json: Path, mac: Path, top: str, outdir: Path) -> Parts:
    """Cut module ``top`` of ``netlist_json`` (:func:`~.netlist.write_netlist`'s JSON) and
    write the parts' Verilog (each part's logic that nothing of it reads removed by Yosys'
    ``opt_clean``: ``<top>.part_a.v``, ``<top>.part_b.v``), the exchange header and the
    report (:data:`REPORT_NAME`) into ``outdir``. ``mac``: the MAC's Verilog, which both
    parts' file lists end with."""
    from .netlist import run_yosys

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    a, b, header, report = split(netlist_json, mac, top)
    files = []
    for part, design in (("a", a), ("b", b)):
        name = f"{top}.part_{part}"
        (outdir / f"{name}.json").write_text(json.dumps(design))
        (outdir / f"{name}.ys").write_text(_PART_SCRIPT.format(name=name))
        run_yosys(["-q", "-l", f"{name}.yosys.log", f"{name}.ys"], outdir)
        (outdir / f"{name}.json").unlink()
        files.append(outdir / f"{name}.v")
    (outdir / EXCHANGE_HEADER).write_text(header)
    (outdir / REPORT_NAME).write_text(report + "\n")
    mac_copy = outdir / Path(mac).name
    if mac_copy.resolve() != Path(mac).resolve():
        mac_copy.write_text(Path(mac).read_text())
    return Parts([files[0], mac_copy], [files[1], mac_copy], outdir / EXCHANGE_HEADER, report)


def main(argv: list[str]) -> int:
    """``python -m wirespeed.sim.partition NETLIST.json MAC.v TOP OUTDIR``: write the two
    parts and the header into OUTDIR, print the report."""
    if len(argv) != 4:
        print("usage: python -m wirespeed.sim.partition NETLIST.json MAC.v TOP OUTDIR", file=sys.stderr)
        return 2
    print(write_parts(Path(argv[0]), Path(argv[1]), argv[2], Path(argv[3])).report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
