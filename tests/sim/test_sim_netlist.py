"""The form of the simulated tester's netlist (wirespeed.sim.netlist), read from the built
simulation: the tester has no reset, as on the boards, and keeps the ``rst`` port unread; no
parallel multiplexer reaches Verilator in the Verilog backend's function form."""

import re

from wirespeed.sim.build import TOP_MODULE, ensure_harness


def _netlist() -> str:
    return (ensure_harness().parent / "verilog" / f"{TOP_MODULE}.v").read_text()


def test_the_tester_reads_no_reset_and_keeps_the_port():
    verilog = _netlist()
    # the wire rst itself (not port0.ana.rst, \bank.rst, sys_rst), outside attributes
    uses = [line.strip() for line in verilog.splitlines()
            if re.search(r"(?<![\w.\\$])rst\b", line) and not line.lstrip().startswith("(*")]
    assert uses[0].startswith(f"module {TOP_MODULE}(") and uses[1:] == ["input rst;", "wire rst;"]
    # the LiteEth MAC's resets are constants
    assert re.findall(r"\.(?:sys|eth_tx|eth_rx)_rst\(([^)]*)\)", verilog) == ["1'h0"] * 6


def test_parallel_multiplexers_are_chains_of_conditionals():
    assert not re.search(r"^\s*function\b", _netlist(), re.M)
