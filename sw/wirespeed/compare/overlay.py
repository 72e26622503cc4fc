"""The graphs of a comparison: one line per compared set on shared axes (matplotlib, PNG and
SVG), the view of the seed labs (em vs bge, i386 vs amd64). A set with repeats is drawn at its
mean with min..max error bars.

* ``compare_throughput``: throughput (frames/s) vs frame size, with the line-rate curve;
* ``compare_throughput_pct``: throughput as % of line rate per frame size, grouped bars;
* ``compare_latency``: average latency at the throughput rate vs frame size;
* ``compare_frame_loss``: frame loss vs offered load, a panel per frame size.
"""

from __future__ import annotations

import math
from pathlib import Path

from .. import sizes
from ..ethernet import line_rate_fps
from ..graphs import LINES, MARKERS, SIZES_FOR_CURVE, plain_numbers, pyplot, save_figure
from .runs import RunSet, Series, latency_series, loss_series, throughput_series

__all__ = ["draw_compare", "COMPARE_CAPTIONS"]

COMPARE_CAPTIONS = {
    "compare_throughput": "Throughput (RFC 2544 26.1) vs frame size, one line per set: mean of its runs, "
                          "min..max as error bars; dashed: the 1 Gb/s line rate.",
    "compare_throughput_pct": "Throughput as % of line rate per frame size, a bar per set (mean of its runs).",
    "compare_latency": "Average latency at the throughput rate vs frame size, one line per set.",
    "compare_frame_loss": "Frame loss rate (RFC 2544 26.3) vs offered load, a panel per frame size, "
                          "a line per set.",
}


def _x(size: int | str) -> float:
    """Where a frame size sits on a size axis: an IMIX at its mean frame size."""
    return float(sizes.mean_len(size)) if sizes.is_mix(size) else float(size)


def _errorbar_lines(ax, series_list: list[Series[int | str]], scale: float = 1.0) -> None:
    for i, series in enumerate(series_list):
        points = sorted(series.points(), key=lambda p: _x(p[0]))
        if not points:
            continue
        xs = [_x(s) for s, *_ in points]
        mean = [m * scale for _, m, _, _ in points]
        err = [[(m - lo) * scale for _, m, lo, _ in points], [(hi - m) * scale for _, m, _, hi in points]]
        ax.errorbar(xs, mean, yerr=err, linestyle=LINES[i % len(LINES)], marker=MARKERS[i % len(MARKERS)],
                    markerfacecolor="none", capsize=3, label=series.label)


def _throughput(plt, runs: list[RunSet], out_dir: Path) -> dict[str, list[Path]]:
    series = [throughput_series(r) for r in runs]
    if not any(s.values for s in series):
        return {}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(SIZES_FOR_CURVE, [line_rate_fps(s) for s in SIZES_FOR_CURVE], "--", color="0.5",
            label="line rate (1 Gb/s)")
    _errorbar_lines(ax, series)
    ax.set_xlabel("frame size (bytes; an IMIX at its mean size)")
    ax.set_ylabel("throughput (frames/s)")
    plain_numbers(ax.yaxis)
    ax.set_ylim(bottom=0)
    ax.set_xlim(0, max(1600, *(_x(s) * 1.05 for ser in series for s in ser.values)))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("Throughput vs frame size", fontsize="medium")
    out = {"compare_throughput": save_figure(fig, out_dir, "compare_throughput")}

    all_sizes = list(dict.fromkeys(s for ser in series for s in ser.values))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.8 / len(series)
    for i, ser in enumerate(series):
        means = {s: m for s, m, _, _ in ser.points()}
        xs = [k + (i - (len(series) - 1) / 2) * width for k, s in enumerate(all_sizes) if s in means]
        pct = [100 * means[s] / line_rate_fps(s) for s in all_sizes if s in means]
        bars = ax.bar(xs, pct, width, label=ser.label)
        ax.bar_label(bars, labels=[f"{v:.0f}" for v in pct], fontsize="xx-small", padding=1)
    ax.set_xticks(range(len(all_sizes)), [sizes.text(s) for s in all_sizes], fontsize="small")
    ax.set_xlabel("frame size")
    ax.set_ylabel("throughput (% of line rate)")
    ax.set_ylim(0, 115)
    ax.axhline(100, color="0.5", linestyle="--", linewidth=0.8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    ax.set_title("Throughput, % of line rate", fontsize="medium")
    out["compare_throughput_pct"] = save_figure(fig, out_dir, "compare_throughput_pct")
    return out


def _latency(plt, runs: list[RunSet], out_dir: Path) -> dict[str, list[Path]]:
    pairs = [latency_series(r) for r in runs]
    series = [s for s, _ in pairs]
    if not any(s.values for s in series):
        return {}
    definitions = sorted({d for _, d in pairs if d})
    fig, ax = plt.subplots(figsize=(7, 4.2))
    _errorbar_lines(ax, series)
    ax.set_xlabel("frame size (bytes; an IMIX at its mean size)")
    ax.set_ylabel("average latency (µs)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("Latency at the throughput rate (" + ", ".join(d.replace("_", " ") for d in definitions) + ")",
                 fontsize="medium")
    return {"compare_latency": save_figure(fig, out_dir, "compare_latency")}


def _frame_loss(plt, runs: list[RunSet], out_dir: Path) -> dict[str, list[Path]]:
    per_run = [loss_series(r) for r in runs]
    frame_sizes = list(dict.fromkeys(s for curves in per_run for s in curves))
    if not frame_sizes:
        return {}
    cols = min(3, len(frame_sizes))
    rows = math.ceil(len(frame_sizes) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.4 * rows), squeeze=False)
    for ax, size in zip(axes.flat, frame_sizes):
        for i, curves in enumerate(per_run):
            if size not in curves:
                continue
            points = sorted(curves[size].points(), key=lambda p: float(p[0]))
            ax.plot([float(x) for x, *_ in points], [m for _, m, _, _ in points], linestyle=LINES[i % len(LINES)],
                    marker=MARKERS[i % len(MARKERS)], markerfacecolor="none", label=runs[i].label)
        ax.set_title(sizes.text(size), fontsize="small")
        ax.set_xlim(0, 105)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("offered load (% of line rate)", fontsize="small")
        ax.set_ylabel("frame loss (%)", fontsize="small")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small")
    for ax in list(axes.flat)[len(frame_sizes):]:
        ax.set_visible(False)
    fig.suptitle("Frame loss rate vs offered load", fontsize="medium")
    fig.tight_layout()
    return {"compare_frame_loss": save_figure(fig, out_dir, "compare_frame_loss")}


def draw_compare(runs: list[RunSet], out_dir: Path) -> dict[str, list[Path]]:
    """Draw every comparison graph that has data into ``out_dir``; name -> [PNG, SVG]."""
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[Path]] = {}
    for draw in (_throughput, _latency, _frame_loss):
        out.update(draw(plt, runs, out_dir))
    return out
