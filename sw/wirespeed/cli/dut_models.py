"""``wirespeed dut-models``: the simulated DUT models, their parameters and the named profiles,
from the tables ``--dut`` is checked against (:mod:`wirespeed.sim.dut_catalog`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .app import app

#: the width the tables are laid out for (a terminal's usual 80 columns)
WIDTH = 80


def _parameter_table(title: str, params: list[dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left", expand=False, show_lines=False)
    for column in ("parameter", "default", "unit", "allowed", "meaning"):
        table.add_column(column, overflow="fold")
    for p in params:
        table.add_row(p["name"], p["default"], p["unit"], p["allowed"], p["meaning"])
    return table


@app.command("dut-models")
def dut_models(
    json_out: Annotated[bool, typer.Option("--json", help="JSON for machines: every model with every "
                                                          "parameter, then the profiles.")] = False,
) -> None:
    """List the simulated DUT models (--dut MODEL:key=value,...) and the profiles."""
    from wirespeed.sim.dut_catalog import catalog

    listing = catalog()
    if json_out:
        typer.echo(json.dumps(listing, indent=2))
        return
    console = Console(width=min(WIDTH, Console().width), highlight=False)
    for model in listing["models"]:
        own = [p for p in model["parameters"] if not p["every_model"]]
        console.print(f"[bold]{model['name']}[/bold]: {model['description']}")
        if own:
            console.print(_parameter_table(f"{model['name']} parameters", own))
        console.print()
    every = [p for p in listing["models"][0]["parameters"] if p["every_model"]]
    console.print(_parameter_table("every model also takes (impairments, reset)", every))
    console.print()
    profiles = Table(title="profiles (--dut NAME or NAME:key=value,... to change a parameter)", title_justify="left")
    for column in ("profile", "model", "what"):
        profiles.add_column(column, overflow="fold")
    for p in listing["profiles"]:
        profiles.add_row(p["name"], p["spec"], p["title"])
    console.print(profiles)
