"""Build-time export of a raw LiteEth MAC (GMII PHY + LiteEthMACCore, 8-bit) as Verilog.

LiteEth's own generator (liteeth_gen) offers only Wishbone, AXI-Lite and UDP cores, so this
module instantiates the PHY and MAC core directly and converts them with Migen. The output is
generated into the build folder on every build and never committed.

Clock domains ``sys``, ``eth_tx``, ``eth_rx`` are ports of the module; the simulation drives
all three from one clock. The MAC's 8-bit RX path in LiteEth 2024.12 never sets ``last_be``
on the PHY stream, so frames with a bad FCS would pass as good (see docs/architecture.md);
this export drives ``last_be = last`` on the PHY's RX stream, which makes the CRC checker
flag them (tests/gateware check it).
"""

from liteeth.mac.core import LiteEthMACCore
from liteeth.phy.gmii import LiteEthPHYGMIIRX, LiteEthPHYGMIITX
from migen import ClockDomain, ClockDomainsRenamer, Module, Record, Signal
from migen.fhdl.verilog import convert

__all__ = ["MAC_MODULE", "mac_verilog", "MAC_PORTS"]

MAC_MODULE = "liteeth_mac_gmii"

#: (name, direction, width) of the exported module's ports, in the order the wrapper uses.
MAC_PORTS = [
    ("sys_clk", "i", 1), ("sys_rst", "i", 1),
    ("eth_tx_clk", "i", 1), ("eth_tx_rst", "i", 1),
    ("eth_rx_clk", "i", 1), ("eth_rx_rst", "i", 1),
    ("sink_valid", "i", 1), ("sink_ready", "o", 1), ("sink_first", "i", 1),
    ("sink_last", "i", 1), ("sink_data", "i", 8), ("sink_last_be", "i", 1), ("sink_error", "i", 1),
    ("source_valid", "o", 1), ("source_ready", "i", 1), ("source_first", "o", 1),
    ("source_last", "o", 1), ("source_data", "o", 8), ("source_last_be", "o", 1), ("source_error", "o", 1),
    ("gmii_tx_en", "o", 1), ("gmii_tx_er", "o", 1), ("gmii_tx_data", "o", 8),
    ("gmii_rx_dv", "i", 1), ("gmii_rx_er", "i", 1), ("gmii_rx_data", "i", 8),
    ("crc_errors", "o", 32), ("preamble_errors", "o", 32),
]


class _GMIIPhy(Module):
    """LiteEth's GMII TX/RX datapaths without its clock generator (clocks come from ports)."""
    dw = 8

    def __init__(self, pads):
        self.submodules.tx = ClockDomainsRenamer("eth_tx")(LiteEthPHYGMIITX(pads))
        self.submodules.rx = ClockDomainsRenamer("eth_rx")(LiteEthPHYGMIIRX(pads))
        self.sink, self.source = self.tx.sink, self.rx.source
        # The RX fix: the 8-bit MAC datapath expects last_be on the last byte.
        self.comb += self.rx.source.last_be.eq(self.rx.source.last)


class _MacTop(Module):
    def __init__(self):
        self.ios = set()
        for cd in ("sys", "eth_tx", "eth_rx"):
            dom = ClockDomain(cd)
            setattr(self.clock_domains, f"cd_{cd}", dom)
            dom.clk.name_override = f"{cd}_clk"
            dom.rst.name_override = f"{cd}_rst"
            self.ios |= {dom.clk, dom.rst}

        pads = Record([("tx_en", 1), ("tx_er", 1), ("tx_data", 8),
                       ("rx_dv", 1), ("rx_er", 1), ("rx_data", 8)], name="gmii")
        self.submodules.phy = phy = _GMIIPhy(pads)
        self.submodules.core = core = LiteEthMACCore(phy, dw=8, with_sys_datapath=True)

        def port(name, sig):
            sig.name_override = name
            self.ios.add(sig)

        for ep_name, ep in (("sink", core.sink), ("source", core.source)):
            for field in ("valid", "ready", "first", "last", "data", "last_be", "error"):
                exported = Signal(len(getattr(ep, field)))
                if (ep_name == "sink") == (field != "ready"):
                    self.comb += getattr(ep, field).eq(exported)
                else:
                    self.comb += exported.eq(getattr(ep, field))
                port(f"{ep_name}_{field}", exported)
        for field in ("tx_en", "tx_er", "tx_data", "rx_dv", "rx_er", "rx_data"):
            port(f"gmii_{field}", getattr(pads, field))
        for name, csr in (("crc_errors", core.rx_datapath.crc_errors),
                          ("preamble_errors", core.rx_datapath.preamble_errors)):
            exported = Signal(32)
            self.comb += exported.eq(csr.status)
            port(name, exported)


def mac_verilog() -> str:
    """Verilog text of module :data:`MAC_MODULE`."""
    top = _MacTop()
    return str(convert(top, ios=top.ios, name=MAC_MODULE))
