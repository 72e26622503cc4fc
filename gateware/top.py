"""The simulation top: two tester ports, the timebase, the identification block and the
command register on one CSR bus, with flat port names for the C++ harness
(see docs/architecture.md for the port list)."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .config import CLK_HZ, ID_OFFSETS, SIM, TesterConfig
from .port import TesterPort
from .port import layout as port_layout
from .registers import ADDR_WIDTH, RegisterBank, align_up
from .regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, CMD_STOP, MAGIC
from .timebase import Timebase

__all__ = ["SimTop", "build_register_map", "GATEWARE_VERSION", "CMD_START", "CMD_STOP",
           "CMD_CLEAR", "CMD_SNAPSHOT", "TesterConfig", "SIM"]

GATEWARE_VERSION = (0, 1, 0)
N_PORTS = 2
#: port N's block (``pN.*``, :func:`~.port.layout`) starts on the first multiple of
#: PORT_SPAN after port N-1's (port 0's: after the identification block at 0)
PORT_SPAN = 0x10000
#: bytes of the identification block (id.*, time.ns, ctrl.cmd)
ID_END = 0x24


def _version_word():
    major, minor, patch = GATEWARE_VERSION
    return (major << 16) | (minor << 8) | patch


class SimTop(wiring.Component):
    """The tester of ``n_ports`` ports, each sized by ``config`` (:mod:`.config`; the
    simulation uses the full :data:`~.config.SIM`, a board a smaller preset)."""

    def __init__(self, n_ports=N_PORTS, clk_hz=CLK_HZ, *, config=SIM):
        if not isinstance(config, TesterConfig):
            raise TypeError(f"config must be a TesterConfig, not {config!r}")
        members = {}
        for i in range(n_ports):
            members |= {f"p{i}_gmii_tx_en": Out(1), f"p{i}_gmii_tx_er": Out(1), f"p{i}_gmii_txd": Out(8),
                        f"p{i}_gmii_rx_dv": In(1), f"p{i}_gmii_rx_er": In(1), f"p{i}_gmii_rxd": In(8)}
        members |= {"csr_addr": In(ADDR_WIDTH), "csr_r_stb": In(1), "csr_r_data": Out(32),
                    "csr_w_stb": In(1), "csr_w_data": In(32)}
        super().__init__(members)
        self.n_ports, self.clk_hz, self.config = n_ports, clk_hz, config
        self.bank = bank = RegisterBank(name="wirespeed", version=".".join(map(str, GATEWARE_VERSION)),
                                        clk_hz=clk_hz, n_ports=n_ports)
        self._id = {name.removeprefix("id."): bank.add(name, 32, "r", offset=ID_OFFSETS[name], doc=doc)
                    for name, doc in (
                        ("id.magic", '0x57535044 ("WSPD")'),
                        ("id.version", "gateware version, major<<16 | minor<<8 | patch"),
                        ("id.map_hash", "hash of this register map"),
                        ("id.clk_hz", "system clock frequency, Hz"),
                        ("id.n_ports", "number of tester ports"))}
        self._time = bank.add("time.ns", 64, "r", offset=0x14,
                              doc="free-running timebase, ns; reading the low word latches the high word")
        self._cmd = bank.add("ctrl.cmd", 4 + n_ports, "w", offset=0x1C,
                             doc="bit0 START, bit1 STOP, bit2 CLEAR counters, bit3 SNAPSHOT counters; "
                                 "bits 4.. the ports it is for, bit 4 + N port N (none set: every port)")
        self._id["config"] = bank.add("id.config", 32, "r", offset=ID_OFFSETS["id.config"],
                                      doc="build configuration (wirespeed.gateware.config.TesterConfig.word): "
                                          "read it first, then build the register map from it")
        self.ports = []
        base = ID_END
        for i in range(n_ports):
            base = align_up(base, PORT_SPAN)
            self.ports.append(TesterPort(bank.block(base), i, config, clk_hz=clk_hz))
            base += port_layout(base, config, i)["end"]
        self.register_map = bank.register_map()

    def elaborate(self, platform):
        m = Module()
        m.submodules.bank = bank = self.bank
        m.submodules.timebase = tb = Timebase(self.clk_hz)
        m.d.comb += [
            bank.bus.addr.eq(self.csr_addr), bank.bus.r_stb.eq(self.csr_r_stb),
            bank.bus.w_stb.eq(self.csr_w_stb), bank.bus.w_data.eq(self.csr_w_data),
            self.csr_r_data.eq(bank.bus.r_data),
            self._id["magic"].eq(MAGIC), self._id["version"].eq(_version_word()),
            self._id["map_hash"].eq(self.register_map.hash), self._id["clk_hz"].eq(self.clk_hz),
            self._id["n_ports"].eq(self.n_ports), self._id["config"].eq(self.config.word()),
            self._time.eq(tb.now),
        ]
        # each port's commands, decoded from the bank's command register: the port registers
        # them again, a copy for each of its blocks (TesterPort), a cycle after the strobe
        ports_sel = self._cmd[4:]
        # A START waits while any port clears its histograms, so a port that only sends (a
        # unidirectional build) does not start before the receiving port is ready. The CLEAR
        # command itself holds it too, until the port's own ``clearing`` is up.
        clearing_any = Signal()
        m.d.sync += clearing_any.eq(((self._cmd & CMD_CLEAR) != 0)
                                    | Cat(port.clearing for port in self.ports).any())
        for i, port in enumerate(self.ports):
            m.submodules[f"port{i}"] = port
            cmd = Signal(4, name=f"p{i}_cmd")
            m.d.comb += cmd.eq(Mux((ports_sel == 0) | ports_sel[i], self._cmd[:4], 0))
            m.d.comb += [
                port.start.eq((cmd & CMD_START) != 0), port.stop.eq((cmd & CMD_STOP) != 0),
                port.clear.eq((cmd & CMD_CLEAR) != 0),
                port.snapshot.eq((cmd & CMD_SNAPSHOT) != 0), port.hold_start.eq(clearing_any),
                getattr(self, f"p{i}_gmii_tx_en").eq(port.gmii.tx_en),
                getattr(self, f"p{i}_gmii_tx_er").eq(port.gmii.tx_er),
                getattr(self, f"p{i}_gmii_txd").eq(port.gmii.txd),
                port.gmii.rx_dv.eq(getattr(self, f"p{i}_gmii_rx_dv")),
                port.gmii.rx_er.eq(getattr(self, f"p{i}_gmii_rx_er")),
                port.gmii.rxd.eq(getattr(self, f"p{i}_gmii_rxd")),
            ]
        return m


def build_register_map(config=SIM, n_ports=N_PORTS):
    """The register map of the tester built with ``config`` (a
    :class:`~.config.TesterConfig`, e.g. ``TesterConfig.from_word(id.config)``), without
    generating any HDL."""
    top = SimTop(n_ports, config=config)
    blocks = [top, top.bank, *top.ports]
    blocks += [part for port in top.ports for part in vars(port).values() if isinstance(part, wiring.Component)]
    for unused in blocks:   # declared for their map, never elaborated
        unused._MustUse__silence = True
    return top.register_map
