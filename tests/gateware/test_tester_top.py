"""Runs the cocotb tests of the whole tester in Verilator (see cocotb/tester_top.py)."""

from pathlib import Path

import cocotbbuild
import pytest

from wirespeed.gateware.build import SIM_TOP
from wirespeed.gateware.config import SIM
from wirespeed.gateware.liteeth_mac import MAC_MODULE, mac_verilog
from wirespeed.gateware.port import RX_PIPELINE_NS, TX_PIPELINE_NS
from wirespeed.sim.toolchain import cache_dir
from wirespeed.sim.verilog_cache import amaranth_tester_verilog

pytestmark = pytest.mark.verilator     # built with Verilator: not in the fast loop

HERE = Path(__file__).parent / "cocotb"


@pytest.fixture(scope="session")
def tester_build():
    build_dir = cache_dir() / "cocotb" / "tester_top"
    src = build_dir / "src"
    src.mkdir(parents=True, exist_ok=True)
    sources = [src / f"{SIM_TOP}.v", src / f"{MAC_MODULE}.v"]
    sources[0].write_text(amaranth_tester_verilog(SIM, SIM_TOP))      # elaborated once with the simulation's
    sources[1].write_text(mac_verilog())
    runner = cocotbbuild.build(sources, SIM_TOP, build_dir, ["-Wno-fatal", "-Wno-WIDTH", "-Wno-PINMISSING", "-O3"])
    return runner, build_dir


@pytest.mark.parametrize("case", [
    "wire_64_line_rate", "wire_odd_sizes_line_rate", "wire_1518_half_rate",
    "loopback_latency_and_pipeline_delay", "rx_counts_fcs_errors_and_foreign_frames",
    "arp_request_gets_a_reply",
])
def test_tester_top(tester_build, case):
    runner, build_dir = tester_build
    runner.test(hdl_toplevel=SIM_TOP, test_module="tester_top", testcase=case,
                test_dir=HERE, build_dir=build_dir,
                extra_env={"WS_TX_PIPELINE_NS": str(TX_PIPELINE_NS), "WS_RX_PIPELINE_NS": str(RX_PIPELINE_NS),
                           "PYTHONWARNINGS": "ignore::DeprecationWarning"})
