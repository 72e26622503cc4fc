"""The comparison as one offline HTML file (``compare.html``): the sets, a throughput table,
the overlay graphs inline as SVG and a ministat table per frame size; its graphs also as PNG
and SVG files beside it."""

from __future__ import annotations

import re
from pathlib import Path

from .. import __version__, sizes
from ..ethernet import line_rate_fps
from ..results import atomic_write_text
from .overlay import COMPARE_CAPTIONS, draw_compare
from .runs import RunSet, ministat_tables, throughput_series

__all__ = ["write_compare", "COMPARE_NAME"]

COMPARE_NAME = "compare.html"


def _inline_svg(path: Path) -> str:
    """An SVG file's ``<svg>`` element, for inlining into HTML (sharp at any zoom)."""
    text = path.read_text(encoding="utf-8")
    return text[text.index("<svg"):]


def _throughput_rows(runs: list[RunSet]) -> list[dict]:
    series = [throughput_series(r) for r in runs]
    all_sizes = list(dict.fromkeys(s for ser in series for s in ser.values))
    rows = []
    for size in all_sizes:
        cells = []
        for ser in series:
            means = {s: m for s, m, _, _ in ser.points()}
            if size in means:
                cells.append({"fps": f"{means[size]:,.0f}", "pct": f"{100 * means[size] / line_rate_fps(size):.2f} %"})
            else:
                cells.append({"fps": "", "pct": ""})
        rows.append({"size": sizes.text(size), "cells": cells})
    return rows


def _describe(run: RunSet) -> dict:
    first = run.records[0]
    dut = first.dut.get("spec") or first.dut.get("model") or first.dut.get("description") or ""
    tests = ", ".join(dict.fromkeys(e.name for r in run.records for e in r.tests))
    return {"label": run.label, "runs": len(run.records), "target": first.target, "dut": dut, "tests": tests,
            "folders": ", ".join(str(p) for p in run.paths)}


def write_compare(runs: list[RunSet], out_dir: Path, *, confidence: float = 95.0, style: str = "current",
                  title: str | None = None) -> Path:
    """Draw the overlay graphs into ``out_dir`` and write ``out_dir/compare.html``; its path."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    out_dir.mkdir(parents=True, exist_ok=True)
    graphs = draw_compare(runs, out_dir)
    tables = ministat_tables(runs, confidence, style)
    env = Environment(loader=PackageLoader("wirespeed.compare", "templates"), autoescape=select_autoescape(),
                      keep_trailing_newline=True)
    page = env.get_template("compare.html.j2").render(
        title=title or "Comparison: " + " vs ".join(r.label for r in runs),
        version=__version__,
        sets=[_describe(r) for r in runs],
        throughput=_throughput_rows(runs),
        graphs=[{"svg": _inline_svg(paths[1]), "caption": COMPARE_CAPTIONS[name]} for name, paths in graphs.items()],
        tables=[(sizes.text(size), text) for size, text in tables.items()],
        confidence=f"{confidence:g}", style=style)
    # matplotlib gives every SVG the same element ids; inlined side by side they must differ
    page = _unique_ids(page)
    path = out_dir / COMPARE_NAME
    atomic_write_text(path, page)
    return path


def _unique_ids(page: str) -> str:
    """Prefix the ids of each inlined SVG (and their references) with its figure number."""
    parts = re.split(r"(<svg\b.*?</svg>)", page, flags=re.S)
    for n, part in enumerate(parts):
        if part.startswith("<svg"):
            p = f"g{n}-"
            part = re.sub(r'id="([^"]+)"', rf'id="{p}\1"', part)
            part = re.sub(r'(href|xlink:href)="#([^"]+)"', rf'\1="#{p}\2"', part)
            parts[n] = re.sub(r"url\(#([^)]+)\)", rf"url(#{p}\1)", part)
    return "".join(parts)
