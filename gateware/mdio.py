"""MDIO (IEEE 802.3 clause 22) master and the PHY bring-up / link monitor of a board.

:class:`MDIOMaster` runs one management frame at a time on one MDC/MDIO bus: 32 preamble
ones, start ``01``, opcode (``01`` write, ``10`` read), PHY address, register address,
turnaround, 16 data bits, then one idle bit time with MDIO released. MDC is the sys clock
divided down to at most ``mdc_hz`` (2.5 MHz, the clause 22 limit). The master changes MDIO
just after MDC falls and samples it as MDC rises, so the PHY sees at least half a period of
set-up and hold; a PHY drives read data within 300 ns of a rising edge, and the master samples
it at the next rising edge (400 ns or more later). During a read the master releases MDIO from
the turnaround on; the second turnaround bit must read 0 (the PHY drives it): if it reads 1 no
PHY answered and ``nack`` is set.

:class:`PhyManager` owns one bus and the PHYs on it (one per tester port on that bus):

1. holds the PHYs' reset (``phy_rst``) for ``reset_ms``, releases it and waits ``settle_ms``;
2. per PHY: reads the identifier (registers 2 and 3), then does the board's writes
   (``init_writes``: e.g. advertise 1000BASE-T full duplex only and restart
   auto-negotiation; RGMII delay registers where the board needs the PHY to add them);
3. polls forever, per PHY: BMSR (register 1: bit 2 link) and the 1000BASE-T status
   (register 10: bits 11/10 partner 1000BASE-T full/half), and between rounds serves one raw
   access requested by the host (``req_*``).

Outputs per port (``status[i]``): ``id``, ``link``, ``speed`` (0 no link, 1 link below
1000 Mb/s, 2 link at 1000 Mb/s), raw ``bmsr`` and ``gstat``, and ``nack`` (the last access
to that PHY was not answered). The board top shows them to the host as registers
``pN.phy.*`` (see gateware/board_top.py).
"""

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["MDIOMaster", "PhyManager", "PhyStatusLayout", "MDIOPinsSignature",
           "REG_BMCR", "REG_BMSR", "REG_PHYID1", "REG_PHYID2", "REG_ANAR", "REG_GCTRL", "REG_GSTAT",
           "SPEED_NONE", "SPEED_SLOW", "SPEED_1000"]

REG_BMCR, REG_BMSR, REG_PHYID1, REG_PHYID2, REG_ANAR, REG_GCTRL, REG_GSTAT = 0, 1, 2, 3, 4, 9, 10
SPEED_NONE, SPEED_SLOW, SPEED_1000 = 0, 1, 2

#: The bus pins from the master's side.
MDIOPinsSignature = wiring.Signature({
    "mdc": Out(1), "mdio_o": Out(1), "mdio_oe": Out(1), "mdio_i": In(1),
})

PhyStatusLayout = data.StructLayout({
    "id": 32, "bmsr": 16, "gstat": 16, "link": 1, "speed": 2, "nack": 1,
})


class MDIOMaster(wiring.Component):
    """One clause 22 frame per ``start`` pulse (ignored while ``busy``). ``done`` pulses for
    one cycle at the end; ``rdata`` and ``nack`` are then valid for a read."""
    start: In(1)
    write: In(1)
    phy: In(5)
    reg: In(5)
    wdata: In(16)
    busy: Out(1)
    done: Out(1)
    rdata: Out(16)
    nack: Out(1)
    pins: Out(MDIOPinsSignature)

    def __init__(self, clk_hz, mdc_hz=2_500_000):
        if mdc_hz > 2_500_000:
            raise ValueError("clause 22 allows MDC up to 2.5 MHz")
        #: sys cycles per MDC half period (MDC = clk_hz / (2 * half))
        self.half = max(1, -(-clk_hz // (2 * mdc_hz)))
        self.mdc_hz = clk_hz / (2 * self.half)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        frame = Signal(64)
        is_read = Signal()
        bit = Signal(range(65))
        phase = Signal(range(self.half))
        high = Signal()        # MDC level
        shreg = Signal(16)
        ta = Signal()

        m.d.comb += [self.pins.mdc.eq(high), self.pins.mdio_o.eq(frame[63])]
        with m.If(~self.busy):
            m.d.sync += [self.done.eq(0), self.pins.mdio_oe.eq(0), high.eq(0)]
            with m.If(self.start):
                # sent MSB first: 32 preamble ones, then this word from bit 31 down
                word = Signal(32)
                m.d.comb += word.eq(Cat(
                    self.wdata,                                # [15:0] data (a read ignores it)
                    Const(0b10, 2),                            # [17:16] turnaround "10" (bit 17 = 1)
                    self.reg,                                  # [22:18] register, MSB first
                    self.phy,                                  # [27:23] PHY address, MSB first
                    Cat(self.write, ~self.write),              # [29:28] opcode: write "01", read "10"
                    Const(0b01, 2),                            # [31:30] start "01" (bit 31 = 0)
                ))
                m.d.sync += [
                    frame.eq(Cat(word, Const(0xFFFFFFFF, 32))),
                    is_read.eq(~self.write), bit.eq(0), phase.eq(0), high.eq(0),
                    self.busy.eq(1), self.pins.mdio_oe.eq(1), self.nack.eq(0),
                ]
        with m.Else():
            m.d.sync += phase.eq(phase + 1)
            with m.If(phase == self.half - 1):
                m.d.sync += phase.eq(0)
                with m.If(~high):
                    # rising edge: the PHY samples our bit; we sample its bit
                    m.d.sync += high.eq(1)
                    with m.If(is_read & (bit == 47)):
                        m.d.sync += ta.eq(self.pins.mdio_i)
                    with m.If(is_read & (bit >= 48) & (bit < 64)):
                        m.d.sync += shreg.eq(Cat(self.pins.mdio_i, shreg[:15]))
                with m.Else():
                    # falling edge: next bit
                    m.d.sync += [high.eq(0), frame.eq(frame << 1), bit.eq(bit + 1)]
                    with m.If(is_read & (bit == 45)):
                        m.d.sync += self.pins.mdio_oe.eq(0)    # turnaround: release the line
                    with m.If(bit == 63):
                        # one idle bit with the line released, so a PHY that releases it up to
                        # 300 ns after the last rising edge never meets our next preamble
                        m.d.sync += self.pins.mdio_oe.eq(0)
                    with m.If(bit == 64):
                        m.d.sync += [self.busy.eq(0), self.done.eq(1), self.pins.mdio_oe.eq(0), bit.eq(0)]
                        with m.If(is_read):
                            m.d.sync += [self.rdata.eq(shreg), self.nack.eq(ta)]
        return m


class PhyManager(wiring.Component):
    """Bring-up and link monitor of the PHYs on one MDIO bus (see the module docstring).

    ``phy_addrs[i]`` is the MDIO address of the PHY of port ``i`` of this bus;
    ``init_writes`` is a list of ``(register, value)`` done on every PHY after reading its
    identifier. Host raw access: pulse ``req_stb`` with ``req_write``, ``req_phy``,
    ``req_reg``, ``req_wdata``; ``req_busy`` stays high until it is done, then ``req_rdata``
    (and ``req_nack``) hold the result of a read."""

    def __init__(self, clk_hz, phy_addrs, init_writes=(), *, reset_ms=10.0, settle_ms=50.0,
                 poll_ms=1.0, mdc_hz=2_500_000):
        self.clk_hz = clk_hz
        self.phy_addrs, self.init_writes = list(phy_addrs), list(init_writes)
        self.reset_cycles = max(1, int(clk_hz * reset_ms / 1000))
        self.settle_cycles = max(1, int(clk_hz * settle_ms / 1000))
        self.poll_cycles = max(1, int(clk_hz * poll_ms / 1000))
        self._mdc_hz = mdc_hz
        n = len(self.phy_addrs)
        super().__init__({
            "pins": Out(MDIOPinsSignature), "phy_rst": Out(1),
            "status": Out(PhyStatusLayout).array(n),
            "state": Out(2),      # 0 reset, 1 settle, 2 init, 3 polling
            "req_stb": In(1), "req_write": In(1), "req_phy": In(5), "req_reg": In(5), "req_wdata": In(16),
            "req_busy": Out(1), "req_rdata": Out(16), "req_nack": Out(1),
        })

    def _program(self):
        """(kind, port, reg, value) steps: init then the polling loop."""
        init, poll = [], []
        for i in range(len(self.phy_addrs)):
            init += [("read", i, REG_PHYID1, "id_hi"), ("read", i, REG_PHYID2, "id_lo")]
            init += [("write", i, reg, value) for reg, value in self.init_writes]
        for i in range(len(self.phy_addrs)):
            poll += [("read", i, REG_BMSR, "bmsr"), ("read", i, REG_GSTAT, "gstat")]
        poll += [("host", None, None, None)]
        return init, poll

    def elaborate(self, platform):
        m = Module()
        m.submodules.master = master = MDIOMaster(self.clk_hz, self._mdc_hz)
        wiring.connect(m, master.pins, wiring.flipped(self.pins))

        init, poll = self._program()
        steps = init + poll
        loop_start = len(init)
        step = Signal(range(len(steps) + 1))
        timer = Signal(range(max(self.reset_cycles, self.settle_cycles, self.poll_cycles) + 1))
        issued = Signal()
        req_pending = Signal()
        req = Signal(27)    # write, phy, reg, wdata

        with m.If(self.req_stb & ~req_pending):
            m.d.sync += [req_pending.eq(1), req.eq(Cat(self.req_wdata, self.req_reg, self.req_phy, self.req_write))]
        m.d.comb += self.req_busy.eq(req_pending)

        with m.FSM():
            with m.State("RESET"):
                m.d.comb += [self.phy_rst.eq(1), self.state.eq(0)]
                m.d.sync += timer.eq(timer + 1)
                with m.If(timer == self.reset_cycles - 1):
                    m.d.sync += timer.eq(0)
                    m.next = "SETTLE"
            with m.State("SETTLE"):
                m.d.comb += self.state.eq(1)
                m.d.sync += timer.eq(timer + 1)
                with m.If(timer == self.settle_cycles - 1):
                    m.d.sync += [timer.eq(0), step.eq(0), issued.eq(0)]
                    m.next = "RUN"
            with m.State("RUN"):
                m.d.comb += self.state.eq(Cat(Const(0, 1), 1) | (step >= loop_start))
                with m.Switch(step):
                    for k, (kind, port, reg, dest) in enumerate(steps):
                        with m.Case(k):
                            nxt = loop_start if k == len(steps) - 1 else k + 1
                            if kind == "host":
                                self._host_step(m, master, req, req_pending, issued, step, timer, nxt)
                                continue
                            addr = self.phy_addrs[port]
                            st = self.status[port]
                            with m.If(~issued):
                                m.d.comb += [master.start.eq(1), master.write.eq(kind == "write"),
                                             master.phy.eq(addr), master.reg.eq(reg)]
                                if kind == "write":
                                    m.d.comb += master.wdata.eq(dest)
                                m.d.sync += issued.eq(1)
                            with m.Elif(master.done):
                                m.d.sync += [issued.eq(0), step.eq(nxt)]
                                if kind == "read":
                                    m.d.sync += st.nack.eq(master.nack)
                                    if dest == "id_hi":
                                        m.d.sync += st.id[16:].eq(master.rdata)
                                    elif dest == "id_lo":
                                        m.d.sync += st.id[:16].eq(master.rdata)
                                    elif dest == "bmsr":
                                        m.d.sync += st.bmsr.eq(master.rdata)
                                    elif dest == "gstat":
                                        link = st.bmsr[2]
                                        m.d.sync += [
                                            st.gstat.eq(master.rdata), st.link.eq(link & ~st.nack),
                                            st.speed.eq(SPEED_NONE),
                                        ]
                                        with m.If(link & ~st.nack & ~master.nack):
                                            m.d.sync += st.speed.eq(SPEED_SLOW)
                                            with m.If(master.rdata[10] | master.rdata[11]):
                                                m.d.sync += st.speed.eq(SPEED_1000)
        return m

    def _host_step(self, m, master, req, req_pending, issued, step, timer, nxt):
        """The last step of a polling round: serve a host request if there is one, then wait
        out the rest of the poll period."""
        wdata, reg, phy, write = req[:16], req[16:21], req[21:26], req[26]
        with m.If(req_pending & ~issued):
            m.d.comb += [master.start.eq(1), master.write.eq(write), master.phy.eq(phy),
                         master.reg.eq(reg), master.wdata.eq(wdata)]
            m.d.sync += issued.eq(1)
        with m.Elif(req_pending & issued):
            with m.If(master.done):
                m.d.sync += [issued.eq(0), req_pending.eq(0), self.req_rdata.eq(master.rdata),
                             self.req_nack.eq(master.nack & ~write)]
        with m.Else():
            m.d.sync += timer.eq(timer + 1)
            with m.If(timer >= self.poll_cycles - 1):
                m.d.sync += [timer.eq(0), step.eq(nxt)]
