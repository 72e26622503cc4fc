"""Lattice ECP5 Versa (LFE5UM-45F-8BG381C): 100 MHz oscillator, two Marvell 88E1512 PHYs on
RGMII (each with its own reset, MDC and MDIO), eight LEDs, an FT2232H (JTAG on channel A,
UART on channel B).

Starts from amaranth-boards' ``VersaECP5Platform`` and adds split resources ``rgmii`` N
(clock, control, data) and ``phy_mgmt`` N (reset, MDC, MDIO) from the same pins as its
``eth_rgmii`` N, so every board offers the board top the same resource names.

Management UART (docs/management.md): amaranth-boards' ``uart`` 0 (FPGA RX C11, TX A11), the
FT2232H's second channel on the USB connector (the same cable that programs the board; usually
``/dev/ttyUSB1``), 3 Mbaud: no wiring.

RGMII delays: as in LiteX's ECP5 Versa target, the FPGA delays the forwarded transmit clock
by 2 ns (DELAYG) and the PHY delays the receive clock (its default RGMII set-up); no PHY delay
register is written. LEDs 0 and 1 show the link of ports 0 and 1.
"""

from amaranth.build import Attrs, Clock, Pins, PinsN, Resource, Subsignal
from amaranth_boards.versa_ecp5 import VersaECP5Platform

from .boards import Board, MDIOBus
from .colorlight_5a75b_v7 import GIGABIT_ONLY

__all__ = ["VersaECP5WirespeedPlatform", "BOARD"]


def _split(number, rst, mdc, mdio, tx_clk, tx_ctl, tx_data, rx_clk, rx_ctl, rx_data):
    io = Attrs(IO_TYPE="LVCMOS25")
    return [
        Resource("rgmii", number,
                 Subsignal("tx_clk", Pins(tx_clk, dir="o")),
                 Subsignal("tx_ctl", Pins(tx_ctl, dir="o")),
                 Subsignal("tx_data", Pins(tx_data, dir="o")),
                 Subsignal("rx_clk", Pins(rx_clk, dir="i"), Clock(125e6)),
                 Subsignal("rx_ctl", Pins(rx_ctl, dir="i")),
                 Subsignal("rx_data", Pins(rx_data, dir="i")),
                 io),
        Resource("phy_mgmt", number,
                 Subsignal("rst", PinsN(rst, dir="o")),
                 Subsignal("mdc", Pins(mdc, dir="o")),
                 Subsignal("mdio", Pins(mdio, dir="io")),
                 io),
    ]


class VersaECP5WirespeedPlatform(VersaECP5Platform):
    resources = VersaECP5Platform.resources + [
        *_split(0, "U17", "T18", "U18", "P19", "R20", "N19 N20 P18 P20", "L20", "U19", "T20 U20 T19 R18"),
        *_split(1, "F20", "G19", "H20", "C20", "E19", "J17 J16 D19 D20", "J19", "F19", "G18 G16 H18 H17"),
    ]


BOARD = Board(
    name="versa-ecp5",
    description="Lattice ECP5 Versa (LFE5UM-45F-8BG381C, 2x 88E1512 RGMII)",
    platform=VersaECP5WirespeedPlatform,
    clk_resource=("clk100", 0), clk_hz=100_000_000,
    rgmii_ports=(("rgmii", 0), ("rgmii", 1)),
    mdio_buses=(MDIOBus(resource=("phy_mgmt", 0), ports=(0,), phy_addrs=(0,)),
                MDIOBus(resource=("phy_mgmt", 1), ports=(1,), phy_addrs=(0,))),
    rgmii_rx_delay_ns=0.0, rgmii_tx_delay_ns=2.0,
    phy_init_writes=GIGABIT_ONLY,
    uart_resource=("uart", 0),
    uart_pins="FT2232H channel B on the USB connector (FPGA RX C11, TX A11; no wiring)",
    uart_baud=3_000_000,
    config_preset="BOARD_45F",
    default_seed=1,     # meets timing (docs/performance.md, the one-way 45F build)
    link_leds=(0, 1),
    loader_args=("-c", "ft2232"),
)
