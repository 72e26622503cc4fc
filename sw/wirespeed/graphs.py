"""The graphs of a run, drawn from its record (``results.json``) with matplotlib, each as PNG
and SVG in the results folder's ``graphs/``; :mod:`wirespeed.report` embeds them in the report.

Graphs, each drawn only when its data is in the record:

* ``throughput_fps`` / ``throughput_mbps``: throughput vs frame size with the theoretical
  line-rate curve (frames/s; Mb/s of frame bits);
* ``latency``: min / avg / max latency vs frame size, one panel per RFC 1242 3.8 definition
  present (measured and derived);
* ``latency_distribution``: per frame size, the latency histogram (at most 40 bars) and its
  cumulative curve with p50 and p99, of the trial at the throughput rate (the measured
  definition, shifted by the calibrated pipeline delay when the figures are calibrated);
  percentiles when no histogram was stored;
* ``throughput_pct``: throughput as % of line rate per frame size, a bar each;
* ``frame_loss``: loss % vs offered load, one line per frame size (each its own marker and
  dash, so coinciding series stay visible);
* ``latency_vs_load``: average latency of every frame loss trial vs its offered load, calibrated
  when the run is;
* ``back_to_back``: mean back-to-back burst per frame size with the sample standard deviation as
  error bars and min..max marks; a size capped without loss drawn hatched, as a lower bound.

Axes read in plain numbers with thousands separators, never with a floating ``1e6``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import sizes
from .ethernet import line_rate_fps
from .results import RunRecord

__all__ = ["draw_graphs", "GRAPH_CAPTIONS", "pyplot", "save_figure", "plain_numbers", "inline_svg", "LINES",
           "MARKERS"]

SIZES_FOR_CURVE = list(range(64, 1519, 2))


def pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _title(record: RunRecord, what: str) -> str:
    dut = record.dut.get("spec") or record.dut.get("model") or record.dut.get("description") or ""
    return f"{what}\n{record.target}" + (f", DUT {dut}" if dut else "")


def save_figure(fig, graphs_dir: Path, name: str) -> list[Path]:
    """Write ``fig`` as NAME.png and NAME.svg and close it."""
    import matplotlib.pyplot as plt

    paths = []
    for ext in ("png", "svg"):
        path = graphs_dir / f"{name}.{ext}"
        fig.savefig(path, format=ext, dpi=110, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def plain_numbers(axis) -> None:
    """Tick labels as plain numbers with thousands separators (``1,488,095``), never a
    scientific offset (``1e6``) that floats beside the axis."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:,.0f}" if abs(value) >= 10 else f"{value:g}"))


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
        plain_numbers(ax.yaxis)
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, 1600)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        ax.set_title(_title(record, f"Throughput vs frame size ({label})"), fontsize="medium")
        out[name] = save_figure(fig, graphs_dir, name)
    out["throughput_pct"] = _throughput_pct(plt, record, results, graphs_dir)
    return out


def _throughput_pct(plt, record: RunRecord, results: list[Any], graphs_dir: Path) -> list[Path]:
    """Throughput as % of line rate per frame size, one bar each with its value (the view of
    SmartBits-class testers)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = list(range(len(results)))
    pct = [r.pct_line_rate for r in results]
    bars = ax.bar(x, pct, color=["C2" if v >= 99.95 else "C0" for v in pct])
    ax.bar_label(bars, labels=[f"{v:.1f} %" for v in pct], fontsize="x-small", padding=2)
    ax.set_xticks(x, [sizes.text(r.frame_size) for r in results], fontsize="small")
    ax.set_xlabel("frame size")
    ax.set_ylabel("throughput (% of line rate)")
    ax.set_ylim(0, 112)
    ax.axhline(100, color="0.5", linestyle="--", linewidth=0.8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(_title(record, "Throughput, % of line rate (RFC 2544 26.1)"), fontsize="medium")
    return save_figure(fig, graphs_dir, "throughput_pct")


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
    return {"latency": save_figure(fig, graphs_dir, "latency")}


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
            width = _histogram_cdf(ax, bins, bin_ns, total)
            note = f"bins {bin_ns} ns" + (f", drawn as {width:,} ns bars" if width != bin_ns else "")
            if outside:
                note += f", {100 * outside / total:.1f} % outside the range"
            ax.set_title(f"{sizes.text(size)} ({note})", fontsize="small")
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
    return {"latency_distribution": save_figure(fig, graphs_dir, "latency_distribution")}


COARSE_BINS = 40


def _histogram_cdf(ax, bins: list[tuple[float, int]], bin_ns: int, total: int) -> int:
    """A latency histogram readable at any spread: at most :data:`COARSE_BINS` bars (bins
    merged), the cumulative % of frames as a line on a second axis, p50 and p99 marked.
    Returns the bars' width, ns."""
    lo, hi = bins[0][0], bins[-1][0] + bin_ns
    merge = max(1, -(-round((hi - lo) / bin_ns) // COARSE_BINS))
    width = merge * bin_ns
    coarse: dict[float, int] = {}
    for left, count in bins:
        key = lo + (left - lo) // width * width
        coarse[key] = coarse.get(key, 0) + count
    ax.bar([k / 1000 for k in coarse], [100 * n / total for n in coarse.values()], width=width / 1000,
           align="edge", color="C0", alpha=0.55, label=f"% of frames per {width:,} ns")
    ax.set_ylabel("% of frames")
    xs, ys, seen = [lo / 1000], [0.0], 0
    marks = {}
    for left, count in bins:
        seen += count
        xs.append((left + bin_ns) / 1000)
        ys.append(100 * seen / total)
        for p in (50, 99):
            if p not in marks and ys[-1] >= p:
                marks[p] = xs[-1]
    cdf = ax.twinx()
    cdf.step(xs, ys, where="post", color="C3", linewidth=1.2)
    cdf.set_ylim(0, 101)
    cdf.set_ylabel("cumulative % of frames", color="C3", fontsize="x-small")
    cdf.tick_params(axis="y", labelsize="x-small", colors="C3")
    for p, x in marks.items():
        cdf.axvline(x, color="0.4", linestyle=":", linewidth=0.8)
        cdf.annotate(f"p{p}", (x, p), textcoords="offset points", xytext=(3, -10), fontsize="x-small")
    if len(coarse) < 5:      # a few bins: show them with some room around
        ax.set_xlim(lo / 1000 - 2 * width / 1000, hi / 1000 + 2 * width / 1000)
    return width


def _load_axes(ax, record: RunRecord, ylabel: str, title: str) -> None:
    """Axes of a graph against offered load, a line per frame size."""
    ax.set_xlabel("offered load (% of line rate)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, 105)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", title="frame size")
    ax.set_title(_title(record, title), fontsize="medium")


def _frame_loss(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    curves = [r for r in record.results_of("frame-loss") if r.points]
    if not curves:
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    # series often coincide (no loss below throughput): each its own marker and dash, drawn
    # wider first, so one lying on another still shows
    for i, r in enumerate(curves):
        points = sorted(r.points, key=lambda p: p.offered_pct)
        ax.plot([p.offered_pct for p in points], [p.loss_pct for p in points], linestyle=LINES[i % len(LINES)],
                marker=MARKERS[i % len(MARKERS)], markersize=7 - 4 * i / max(1, len(curves) - 1),
                linewidth=2.2 - 1.4 * i / max(1, len(curves) - 1), markerfacecolor="none", alpha=0.85,
                label=sizes.text(r.frame_size))
    _load_axes(ax, record, "frame loss (%)", "Frame loss rate vs offered load (RFC 2544 26.3)")
    return {"frame_loss": save_figure(fig, graphs_dir, "frame_loss")}


def _pipeline(record: RunRecord) -> Any:
    """The pipeline delay the run's latency figures had subtracted, as a
    :data:`~wirespeed.latency.Pipeline` (from ``calibration.pipeline_delay_ns``: per direction
    and size, looked up as :meth:`Calibration.pipeline_ns` does), or None: the run is raw."""
    from .calibration import CalibrationError, delay_at

    table = (record.calibration or {}).get("pipeline_delay_ns") if record.latency_calibrated else None
    if not table:
        return None

    def pipeline(tx_port: int, rx_port: int, frame_size: int | str) -> int:
        # results.json keeps the table as JSON: its sizes are the keys' text
        values = {int(size): int(ns) for size, ns in table.get(f"{tx_port}->{rx_port}", {}).items()}
        delay = delay_at(values, frame_size)
        if delay is None:
            raise CalibrationError(f"no calibrated pipeline delay for {tx_port}->{rx_port} at {frame_size} B")
        return delay

    return pipeline


def _latency_vs_load(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    """Average latency (measured definition) of every frame loss trial against its offered load,
    one line per frame size: how queueing grows towards and beyond the throughput."""
    from .calibration import CalibrationError
    from .latency import latency_figures

    pipeline = _pipeline(record)
    series = []
    calibrated = pipeline is not None
    for r in record.results_of("frame-loss"):
        points = []
        for point in sorted(r.points, key=lambda p: p.offered_pct):
            try:
                figures = latency_figures(point.trial, pipeline)
            except CalibrationError:        # a size the calibration does not cover: raw
                figures, calibrated = latency_figures(point.trial), False
            if figures and figures[0].available and figures[0].avg_ns is not None:
                points.append((point.offered_pct, figures[0].avg_ns / 1000))
        if points:
            series.append((r.frame_size, points))
    if not series:
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (size, points) in enumerate(series):
        ax.plot([x for x, _ in points], [y for _, y in points], linestyle=LINES[i % len(LINES)],
                marker=MARKERS[i % len(MARKERS)], markerfacecolor="none", label=sizes.text(size))
    _load_axes(ax, record, f"average latency (µs, {'calibrated' if calibrated else 'raw'})",
               "Latency vs offered load (the frame loss trials)")
    return {"latency_vs_load": save_figure(fig, graphs_dir, "latency_vs_load")}


def _back_to_back(plt, record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    results = [r for r in record.results_of("back-to-back") if r.repetitions]
    if not results:
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = list(range(len(results)))
    means = [r.mean_burst_frames for r in results]
    capped = [r.capped for r in results]
    bars = ax.bar(x, means, yerr=[0 if c else r.stddev_burst_frames for r, c in zip(results, capped)], capsize=5,
                  color=["none" if c else "C2" for c in capped], edgecolor="C2",
                  label="mean burst ± sample stddev")
    for bar, c in zip(bars, capped):
        if c:
            bar.set_hatch("//")
    if any(capped):
        # a capped size never lost a frame: its figure is the cap, a lower bound, not a measurement
        ax.plot([i for i, c in zip(x, capped) if c], [m for m, c in zip(means, capped) if c], "^", color="C3",
                markersize=9, label="capped (lower bound): no loss up to the cap")
    measured = [i for i, c in zip(x, capped) if not c]
    ax.plot(measured, [results[i].min_burst_frames for i in measured], "v", color="k", label="min")
    ax.plot(measured, [results[i].max_burst_frames for i in measured], "^", color="k", label="max")
    plain_numbers(ax.yaxis)
    ax.set_xticks(x, [sizes.text(r.frame_size) for r in results])
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("back-to-back burst (frames)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(_title(record, "Back-to-back burst per frame size (RFC 2544 26.4)"), fontsize="medium")
    return {"back_to_back": save_figure(fig, graphs_dir, "back_to_back")}


MAX_TIMELINES = 6
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINES = ("-", "--", "-.", ":")


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
        plain_numbers(ax.yaxis)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        what = tag.get("test", "throughput") + "".join(f", {k} {v}" for k, v in tag.items() if k != "test")
        ax.set_title(f"{what}: {sizes.text(trial.frame_size)}", fontsize="small")
        ax.legend(fontsize="x-small", loc="lower left")
    axes[-1, 0].set_xlabel("time since the trial started (ms); each step is one counter sample")
    fig.suptitle(_title(record, "Rate over time"), fontsize="medium")
    fig.tight_layout()
    return {"rate_over_time": save_figure(fig, graphs_dir, "rate_over_time")}


def draw_graphs(record: RunRecord, graphs_dir: Path) -> dict[str, list[Path]]:
    """Draw every graph whose data is in ``record`` into ``graphs_dir`` (PNG and SVG each);
    name -> [png, svg]."""
    plt = pyplot()
    graphs_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[Path]] = {}
    with plt.rc_context({"svg.hashsalt": "wirespeed", "font.size": 9}):
        for draw in (_throughput, _latency, _distribution, _frame_loss, _latency_vs_load, _back_to_back,
                     _rate_over_time):
            out |= draw(plt, record, graphs_dir)
    return out


GRAPH_CAPTIONS = {
    "throughput_fps": "Throughput vs frame size, frames/s, with the theoretical maximum at 1 Gb/s.",
    "throughput_mbps": "Throughput vs frame size, Mb/s of frame bits, with the theoretical maximum at 1 Gb/s.",
    "latency": "Latency (min, avg, max) at the throughput rate vs frame size, per RFC 1242 3.8 definition.",
    "latency_distribution": "Latency distribution of the trial at the throughput rate, per frame size: the "
                            "histogram in at most 40 bars and the cumulative share of frames (red) with p50 "
                            "and p99.",
    "throughput_pct": "Throughput as % of line rate per frame size.",
    "latency_vs_load": "Average latency of each frame loss trial vs its offered load, per frame size.",
    "rate_over_time": "Frames sent and received per second over the system recovery and reset trials (MRTG "
                      "style), from counter samples taken while each trial ran.",
    "frame_loss": "Frame loss rate vs offered load (RFC 2544 26.3).",
    "back_to_back": "Back-to-back burst length per frame size (RFC 2544 26.4), mean with sample standard "
                    "deviation, min and max over the repetitions.",
}


def inline_svg(text: str, prefix: str) -> str:
    """An SVG file's text as an element to put in HTML: its ids prefixed by ``prefix`` so that
    two graphs on one page never share one, its metadata and namespace declarations dropped
    (nothing refers outside the page)."""
    start = text.find("<svg")
    if start < 0:
        raise ValueError("not an SVG file")
    svg = re.sub(r"<metadata>.*?</metadata>", "", text[start:], flags=re.DOTALL)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\s+version="[^"]*"', "", svg, count=1)
    svg = svg.replace("xlink:href=", "href=")
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m[1]}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}-{m[1]}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m[1]})", svg)
    return svg.replace("<svg", f'<svg role="img" class="graph" aria-label="{prefix}"', 1).rstrip()
