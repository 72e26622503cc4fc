"""Graphs and a one-file HTML report, regenerated from a results folder's ``results.json``.

``results.json`` is the record of a run (:mod:`wirespeed.results`); everything here is derived
from it: the CSV tables (rewritten with the same writers the run used, so they come out byte for
byte the same), the graphs (matplotlib, PNG and SVG, in ``graphs/``) and ``report.html`` (one
self-contained file: inline CSS, images embedded as base64 PNG, no external references).

The graphs are drawn by :mod:`wirespeed.graphs`.
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from . import sizes
from .graphs import GRAPH_CAPTIONS, draw_graphs
from .outdir import GRAPHS_DIR, REPORT_NAME
from .results import RunRecord, atomic_write_text, tables_of
from .results.resume import RecordError
from .results.resume import load_record as _load_record

__all__ = ["ReportError", "Report", "load_record", "write_tables", "draw_graphs", "render_html", "make_report"]



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


def load_record(results_dir: Path) -> RunRecord:
    """The run record of a results folder (ReportError when it is not one)."""
    try:
        return _load_record(results_dir)
    except RecordError as exc:
        raise ReportError(exc.path, exc.message) from None


# Tables -------------------------------------------------------------------------------------------------


def _tables(record: RunRecord) -> dict[str, tuple[list[str], str]]:
    """The CSV tables the run wrote, in the order of the results module: name -> (columns, text)."""
    return tables_of(record)


def write_tables(record: RunRecord, out_dir: Path) -> dict[str, Path]:
    """Rewrite the CSV tables of ``record`` into ``out_dir``."""
    written = {}
    for name, (_, text) in _tables(record).items():
        atomic_write_text(out_dir / name, text)
        written[name] = out_dir / name
    return written


# HTML ---------------------------------------------------------------------------------------------------

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { border-bottom: 2px solid #336; padding-bottom: .2em; }
h2 { color: #336; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .85em; }
th, td { border: 1px solid #bbb; padding: .25em .55em; text-align: right; }
th { background: #eef; }
td:first-child, th:first-child { text-align: left; }
table.header td { text-align: left; }
.notes li { margin: .2em 0; }
.warn { color: #a40; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: .85em; color: #555; }
dl.defs dt { font-weight: bold; margin-top: .4em; }
dl.defs dd { margin-left: 1.5em; font-size: .9em; }
footer { margin-top: 3em; font-size: .8em; color: #777; }
"""

TABLE_TITLES = {
    "Throughput.csv": "Throughput (RFC 2544 26.1)",
    "Latency.csv": "Latency (RFC 2544 26.2, RFC 1242 3.8)",
    "Frame_Loss.csv": "Frame loss rate (RFC 2544 26.3)",
    "Back_to_Back.csv": "Back-to-back frames (RFC 2544 26.4, RFC 9004)",
    "Latency_Trials.csv": "Repeated latency trials (RFC 2544 26.2)",
}
#: per-trial and per-bin detail: in the results folder, not in the report
DETAIL_TABLES = ("Trials.csv", "Latency_Histograms.csv")


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _kv_table(rows: list[tuple[str, object]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<table class="header">{body}</table>'


def _csv_table(text: str) -> str:
    import csv

    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return "<p>(empty)</p>"
    head = "".join(f"<th>{_e(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
    if len(rows) == 1:
        body = f'<tr><td colspan="{len(rows[0])}">no rows</td></tr>'
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt_ns(ns: int | None) -> str:
    if ns is None:
        return ""
    if ns >= 1_000_000_000 and ns % 1_000_000 == 0:
        return f"{ns / 1e9:g} s"
    if ns >= 1_000_000:
        return f"{ns / 1e6:g} ms"
    if ns >= 1000:
        return f"{ns / 1e3:g} µs"
    return f"{ns} ns"


def _header_rows(record: RunRecord) -> list[tuple[str, object]]:
    g = record.gateware
    gateware = f"version {g.version_text or g.version} (0x{g.version:06x}), register map 0x{g.map_hash:08x}, " \
               f"{g.clk_hz / 1e6:g} MHz, {g.n_ports} ports"
    p = record.tests[0].parameters if record.tests else None
    rows: list[tuple[str, object]] = [
        ("Tool", f"{record.tool.get('name', 'wirespeed')} {record.tool.get('version', '')}"),
        ("Gateware", gateware),
        ("Target", record.target),
        ("DUT", ", ".join(f"{k}={v}" for k, v in record.dut.items()) or "(not described)"),
        ("Test", record.test),
        ("Tests run", ", ".join(record.test_names)),
        ("Status", record.status + (f": {record.error}" if record.error else "")),
        ("Started (UTC)", record.started_utc),
        ("Last update (UTC)", record.updated_utc),
    ]
    if p is not None:
        rows.append(("Frame sizes (bytes)", ", ".join(map(str, p.frame_sizes))))
    t = record.parameters_of("throughput")
    if t is not None:
        rows += [("Trial duration", _fmt_ns(t.trial_duration_ns)), ("Wait after trial", _fmt_ns(t.wait_ns)),
                 ("Search resolution", f"{t.resolution_pct:g} % of line rate"),
                 ("Max trials per size", t.max_trials),
                 ("Latency definition measured", t.latency_definition.replace("_", " ")),
                 ("Latency calibrated", "yes" if record.latency_calibrated else "no")]
    if p is not None:
        rows.append(("Ports", f"tx {p.tx_port} → rx {p.rx_port}"))
    if record.calibration:
        rows.append(("Calibration", record.calibration.get("source", "")))
        delays = record.calibration.get("pipeline_delay_ns")
        if delays:
            rows.append(("Pipeline delay subtracted (ns)", json.dumps(delays, separators=(", ", ": "))))
    for name, label in (("frame-loss", "Frame loss parameters"), ("back-to-back", "Back-to-back parameters")):
        params = record.parameters_of(name)
        if params is not None:
            rows.append((label, ", ".join(
                f"{k}={v}" for k, v in params.model_dump(mode="json", exclude={"frame_sizes", "addresses",
                                                                               "learning"}).items()
                if v is not None)))
    if record.learning:
        rows.append(("Learning phase", json.dumps(record.learning, separators=(", ", ": "))[:600]))
    return rows


def _verdicts_html(record: RunRecord) -> str:
    """The run's expectations (--expect) and their verdicts, if it had any."""
    from .rfc2544.expect import format_value, verdicts_of

    verdicts = verdicts_of(record)
    if not verdicts:
        return ""
    missed = sum(not v.passed for v in verdicts)
    head = "".join(f"<th>{c}</th>" for c in ("expectation", "frame size", "measured", "verdict"))
    cells = {True: "<td>pass</td>", False: '<td class="warn">FAIL</td>'}
    body = "".join(f"<tr><td>{_e(v.expectation)}</td><td>{_e(sizes.text(v.frame_size))}</td>"
                   f"<td>{_e(format_value(v.value, v.unit))}</td>{cells[v.passed]}</tr>" for v in verdicts)
    summary = f"{missed} of {len(verdicts)} failed" if missed else f"all {len(verdicts)} passed"
    return f"<h2>Verdicts <small>({summary})</small></h2><table><tr>{head}</tr>{body}</table>"


def render_html(record: RunRecord, tables: dict[str, str], graphs: dict[str, bytes]) -> str:
    """The self-contained report: ``tables`` name -> CSV text, ``graphs`` name -> PNG bytes."""
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>wirespeed RFC 2544 report: {_e(record.target)}</title><style>{CSS}</style></head><body>",
             "<h1>RFC 2544 benchmark report</h1>",
             "<h2>Run</h2>", _kv_table(_header_rows(record))]
    if record.notes:
        warn = ' class="warn"'
        parts.append('<h2>Notes</h2><ul class="notes">' +
                     "".join(f"<li{warn if 'scaled down' in n or 'not calibrated' in n else ''}>{_e(n)}</li>"
                             for n in record.notes) + "</ul>")
    if record.status != "complete":
        parts.append(f'<p class="warn">The run is {_e(record.status)}: the figures below are what was measured '
                     "before it stopped.</p>")
    parts.append(_verdicts_html(record))
    parts.append("<h2>Tables</h2>")
    for name, text in tables.items():
        if name not in DETAIL_TABLES:
            parts.append(f"<h3>{_e(TABLE_TITLES.get(name, name))} <small>({_e(name)})</small></h3>"
                         f"{_csv_table(text)}")
    details = [name for name in tables if name in DETAIL_TABLES]
    if details:
        parts.append(f"<p>Every trial and every latency histogram bin are in {', '.join(map(_e, details))} "
                     "beside this report.</p>")
    if graphs:
        parts.append("<h2>Graphs</h2>")
        for name, png in graphs.items():
            data = base64.b64encode(png).decode("ascii")
            caption = GRAPH_CAPTIONS.get(name, name)
            parts.append(f'<figure><img alt="{_e(caption)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{_e(caption)}</figcaption></figure>")
    if record.definitions:
        parts.append("<h2>Definitions</h2><dl class=\"defs\">" +
                     "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in record.definitions.items()) + "</dl>")
    parts.append(f"<footer>Generated by {_e(record.tool.get('name', 'wirespeed'))} "
                 f"{_e(record.tool.get('version', ''))} from results.json ({_e(record.format)}); "
                 f"{len(record.trials)} trials recorded.</footer></body></html>\n")
    return "\n".join(parts)


def make_report(results_dir: Path, out_dir: Path | None = None) -> Report:
    """Regenerate the CSV tables, the graphs and report.html of ``results_dir`` into ``out_dir``
    (default: the results folder itself). ReportError on bad input."""
    results_dir = Path(results_dir)
    record = load_record(results_dir)
    out_dir = results_dir if out_dir is None else Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(out_dir, f"cannot create the output directory: {exc.strerror or exc}", "--out") from None
    report = Report(out_dir)
    report.tables = write_tables(record, out_dir)
    report.graphs = draw_graphs(record, out_dir / GRAPHS_DIR)
    tables = {name: text for name, (_, text) in _tables(record).items()}
    pngs = {name: paths[0].read_bytes() for name, paths in report.graphs.items()}
    report.html = out_dir / REPORT_NAME
    atomic_write_text(report.html, render_html(record, tables, pngs))
    return report
