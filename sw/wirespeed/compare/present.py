"""ministat's layout: the ASCII plot of the sets, the table of vitals and the differences, and
the same figures as JSON."""

from __future__ import annotations

import math
import re
from typing import Any

from .stats import MAX_SETS, SYMBOLS, CompareError, DataSet, Relative, Summary, _scale, relative, summarize


def _cell(value: float, x0: float, dx: float, width: int) -> int:
    x = int((value - x0) / dx)       # C's conversion truncates toward zero
    return min(max(x, 0), width - 1)


def plot_lines(summaries: list[Summary], values: list[tuple[float, ...]], width: int = 74,
               separate_bars: bool = False) -> list[str]:
    """ministat's ASCII plot: the frame, one row per stacking level of points (each point's
    cell holds its set's symbol; points of several sets in one cell show the symbol whose
    index is the OR of theirs, as ministat does), then the bar line(s): ``|`` at avg -/+
    stddev joined by ``_``, ``M`` at the median, ``A`` at the average."""
    k = _scale([x for s in summaries for x in (s.min, s.max, abs(s.avg) + (0 if math.isnan(s.stddev) else s.stddev))])
    summaries = [Summary(n=s.n, min=s.min / k, max=s.max / k, median=s.median / k, avg=s.avg / k, var=s.var,
                         stddev=s.stddev / k) for s in summaries]
    values = [tuple(v / k for v in vals) for vals in values]
    lo, hi = math.inf, -math.inf
    for s in summaries:
        for a in (s.min, s.max, s.avg - s.stddev, s.avg + s.stddev):
            if a < lo:          # nan never compares, as in ministat's AdjPlot
                lo = a
            if a > hi:
                hi = a
    span = hi - lo
    if span == 0:
        return ["[no plot, span is zero width]"]
    dx = span / (width - 1.0)
    x0 = lo - 0.5 * dx
    rows: list[bytearray] = []       # rows[j]: stacking level j (1 = bottom); rows[0] is unused
    height = 0
    bars = [bytearray(width) for _ in range(len(summaries) if separate_bars else 1)]
    for k, (s, vals) in enumerate(zip(summaries, values), start=1):
        cells = [_cell(v, x0, dx, width) for v in sorted(vals)]
        m, run, last = 1, 0, -1
        for x in cells:
            run = run + 1 if x == last else 1
            last = x
            m = max(m, run)
        # as in ministat, the height becomes this set's need even when an earlier set needed more
        # (that set's upper points are then not shown), and rows added again start empty
        m += 1
        if m > height:
            while len(rows) < m:
                rows.append(bytearray(width))
            for j in range(height, m):
                rows[j] = bytearray(width)
        height = m
        run, last = 0, -1
        for x in cells:
            run = run + 1 if x == last else 1
            last = x
            rows[run][x] |= k
        bar = bars[k - 1 if separate_bars else 0]
        if not math.isnan(s.stddev):
            a, b = _cell(s.avg - s.stddev, x0, dx, width), _cell(s.avg + s.stddev, x0, dx, width)
            bar[b] = ord("|")
            bar[a] = ord("|")
            for i in range(a + 1, b):
                if bar[i] == 0:
                    bar[i] = ord("_")
        bar[_cell(s.median, x0, dx, width)] = ord("M")
        bar[_cell(s.avg, x0, dx, width)] = ord("A")
    frame = "+" + "-" * width + "+"
    lines = [frame]
    for j in range(height - 1, 0, -1):
        lines.append("|" + "".join(SYMBOLS[c] for c in rows[j]) + "|")
    for bar in bars:
        lines.append("|" + "".join(chr(c) if c else " " for c in bar) + "|")
    lines.append(frame)
    return lines


def _g(x: float, spec: str = "g") -> str:
    """``format(x, spec)``; "-" (right-aligned to the width) where the figure is undefined or
    beyond a double (a stddev of one value, a % of a zero mean), never inf or nan."""
    if math.isfinite(x):
        return format(x, spec)
    leading = re.match(r"\d*", spec)       # always matches, maybe nothing
    width = leading.group() if leading else ""
    return format("-", f">{width}") if width else "-"


def _vitals(symbol: str, s: Summary) -> str:
    return (f"{symbol} {s.n:3d} {_g(s.min, '13.8g')} {_g(s.max, '13.8g')} {_g(s.median, '13.8g')} "
            f"{_g(s.avg, '13.8g')} {_g(s.stddev, '13.8g')}")


def _relative_lines(r: Relative) -> list[str]:
    if not r.significant:
        return [f"No difference proven at {r.confidence:.1f}% confidence"]
    pct = (f"\t{r.difference_pct:g}% +/- {r.interval_pct:g}%"
           if math.isfinite(r.difference_pct) and math.isfinite(r.interval_pct)
           else "\t% of the first set's mean: undefined (a zero mean, or beyond a double)")
    return [f"Difference at {r.confidence:.1f}% confidence",
            f"\t{_g(r.difference)} +/- {_g(r.interval)}", pct,
            f"\t(Student's t, pooled s = {_g(r.pooled_s)})"]


def _check_sets(sets: list[DataSet], tests: bool) -> None:
    if not sets:
        raise CompareError("sets", "at least one data set")
    if len(sets) > MAX_SETS:
        raise CompareError("sets", f"at most {MAX_SETS} data sets (ministat's symbols {SYMBOLS[1:]}), "
                                   f"not {len(sets)}")
    for ds in sets:
        if not ds.values:
            raise CompareError(ds.name, "no values")
        if tests and len(sets) > 1 and len(ds.values) < 2:
            raise CompareError(ds.name, f"{len(ds.values)} value; a difference needs at least 2 in each set")


def _summaries(sets: list[DataSet], style: str) -> list[Summary]:
    out = []
    for ds in sets:
        try:
            out.append(summarize(ds.values, style))
        except ValueError as exc:
            raise CompareError(ds.name, str(exc)) from None
    return out


def format_report(sets: list[DataSet], confidence: float = 95.0, width: int = 74, style: str = "current",
                  plot: bool = True, tests: bool = True, separate_bars: bool = False) -> str:
    """ministat's output: legend, plot, table, and a difference for each set after the first.
    ``plot=False`` is ministat -A, ``tests=False`` (no plot either) is ministat -n."""
    _check_sets(sets, tests)
    summaries = _summaries(sets, style)
    lines = [f"{SYMBOLS[i]} {ds.name}" for i, ds in enumerate(sets, start=1)]
    if plot and tests:
        lines += plot_lines(summaries, [ds.values for ds in sets], width, separate_bars)
    lines.append("    N           Min           Max        Median           Avg        Stddev")
    lines.append(_vitals(SYMBOLS[1], summaries[0]))
    for i, s in enumerate(summaries[1:], start=2):
        lines.append(_vitals(SYMBOLS[i], s))
        if tests:
            lines += _relative_lines(relative(s, summaries[0], confidence, style))
    return "\n".join(lines) + "\n"


def _num(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x


def report_json(sets: list[DataSet], confidence: float = 95.0, style: str = "current",
                tests: bool = True) -> dict[str, Any]:
    """The same statistics as a JSON-ready dict (nan/inf as null)."""
    _check_sets(sets, tests)
    summaries = _summaries(sets, style)
    out: dict[str, Any] = {"tool": "wirespeed compare", "style": style, "confidence_pct": confidence,
                           "sets": [], "comparisons": []}
    for i, (ds, s) in enumerate(zip(sets, summaries), start=1):
        out["sets"].append({"symbol": SYMBOLS[i], "name": ds.name, "sources": list(ds.sources), "n": s.n,
                            "min": s.min, "max": s.max, "median": s.median, "avg": s.avg,
                            "stddev": _num(s.stddev), "values": list(ds.values)})
    if tests:
        for i, s in enumerate(summaries[1:], start=2):
            r = relative(s, summaries[0], confidence, style)
            out["comparisons"].append({
                "symbol": SYMBOLS[i], "name": sets[i - 1].name, "baseline": sets[0].name,
                "significant": r.significant, "difference": _num(r.difference), "interval": _num(r.interval),
                "difference_pct": _num(r.difference_pct), "interval_pct": _num(r.interval_pct),
                "pooled_s": _num(r.pooled_s), "t": r.t, "df": r.df, "method": "Student's t, pooled s"})
    return out
