"""A user's Verilog module as the DUT (--dut-rtl): the tester and tests/sim/rtl/pipe_dut.v
(a DELAY-cycle register pipeline each way) built into one simulation, driven by the same host
code. Latency must be the tester's pipeline delay plus exactly DELAY clocks, every frame
forwarded at line rate, both directions."""

import contextlib
from pathlib import Path

import pytest

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.port import PIPELINE_NS
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport
from wirespeed.sim.dut_rtl import RtlDutSpec
from wirespeed.sim.launcher import SimProcess

pytestmark = pytest.mark.slow

PIPE = Path(__file__).resolve().parents[1] / "sim" / "rtl" / "pipe_dut.v"
DELAY = 12          # the default DELAY parameter of pipe_dut


def test_user_rtl_dut_forwards_at_line_rate_with_its_own_delay():
    spec = RtlDutSpec(path=PIPE)
    assert spec.top == "pipe_dut" and spec.describe()["sha256"]
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(spec, ready_timeout=60))
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()
        for size in (64, 1518):
            flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size)),
                     Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, size))]
            r = dev.run_trial(flows, line_rate_fps(size), duration_ns=1_000_000, wait_ns=50_000)
            for port in (0, 1):
                c = r.counters[port]
                assert r.counters[1 - port].tx_frames == c.rx_frames > 0, (size, port)
                assert c.seq_errors == c.fcs_errors == c.other_frames == 0
                assert c.lat_min == c.lat_max == PIPELINE_NS + 8 * DELAY, (size, port, c.lat_min, c.lat_max)
                # frames arrive back to back at line rate: L + 20 bytes apart
                assert c.last_rx_ns - c.first_rx_ns == (c.rx_frames - 1) * (size + 20) * 8


@pytest.mark.parametrize("text,message", [
    ("module x(input clk); endmodule", "lacks the DUT ports"),
    ("// nothing here\n", "declares no Verilog module"),
    ("module wirespeed_tester(); endmodule", "a name the tester uses"),
])
def test_bad_rtl_files_are_refused_before_any_build(tmp_path, text, message):
    f = tmp_path / "dut.v"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        RtlDutSpec(path=f)
    with pytest.raises(ValueError, match="no such file"):
        RtlDutSpec(path=tmp_path / "missing.v")
    with pytest.raises(ValueError, match="no module 'nope'"):
        RtlDutSpec(path=PIPE, top="nope")
