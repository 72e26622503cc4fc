"""Graphs and the report of a results folder, regenerated from its ``results.json``.

``results.json`` is the record of a run (:mod:`wirespeed.results`); everything here is derived
from it: the CSV tables (rewritten with the same writers the run used, so they come out byte for
byte the same), the graphs (matplotlib, PNG and SVG, in ``graphs/``, drawn by
:mod:`wirespeed.graphs`), ``report.html`` (one self-contained file: inline CSS, the graphs as
inline SVG, no external references; laid out by :mod:`.view`, rendered by :mod:`.render`) and,
when asked, ``report.pdf`` (the same page printed by WeasyPrint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..graphs import GRAPH_CAPTIONS, draw_graphs
from ..outdir import GRAPHS_DIR, PDF_NAME, REPORT_NAME
from ..results import RunRecord, atomic_write_text, tables_of
from ..results.resume import RecordError
from ..results.resume import load_record as _load_record
from .render import PAPERS, PdfError, render_html, write_pdf
from .view import DETAIL_TABLES, build_view

__all__ = ["ReportError", "Report", "load_record", "write_tables", "draw_graphs", "render_html", "make_report",
           "DETAIL_TABLES", "PDF_NAME", "PAPERS", "report_html"]


class ReportError(Exception):
    """Bad input: ``path`` and what was expected there."""

    def __init__(self, path: Path, message: str, field: str = "RESULTS_DIR"):
        super().__init__(f"{path}: {message}")
        self.path, self.message, self.field = path, message, field


@dataclass
class Report:
    """What :func:`make_report` wrote."""

    out_dir: Path
    tables: dict[str, Path] = field(default_factory=dict)
    graphs: dict[str, list[Path]] = field(default_factory=dict)
    html: Path | None = None
    pdf: Path | None = None


def load_record(results_dir: Path) -> RunRecord:
    """The run record of a results folder (ReportError when it is not one)."""
    try:
        return _load_record(results_dir)
    except RecordError as exc:
        raise ReportError(exc.path, exc.message) from None


# Tables -------------------------------------------------------------------------------------------------


def write_tables(record: RunRecord, out_dir: Path) -> dict[str, Path]:
    """Rewrite the CSV tables of ``record`` into ``out_dir``."""
    written = {}
    for name, (_, text) in tables_of(record).items():
        atomic_write_text(out_dir / name, text)
        written[name] = out_dir / name
    return written


def report_html(record: RunRecord, graphs_dir: Path, graphs: list[str]) -> str:
    """The report page of ``record`` with the ``graphs`` drawn in ``graphs_dir`` (their SVG files)."""
    svgs = {name: (graphs_dir / f"{name}.svg").read_text() for name in graphs}
    return render_html(build_view(record, graphs), svgs, GRAPH_CAPTIONS)


def make_report(results_dir: Path, out_dir: Path | None = None, *, title: str | None = None,
                operator: str | None = None, dut_info: dict[str, str] | None = None, pdf: bool = False,
                paper: str = "A4") -> Report:
    """Regenerate the CSV tables, the graphs and report.html of ``results_dir`` into ``out_dir``
    (default: the results folder itself), and report.pdf when ``pdf``. ``title``, ``operator``
    and ``dut_info`` override (dut_info: add to) what the run recorded. ReportError on bad input."""
    results_dir = Path(results_dir)
    record = load_record(results_dir)
    if paper not in PAPERS:
        raise ReportError(Path(paper), f"a paper size, one of {', '.join(PAPERS)}", "--paper")
    record.title = title or record.title
    record.operator = operator or record.operator
    record.dut_info = record.dut_info | (dut_info or {})
    out_dir = results_dir if out_dir is None else Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(out_dir, f"cannot create the output directory: {exc.strerror or exc}", "--out") from None
    report = Report(out_dir)
    report.tables = write_tables(record, out_dir)
    report.graphs = draw_graphs(record, out_dir / GRAPHS_DIR)
    page = report_html(record, out_dir / GRAPHS_DIR, list(report.graphs))
    report.html = out_dir / REPORT_NAME
    atomic_write_text(report.html, page)
    if pdf:
        report.pdf = out_dir / PDF_NAME
        try:
            write_pdf(page, report.pdf, out_dir, paper)
        except PdfError as exc:
            raise ReportError(report.pdf, str(exc), "--pdf") from None
    return report
