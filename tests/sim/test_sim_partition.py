"""The simulated tester in two parts (wirespeed.sim.partition), read from the parts cut from
the cached netlist: no state is lost or doubled, what crosses is state with a port of the
same width on each side, and port 1 is part B's."""

import re

import pytest

from wirespeed.sim.build import TOP_MODULE
from wirespeed.sim.partition import EXCHANGE_HEADER, split
from wirespeed.sim.verilog_cache import write_tester_parts

_PORT_RE = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", re.M)
_FLOPS_RE = re.compile(r"^\s*always @\(posedge", re.M)


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    out = tmp_path_factory.mktemp("parts")
    return out, write_tester_parts(out)


def _ports(verilog):
    return {name: (direction, int(hi or 0) + 1) for direction, hi, name in _PORT_RE.findall(verilog.read_text())}


def test_every_register_is_in_one_part(parts):
    out, p = parts
    whole = len(_FLOPS_RE.findall((out / f"{TOP_MODULE}.v").read_text()))
    a, b = (len(_FLOPS_RE.findall(files[0].read_text())) for files in (p.a, p.b))
    assert a + b == whole and min(a, b) > whole // 3, (a, b, whole)


def test_what_crosses_is_one_output_and_one_input_of_the_same_width(parts):
    _, p = parts
    a, b = _ports(p.a[0]), _ports(p.b[0])
    copies = re.findall(r"^\s*(\w)\.(xpart_\d+) = (\w)\.(xpart_\d+);", p.header.read_text(), re.M)
    assert p.header.name == EXCHANGE_HEADER and copies and len(copies) == len({c[1] for c in copies})
    for dst, name, src, same in copies:
        assert name == same and {dst, src} == {"a", "b"}
        into, out_of = (a, b) if dst == "a" else (b, a)
        assert into[name][0] == "input" and out_of[name][0] == "output" and into[name][1] == out_of[name][1]
    crossing = {n for n in a if n.startswith("xpart_")} | {n for n in b if n.startswith("xpart_")}
    assert crossing == {c[1] for c in copies}


def test_each_port_is_on_its_own_part(parts):
    _, p = parts
    a, b = _ports(p.a[0]), _ports(p.b[0])
    assert {n for n, (d, _) in a.items() if d == "output" and not n.startswith("xpart_")} == \
        {"p0_gmii_tx_en", "p0_gmii_tx_er", "p0_gmii_txd", "csr_r_data"}
    assert {n for n, (d, _) in b.items() if d == "output" and not n.startswith("xpart_")} == \
        {"p1_gmii_tx_en", "p1_gmii_tx_er", "p1_gmii_txd"}
    # neither part holds a register of the other's port
    for files, other in ((p.a, "port1"), (p.b, "port0")):
        assert not re.search(rf"^\s*reg\b.*\\{other}\.", files[0].read_text(), re.M), other


def test_logic_of_the_cycle_never_crosses(tmp_path):
    """A register read across is fine; a memory read without a clock, which would have to be
    copied in the middle of the cycle, is refused."""
    import json

    cell = {"type": "$mem_v2", "port_directions": {"RD_DATA": "output", "RD_ADDR": "input"},
            "parameters": {"RD_CLK_ENABLE": "0"}, "connections": {"RD_DATA": [2], "RD_ADDR": [3]}}
    flop = {"type": "$dff", "port_directions": {"CLK": "input", "D": "input", "Q": "output"},
            "parameters": {}, "connections": {"CLK": [4], "D": [2], "Q": [3]}}
    design = {"modules": {"t": {"ports": {"clk": {"direction": "input", "bits": [4]}},
                                "cells": {"port1.mem": cell, "port0.q": flop},
                                "netnames": {}}}}
    (tmp_path / "t.json").write_text(json.dumps(design))
    (tmp_path / "m.v").write_text("module m(input a); endmodule\n")
    with pytest.raises(RuntimeError, match="port1.mem .* is read by logic of the cycle in part A"):
        split(tmp_path / "t.json", tmp_path / "m.v", "t")
