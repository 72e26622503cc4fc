"""The tester on a board: clocking, reset, the tester core, two RGMII ports, PHY management
over MDIO, the management UART bridge and link LEDs.

::

    oscillator ─> EHXPLLL ─> sync (125 MHz) ─┬─ tester core (SimTop: generators, MACs, analyzers)
                                              │     p0/p1 GMII <─> RGMIIPort <─> RGMIIPins <─> PHY 0/1
                                              │                    (RX: PHY clock domain rxN, async FIFO to sync)
                                              ├─ PhyManager per MDIO bus (reset, ID, advertise 1000, poll link)
                                              └─ UartBridge ─> CSR bus ─┬─ tester register bank (0x00000..)
                                                                         └─ board register bank (BOARD_BASE..)

Board registers (:func:`board_register_map`, bank ``wirespeed-board``) sit at byte address
:data:`BOARD_BASE` (0x3F000), above the tester's map, so the tester's register map and its
hash are the same as in simulation and the host's driver needs no change. Both banks see
every bus cycle; each answers only its own addresses and reads 0 elsewhere, so the read data
is the OR of the two. The host reads them by name from :func:`board_register_map` (see
``wirespeed.board.read_board_status``)::

    board.magic            0x57534244 "WSBD"
    phy.state<b>           MDIO bus b: 0 PHY reset, 1 settling, 2 initialising, 3 polling
    phy.mdio_ctrl (w)      raw MDIO access: [15:0] data, [20:16] register, [25:21] PHY address,
                           bit 26 write, [29:28] bus, bit 31 go (must be 1)
    phy.mdio_status        [15:0] data read, bit 16 busy, bit 17 no answer (nack)
    pN.phy.id              PHY identifier (register 2 << 16 | register 3)
    pN.phy.link            1: link up (BMSR bit 2, latest poll)
    pN.phy.speed           0 no link, 1 link below 1000 Mb/s, 2 1000 Mb/s
    pN.phy.bmsr, .gstat    raw registers 1 and 10 of the latest poll
    pN.phy.nack            1: the PHY did not answer the latest poll
    pN.rgmii.underruns     frames whose receive FIFO ran dry (should stay 0)
    pN.rgmii.overflows     frames that lost bytes to a full receive FIFO (should stay 0)
    pN.rgmii.inband        the PHY's RGMII in-band status: bit 0 link, 2:1 speed, 3 duplex
"""

from amaranth import Cat, ClockDomain, ClockSignal, Const, Elaboratable, Instance, Module, ResetSignal, Signal
from amaranth.lib import io
from amaranth.lib.cdc import FFSynchronizer

from .liteeth_mac import MAC_MODULE, mac_verilog
from .mdio import PhyManager
from .registers import RegisterBank
from .replica import replica
from .rgmii import RGMIIPins, RGMIIPort
from .top import CLK_HZ, GATEWARE_VERSION, SimTop

__all__ = ["BoardTop", "board_register_map", "pll_params", "BOARD_BASE", "BOARD_MAGIC", "bridge_available",
           "DEFAULT_BAUD"]

#: management UART rate, the host's default (wirespeed.host.serial_transport.DEFAULT_BAUD):
#: 125 MHz / 1 Mbaud is an exact divisor of 125
DEFAULT_BAUD = 1_000_000
#: byte address of the board register bank (word address 0xFC00)
BOARD_BASE = 0x3F000
BOARD_MAGIC = 0x57534244


def pll_params(fin_hz, fout_hz=CLK_HZ):
    """EHXPLLL dividers (CLKOP feedback) for an exact ``fout_hz`` from ``fin_hz``: VCO 400-800
    MHz, phase detector input at least 10 MHz where possible."""
    best = None
    for clki in range(1, 129):
        pfd = fin_hz / clki
        if pfd < 3.125e6:
            break
        for fb in range(1, 81):
            if abs(pfd * fb - fout_hz) > 1:
                continue
            for op in range(1, 129):
                vco = fout_hz * op
                if 400e6 <= vco <= 800e6:
                    score = (pfd >= 10e6, -abs(vco - 600e6))
                    if best is None or score > best[0]:
                        best = (score, dict(CLKI_DIV=clki, CLKFB_DIV=fb, CLKOP_DIV=op,
                                            CLKOP_CPHASE=(op - 1) // 2, vco_hz=vco))
    if best is None:
        raise ValueError(f"no EHXPLLL setting makes {fout_hz} Hz from {fin_hz} Hz")
    return best[1]


def bridge_available():
    """The management bridge class (``UartBridge``) if the gateware has one, else None."""
    for module in ("uart", "mgmt"):
        try:
            mod = __import__(f"{__package__}.{module}", fromlist=["UartBridge"])
        except ImportError:
            continue
        if hasattr(mod, "UartBridge"):
            return mod.UartBridge
    return None


def _tester_config(board):
    """The board's TesterConfig preset, or None while gateware/config.py does not exist."""
    try:
        from . import config
    except ImportError:
        return None
    return getattr(config, board.config_preset, None)


#: the board's registers of each PHY port: (name, bits, doc), ``pN.<name>`` word k of port
#: N's block (:func:`_board_bank`)
_PORT_REGS = [
    ("phy.id", 32, "PHY identifier, register 2 << 16 | register 3"),
    ("phy.link", 1, "1: link up (BMSR bit 2, latest poll)"),
    ("phy.speed", 2, "0 no link, 1 link below 1000 Mb/s, 2 link at 1000 Mb/s"),
    ("phy.bmsr", 16, "BMSR (register 1), latest poll"),
    ("phy.gstat", 16, "1000BASE-T status (register 10), latest poll"),
    ("phy.nack", 1, "1: the PHY did not answer the latest poll"),
    ("rgmii.underruns", 32, "frames whose receive FIFO ran dry"),
    ("rgmii.overflows", 32, "frames that lost bytes to a full receive FIFO"),
    ("rgmii.inband", 4, "RGMII in-band status: bit 0 link, 2:1 speed, 3 full duplex"),
]
BOARD_PORT_SPAN = 4 * len(_PORT_REGS)


def _board_bank(board):
    """The board's register bank and its signals: ``board.magic`` at :data:`BOARD_BASE`, a
    ``phy.state<b>`` word per MDIO bus from ``BOARD_BASE + 4``, then ``phy.mdio_ctrl``,
    ``phy.mdio_status`` and each port's block of :data:`BOARD_PORT_SPAN` bytes."""
    bank = RegisterBank(name="wirespeed-board", version=".".join(map(str, GATEWARE_VERSION)), clk_hz=CLK_HZ,
                        n_ports=len(board.rgmii_ports))
    # the bank decodes absolute addresses above the tester's map
    regs = bank.block(BOARD_BASE)
    mdio = 4 + 4 * len(board.mdio_buses)            # phy.mdio_ctrl's offset
    ports = mdio + 8
    out = {"magic": regs.add("board.magic", 32, "r", offset=0x00, doc='0x57534244 ("WSBD")')}
    for b, _ in enumerate(board.mdio_buses):
        out[f"state{b}"] = regs.add(f"phy.state{b}", 2, "r", offset=4 + 4 * b,
                                    doc=f"MDIO bus {b}: 0 PHY reset, 1 settling, 2 initialising, 3 polling")
    out["mdio_ctrl"] = regs.add("phy.mdio_ctrl", 32, "w", offset=mdio,
                                doc="raw MDIO access: [15:0] data, [20:16] register, [25:21] PHY, bit 26 write, "
                                    "[29:28] bus, bit 31 go (must be 1)")
    out["mdio_status"] = regs.add("phy.mdio_status", 32, "r", offset=mdio + 4,
                                  doc="[15:0] data read, bit 16 busy, bit 17 no answer")
    for i, _ in enumerate(board.rgmii_ports):
        port = regs.block(ports + i * BOARD_PORT_SPAN, BOARD_PORT_SPAN)
        for k, (name, width, doc) in enumerate(_PORT_REGS):
            out[f"p{i}.{name}"] = port.add(f"p{i}.{name}", width, "r", offset=4 * k, doc=doc)
    return bank, out


def board_register_map(board):
    """The board bank's register map (absolute byte offsets), without generating any HDL."""
    bank, _ = _board_bank(board)
    bank._MustUse__silence = True
    return bank.register_map()


class _StandInBridge(Elaboratable):
    """Build-only stand-in for the management bridge, used when the gateware has no
    ``UartBridge`` yet: it keeps the CSR bus driven from a pin so synthesis keeps the tester
    (a bus tied to constants would let it optimise most of the design away). It is not a
    protocol and no host can talk to it; a board built with it reports so."""

    def __init__(self):
        self.rx, self.tx = Signal(), Signal()
        self.csr_addr, self.csr_r_stb, self.csr_w_stb = Signal(16), Signal(), Signal()
        self.csr_w_data, self.csr_r_data = Signal(32), Signal(32)

    def elaborate(self, platform):
        m = Module()
        sr = Signal(50)
        m.d.sync += sr.eq(Cat(self.rx, sr[:-1]))
        m.d.comb += [self.csr_addr.eq(sr[32:48]), self.csr_w_data.eq(sr[:32]),
                     self.csr_w_stb.eq(sr[48:50] == 0b10), self.csr_r_stb.eq(sr[48:50] == 0b01)]
        m.d.sync += self.tx.eq(self.csr_r_data.xor())
        return m


class BoardTop(Elaboratable):
    """The whole board design for :class:`wirespeed.hw.boards.Board` ``board``.

    ``bridge``: ``"uart"`` (the management UartBridge; error if the gateware has none),
    ``"auto"`` (UartBridge if present, else the build-only stand-in) or ``"stand-in"``.
    ``config``: a TesterConfig instead of the board's preset (``board.config_preset``)."""

    def __init__(self, board, *, baud=None, bridge="auto", config=None, tester=None):
        self.board = board
        self.baud = baud if baud is not None else getattr(board, "uart_baud", DEFAULT_BAUD)
        cls = bridge_available()
        if bridge == "uart" and cls is None:
            raise RuntimeError("the gateware has no UartBridge (gateware/uart.py) yet")
        self.bridge_kind = "uart" if (bridge in ("uart", "auto") and cls is not None) else "stand-in"
        self._bridge_cls = cls
        self.config = config if config is not None else _tester_config(board)
        if tester is not None:
            self.tester = tester
        elif self.config is not None:
            self.tester = SimTop(config=self.config)
        else:
            self.tester = SimTop(n_ports=len(board.rgmii_ports))
        self.bank, self._regs = _board_bank(board)

    def elaborate(self, platform):
        board, m = self.board, Module()
        if platform is not None:
            platform.add_file(f"{MAC_MODULE}.v", mac_verilog())

        # clocking: oscillator -> PLL -> DCCA -> sync (125 MHz). The clock buffer passes the
        # clock only once the PLL has locked, so the design starts from the values the
        # configuration gave every flip-flop, on a clean clock, and needs no reset: a reset
        # would reach some 15,000 flip-flops, one net of a fan-out that costs nanoseconds
        # across the part (and the LSR input each takes)
        clk_in = platform.request(*board.clk_resource, dir="-")
        m.submodules.clk_in = clk_buf = io.Buffer("i", clk_in)
        params = pll_params(board.clk_hz)
        pll_clk, sys_clk, locked = Signal(name="pll_clk"), Signal(name="sys_clk"), Signal(name="pll_locked")
        m.submodules.pll = Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI=str(board.clk_hz / 1e6), a_FREQUENCY_PIN_CLKOP=str(CLK_HZ / 1e6),
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREFSEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_CLKOP_ENABLE="ENABLED",
            p_CLKI_DIV=params["CLKI_DIV"], p_CLKFB_DIV=params["CLKFB_DIV"], p_CLKOP_DIV=params["CLKOP_DIV"],
            p_CLKOP_CPHASE=params["CLKOP_CPHASE"], p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP",
            i_CLKI=clk_buf.i, i_CLKFB=pll_clk, i_RST=Const(0), i_STDBY=Const(0),
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1, i_PLLWAKESYNC=0,
            i_ENCLKOP=0, o_CLKOP=pll_clk, o_LOCK=locked)
        # the lock, synchronised on the PLL's own (ungated) clock, enables the buffer
        m.domains.pll = ClockDomain("pll", reset_less=True)
        m.d.comb += ClockSignal("pll").eq(pll_clk)
        lock_sync = Signal(3)
        m.d.pll += lock_sync.eq(Cat(locked, lock_sync[:-1]))
        running = lock_sync[-1]
        m.submodules.sys_gate = Instance("DCCA", i_CLKI=pll_clk, i_CE=running, o_CLKO=sys_clk)
        m.domains.sync = ClockDomain("sync", reset_less=True)
        m.d.comb += ClockSignal("sync").eq(sys_clk)
        # no constraint here: nextpnr derives 125 MHz for the PLL output from the oscillator's
        # (the resource's Clock), and the RGMII receive clocks are constrained on their pins
        # (Clock(125e6) on each board's rx_clk subsignal): yosys renames internal nets, so a
        # net constraint would not find them

        # the tester core
        m.submodules.tester = tester = self.tester
        n_ports = len(board.rgmii_ports)

        # RGMII ports
        ports = []
        for i, res in enumerate(board.rgmii_ports):
            dom = f"rx{i}"
            m.domains += ClockDomain(dom)
            pins = RGMIIPins(platform.request(*res, dir="-"), dom,
                             rx_delay_ns=board.rgmii_rx_delay_ns, tx_delay_ns=board.rgmii_tx_delay_ns)
            m.submodules[f"rgmii{i}_pins"] = pins
            # the receive domain is held in reset until the sys clock runs: ``running``
            # synchronised to it, then two register stages (replicas, in a reset-less domain
            # on the same clock) that placement can spread over the way from the PLL's corner
            # to the port's pins; the domain's reset was one synchroniser's net across the part
            free = f"rx{i}_free"
            m.domains += ClockDomain(free, reset_less=True)
            m.d.comb += ClockSignal(free).eq(ClockSignal(dom))
            running_rx = Signal(name=f"rx{i}_running")
            m.submodules[f"rx{i}_rst"] = FFSynchronizer(running, running_rx, o_domain=free)
            rst_stages = [replica(name=f"rx{i}_rst_q{k}", init=1) for k in range(2)]
            m.d[free] += [rst_stages[0].eq(~running_rx), rst_stages[1].eq(rst_stages[0])]
            m.d.comb += ResetSignal(dom).eq(rst_stages[1])
            m.submodules[f"rgmii{i}"] = port = RGMIIPort(dom)
            m.d.comb += [
                pins.ddr.tx_ctl.eq(port.ddr.tx_ctl), pins.ddr.tx_data.eq(port.ddr.tx_data),
                port.ddr.rx_ctl.eq(pins.ddr.rx_ctl), port.ddr.rx_data.eq(pins.ddr.rx_data),
                port.gmii.tx_en.eq(getattr(tester, f"p{i}_gmii_tx_en")),
                port.gmii.tx_er.eq(getattr(tester, f"p{i}_gmii_tx_er")),
                port.gmii.txd.eq(getattr(tester, f"p{i}_gmii_txd")),
                getattr(tester, f"p{i}_gmii_rx_dv").eq(port.gmii.rx_dv),
                getattr(tester, f"p{i}_gmii_rx_er").eq(port.gmii.rx_er),
                getattr(tester, f"p{i}_gmii_rxd").eq(port.gmii.rxd),
            ]
            ports.append(port)

        # management bridge and the two register banks on one CSR bus
        uart = platform.request(*board.uart_resource, dir="-")
        m.submodules.uart_rx = uart_rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = uart_tx = io.Buffer("o", uart.tx)
        if self.bridge_kind == "uart":
            bridge = self._bridge_cls(CLK_HZ, self.baud)
        else:
            bridge = _StandInBridge()
        m.submodules.bridge = bridge
        m.submodules.board_bank = bank = self.bank
        m.d.comb += [
            bridge.rx.eq(uart_rx.i), uart_tx.o.eq(bridge.tx),
            tester.csr_addr.eq(bridge.csr_addr), tester.csr_r_stb.eq(bridge.csr_r_stb),
            tester.csr_w_stb.eq(bridge.csr_w_stb), tester.csr_w_data.eq(bridge.csr_w_data),
            bank.bus.addr.eq(bridge.csr_addr), bank.bus.r_stb.eq(bridge.csr_r_stb),
            bank.bus.w_stb.eq(bridge.csr_w_stb), bank.bus.w_data.eq(bridge.csr_w_data),
            bridge.csr_r_data.eq(tester.csr_r_data | bank.bus.r_data),
        ]
        regs = self._regs
        m.d.comb += regs["magic"].eq(BOARD_MAGIC)

        # PHY management, one manager per MDIO bus
        ctrl = regs["mdio_ctrl"]
        status_bits = []
        for b, bus in enumerate(board.mdio_buses):
            mgmt = platform.request(*bus.resource, dir="-")
            mgr = PhyManager(CLK_HZ, bus.phy_addrs, board.phy_init_writes)
            m.submodules[f"phy_mgr{b}"] = mgr
            m.submodules[f"phy_rst{b}"] = rst_buf = io.Buffer("o", mgmt.rst)
            m.submodules[f"mdc{b}"] = mdc_buf = io.Buffer("o", mgmt.mdc)
            m.submodules[f"mdio{b}"] = mdio_buf = io.Buffer("io", mgmt.mdio)
            m.d.comb += [
                rst_buf.o.eq(mgr.phy_rst), mdc_buf.o.eq(mgr.pins.mdc),
                mdio_buf.o.eq(mgr.pins.mdio_o), mdio_buf.oe.eq(mgr.pins.mdio_oe),
                mgr.pins.mdio_i.eq(mdio_buf.i),
                regs[f"state{b}"].eq(mgr.state),
                mgr.req_stb.eq(ctrl[31] & (ctrl[28:30] == b)),
                mgr.req_write.eq(ctrl[26]), mgr.req_phy.eq(ctrl[21:26]), mgr.req_reg.eq(ctrl[16:21]),
                mgr.req_wdata.eq(ctrl[:16]),
            ]
            status_bits.append(mgr)
            for k, port_index in enumerate(bus.ports):
                st = mgr.status[k]
                p = f"p{port_index}"
                m.d.comb += [regs[f"{p}.phy.id"].eq(st.id), regs[f"{p}.phy.link"].eq(st.link),
                             regs[f"{p}.phy.speed"].eq(st.speed), regs[f"{p}.phy.bmsr"].eq(st.bmsr),
                             regs[f"{p}.phy.gstat"].eq(st.gstat), regs[f"{p}.phy.nack"].eq(st.nack)]
        # the last bus addressed by the host answers in mdio_status
        last_bus = Signal(2)
        with m.If(ctrl[31]):
            m.d.sync += last_bus.eq(ctrl[28:30])
        with m.Switch(last_bus):
            for b, mgr in enumerate(status_bits):
                with m.Case(b):
                    m.d.comb += regs["mdio_status"].eq(Cat(mgr.req_rdata, mgr.req_busy, mgr.req_nack))

        for i, port in enumerate(ports):
            m.d.comb += [regs[f"p{i}.rgmii.underruns"].eq(port.rx_underruns),
                         regs[f"p{i}.rgmii.overflows"].eq(port.rx_overflows),
                         regs[f"p{i}.rgmii.inband"].eq(port.inband)]

        # link LEDs
        for i, led_index in enumerate(board.link_leds[:n_ports]):
            m.submodules[f"led{led_index}"] = led = io.Buffer("o", platform.request("led", led_index, dir="-"))
            m.d.comb += led.o.eq(regs[f"p{i}.phy.link"])
        return m
