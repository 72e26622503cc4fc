"""Text to values: the parsers of every option a user types, shared by the command line, config
files and the web form so that a bad value gets the same words everywhere.

Each parser returns the value or raises ValueError whose message says what is allowed and
repeats what was given (``a percentage of line rate in (0, 100], e.g. 0.1; not '0'``); the
face that called it puts the option's name in front.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from typing import Any, get_args

from . import sizes as size_points
from .traffic import IpVersion
from .units import parse_duration

__all__ = ["duration", "positive_duration", "percentage", "loss_tolerance", "loss_points", "flows", "choice",
           "frame_sizes", "size_points_list", "ip_version", "address", "target", "dut_info", "dut_info_list",
           "DUT_INFO_ALLOWED"]


def duration(text: str) -> int:
    """A duration with its unit (``10ms``), in ns."""
    return parse_duration(text)


def positive_duration(text: str) -> int:
    """A duration of at least 1 us, in ns."""
    ns = duration(text)
    if ns < 1000:
        raise ValueError(f"at least 1us, not {text!r}")
    return ns


def percentage(example: str) -> Callable[[str], float]:
    """A parser of a percentage of line rate in (0, 100]; ``example`` shows one in the message."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value <= 100:
            raise ValueError(f"a percentage of line rate in (0, 100], e.g. {example}; not {text!r}")
        return value
    return parse


def loss_tolerance(text: str) -> float:
    """A loss percentage in [0, 100)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 100:
        raise ValueError(f"a loss percentage in [0, 100), e.g. 0.001; not {text!r}")
    return value


def loss_points(text: str) -> list[float]:
    """Loads in (0, 100] % of line rate, comma-separated, each once."""
    allowed = "comma-separated loads in (0, 100] % of line rate, each once, e.g. 100,95,90,50"
    try:
        points = [float(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"{allowed}; not {text!r}") from None
    if any(not 0 < p <= 100 for p in points) or len(set(points)) != len(points):
        raise ValueError(f"{allowed}; not {text!r}")
    return points


def flows(text: str) -> tuple[int, int]:
    """``SOURCESxDESTINATIONS``, each 1..65536."""
    parts = text.lower().split("x")
    if len(parts) == 2 and all(p.isdigit() for p in parts) and all(1 <= int(p) <= 65536 for p in parts):
        return int(parts[0]), int(parts[1])
    raise ValueError(f"SOURCESxDESTINATIONS, each 1..65536, e.g. 100x20; not {text!r}")


def choice(*allowed: str, values: dict[str, str] | None = None) -> Callable[[str], str]:
    """A parser of one of ``allowed`` (mapped through ``values`` when given)."""
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"{' or '.join(allowed) if len(allowed) == 2 else ', '.join(allowed)}; not {text!r}")
        return values[text] if values else text
    return parse


def ip_version(text: str) -> int:
    """The IP version of the test frames: 4 or 6."""
    return int(choice(*map(str, get_args(IpVersion)))(text.strip()))


def frame_sizes(text: str) -> list[int]:
    """Comma-separated frame sizes in bytes, each once."""
    allowed = (f"comma-separated frame sizes {size_points.MIN_FRAME}..{size_points.MAX_FRAME} bytes, each once, "
               "e.g. 64,128,1518")
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"{allowed}; not {text!r}") from None
    if any(not size_points.MIN_FRAME <= s <= size_points.MAX_FRAME for s in sizes) or len(set(sizes)) != len(sizes):
        raise ValueError(f"{allowed}; not {text!r}")
    return sizes


def size_points_list(text: str) -> list[int | str]:
    """Frame sizes and IMIX mixes (:mod:`wirespeed.sizes`)."""
    return size_points.parse_list(text)


def address(text: str):
    """``PORT:mac=...,ipv4=...,ipv6=...`` (keys left out keep the port's default): (port, PortAddress)."""
    from .traffic import PortAddress

    allowed = "PORT:mac=MAC,ipv4=ADDR,ipv6=ADDR (any of the three), e.g. 1:ipv4=198.19.0.1"
    port_text, sep, rest = text.partition(":")
    if not sep or not port_text.isdigit() or not rest:
        raise ValueError(f"{allowed}; not {text!r}")
    port = int(port_text)
    values = PortAddress.default(port).model_dump()
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        if not eq or key not in values:
            raise ValueError(f"{allowed}; not {item!r}")
        values[key] = value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return port, PortAddress(**values)
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        err: dict[str, Any] = errors()[0] if callable(errors) else {"loc": (), "msg": str(exc)}
        msg = err["msg"].removeprefix("Value error, ")
        raise ValueError(f"{err['loc'][0]}: {msg}; {allowed}" if err["loc"] else f"{msg}; {allowed}") from None


DUT_INFO_ALLOWED = "KEY=VALUE, KEY a word of letters, digits, _ . - (e.g. model=XS1930, serial=S123, firmware=4.2)"


def dut_info(text: str) -> tuple[str, str]:
    """``KEY=VALUE``, a fact about the DUT for the report's header (model, serial, firmware...)."""
    key, eq, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not eq or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]{0,39}", key) or not value:
        raise ValueError(f"{DUT_INFO_ALLOWED}; not {text!r}")
    return key, value


def dut_info_list(texts: list[str]) -> dict[str, str]:
    """Every ``--dut-info`` as a mapping, in order (a key given twice keeps the last)."""
    return dict(dut_info(text) for text in texts)


def target(text: str) -> str:
    """``sim``, ``udp://HOST[:PORT]``, ``serial://DEVICE[?baud=N]`` or ``socket://HOST:PORT``."""
    if text == "sim":
        return text
    try:
        if text.startswith(("serial://", "socket://")):
            from .transport.uart import parse_serial_url
            parse_serial_url(text)
        else:
            from .transport import parse_udp_url
            parse_udp_url(text)
    except ValueError as exc:
        raise ValueError(f"sim, udp://HOST[:PORT], serial://DEVICE[?baud=N] or socket://HOST:PORT; {exc}") from None
    return text


def finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))
