"""cocotb module tests of single blocks in Verilator, each built from a small Amaranth wrapper
(cocotb/wrappers.py) converted to Verilog into the build cache at test time:

* ``gen``: generator + LiteEth MAC transmitter on GMII, cocotbext-eth GmiiSink as the wire
  peer (cocotb/gen_blocks.py), and the generator's own output stream under backpressure;
  the longest golden-model sweeps of tests/gateware/test_generator.py on that stream
  (cocotb/gen_golden.py, the cases and the check in cocotb/gencheck.py);
* ``rx``: LiteEth MAC receiver + analyzer + per-stream statistics + capture + ARP/ND
  responder, cocotbext-eth GmiiSource/GmiiSink as the peer (cocotb/rx_blocks.py);
* ``mod``: modifier units and the random range generator against the pure-Python models of
  wirespeed.gateware.streamdesc, and the per-stream latency histogram against
  histogram_model (cocotb/mod_blocks.py).

One Verilator build per wrapper (session fixture), several cocotb testcases per build, each
a pytest parameter so that failures are named.
"""

import sys
import time
from pathlib import Path

import pytest

from wirespeed.sim.toolchain import cache_dir

HERE = Path(__file__).parent / "cocotb"
sys.path.insert(0, str(HERE))

import cocotbbuild  # noqa: E402
import gencheck  # noqa: E402
import wrappers  # noqa: E402

pytestmark = pytest.mark.verilator     # built with Verilator: not in the fast loop

BUILD_ARGS = ["-Wno-fatal", "-Wno-WIDTH", "-Wno-PINMISSING", "-Wno-UNOPTFLAT", "-O2"]
_builds = {}


def _build(kind):
    if kind not in _builds:
        build_dir = cache_dir() / "cocotb" / f"block_{kind}"
        t0 = time.monotonic()
        top, sources = wrappers.write_sources(kind, build_dir / "src")
        runner = cocotbbuild.build(sources, top, build_dir, BUILD_ARGS)
        print(f"\n[cocotb blocks] {kind} wrapper: Verilog + Verilator build {time.monotonic() - t0:.1f} s")
        _builds[kind] = (runner, build_dir, top)
    return _builds[kind]


def _run(kind, module, case, env=None, name=None):
    runner, build_dir, top = _build(kind)
    # under pytest the runner fails the test itself when the cocotb testcase fails
    runner.test(hdl_toplevel=top, test_module=module, testcase=case, test_dir=HERE,
                build_dir=build_dir, results_xml=str(build_dir / f"{module}.{name or case}.result.xml"),
                extra_env={"PYTHONWARNINGS": "ignore::DeprecationWarning", **(env or {})})


GEN_CASES = [
    "wire_all_sizes_64_to_127_line_rate", "wire_back_to_back_64", "wire_1518_and_jumbo",
    "wire_2000_flows_chained_modifiers", "source_backpressure",
]
RX_CASES = [
    "rx_odd_sizes_and_back_to_back", "rx_sequence_errors_and_latency", "rx_fcs_foreign_and_other_frames",
    "rx_store_and_forward_latency", "capture_returns_frames_and_timestamps", "responder_arp",
    "responder_neighbour_solicitation",
]
MOD_CASES = ["modifier_walks", "modifier_random_and_chain", "prng_draws", "histogram_bins_match_model"]


@pytest.mark.parametrize("case", GEN_CASES)
def test_gen_block(case):
    _run("gen", "gen_blocks", case)


@pytest.mark.parametrize("case", sorted(gencheck.CASES))
def test_gen_golden(case):
    """The generator's longest golden-model sweeps (tests/gateware/test_generator.py runs the
    others in the Amaranth simulator)."""
    _run("gen", "gen_golden", "golden_case", {"WS_GEN_CASE": case}, name=case)


@pytest.mark.parametrize("case", RX_CASES)
def test_rx_block(case):
    _run("rx", "rx_blocks", case)


@pytest.mark.parametrize("case", MOD_CASES)
def test_mod_block(case):
    _run("mod", "mod_blocks", case)
