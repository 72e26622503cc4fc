"""Durations as people type them ("10ms", "1.5 s", "250us") and back; figures as people read
them (``424,854.59`` fps)."""

import re
from decimal import Decimal, InvalidOperation

__all__ = ["parse_duration", "format_duration", "DURATION_HELP", "DECIMALS", "format_figure"]

_NS_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION = re.compile(r"^\s*(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>ns|us|ms|s)\s*$")
DURATION_HELP = "a number with a unit ns, us, ms or s, e.g. 10ms or 1.5s"
#: decimals a figure of each unit is shown with (verdicts, the report), those its CSV column has
DECIMALS = {"%": 3, "us": 3, "fps": 2, "Mb/s": 3, "frames": 1}


def parse_duration(text: str) -> int:
    """Nanoseconds in ``text``; raises ValueError (one line) unless it is ``<number><unit>``
    with a whole number of nanoseconds."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"{DURATION_HELP}, not {text!r}")
    try:
        ns = Decimal(match["number"]) * _NS_PER_UNIT[match["unit"]]
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal numbers
        raise ValueError(f"{DURATION_HELP}, not {text!r}") from None
    if ns != ns.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of nanoseconds")
    return int(ns)


def format_duration(ns: int) -> str:
    """The largest unit that shows ``ns`` exactly: 10000000 -> "10 ms", 1500 -> "1.5 us"."""
    for unit in ("s", "ms", "us"):
        value = Decimal(ns) / _NS_PER_UNIT[unit]
        if abs(value) >= 1:
            return f"{value.normalize():f} {unit}"
    return f"{ns} ns"


def format_figure(value: float, unit: str) -> str:
    """``value`` for people, without its unit: thousands separators and the unit's decimals."""
    return f"{value:,.{DECIMALS.get(unit, 3)}f}"
