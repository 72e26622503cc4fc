"""Colorlight 5A-75B v7.0: Lattice LFE5U-25F-6BG256C, 25 MHz oscillator, two Broadcom
B50612D gigabit PHYs on RGMII, one LED, one button, no USB (program it over JTAG).

Starts from amaranth-boards' ``Colorlight_5A75B_R70Platform`` and replaces its two
``eth_rgmii`` resources (which both claim the PHYs' shared reset, MDC and MDIO pins, so they
cannot be requested together) by split resources: ``rgmii`` 0 and 1 (each port's own clock,
control and data pins) and ``phy_mgmt`` 0 (the shared reset, MDC and MDIO).

Management UART (docs/management.md): amaranth-boards' ``uart`` 0 on header J19, 1 Mbaud:
FPGA RX is ball M13 (J19 pin 2 "KEY+", also the button: do not press it while a host is
connected), FPGA TX is ball P11 (J19 pin 5 "DATA_LED-", also the board's LED, which
therefore flickers with answers). Connect a 3.3 V USB-serial adapter: its TXD to J19 pin 2,
its RXD to J19 pin 5, GND to a HUB75 GND (J1 pin 4). The HUB75 connectors J1-J8 are behind
74HC245 output buffers and cannot carry the receive line. With the LED taken by the UART, link is
shown by the PHYs' own LEDs on the RJ45 jacks, and by the ``pN.phy.link`` registers.

RGMII delays: as in LiteX's colorlight target, the B50612D keeps its power-on setting (it
delays the transmit clock itself), and the FPGA delays the received data by 2 ns against
RXC (ECP5 DELAYG, 80 taps).

MDIO addresses 0 (port 0, the jack nearer the power connector) and 1 (port 1) are the usual
strapping of this board revision; the identifiers the PHY manager reads
(``pN.phy.id``, 0x600d84xx for the B50612D) confirm them on a real board.
"""

from amaranth.build import Attrs, Clock, Pins, PinsN, Resource, Subsignal
from amaranth_boards.colorlight_5a75b_r7_0 import Colorlight_5A75B_R70Platform

from wirespeed.gateware.mdio import REG_ANAR, REG_BMCR, REG_GCTRL

from .boards import Board, BuildVariant, MDIOBus

__all__ = ["Colorlight5A75BV7Platform", "BOARD"]


def _rgmii(number, tx_clk, tx_ctl, tx_data, rx_clk, rx_ctl, rx_data):
    return Resource("rgmii", number,
                    Subsignal("tx_clk", Pins(tx_clk, dir="o")),
                    Subsignal("tx_ctl", Pins(tx_ctl, dir="o")),
                    Subsignal("tx_data", Pins(tx_data, dir="o")),
                    Subsignal("rx_clk", Pins(rx_clk, dir="i"), Clock(125e6)),
                    Subsignal("rx_ctl", Pins(rx_ctl, dir="i")),
                    Subsignal("rx_data", Pins(rx_data, dir="i")),
                    Attrs(IO_TYPE="LVCMOS33", SLEWRATE="FAST"))


class Colorlight5A75BV7Platform(Colorlight_5A75B_R70Platform):
    resources = [r for r in Colorlight_5A75B_R70Platform.resources if r.name != "eth_rgmii"] + [
        _rgmii(0, "M2", "M3", "L1 L3 P2 L4", "M1", "N6", "N1 M5 N5 M6"),
        _rgmii(1, "M12", "R15", "T14 R12 R13 R14", "M16", "L15", "P13 N13 P14 M15"),
        Resource("phy_mgmt", 0,
                 Subsignal("rst", PinsN("P5", dir="o")),
                 Subsignal("mdc", Pins("P3", dir="o")),
                 Subsignal("mdio", Pins("T2", dir="io")),
                 Attrs(IO_TYPE="LVCMOS33")),
    ]


#: advertise 1000BASE-T full duplex only, then restart auto-negotiation
GIGABIT_ONLY = ((REG_ANAR, 0x0001), (REG_GCTRL, 0x0200), (REG_BMCR, 0x1340))

BOARD = Board(
    name="colorlight-5a-75b-v7",
    description="Colorlight 5A-75B v7.0 (LFE5U-25F-6BG256C, 2x B50612D RGMII)",
    platform=Colorlight5A75BV7Platform,
    clk_resource=("clk25", 0), clk_hz=25_000_000,
    rgmii_ports=(("rgmii", 0), ("rgmii", 1)),
    mdio_buses=(MDIOBus(resource=("phy_mgmt", 0), ports=(0, 1), phy_addrs=(0, 1)),),
    rgmii_rx_delay_ns=2.0, rgmii_tx_delay_ns=0.0,
    phy_init_writes=GIGABIT_ONLY,
    uart_resource=("uart", 0),
    uart_pins="J19 header, 3.3 V: FPGA RX = M13 (pin 2, KEY+, the button), FPGA TX = P11 (pin 5, DATA_LED-, "
              "the LED), GND on J1 pin 4",
    uart_baud=1_000_000,
    config_preset="BOARD_25F",
    default_seed=3,     # meets timing with pnr_opts (docs/performance.md, per-stream statistics on the 25F)
    # timing-driven placement weighted harder and timing-driven rip-up in the router
    pnr_opts=("--placer-heap-timingweight 30", "--placer-heap-critexp 4", "--tmg-ripup"),
    # the statistics and the responder do not both fit at 125 MHz: a build for each
    variants=(BuildVariant(
        name="learning", config_preset="BOARD_25F_LEARNING",
        default_seed=3,     # meets timing with pnr_opts (docs/performance.md, the learning build)
        description="the ARP/ND responder (learning phase) instead of the per-stream statistics "
                    "(system recovery, sequence errors)"),),
    link_leds=(),
    loader_args=("-c", "ft232"),
    notes=("no on-board JTAG: openFPGALoader needs a JTAG adapter on J27 (TCK/TMS/TDI/TDO); "
           "-c ft232 is an FT232H-class adapter, change the cable to yours",),
)
