"""The simulated tester reached only through its management UART: :class:`SimTop` whose CSR
bus is mastered by a :class:`~.mgmt.UartBridge`, for the UART flavour of the Verilator
simulation (sim/harness/uart/, ``SimProcess(..., management="uart")``).

Ports: the GMII pins of :class:`SimTop` unchanged (``p{i}_gmii_*``), ``uart_rx`` (In, idle
high) and ``uart_tx`` (Out), and the bridge's counters as ``mgmt_*`` outputs for the
harness's statistics (``mgmt_requests`` 32 bits; ``mgmt_replays``, ``mgmt_stale``,
``mgmt_malformed``, ``mgmt_bad_frames``, ``mgmt_rx_errors`` 16 bits). No CSR ports: every
register access goes through the bridge, as on a board.
"""

from pathlib import Path

from amaranth import Module
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .liteeth_mac import MAC_MODULE, mac_verilog
from .mgmt import UartBridge
from .top import CLK_HZ, SimTop

__all__ = ["UART_SIM_TOP", "UART_SIM_DIVISOR", "MGMT_COUNTERS", "UartSimTop", "write_uart_sim_sources"]

UART_SIM_TOP = "wirespeed_uart_sim_top"
UART_SIM_DIVISOR = 8            # clock cycles per bit: 15.625 Mbaud at 125 MHz (simulated time)
MGMT_COUNTERS = {"requests": 32, "replays": 16, "stale": 16, "malformed": 16, "bad_frames": 16,
                 "rx_errors": 16}


class UartSimTop(wiring.Component):
    """``SimTop()`` with its CSR bus driven by ``UartBridge(clk_hz, clk_hz // divisor)``."""

    def __init__(self, divisor=UART_SIM_DIVISOR, clk_hz=CLK_HZ):
        self.tester = SimTop(clk_hz=clk_hz)
        self.bridge = UartBridge(clk_hz, clk_hz // divisor)
        self.divisor, self.clk_hz = divisor, clk_hz
        members = {name: member for name, member in self.tester.signature.members.items()
                   if "_gmii_" in name}
        members |= {"uart_rx": In(1, init=1), "uart_tx": Out(1, init=1)}
        members |= {f"mgmt_{c}": Out(w) for c, w in MGMT_COUNTERS.items()}
        super().__init__(members)
        self.register_map = self.tester.register_map

    def elaborate(self, platform):
        m = Module()
        m.submodules.tester = t = self.tester
        m.submodules.bridge = br = self.bridge
        m.d.comb += [
            br.rx.eq(self.uart_rx), self.uart_tx.eq(br.tx),
            t.csr_addr.eq(br.csr_addr), t.csr_r_stb.eq(br.csr_r_stb),
            t.csr_w_stb.eq(br.csr_w_stb), t.csr_w_data.eq(br.csr_w_data),
            br.csr_r_data.eq(t.csr_r_data),
        ]
        for c in MGMT_COUNTERS:
            m.d.comb += getattr(self, f"mgmt_{c}").eq(getattr(br, c))
        for name, member in self.tester.signature.members.items():
            if "_gmii_" not in name:
                continue
            if member.flow == Out:
                m.d.comb += getattr(self, name).eq(getattr(t, name))
            else:
                m.d.comb += getattr(t, name).eq(getattr(self, name))
        return m


def write_uart_sim_sources(outdir, name=UART_SIM_TOP) -> list[Path]:
    """Write :class:`UartSimTop` as Verilog module ``name`` (file ``<name>.v``) and the
    LiteEth MAC into ``outdir``; return the paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = [outdir / f"{name}.v", outdir / f"{MAC_MODULE}.v"]
    paths[0].write_text(verilog.convert(UartSimTop(), name=name, emit_src=False))
    paths[1].write_text(mac_verilog())
    return paths
