"""Numbers and column names for people: how the report shows a CSV table's cells.

The rule, applied to every cell of every table the report shows (the tests check each CSV
value through it):

* an empty cell is an en dash;
* a column of nanoseconds (``*_ns``) is shown in microseconds (``26680`` -> ``26.680``), with
  three more decimals than the CSV had, so that nothing is rounded away;
* any other number gets thousands separators and keeps its decimals (``1488095.24`` ->
  ``1,488,095.24``), except identifiers (frame size, repetition, trial number), shown as
  written;
* a latency definition is shown by its key without underscores (``bit forwarding``), the
  prose being in the report's definitions;
* any other text as written.

Column names lose their underscores and put their unit in brackets (``throughput_fps`` ->
``throughput (fps)``, ``min_ns`` -> ``min (µs)``).
"""

from __future__ import annotations

import re

from ..latency import DEFINITION_KEYS
from ..units import format_figure

__all__ = ["cell", "header", "number", "us", "figure", "EMPTY", "IDENTIFIERS"]

EMPTY = "–"
#: columns that name a row, shown as written (no separators)
IDENTIFIERS = frozenset({"frame_size_B", "repetition", "repeat", "n", "trial", "rx_port", "mean_frame_B"})
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_SHORT_DEFINITIONS = {key: key.replace("_", " ") for key in DEFINITION_KEYS}
# suffix -> what the header says (ns columns are converted to microseconds)
_UNITS = (("_ns", "µs"), ("_us", "µs"), ("_ms", "ms"), ("_fps", "fps"), ("_Mbps", "Mb/s"), ("_pct", "%"),
          ("_B", "B"), ("_frames", "frames"))


def number(text: str) -> str:
    """A decimal number's text with thousands separators, its decimals kept."""
    sign = "-" if text.startswith("-") else ""
    whole, dot, frac = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}{dot}{frac}"


def cell(column: str, text: str) -> str:
    """One CSV cell as the report shows it (the module's rule)."""
    if text == "":
        return EMPTY
    if column in IDENTIFIERS or not _NUMBER.match(text):
        return _SHORT_DEFINITIONS.get(text, text) if column == "definition" else text
    if column.endswith("_ns"):
        decimals = len(text.partition(".")[2]) + 3
        return f"{float(text) / 1000:,.{decimals}f}"
    return number(text)


def header(column: str) -> str:
    """A column name for people: ``throughput_Mbps`` -> ``throughput (Mb/s)``."""
    if column == "pct_line_rate":
        return "% of line rate"
    for suffix, unit in _UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            return f"{column.removesuffix(suffix).replace('_', ' ')} ({unit})"
    return column.replace("_", " ")


# The summary's figures ------------------------------------------------------------------------------


def us(ns: float | None) -> str:
    """Nanoseconds as microseconds (``26680`` -> ``26.680``)."""
    return figure(None if ns is None else ns / 1000, "us")


def figure(value: float | None, unit: str) -> str:
    """A summary figure in ``unit`` (:func:`wirespeed.units.format_figure`), or an en dash."""
    return EMPTY if value is None else format_figure(value, unit)
