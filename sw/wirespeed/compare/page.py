"""The comparison as one offline HTML file (``compare.html``): the sets, a throughput table,
the overlay graphs inline as SVG and a ministat table per frame size; its graphs also as PNG
and SVG files beside it."""

from __future__ import annotations

from pathlib import Path

from .. import __version__, sizes
from ..ethernet import line_rate_fps
from ..graphs import inline_svg
from ..results import atomic_write_text
from .overlay import COMPARE_CAPTIONS, draw_compare
from .runs import RunSet, ministat_tables, throughput_series

__all__ = ["write_compare", "COMPARE_NAME"]

COMPARE_NAME = "compare.html"


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
                  title: str | None = None, pdf_paper: str | None = None) -> list[Path]:
    """Draw the overlay graphs into ``out_dir`` and write ``out_dir/compare.html``, and with
    ``pdf_paper`` (A4 or letter) ``compare.pdf``; the pages written (PdfError if the PDF
    cannot be made)."""
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
        graphs=[{"svg": inline_svg(paths[1].read_text(encoding="utf-8"), name), "caption": COMPARE_CAPTIONS[name]}
                for name, paths in graphs.items()],
        tables=[(sizes.text(size), text) for size, text in tables.items()],
        confidence=f"{confidence:g}", style=style)
    path = out_dir / COMPARE_NAME
    atomic_write_text(path, page)
    if pdf_paper is None:
        return [path]
    from ..report.render import write_pdf

    pdf = path.with_suffix(".pdf")
    write_pdf(page, pdf, out_dir, pdf_paper)
    return [path, pdf]

