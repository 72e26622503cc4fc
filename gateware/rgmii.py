"""GMII <-> RGMII adapter for one tester port on a board (1000 Mb/s only).

The tester (and the LiteEth MAC inside it) speaks GMII in the 125 MHz ``sync`` domain. A
board PHY speaks RGMII: 4 data bits and a control bit on both clock edges, a transmit clock
the FPGA forwards, and a receive clock the PHY recovers from the wire. This module splits the
job in two so that everything except the vendor I/O cells runs in the Amaranth simulator:

* :class:`RGMIIPort` (pure logic, simulated in ``tests/gateware/test_rgmii.py``) sees the pins
  through :data:`RGMIIDDRSignature`, i.e. as *pairs* of values per clock cycle: ``[0]`` the
  value on the rising edge, ``[1]`` the value on the falling edge.

  - TX (``sync`` domain): one register stage, then ``tx_data = txd`` (low nibble on the
    rising edge, high nibble on the falling edge), ``tx_ctl = (tx_en, tx_en ^ tx_er)``.
  - RX: decoded in the PHY's receive clock domain (``rx_domain``), then handed to ``sync``
    through :class:`RxCDC` (an asynchronous FIFO, see below).

* :class:`RGMIIPins` (board only) binds those pairs to the pins with DDR cells and creates the
  receive clock domain. It uses Amaranth's ``io.DDRBuffer`` (portable; on ECP5 it becomes
  IDDRX1F/ODDRX1F) wherever no delay is needed; where a board needs the FPGA to add the RGMII
  clock-to-data skew (2 ns, "RGMII-ID" done on the FPGA side) it uses the ECP5 primitives
  with a fixed ``DELAYG`` between the pad and the DDR cell, which ``io.DDRBuffer`` cannot
  express. Which side delays what is a board fact (``hw/<board>.py``: ``rgmii_rx_delay_ns``,
  ``rgmii_tx_delay_ns``).

Receive clock crossing (:class:`RxCDC`)
---------------------------------------
The PHY's receive clock and the board oscillator differ by up to +-100 ppm each (so up to
200 ppm between them). Bytes of a frame (preamble and SFD included) are written into an
asynchronous FIFO in the receive domain with a ``last`` flag on the final byte. The read side
(in ``sync``) waits until ``threshold`` bytes of the frame are queued and then releases the
whole frame one byte per cycle without a pause, so a frame never gets a hole: at 200 ppm a
9018-byte jumbo frame (9026 bytes with preamble) gains or loses under 2 bytes over its length,
well inside the default threshold of 4 and the 16-entry depth. A fragment shorter than the
threshold is released after a timeout of ``threshold + 8`` cycles.

Latency: from the receive-clock edge at which the decoder registers a byte to the sys edge at
which it is on the GMII RX signals, between ``RX_CDC_LATENCY_CYCLES - 1`` and
:data:`RX_CDC_LATENCY_CYCLES` sys cycles (8 to 9 cycles, 64 to 72 ns, at the default threshold
of 4; each extra threshold byte adds one cycle). The spread of one cycle is the phase of one
clock against the other: the byte waits for the next sys edge, and the FIFO's pointer
synchroniser sees a write one sys cycle earlier or later depending on where the receive
edge falls; in hardware, a receive edge that coincides with a sys edge can take either
side, so count +-1 cycle of jitter on every frame's receive timestamp (not drift: it does not
accumulate). Within one frame the latency of later bytes moves by at most the clocks'
difference over the frame (under 2 cycles for a jumbo frame at 200 ppm). The fixed part adds
to the DDR input cell's cycle and calibrates away with the cable loopback
(docs/lab-setup.md). tests/gateware/test_rgmii.py measures all of this at 0 and +-200 ppm.
"""

from amaranth import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import io, wiring
from amaranth.lib.cdc import FFSynchronizer, PulseSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

from .mac import GMIISignature

__all__ = ["RGMIIDDRSignature", "RGMIITx", "RGMIIRxDecode", "RxCDC", "RGMIIPort", "RGMIIPins",
           "RX_CDC_LATENCY_CYCLES", "DELAYG_TAP_PS"]

#: RGMII as DDR pairs, from the adapter's side: ``tx_ctl[0]``/``tx_data[0:4]`` go out on the
#: rising edge, ``tx_ctl[1]``/``tx_data[4:8]`` on the falling edge; RX the same way in.
RGMIIDDRSignature = wiring.Signature({
    "tx_ctl": Out(2), "tx_data": Out(8),
    "rx_ctl": In(2), "rx_data": In(8),
})

#: Largest receive FIFO latency at the default threshold (4), sys cycles, from the decoder's
#: registered byte (receive domain) to the GMII RX output in sync; the smallest is one less
#: (see above). tests/gateware/test_rgmii.py measures it.
RX_CDC_LATENCY_CYCLES = 9
#: ECP5 DELAYG: one tap is about 25 ps (Lattice TN1265); at most 127 taps.
DELAYG_TAP_PS = 25


class RGMIITx(wiring.Component):
    """GMII (sync) to RGMII DDR pairs (sync): one register stage."""
    gmii_tx_en: In(1)
    gmii_tx_er: In(1)
    gmii_txd: In(8)
    tx_ctl: Out(2)
    tx_data: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [
            self.tx_data.eq(self.gmii_txd),
            self.tx_ctl.eq(Const(0, 2) | self.gmii_tx_en | ((self.gmii_tx_en ^ self.gmii_tx_er) << 1)),
        ]
        return m


class RGMIIRxDecode(wiring.Component):
    """RGMII DDR pairs to GMII bytes, registered in the receive domain ``domain``.

    Between frames RGMII carries the PHY's in-band status on the data lines (RX_DV and RX_ER
    both low): bit 0 link, bits 2:1 speed (0 10, 1 100, 2 1000 Mb/s), bit 3 full duplex;
    ``inband`` holds the last such value."""
    rx_ctl: In(2)
    rx_data: In(8)
    rx_dv: Out(1)
    rx_er: Out(1)
    rxd: Out(8)
    inband: Out(4)

    def __init__(self, domain="rx"):
        self._domain = domain
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        d = m.d[self._domain]
        dv, err = self.rx_ctl[0], self.rx_ctl[0] ^ self.rx_ctl[1]
        d += [self.rx_dv.eq(dv), self.rx_er.eq(err), self.rxd.eq(self.rx_data)]
        with m.If(~self.rx_ctl[0] & ~self.rx_ctl[1] & (self.rx_data[:4] == self.rx_data[4:])):
            d += self.inband.eq(self.rx_data[:4])
        return m


class RxCDC(wiring.Component):
    """GMII receive bytes from ``w_domain`` to ``sync`` without holes inside a frame.

    ``underruns`` counts frames in which the FIFO ran dry (that byte goes out with ``rx_er``
    set, so the MAC drops the frame as bad); ``overflows`` frames that lost bytes to a full
    FIFO (the MAC sees a bad FCS). Both stay 0 while the clocks differ by less than the
    threshold and the depth allow over a frame (they do with a wide margin at 200 ppm and
    9018-byte frames; the tests show both counters work at 1000 ppm)."""
    # write side (w_domain)
    w_dv: In(1)
    w_er: In(1)
    w_data: In(8)
    # read side (sync)
    rx_dv: Out(1)
    rx_er: Out(1)
    rxd: Out(8)
    underruns: Out(32)
    overflows: Out(32)

    def __init__(self, w_domain="rx", *, threshold=4, depth=16):
        if not 1 <= threshold < depth:
            raise ValueError(f"threshold must be from 1 to depth - 1 ({depth - 1}), not {threshold}")
        self._w_domain, self.threshold, self.depth = w_domain, threshold, depth
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = AsyncFIFO(width=10, depth=self.depth, r_domain="sync",
                                             w_domain=self._w_domain)
        wd = m.d[self._w_domain]
        # write side: hold one byte back so the last byte of a frame can carry `last`
        held = Signal(9)   # er, data
        held_valid = Signal()
        wd += [held.eq(self.w_data | (self.w_er << 8)), held_valid.eq(self.w_dv)]
        m.d.comb += [
            fifo.w_en.eq(held_valid),
            fifo.w_data.eq(held | ((~self.w_dv) << 9)),   # bit 9: last (the frame ended after this byte)
        ]
        # a byte that finds the FIFO full is lost (the frame then fails its FCS check in the
        # MAC); count such frames, once per frame, in sync
        overflowed = Signal()
        m.submodules.overflow_sync = ovf = PulseSynchronizer(self._w_domain, "sync")
        m.d.comb += ovf.i.eq(held_valid & ~fifo.w_rdy & ~overflowed)
        with m.If(held_valid & ~fifo.w_rdy):
            wd += overflowed.eq(1)
        with m.If(~held_valid):
            wd += overflowed.eq(0)
        with m.If(ovf.o):
            m.d.sync += self.overflows.eq(self.overflows + 1)

        # read side: wait for `threshold` bytes (or a short fragment's timeout), then stream
        timeout = self.threshold + 8
        wait = Signal(range(timeout + 1))
        streaming = Signal()
        in_frame_underrun = Signal()
        with m.If(~streaming):
            with m.If(fifo.r_rdy):
                m.d.sync += wait.eq(wait + (wait != timeout))
            with m.Else():
                m.d.sync += wait.eq(0)
            m.d.sync += [self.rx_dv.eq(0), self.rx_er.eq(0)]
            with m.If((fifo.r_level >= self.threshold) | (wait == timeout)):
                m.d.sync += [streaming.eq(1), wait.eq(0), in_frame_underrun.eq(0)]
        with m.Else():
            m.d.comb += fifo.r_en.eq(1)
            with m.If(fifo.r_rdy):
                m.d.sync += [self.rx_dv.eq(1), self.rx_er.eq(fifo.r_data[8]), self.rxd.eq(fifo.r_data[:8])]
                with m.If(fifo.r_data[9]):
                    m.d.sync += streaming.eq(0)
            with m.Else():
                # ran dry inside a frame: mark the byte bad (the MAC drops the frame)
                m.d.sync += [self.rx_dv.eq(1), self.rx_er.eq(1), in_frame_underrun.eq(1)]
                with m.If(~in_frame_underrun):
                    m.d.sync += self.underruns.eq(self.underruns + 1)
        return m


class RGMIIPort(wiring.Component):
    """GMII from the MAC (``gmii``, sync) to RGMII DDR pairs (``ddr``); the receive half runs
    in ``rx_domain`` up to the clock crossing. ``inband`` is the PHY's in-band link status,
    synchronised to sync."""
    gmii: In(GMIISignature)
    ddr: Out(RGMIIDDRSignature)
    rx_underruns: Out(32)
    rx_overflows: Out(32)
    inband: Out(4)

    def __init__(self, rx_domain="rx", *, threshold=4, depth=16):
        self._rx_domain, self._threshold, self._depth = rx_domain, threshold, depth
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx = tx = RGMIITx()
        m.submodules.dec = dec = RGMIIRxDecode(self._rx_domain)
        m.submodules.cdc = cdc = RxCDC(self._rx_domain, threshold=self._threshold, depth=self._depth)
        m.d.comb += [
            tx.gmii_tx_en.eq(self.gmii.tx_en), tx.gmii_tx_er.eq(self.gmii.tx_er), tx.gmii_txd.eq(self.gmii.txd),
            self.ddr.tx_ctl.eq(tx.tx_ctl), self.ddr.tx_data.eq(tx.tx_data),
            dec.rx_ctl.eq(self.ddr.rx_ctl), dec.rx_data.eq(self.ddr.rx_data),
            cdc.w_dv.eq(dec.rx_dv), cdc.w_er.eq(dec.rx_er), cdc.w_data.eq(dec.rxd),
            self.gmii.rx_dv.eq(cdc.rx_dv), self.gmii.rx_er.eq(cdc.rx_er), self.gmii.rxd.eq(cdc.rxd),
            self.rx_underruns.eq(cdc.underruns), self.rx_overflows.eq(cdc.overflows),
        ]
        m.submodules.inband_sync = FFSynchronizer(dec.inband, self.inband)
        return m


def _delay_taps(ns):
    taps = round(ns * 1000 / DELAYG_TAP_PS)
    if not 0 <= taps <= 127:
        raise ValueError(f"RGMII delay {ns} ns is outside the ECP5 DELAYG range (0 to 3.17 ns)")
    return taps


class RGMIIPins(wiring.Component):
    """The board side of one RGMII port: DDR cells on the pins, the forwarded transmit clock,
    and the receive clock as clock domain ``rx_domain`` (created by the caller, driven here).

    ``pins`` is the resource requested with ``dir="-"`` (raw ports: ``tx_clk``, ``tx_ctl``,
    ``tx_data``, ``rx_clk``, ``rx_ctl``, ``rx_data``). ``rx_delay_ns`` delays ``rx_ctl``/
    ``rx_data`` against ``rx_clk``; ``tx_delay_ns`` delays ``tx_clk`` against the data (ECP5
    ``DELAYG``; 0 uses the portable ``io.DDRBuffer``). The transmit clock is the ``sync``
    clock sent out through a DDR cell (1 on the rising edge, 0 on the falling one), so it has
    the same output path as the data."""
    ddr: In(RGMIIDDRSignature)

    def __init__(self, pins, rx_domain, *, rx_delay_ns=0.0, tx_delay_ns=0.0):
        self._pins, self._rx_domain = pins, rx_domain
        self._rx_taps, self._tx_taps = _delay_taps(rx_delay_ns), _delay_taps(tx_delay_ns)
        super().__init__()
        #: the receive clock as a named signal (for the board's clock constraint)
        self.rx_clk = Signal(name=f"{rx_domain}_clk")

    @staticmethod
    def _port(pins, name):
        for candidate in (name, name.replace("ctl", "ctrl")):   # versa_ecp5 spells port 1 "ctrl"
            if hasattr(pins, candidate):
                return getattr(pins, candidate)
        raise AttributeError(f"RGMII resource has no {name}")

    def elaborate(self, platform):
        m = Module()
        p = self._pins
        # receive clock: a plain input buffer on a clock-capable pin
        m.submodules.rx_clk_buf = rx_clk = io.Buffer("i", self._port(p, "rx_clk"))
        m.d.comb += [self.rx_clk.eq(rx_clk.i), ClockSignal(self._rx_domain).eq(self.rx_clk)]

        # receive data and control
        for name, width, sig in (("rx_ctl", 1, self.ddr.rx_ctl), ("rx_data", 4, self.ddr.rx_data)):
            port = self._port(p, name)
            if self._rx_taps == 0:
                m.submodules[name] = buf = io.DDRBuffer("i", port, i_domain=self._rx_domain)
                m.d.comb += [sig[:width].eq(buf.i[0]), sig[width:].eq(buf.i[1])]
            else:
                m.submodules[name] = buf = io.Buffer("i", port)
                for bit in range(width):
                    delayed = Signal(name=f"{name}{bit}_delayed")
                    m.submodules[f"{name}{bit}_delay"] = Instance(
                        "DELAYG", p_DEL_MODE="USER_DEFINED", p_DEL_VALUE=self._rx_taps,
                        i_A=buf.i[bit], o_Z=delayed)
                    m.submodules[f"{name}{bit}_iddr"] = Instance(
                        "IDDRX1F", i_SCLK=ClockSignal(self._rx_domain), i_RST=Const(0), i_D=delayed,
                        o_Q0=sig[bit], o_Q1=sig[width + bit])

        # transmit data and control (sync), no delay: the clock carries the skew if any
        for name, width, sig in (("tx_ctl", 1, self.ddr.tx_ctl), ("tx_data", 4, self.ddr.tx_data)):
            m.submodules[name] = buf = io.DDRBuffer("o", self._port(p, name), o_domain="sync")
            m.d.comb += [buf.o[0].eq(sig[:width]), buf.o[1].eq(sig[width:])]

        # forwarded transmit clock
        tx_clk = self._port(p, "tx_clk")
        if self._tx_taps == 0:
            m.submodules.tx_clk = buf = io.DDRBuffer("o", tx_clk, o_domain="sync")
            m.d.comb += [buf.o[0].eq(1), buf.o[1].eq(0)]
        else:
            m.submodules.tx_clk = buf = io.Buffer("o", tx_clk)
            clk_ddr = Signal()
            m.submodules.tx_clk_oddr = Instance(
                "ODDRX1F", i_SCLK=ClockSignal("sync"), i_RST=Const(0), i_D0=Const(1), i_D1=Const(0), o_Q=clk_ddr)
            m.submodules.tx_clk_delay = Instance(
                "DELAYG", p_DEL_MODE="USER_DEFINED", p_DEL_VALUE=self._tx_taps, i_A=clk_ddr, o_Z=buf.o)
        return m
