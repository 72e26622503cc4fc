"""``wirespeed regmap``: the gateware's register map as JSON or Markdown, and its names as the
Python module wirespeed.regs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .common import InputError


def _register_map():
    from wirespeed.gateware.top import build_register_map

    return build_register_map()


@app.command()
def regmap(
    json_format: Annotated[bool, typer.Option("--json", help="JSON (the default).")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Markdown table.")] = False,
    python: Annotated[bool, typer.Option("--python", help="The names of every build's registers as the "
                                         "module wirespeed.regs.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
) -> None:
    """Export the register map of the gateware."""
    if json_format + markdown + python > 1:
        raise InputError("--markdown", "choose one of --json, --markdown or --python")
    if python:
        from wirespeed.gateware.regnames import declared_module

        text = declared_module()
    else:
        rmap = _register_map()
        text = rmap.to_markdown() if markdown else rmap.to_json() + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as exc:
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}") from None
