"""Amaranth wrapper of the exported LiteEth MAC (:mod:`wirespeed.gateware.liteeth_mac`):
a byte stream in, GMII out, and GMII in, a byte stream out.

TX: whole frames without FCS; the MAC pads, appends the FCS, prepends preamble and SFD and
keeps the 12-byte gap. RX: frames without preamble and FCS; ``error`` on the last byte means
a bad FCS; ``first`` is derived here (LiteEth marks only ``last``). All MAC clock domains are
driven from the ``sync`` domain (the simulation and single-clock boards); a board with separate
PHY clocks maps them in its platform code.
"""

from amaranth import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .liteeth_mac import MAC_MODULE
from .streams import RxStream, TxStream

__all__ = ["GMIISignature", "EthMAC"]

#: GMII as seen from the MAC (tx outputs, rx inputs).
GMIISignature = wiring.Signature({
    "tx_en": Out(1), "tx_er": Out(1), "txd": Out(8),
    "rx_dv": In(1), "rx_er": In(1), "rxd": In(8),
})


class EthMAC(wiring.Component):
    sink: In(TxStream)
    source: Out(RxStream)
    gmii: Out(GMIISignature)
    crc_errors: Out(32)

    def elaborate(self, platform):
        m = Module()
        # a board's sync domain has no reset (its clock starts once the PLL locks): 0 there
        clk, rst = ClockSignal("sync"), ResetSignal("sync", allow_reset_less=True)
        m.submodules.mac = Instance(
            MAC_MODULE,
            i_sys_clk=clk, i_sys_rst=rst,
            i_eth_tx_clk=clk, i_eth_tx_rst=rst,
            i_eth_rx_clk=clk, i_eth_rx_rst=rst,
            i_sink_valid=self.sink.valid, o_sink_ready=self.sink.ready,
            i_sink_first=self.sink.p.first, i_sink_last=self.sink.p.last,
            i_sink_data=self.sink.p.data, i_sink_last_be=self.sink.p.last, i_sink_error=0,
            o_source_valid=self.source.valid, i_source_ready=1,
            o_source_last=self.source.p.last,
            o_source_data=self.source.p.data, o_source_error=self.source.p.error,
            o_gmii_tx_en=self.gmii.tx_en, o_gmii_tx_er=self.gmii.tx_er, o_gmii_tx_data=self.gmii.txd,
            i_gmii_rx_dv=self.gmii.rx_dv, i_gmii_rx_er=self.gmii.rx_er, i_gmii_rx_data=self.gmii.rxd,
            o_crc_errors=self.crc_errors,
        )
        # LiteEth's RX path does not mark the first byte of a frame: derive it from `last`.
        between = Signal(init=1)
        m.d.comb += self.source.p.first.eq(between)
        with m.If(self.source.valid):
            m.d.sync += between.eq(self.source.p.last)
        return m
