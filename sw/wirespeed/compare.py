"""``wirespeed compare``: ministat-compatible statistics over repeated runs.

FreeBSD's ministat(1) is what the BSDRP labs use to compare repeated runs: per data set N, Min,
Max, Median, Avg and Stddev, an ASCII plot of the sets, and for each set after the first a
Student's t test of its mean against the first set's, with a pooled standard deviation and a
fixed table of t values. This module computes the same figures with the same formulas and
prints them in ministat's layout, so a wirespeed comparison reads like the labs' ones.

Two generations of ministat differ in three details, both are offered:

* ``current`` (FreeBSD ministat today, the default): the median of an even number of values is
  the mean of the two middle ones; the variance is summed around the mean (two passes); the
  "+/- %" of a difference propagates the uncertainty of both means into the ratio.
* ``classic`` (older ministat, e.g. FreeBSD 9 and 10, used for the BSDRP labs of 2013): the
  median is the upper middle value; the variance comes from running sums; the "+/- %" is the
  interval divided by the first set's mean.

For an odd N the two agree except for the "+/- %" figure.

Pure functions: :func:`load_set` reads a data set, :func:`summarize` and :func:`relative`
compute, :func:`plot_lines`, :func:`format_report` and :func:`report_json` present.
"""

from __future__ import annotations

import csv
import glob
import io
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CONFIDENCES", "SYMBOLS", "MAX_SETS", "STYLES", "CompareError", "DataSet", "Summary", "Relative",
           "student_t", "summarize", "relative", "plot_lines", "format_report", "report_json", "load_set",
           "parse_where", "parse_confidence"]

CONFIDENCES = (80.0, 90.0, 95.0, 98.0, 99.0, 99.5)
STYLES = ("current", "classic")
SYMBOLS = " x+*%#@O"     # index 1.. is the data set; in the plot, overlapping points OR their indices
MAX_SETS = len(SYMBOLS) - 1

# ministat's table of Student's t, one row per degree of freedom 1..100 (row 0: the normal
# limit, used above 100), one column per entry of CONFIDENCES. The columns 80..99 are two-sided
# quantiles; the "99.5" column holds the two-sided 99.8 % ones (t at 0.999), as ministat has it.
_T_TABLE = (
    (1.282, 1.645, 1.960, 2.326, 2.576, 3.090),
    (3.078, 6.314, 12.706, 31.821, 63.657, 318.313),
    (1.886, 2.920, 4.303, 6.965, 9.925, 22.327),
    (1.638, 2.353, 3.182, 4.541, 5.841, 10.215),
    (1.533, 2.132, 2.776, 3.747, 4.604, 7.173),
    (1.476, 2.015, 2.571, 3.365, 4.032, 5.893),
    (1.440, 1.943, 2.447, 3.143, 3.707, 5.208),
    (1.415, 1.895, 2.365, 2.998, 3.499, 4.782),
    (1.397, 1.860, 2.306, 2.896, 3.355, 4.499),
    (1.383, 1.833, 2.262, 2.821, 3.250, 4.296),
    (1.372, 1.812, 2.228, 2.764, 3.169, 4.143),
    (1.363, 1.796, 2.201, 2.718, 3.106, 4.024),
    (1.356, 1.782, 2.179, 2.681, 3.055, 3.929),
    (1.350, 1.771, 2.160, 2.650, 3.012, 3.852),
    (1.345, 1.761, 2.145, 2.624, 2.977, 3.787),
    (1.341, 1.753, 2.131, 2.602, 2.947, 3.733),
    (1.337, 1.746, 2.120, 2.583, 2.921, 3.686),
    (1.333, 1.740, 2.110, 2.567, 2.898, 3.646),
    (1.330, 1.734, 2.101, 2.552, 2.878, 3.610),
    (1.328, 1.729, 2.093, 2.539, 2.861, 3.579),
    (1.325, 1.725, 2.086, 2.528, 2.845, 3.552),
    (1.323, 1.721, 2.080, 2.518, 2.831, 3.527),
    (1.321, 1.717, 2.074, 2.508, 2.819, 3.505),
    (1.319, 1.714, 2.069, 2.500, 2.807, 3.485),
    (1.318, 1.711, 2.064, 2.492, 2.797, 3.467),
    (1.316, 1.708, 2.060, 2.485, 2.787, 3.450),
    (1.315, 1.706, 2.056, 2.479, 2.779, 3.435),
    (1.314, 1.703, 2.052, 2.473, 2.771, 3.421),
    (1.313, 1.701, 2.048, 2.467, 2.763, 3.408),
    (1.311, 1.699, 2.045, 2.462, 2.756, 3.396),
    (1.310, 1.697, 2.042, 2.457, 2.750, 3.385),
    (1.309, 1.696, 2.040, 2.453, 2.744, 3.375),
    (1.309, 1.694, 2.037, 2.449, 2.738, 3.365),
    (1.308, 1.692, 2.035, 2.445, 2.733, 3.356),
    (1.307, 1.691, 2.032, 2.441, 2.728, 3.348),
    (1.306, 1.690, 2.030, 2.438, 2.724, 3.340),
    (1.306, 1.688, 2.028, 2.434, 2.719, 3.333),
    (1.305, 1.687, 2.026, 2.431, 2.715, 3.326),
    (1.304, 1.686, 2.024, 2.429, 2.712, 3.319),
    (1.304, 1.685, 2.023, 2.426, 2.708, 3.313),
    (1.303, 1.684, 2.021, 2.423, 2.704, 3.307),
    (1.303, 1.683, 2.020, 2.421, 2.701, 3.301),
    (1.302, 1.682, 2.018, 2.418, 2.698, 3.296),
    (1.302, 1.681, 2.017, 2.416, 2.695, 3.291),
    (1.301, 1.680, 2.015, 2.414, 2.692, 3.286),
    (1.301, 1.679, 2.014, 2.412, 2.690, 3.281),
    (1.300, 1.679, 2.013, 2.410, 2.687, 3.277),
    (1.300, 1.678, 2.012, 2.408, 2.685, 3.273),
    (1.299, 1.677, 2.011, 2.407, 2.682, 3.269),
    (1.299, 1.677, 2.010, 2.405, 2.680, 3.265),
    (1.299, 1.676, 2.009, 2.403, 2.678, 3.261),
    (1.298, 1.675, 2.008, 2.402, 2.676, 3.258),
    (1.298, 1.675, 2.007, 2.400, 2.674, 3.255),
    (1.298, 1.674, 2.006, 2.399, 2.672, 3.251),
    (1.297, 1.674, 2.005, 2.397, 2.670, 3.248),
    (1.297, 1.673, 2.004, 2.396, 2.668, 3.245),
    (1.297, 1.673, 2.003, 2.395, 2.667, 3.242),
    (1.297, 1.672, 2.002, 2.394, 2.665, 3.239),
    (1.296, 1.672, 2.002, 2.392, 2.663, 3.237),
    (1.296, 1.671, 2.001, 2.391, 2.662, 3.234),
    (1.296, 1.671, 2.000, 2.390, 2.660, 3.232),
    (1.296, 1.670, 2.000, 2.389, 2.659, 3.229),
    (1.295, 1.670, 1.999, 2.388, 2.657, 3.227),
    (1.295, 1.669, 1.998, 2.387, 2.656, 3.225),
    (1.295, 1.669, 1.998, 2.386, 2.655, 3.223),
    (1.295, 1.669, 1.997, 2.385, 2.654, 3.220),
    (1.295, 1.668, 1.997, 2.384, 2.652, 3.218),
    (1.294, 1.668, 1.996, 2.383, 2.651, 3.216),
    (1.294, 1.668, 1.995, 2.382, 2.650, 3.214),
    (1.294, 1.667, 1.995, 2.382, 2.649, 3.213),
    (1.294, 1.667, 1.994, 2.381, 2.648, 3.211),
    (1.294, 1.667, 1.994, 2.380, 2.647, 3.209),
    (1.293, 1.666, 1.993, 2.379, 2.646, 3.207),
    (1.293, 1.666, 1.993, 2.379, 2.645, 3.206),
    (1.293, 1.666, 1.993, 2.378, 2.644, 3.204),
    (1.293, 1.665, 1.992, 2.377, 2.643, 3.202),
    (1.293, 1.665, 1.992, 2.376, 2.642, 3.201),
    (1.293, 1.665, 1.991, 2.376, 2.641, 3.199),
    (1.292, 1.665, 1.991, 2.375, 2.640, 3.198),
    (1.292, 1.664, 1.990, 2.374, 2.640, 3.197),
    (1.292, 1.664, 1.990, 2.374, 2.639, 3.195),
    (1.292, 1.664, 1.990, 2.373, 2.638, 3.194),
    (1.292, 1.664, 1.989, 2.373, 2.637, 3.193),
    (1.292, 1.663, 1.989, 2.372, 2.636, 3.191),
    (1.292, 1.663, 1.989, 2.372, 2.636, 3.190),
    (1.292, 1.663, 1.988, 2.371, 2.635, 3.189),
    (1.291, 1.663, 1.988, 2.370, 2.634, 3.188),
    (1.291, 1.663, 1.988, 2.370, 2.634, 3.187),
    (1.291, 1.662, 1.987, 2.369, 2.633, 3.185),
    (1.291, 1.662, 1.987, 2.369, 2.632, 3.184),
    (1.291, 1.662, 1.987, 2.368, 2.632, 3.183),
    (1.291, 1.662, 1.986, 2.368, 2.631, 3.182),
    (1.291, 1.662, 1.986, 2.368, 2.630, 3.181),
    (1.291, 1.661, 1.986, 2.367, 2.630, 3.180),
    (1.291, 1.661, 1.986, 2.367, 2.629, 3.179),
    (1.291, 1.661, 1.985, 2.366, 2.629, 3.178),
    (1.290, 1.661, 1.985, 2.366, 2.628, 3.177),
    (1.290, 1.661, 1.985, 2.365, 2.627, 3.176),
    (1.290, 1.661, 1.984, 2.365, 2.627, 3.175),
    (1.290, 1.660, 1.984, 2.365, 2.626, 3.175),
    (1.290, 1.660, 1.984, 2.364, 2.626, 3.174),
)
N_STUDENT = len(_T_TABLE) - 1


class CompareError(ValueError):
    """Bad input, reported by the command as one line ``<field>: <message>``."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


# Statistics ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataSet:
    """One data set: its name (as ministat prints it) and its values in input order."""

    name: str
    values: tuple[float, ...]
    sources: tuple[str, ...] = field(default=(), compare=False)   # the files the values came from


@dataclass(frozen=True)
class Summary:
    n: int
    min: float
    max: float
    median: float
    avg: float
    var: float          # nan for N < 2
    stddev: float


@dataclass(frozen=True)
class Relative:
    """A data set's mean against the baseline's (the first set), ministat's Student's t test."""

    df: int
    t: float
    pooled_s: float
    difference: float           # avg - baseline avg
    interval: float             # +/- at the confidence level
    difference_pct: float       # of the baseline avg
    interval_pct: float
    confidence: float

    @property
    def significant(self) -> bool:
        return abs(self.difference) > self.interval


def parse_confidence(value: float | str) -> float:
    """One of ministat's confidence levels (percent), else CompareError."""
    try:
        c = float(value)
    except (TypeError, ValueError):
        c = float("nan")
    if c not in CONFIDENCES:
        raise CompareError("--confidence", f"one of {', '.join(f'{x:g}' for x in CONFIDENCES)} (percent); "
                                           f"not {value!r}")
    return c


def student_t(df: int, confidence: float) -> float:
    """ministat's t for ``df`` degrees of freedom (the normal limit above 100)."""
    column = CONFIDENCES.index(parse_confidence(confidence))
    if df < 1:
        raise ValueError("a t test needs at least one degree of freedom")
    return _T_TABLE[0 if df > N_STUDENT else df][column]


def _scale(numbers) -> float:
    """A power of two within a factor 2 below the largest finite magnitude of ``numbers`` (1
    for none or 0). Dividing by it is exact, so sums and squares of the scaled values cannot
    overflow and every figure comes out as unscaled arithmetic would give it, where that does
    not overflow."""
    m = max((abs(x) for x in numbers if math.isfinite(x)), default=0.0)
    return math.ldexp(1.0, math.frexp(m)[1] - 1) if m else 1.0


def summarize(values: tuple[float, ...] | list[float], style: str = "current") -> Summary:
    """N, Min, Max, Median, Avg, Var, Stddev computed as ministat does (see the module text),
    on the values scaled by a power of two (:func:`_scale`) so that no sum overflows. ``var``
    can still be inf (its square of a stddev above 1.3e154); ValueError for a non-finite value
    or a standard deviation beyond a double."""
    if style not in STYLES:
        raise ValueError(f"style is one of {STYLES}, not {style!r}")
    if not values:
        raise ValueError("no values")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("values must be finite numbers")
    k = _scale(values)
    n = len(values)
    sy = 0.0
    syy = 0.0
    for v in values:          # input order, like ministat's AddPoint
        sy += v / k
        syy += (v / k) * (v / k)
    points = sorted(values)
    avg = sy / n
    if style == "classic":
        median = points[n // 2]
        var = (syy - sy * sy / n) / (n - 1.0) if n > 1 else math.nan
    else:
        m = n // 2
        median = points[m] / 2 + points[m - 1] / 2 if n % 2 == 0 else points[m]
        if n > 1:
            ss = 0.0
            for p in points:
                ss += (p / k - avg) * (p / k - avg)
            var = ss / (n - 1.0)
        else:
            var = math.nan
    stddev = math.sqrt(var) * k if var >= 0 else math.nan    # running sums can go a hair below zero
    if math.isinf(stddev):
        raise ValueError(f"the standard deviation is beyond a double (about {sys.float_info.max:.3g})")
    return Summary(n=n, min=points[0], max=points[-1], median=median, avg=avg * k, var=var * k * k, stddev=stddev)


def relative(ds: Summary, rs: Summary, confidence: float = 95.0, style: str = "current") -> Relative:
    """``ds`` (a later set) against ``rs`` (the first set): ministat's Relative()."""
    if ds.n < 2 or rs.n < 2:
        raise ValueError("a difference needs at least 2 values in each set")
    df = ds.n + rs.n - 2
    t = student_t(df, confidence)
    # on values scaled by a power of two (exact), as summarize: no square overflows
    k = _scale((ds.avg, rs.avg, ds.stddev, rs.stddev))
    dsd, rsd, davg, ravg = ds.stddev / k, rs.stddev / k, ds.avg / k, rs.avg / k
    spool = math.sqrt(((ds.n - 1) * dsd * dsd + (rs.n - 1) * rsd * rsd) / df)
    s = spool * math.sqrt(1.0 / ds.n + 1.0 / rs.n)
    d = davg - ravg
    e = t * s
    if style == "classic":
        re_ = e
    else:
        # the baseline's spread carried into the ratio of the means (inf for a zero baseline mean)
        carried = rsd * (davg / ravg) if ravg else (0.0 if rsd == 0 or davg == 0 else math.inf)
        re_ = (ds.n - 1) * dsd * dsd + (rs.n - 1) * carried * carried
        re_ *= (ds.n + rs.n) / (ds.n * rs.n * (ds.n + rs.n - 2.0))
        re_ = t * math.sqrt(re_)
    return Relative(df=df, t=t, pooled_s=spool * k, difference=d * k, interval=e * k,
                    difference_pct=_div(d * 100, ravg), interval_pct=_div(re_ * 100, ravg),
                    confidence=float(confidence))


def _div(a: float, b: float) -> float:
    """a / b with C's IEEE results for b == 0."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


# Presentation ---------------------------------------------------------------------------------------------


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


# Reading data sets ----------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class _TooLarge(ValueError):
    """A number beyond a double (e.g. 1e400)."""


def _number(text: str) -> float | None:
    """The number ``text`` writes (None: not a number); _TooLarge for one beyond a double."""
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    if math.isinf(value):
        raise _TooLarge(f"{text} is beyond the range of a double (magnitudes up to {sys.float_info.max:.4g})")
    return value


def parse_where(items: list[str]) -> list[tuple[str, str]]:
    """``--where NAME=VALUE`` items as pairs."""
    pairs = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise CompareError("--where", f"NAME=VALUE, e.g. frame_size_B=64; not {item!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def _read_text(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CompareError(name, "no such file or folder") from None
    except UnicodeDecodeError:
        raise CompareError(name, "not a text file") from None
    except OSError as exc:
        raise CompareError(name, f"cannot read: {exc.strerror or exc}") from None


def read_plain(text: str, name: str, column: int = 1) -> list[float]:
    """ministat's input: whitespace-separated columns (``column`` counts from 1), one value a
    line, blank lines and ``#`` comments ignored."""
    values = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        tokens = line.split("#", 1)[0].split()
        if not tokens:
            continue
        if len(tokens) < column:
            raise CompareError(name, f"line {lineno}: no column {column} in {line.strip()!r}")
        try:
            value = _number(tokens[column - 1])
        except _TooLarge as exc:
            raise CompareError(name, f"line {lineno}: {exc}") from None
        if value is None:
            raise CompareError(name, f"line {lineno}: not a number: {tokens[column - 1]!r}")
        values.append(value)
    return values


def _matches(cell: str, wanted: str) -> bool:
    try:
        a, b = _number(cell), _number(wanted)
    except _TooLarge:
        a = b = None
    if a is not None and b is not None:
        return a == b
    return cell.strip() == wanted


def read_csv_column(text: str, name: str, column: str | None, where: list[tuple[str, str]]) -> list[float]:
    """The numbers of one named column of a CSV with a header row, from the rows matching
    every ``where`` pair."""
    rows = list(csv.reader(io.StringIO(text)))
    while rows and not any(c.strip() for c in rows[0]):
        rows.pop(0)
    if not rows:
        raise CompareError(name, "no numbers (an empty CSV file)")
    header = [h.strip() for h in rows[0]]
    available = ", ".join(h for h in header if h)
    if column is None:
        raise CompareError("--column", f"required for CSV input {name}; one of: {available}")
    for wanted, _ in [(column, None), *where]:
        if wanted not in header:
            raise CompareError("--column" if wanted == column else "--where",
                               f"no column {wanted!r} in {name}; columns: {available}")
    index = header.index(column)
    conditions = [(header.index(k), v) for k, v in where]
    values = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        cells = row + [""] * (len(header) - len(row))
        if not all(_matches(cells[i], v) for i, v in conditions):
            continue
        try:
            value = _number(cells[index])
        except _TooLarge as exc:
            raise CompareError(name, f"line {lineno}: column {column}: {exc}") from None
        if value is None:
            what = "empty" if not cells[index].strip() else f"not a number: {cells[index].strip()!r}"
            raise CompareError(name, f"line {lineno}: column {column} is {what}")
        values.append(value)
    if not values:
        if where:
            shown = "; ".join(f"{k} has {', '.join(_distinct(rows[1:], header.index(k)))}" for k, _ in where)
            raise CompareError("--where", f"no row of {name} has "
                                          f"{' and '.join(f'{k}={v}' for k, v in where)} ({shown})")
        raise CompareError(name, "no numbers (a header row only)")
    return values


def _distinct(rows: list[list[str]], index: int) -> list[str]:
    seen: list[str] = []
    for row in rows:
        if index < len(row) and row[index].strip() and row[index].strip() not in seen:
            seen.append(row[index].strip())
    return seen or ["no values"]


def _results_csv(path: Path, name: str, table: str = "Throughput") -> str:
    """The text of ``<table>.csv`` of a results folder; Throughput.csv can also come from the
    folder's (or the given) results.json."""
    if path.is_dir():
        csv_path = path / f"{table}.csv"
        if csv_path.is_file():
            return _read_text(csv_path, f"{name}/{table}.csv")
        present = ", ".join(sorted(p.stem for p in path.glob("*.csv"))) or "none"
        if table != "Throughput":
            raise CompareError("--table", f"no {table}.csv in {name} (tables there: {present})")
        path = path / "results.json"
        if not path.is_file():
            raise CompareError(name, "a folder without Throughput.csv or results.json (not a wirespeed "
                                     "results folder)")
    elif table != "Throughput":
        raise CompareError("--table", f"{table} comes from a results folder's {table}.csv, not from {name}; "
                                      "give the folder")
    import json

    from pydantic import ValidationError

    from .results.record import RunRecord, upgrade
    from .rfc2544.suite.throughput import throughput_csv

    text = _read_text(path, name)
    try:
        data = json.loads(text)
        record = RunRecord.model_validate(upgrade(data) if isinstance(data, dict) else data)
    except ValidationError as exc:
        raise CompareError(name, f"not a wirespeed results.json ({exc.error_count()} problems, the first: "
                                 f"{exc.errors()[0]['msg']})") from None
    except ValueError as exc:
        raise CompareError(name, f"not a wirespeed results.json ({exc})") from None
    return throughput_csv(record.results_of("throughput"))


def _is_results(path: Path) -> bool:
    return (path.is_dir() and ((path / "Throughput.csv").is_file() or (path / "results.json").is_file())) \
        or (path.is_file() and path.suffix.lower() == ".json")


def _column_number(column: str | None, name: str) -> int:
    if column is None:
        return 1
    if not column.isdigit() or int(column) < 1:
        raise CompareError("--column", f"a column number (1, 2, ...) for the plain file {name}; not {column!r}")
    return int(column)


def _values_of(path: Path, name: str, column: str | None, where: list[tuple[str, str]],
               table: str) -> list[float]:
    if _is_results(path):
        return read_csv_column(_results_csv(path, name, table), name, column, where)
    if path.suffix.lower() == ".csv":
        return read_csv_column(_read_text(path, name), name, column, where)
    if where:
        raise CompareError("--where", f"only for CSV files and results folders, not {name}")
    values = read_plain(_read_text(path, name), name, _column_number(column, name))
    if not values:
        raise CompareError(name, "no numbers")
    return values


def load_set(spec: str, column: str | None = None, where: list[tuple[str, str]] | None = None,
             table: str = "Throughput", stdin: io.TextIOBase | None = None) -> DataSet:
    """One data set from a command-line argument: a plain file of numbers (ministat's format),
    a CSV (``column`` names the column), a wirespeed results folder (its ``table``.csv, by
    default Throughput.csv) or results.json (its Throughput.csv figures), a folder of results
    folders (one value set from all of them), or a quoted glob pattern matching several of those
    (their values pooled); ``-`` is stdin."""
    where = where or []
    if spec == "-":
        if where:
            raise CompareError("--where", "only for CSV files and results folders, not <stdin>")
        values = read_plain((stdin or sys.stdin).read(), "<stdin>", _column_number(column, "<stdin>"))
        if not values:
            raise CompareError("<stdin>", "no numbers")
        return DataSet("<stdin>", tuple(values), ("<stdin>",))
    path = Path(spec)
    if path.exists():
        if path.is_dir() and not _is_results(path):
            members = sorted(p for p in path.iterdir() if p.is_dir() and _is_results(p))
            if not members:
                raise CompareError(spec, "a folder without Throughput.csv or results.json, nor results "
                                         "folders inside (not a wirespeed results folder)")
            paths = members
        else:
            paths = [path]
    elif glob.has_magic(spec):
        paths = [Path(p) for p in sorted(glob.glob(spec))]
        if not paths:
            raise CompareError(spec, "no file or folder matches this pattern")
    else:
        raise CompareError(spec, "no such file or folder")
    values = []
    for p in paths:
        values += _values_of(p, str(p) if len(paths) > 1 else spec, column, where, table)
    return DataSet(spec, tuple(values), tuple(str(p) for p in paths))
