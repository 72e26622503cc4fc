"""Runs the cocotb tests of the tester in its board configurations (cocotb/board_top.py) in
Verilator: the configuration word, the map hash and a stream through a cable."""

import os

import cocotbbuild
import pytest

from wirespeed.gateware.build import SIM_TOP
from wirespeed.gateware.config import PRESETS
from wirespeed.gateware.liteeth_mac import MAC_MODULE, mac_verilog
from wirespeed.sim.toolchain import cache_dir
from wirespeed.sim.verilog_cache import amaranth_tester_verilog

pytestmark = pytest.mark.verilator     # built with Verilator: not in the fast loop

HERE = os.path.join(os.path.dirname(__file__), "cocotb")


#: builds under test: the boards' presets (the 25F's learning build has the responder on
#: its receiving port only)
BUILDS = {name: PRESETS[name] for name in ("board_25f", "board_25f_learning", "board_45f")}


@pytest.fixture(scope="module", params=list(BUILDS))
def board_build(request):
    name = request.param
    build_dir = cache_dir() / "cocotb" / f"tester_{name}"
    src = build_dir / "src"
    src.mkdir(parents=True, exist_ok=True)
    sources = [src / f"{SIM_TOP}.v", src / f"{MAC_MODULE}.v"]
    sources[0].write_text(amaranth_tester_verilog(BUILDS[name], SIM_TOP))     # elaborated once with the simulation's
    sources[1].write_text(mac_verilog())
    runner = cocotbbuild.build(sources, SIM_TOP, build_dir, ["-Wno-fatal", "-Wno-WIDTH", "-Wno-PINMISSING", "-O3"])
    return name, runner, build_dir


@pytest.mark.parametrize("case", ["reports_its_configuration", "carries_a_stream_from_port_0_to_port_1",
                                  "receiving_port_answers_arp"])
def test_board_top(board_build, case):
    name, runner, build_dir = board_build
    config = BUILDS[name]
    if case == "receiving_port_answers_arp" and not config.responder:
        pytest.skip(f"{name} is built without the ARP/ND responder")
    runner.test(hdl_toplevel=SIM_TOP, test_module="board_top", testcase=case, test_dir=HERE,
                build_dir=build_dir, extra_env={"WS_CONFIG": name, "PYTHONWARNINGS": "ignore::DeprecationWarning"})
