"""Graphs and a one-file HTML report, regenerated from a results folder's ``results.json``.

``results.json`` is the record of a run (:mod:`wirespeed.results`); everything here is derived
from it: the CSV tables (rewritten with the same writers the run used, so they come out byte for
byte the same), the graphs (matplotlib, PNG and SVG, in ``graphs/``) and ``report.html`` (one
self-contained file: inline CSS, images embedded as base64 PNG, no external references).

Graphs, each drawn only when its data is in the record:

* ``throughput_fps`` / ``throughput_mbps``: throughput vs frame size with the theoretical
  line-rate curve (frames/s; Mb/s of frame bits);
* ``latency``: min / avg / max latency vs frame size, one panel per RFC 1242 3.8 definition
  present (measured and derived);
* ``latency_distribution``: per frame size, the latency histogram of the trial at the
  throughput rate (the measured definition, shifted by the calibrated pipeline delay when the
  figures are calibrated); percentiles when no histogram was stored;
* ``frame_loss``: loss % vs offered load, one line per frame size;
* ``back_to_back``: mean back-to-back burst per frame size with the sample standard deviation as
  error bars and min..max marks.
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import sizes
from .ethernet import line_rate_fps
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


# Graphs -------------------------------------------------------------------------------------------------

SIZES_FOR_CURVE = list(range(64, 1519, 2))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _title(record: RunRecord, what: str) -> str:
    dut = record.dut.get("spec") or record.dut.get("model") or record.dut.get("description") or ""
    return f"{what}\n{record.target}" + (f", DUT {dut}" if dut else "")


def _save(fig, graphs_dir: Path, name: str) -> list[Path]:
    """Write ``fig`` as NAME.png and NAME.svg and close it."""
    import matplotlib.pyplot as plt

    paths = []
    for ext in ("png", "svg"):
        path = graphs_dir / f"{name}.{ext}"
        fig.savefig(path, format=ext, dpi=110, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def _plot_points(ax, points, style: str, label: str, color: str | None = None) -> None:
    """``points``: (size point, y). Fixed sizes as one ``style`` line at their size; each IMIX
    as a diamond at its mean frame size, labelled with its name."""
    fixed = [(s, y) for s, y in points if not sizes.is_mix(s)]
    mixes = [(s, y) for s, y in points if sizes.is_mix(s)]
    line = ax.plot([s for s, _ in fixed], [y for _, y in fixed], style, label=label, color=color)
    for i, (mix, y) in enumerate(mixes):
        x = float(sizes.mean_len(mix))
        ax.plot([x], [y], "D", color=line[0].get_color() if line else color, markerfacecolor="none",
                label=f"{label}, IMIX (at mean size)" if i == 0 else None)
        ax.annotate(mix, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")


def _throughput(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    results = record.results_of("throughput")
    if not results:
        return {}
    points = [r.frame_size for r in results]
    out = {}
    for name, label, measured, curve in (
            ("throughput_fps", "frames/s", [r.throughput_fps for r in results],
             [line_rate_fps(s) for s in SIZES_FOR_CURVE]),
            ("throughput_mbps", "Mb/s (frame bits)", [r.throughput_mbps for r in results],
             [s * 8 * line_rate_fps(s) / 1e6 for s in SIZES_FOR_CURVE])):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ax.plot(SIZES_FOR_CURVE, curve, "--", color="0.5", label="theoretical maximum (1 Gb/s line rate)")
        _plot_points(ax, list(zip(points, measured)), "o-", "measured throughput (RFC 2544 26.1)", "C0")
        ax.set_xlabel("frame size (bytes; an IMIX at its mean size)")
        ax.set_ylabel(f"throughput ({label})")
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, 1600)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        ax.set_title(_title(record, f"Throughput vs frame size ({label})"), fontsize="medium")
        out[name] = _save(fig, graphs_dir, name)
    return out


def _latency(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    by_def: dict[str, list] = {}
    for r in record.results_of("throughput"):
        for lat in r.latency:
            if lat.available and lat.min_ns is not None:
                by_def.setdefault(lat.definition, []).append((r.frame_size, lat))
    if not by_def:
        return {}
    fig, axes = plt.subplots(1, len(by_def), figsize=(6.2 * len(by_def), 4.2), squeeze=False)
    for ax, (definition, points) in zip(axes[0], by_def.items()):
        for key, style, label in (("max_ns", "v:", "max"), ("avg_ns", "o-", "avg"), ("min_ns", "^:", "min")):
            _plot_points(ax, [(s, getattr(lat, key) / 1000) for s, lat in points], style, label)
        lat0 = points[0][1]
        ax.set_title(f"{definition.replace('_', ' ')} ({lat0.source}, "
                     f"{'calibrated' if lat0.calibrated else 'raw'})", fontsize="medium")
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel("latency (µs)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(_title(record, "Latency vs frame size at the throughput rate (RFC 1242 3.8)"), fontsize="medium")
    fig.tight_layout()
    return {"latency": _save(fig, graphs_dir, "latency")}


def _distribution(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    # (size, kind, data): a histogram's (bins, bin_ns, total, outside, measured) or the measured figures
    series: list[tuple[int | str, str, Any]] = []
    for r in record.results_of("throughput"):
        best = r.best
        if best is None or not best.rx_frames:
            continue
        measured = next((lat for lat in r.latency if lat.source == "measured" and lat.available), None)
        shift = (measured.pipeline_delay_ns or 0) if measured is not None and measured.calibrated else 0
        hists = [h for h in best.histograms.values() if h.counts]
        if hists:
            bin_ns = hists[0].bin_ns
            counts: dict[float, int] = {}
            for h in hists:
                for index, n in h.counts.items():
                    left = h.offset_ns + index * h.bin_ns - shift
                    counts[left] = counts.get(left, 0) + n
            total = sum(h.total for h in hists)
            outside = sum(h.underflow + h.overflow for h in hists)
            series.append((r.frame_size, "histogram", (sorted(counts.items()), bin_ns, total, outside, measured)))
        elif measured is not None and any(v is not None for v in measured.percentiles_ns.values()):
            series.append((r.frame_size, "percentiles", measured))
    if not series:
        return {}
    n = len(series)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.3 * rows), squeeze=False)
    for ax, (size, kind, data) in zip(axes.flat, series):
        if kind == "histogram":
            bins, bin_ns, total, outside, measured = data
            lefts = [left / 1000 for left, _ in bins]
            heights = [100 * count / total for _, count in bins]
            ax.bar(lefts, heights, width=bin_ns / 1000, align="edge", color="C0")
            ax.set_ylabel("% of frames")
            note = f"bins {bin_ns} ns"
            if outside:
                note += f", {100 * outside / total:.1f} % outside the range"
            ax.set_title(f"{sizes.text(size)} ({note})", fontsize="small")
            if len(lefts) < 5:      # a few bins: show them with some room around
                ax.set_xlim(lefts[0] - 2 * bin_ns / 1000, lefts[-1] + 3 * bin_ns / 1000)
        else:
            names = [k for k, v in data.percentiles_ns.items() if v is not None]
            ax.bar(names, [data.percentiles_ns[k] / 1000 for k in names], color="C1")
            ax.set_ylabel("latency (µs)")
            ax.set_title(f"{sizes.text(size)} (percentiles; no histogram stored)", fontsize="small")
        ax.grid(True, alpha=0.3)
        if kind == "histogram":
            ax.set_xlabel("latency (µs)")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    definition = record.parameters_of("throughput").latency_definition.replace("_", " ")
    fig.suptitle(_title(record, f"Latency distribution per frame size at the throughput rate ({definition}, "
                                f"{'calibrated' if record.latency_calibrated else 'raw'})"), fontsize="medium")
    fig.tight_layout()
    return {"latency_distribution": _save(fig, graphs_dir, "latency_distribution")}


def _frame_loss(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    curves = [r for r in record.results_of("frame-loss") if r.points]
    if not curves:
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for r in curves:
        points = sorted(r.points, key=lambda p: p.offered_pct)
        ax.plot([p.offered_pct for p in points], [p.loss_pct for p in points], "o-", label=sizes.text(r.frame_size))
    ax.set_xlabel("offered load (% of line rate)")
    ax.set_ylabel("frame loss (%)")
    ax.set_xlim(0, 105)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", title="frame size")
    ax.set_title(_title(record, "Frame loss rate vs offered load (RFC 2544 26.3)"), fontsize="medium")
    return {"frame_loss": _save(fig, graphs_dir, "frame_loss")}


def _back_to_back(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    results = [r for r in record.results_of("back-to-back") if r.repetitions]
    if not results:
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = list(range(len(results)))
    means = [r.mean_burst_frames for r in results]
    ax.bar(x, means, yerr=[r.stddev_burst_frames for r in results], capsize=5, color="C2",
           label="mean burst ± sample stddev")
    ax.plot(x, [r.min_burst_frames for r in results], "v", color="k", label="min")
    ax.plot(x, [r.max_burst_frames for r in results], "^", color="k", label="max")
    for i, r in enumerate(results):
        if r.capped:
            ax.annotate("capped (lower bound)", (i, r.max_burst_frames), ha="center", va="bottom",
                        fontsize="x-small")
    ax.set_xticks(x, [f"{r.frame_size}" for r in results])
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("back-to-back burst (frames)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(_title(record, "Back-to-back burst per frame size (RFC 2544 26.4)"), fontsize="medium")
    return {"back_to_back": _save(fig, graphs_dir, "back_to_back")}


MAX_TIMELINES = 6


def _rate_over_time(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    """MRTG-style: frames/s sent and received, and errors/s, over each sampled trial (the
    system recovery and reset trials: the overload, the rate step, the reset)."""
    sampled = [(t, tag) for t, tag in zip(record.trials, record.trial_tags + [{}] * len(record.trials))
               if len(t.timeline) >= 2 and not tag.get("superseded")][:MAX_TIMELINES]
    if not sampled:
        return {}
    fig, axes = plt.subplots(len(sampled), 1, figsize=(7, 2.6 * len(sampled)), squeeze=False)
    for ax, (trial, tag) in zip(axes[:, 0], sampled):
        points = [[0, 0, 0, 0], *trial.timeline]
        t_ms, sent, got, err = [], [], [], []
        for a, b in zip(points, points[1:]):
            dt = (b[0] - a[0]) / 1e9
            if dt <= 0:
                continue
            t_ms.append(b[0] / 1e6)
            sent.append((b[1] - a[1]) / dt)
            got.append((b[2] - a[2]) / dt)
            err.append((b[3] - a[3]) / dt)
        ax.step(t_ms, sent, where="pre", color="C0", label="sent (frames/s)")
        ax.fill_between(t_ms, got, step="pre", color="C2", alpha=0.5, label="received (frames/s)")
        if any(err):
            ax.step(t_ms, err, where="pre", color="C3", label="sequence + FCS errors/s")
        ax.set_ylabel("frames/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        what = tag.get("test", "throughput") + "".join(f", {k} {v}" for k, v in tag.items() if k != "test")
        ax.set_title(f"{what}: {sizes.text(trial.frame_size)}", fontsize="small")
        ax.legend(fontsize="x-small", loc="lower left")
    axes[-1, 0].set_xlabel("time since the trial started (ms); each step is one counter sample")
    fig.suptitle(_title(record, "Rate over time"), fontsize="medium")
    fig.tight_layout()
    return {"rate_over_time": _save(fig, graphs_dir, "rate_over_time")}


def draw_graphs(record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    """Draw every graph whose data is in ``record`` into ``graphs_dir`` (PNG and SVG each);
    name -> [png, svg]."""
    plt = _pyplot()
    graphs_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[Path]] = {}
    with plt.rc_context({"svg.hashsalt": "wirespeed", "font.size": 9}):
        for draw in (_throughput, _latency, _distribution, _frame_loss, _back_to_back, _rate_over_time):
            out |= draw(plt, record, graphs_dir)
    return out


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

GRAPH_CAPTIONS = {
    "throughput_fps": "Throughput vs frame size, frames/s, with the theoretical maximum at 1 Gb/s.",
    "throughput_mbps": "Throughput vs frame size, Mb/s of frame bits, with the theoretical maximum at 1 Gb/s.",
    "latency": "Latency (min, avg, max) at the throughput rate vs frame size, per RFC 1242 3.8 definition.",
    "latency_distribution": "Latency distribution of the trial at the throughput rate, per frame size.",
    "rate_over_time": "Frames sent and received per second over the system recovery and reset trials (MRTG "
                      "style), from counter samples taken while each trial ran.",
    "frame_loss": "Frame loss rate vs offered load (RFC 2544 26.3).",
    "back_to_back": "Back-to-back burst length per frame size (RFC 2544 26.4), mean with sample standard "
                    "deviation, min and max over the repetitions.",
}
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
