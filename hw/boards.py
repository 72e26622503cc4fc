"""The board registry: ``BOARDS`` maps a board name to its :class:`Board`.

Every module ``hw/<file>.py`` (other than this one) that defines ``BOARD`` is registered
under ``BOARD.name``, so adding a board is adding one file. ``wirespeed build --board NAME``
and ``wirespeed flash --board NAME`` look boards up here (:func:`get`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Board", "BuildVariant", "MDIOBus", "BOARDS", "get", "names"]


@dataclass(frozen=True)
class MDIOBus:
    """One MDC/MDIO bus: its platform resource (``rst``, ``mdc``, ``mdio``), the tester ports
    whose PHYs sit on it and their MDIO addresses (same order)."""
    resource: tuple[str, int]
    ports: tuple[int, ...]
    phy_addrs: tuple[int, ...]


@dataclass(frozen=True)
class BuildVariant:
    """Another build of a board (``wirespeed build --variant NAME``): another TesterConfig
    preset, for a part too small to carry every optional block at once, with the seed that
    met timing for it."""
    name: str
    #: name of the TesterConfig preset in wirespeed.gateware.config
    config_preset: str
    default_seed: int
    #: what it has and lacks against the board's default build, in a line
    description: str


@dataclass(frozen=True)
class Board:
    """Everything the board top and the build need to know about a board."""
    name: str
    description: str
    #: returns a fresh Amaranth platform (with split RGMII resources ``rgmii`` N and the PHY
    #: management resources named in ``mdio_buses``)
    platform: Callable[[], object]
    #: the oscillator resource the PLL multiplies to 125 MHz, and its frequency
    clk_resource: tuple[str, int]
    clk_hz: int
    #: tester port i uses RGMII resource rgmii_ports[i]
    rgmii_ports: tuple[tuple[str, int], ...]
    mdio_buses: tuple[MDIOBus, ...]
    #: RGMII skew added by the FPGA (ECP5 DELAYG, 25 ps taps): rx delays RX data against
    #: RX clock, tx delays the forwarded TX clock against TX data. 0 where the PHY adds it.
    rgmii_rx_delay_ns: float
    rgmii_tx_delay_ns: float
    #: (register, value) written to every PHY after reset (clause 22)
    phy_init_writes: tuple[tuple[int, int], ...]
    #: the management UART resource and, in words, where its pins are
    uart_resource: tuple[str, int]
    uart_pins: str
    #: UART rate (8N1); its divisor of 125 MHz must be within 1 % (docs/management.md)
    uart_baud: int
    #: name of the TesterConfig preset in wirespeed.gateware.config
    config_preset: str
    #: the nextpnr placement seed ``wirespeed build`` uses when none is given: one whose
    #: build met timing, recorded with its margin in docs/performance.md (placement is
    #: random, and at 125 MHz some seeds miss by a few per cent)
    default_seed: int = 1
    #: nextpnr options every build of the board uses (placer and router settings), given
    #: after ``--seed``: the default seed met timing with them, so they are part of the
    #: recipe (docs/performance.md records both)
    pnr_opts: tuple[str, ...] = ()
    #: other builds than the default (``config_preset``, ``default_seed``), by name
    variants: tuple[BuildVariant, ...] = ()
    #: LED resource indices showing port i's link (may be empty)
    link_leds: tuple[int, ...] = ()
    #: openFPGALoader arguments that select the cable/board (before the bitstream)
    loader_args: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _discover() -> dict[str, Board]:
    boards: dict[str, Board] = {}
    package = importlib.import_module(__package__)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in ("boards",) or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        board = getattr(module, "BOARD", None)
        if isinstance(board, Board):
            if board.name in boards:
                raise ValueError(f"two boards are named {board.name!r}")
            boards[board.name] = board
    return dict(sorted(boards.items()))


BOARDS: dict[str, Board] = _discover()


def names() -> list[str]:
    return list(BOARDS)


def get(name: str) -> Board:
    try:
        return BOARDS[name]
    except KeyError:
        raise KeyError(f"unknown board {name!r}; known boards: {', '.join(BOARDS)}") from None
