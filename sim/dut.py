"""Specifications of the simulated devices under test (DUT models of the C++ harness).

A DUT is written as ``model[:key=value,...]``::

    loopback                          a cable, 40 ns
    loopback:delay=0ns
    router:rate=400k,queue=16,latency=20us

Times take a unit (``ns``, ``us``, ``ms``, ``s``) and must be whole multiples of the 8 ns
clock; rates are frames per second, optionally with a ``k`` or ``M`` suffix. The same model
with the same parameters is placed in both directions (port 0 -> port 1 and back).
"""

from __future__ import annotations

import re
from abc import abstractmethod
from decimal import Decimal, InvalidOperation
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DutSpec", "LoopbackSpec", "RouterSpec", "parse_dut", "MODELS", "format_time"]

NS_PER_CYCLE = 8
CLOCK_HZ = 125_000_000

_TIME_UNITS = {"ns": Decimal(1), "us": Decimal(10**3), "ms": Decimal(10**6), "s": Decimal(10**9)}
_RATE_SUFFIX = {"": Decimal(1), "k": Decimal(10**3), "M": Decimal(10**6)}
_TIME_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s)$")
_RATE_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(k|M)?$")
_INT_RE = re.compile(r"^[0-9]+$")


def format_time(ns: int) -> str:
    """Shortest exact text for a time in ns: 20000 -> '20us', 40 -> '40ns'."""
    for unit in ("s", "ms", "us"):
        scale = int(_TIME_UNITS[unit])
        if ns and ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


def _format_rate(fps: int) -> str:
    if fps % 1_000_000 == 0:
        return f"{fps // 1_000_000}M"
    if fps % 1000 == 0:
        return f"{fps // 1000}k"
    return str(fps)


class DutSpec(BaseModel):
    """Base of all DUT specifications. Subclasses set ``model`` and implement the methods."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    #: text parameter name -> (attribute, kind, description of what is allowed)
    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {}

    @abstractmethod
    def harness_args(self) -> list[str]:
        """Command-line arguments selecting this model in the C++ harness."""

    @abstractmethod
    def describe(self) -> dict:
        """JSON-friendly description for results files."""

    def __str__(self) -> str:
        """Canonical text form; ``parse_dut(str(spec)) == spec``."""
        parts = []
        for name, (attr, kind, _) in self.PARAMS.items():
            value = getattr(self, attr)
            if kind == "time":
                text = format_time(value)
            elif kind == "rate":
                text = _format_rate(value)
            else:
                text = str(value)
            parts.append(f"{name}={text}")
        return f"{self.model}:{','.join(parts)}" if parts else self.model


def _time_field_check(name: str, value: int, lo: int, hi: int) -> int:
    if not (lo <= value <= hi) or value % NS_PER_CYCLE:
        raise ValueError(
            f"{name} must be a multiple of {NS_PER_CYCLE} ns in {format_time(lo) if lo else '0ns'}"
            f"..{format_time(hi)}, got {value} ns"
        )
    return value


class LoopbackSpec(DutSpec):
    """A cable: every byte arrives exactly ``delay_ns`` later; nothing is lost."""

    model: Literal["loopback"] = "loopback"
    delay_ns: int = 40

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "delay": ("delay_ns", "time", "a time 0ns..1ms, multiple of 8ns (e.g. 40ns, 2us)"),
    }
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {"delay_ns": (0, 1_000_000)}

    @field_validator("delay_ns")
    @classmethod
    def _check_delay(cls, v: int) -> int:
        return _time_field_check("delay", v, *cls.LIMITS["delay_ns"])

    def harness_args(self) -> list[str]:
        return ["--dut", "loopback", "--dut-param", f"delay_ns={self.delay_ns}"]

    def describe(self) -> dict:
        return {"model": "loopback", "spec": str(self), "delay_ns": self.delay_ns}


class RouterSpec(DutSpec):
    """Store-and-forward device: input queue of ``queue`` frames, one server at ``rate``
    frames/s, then a fixed ``latency_ns``, then the output at line rate."""

    model: Literal["router"] = "router"
    rate: int = Field(default=1_000_000, ge=1, le=CLOCK_HZ)
    queue: int = Field(default=256, ge=1, le=65536)
    latency_ns: int = 10_000

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "rate": ("rate", "rate", f"an integer number of frames/s 1..{CLOCK_HZ} (k and M suffixes allowed, e.g. 400k, 1.2M)"),
        "queue": ("queue", "int", "an integer 1..65536"),
        "latency": ("latency_ns", "time", "a time 0ns..1s, multiple of 8ns (e.g. 10us)"),
    }
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {
        "rate": (1, CLOCK_HZ),
        "queue": (1, 65536),
        "latency_ns": (0, 1_000_000_000),
    }

    @field_validator("latency_ns")
    @classmethod
    def _check_latency(cls, v: int) -> int:
        return _time_field_check("latency", v, *cls.LIMITS["latency_ns"])

    def harness_args(self) -> list[str]:
        return [
            "--dut", "router",
            "--dut-param", f"rate={self.rate}",
            "--dut-param", f"queue={self.queue}",
            "--dut-param", f"latency_ns={self.latency_ns}",
        ]

    def describe(self) -> dict:
        return {
            "model": "router",
            "spec": str(self),
            "rate_fps": self.rate,
            "queue_frames": self.queue,
            "latency_ns": self.latency_ns,
            "service_ns": 1e9 / self.rate,
        }


MODELS: dict[str, type[DutSpec]] = {"loopback": LoopbackSpec, "router": RouterSpec}


def _parse_time(text: str) -> int | None:
    m = _TIME_RE.match(text)
    if not m:
        return None
    ns = Decimal(m.group(1)) * _TIME_UNITS[m.group(2)]
    return int(ns) if ns == ns.to_integral_value() else None


def _parse_rate(text: str) -> int | None:
    m = _RATE_RE.match(text)
    if not m:
        return None
    try:
        fps = Decimal(m.group(1)) * _RATE_SUFFIX[m.group(2) or ""]
    except InvalidOperation:
        return None
    return int(fps) if fps == fps.to_integral_value() else None


def parse_dut(text: str) -> DutSpec:
    """Parse ``model[:key=value,...]``. Raises ValueError with one line naming the problem."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"dut: empty specification, expected one of: {', '.join(MODELS)} "
                         "(e.g. 'router:rate=400k,queue=256,latency=20us')")
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    cls = MODELS.get(name)
    if cls is None:
        raise ValueError(f"dut {name!r}: unknown model, known models: {', '.join(MODELS)}")
    values: dict[str, int] = {}
    items = [item.strip() for item in rest.split(",")] if rest.strip() else []
    for item in items:
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key:
            raise ValueError(f"dut {name}: expected key=value, got {item!r}")
        if key not in cls.PARAMS:
            allowed = ", ".join(cls.PARAMS) or "(none)"
            raise ValueError(f"dut {name}: unknown parameter {key!r}, allowed: {allowed}")
        attr, kind, allowed_text = cls.PARAMS[key]
        if attr in values:
            raise ValueError(f"dut {name}: parameter {key!r} given twice")
        if kind == "time":
            value = _parse_time(raw)
        elif kind == "rate":
            value = _parse_rate(raw)
        else:
            value = int(raw) if _INT_RE.match(raw) else None
        lo, hi = cls.LIMITS[attr]
        if (
            value is None
            or not lo <= value <= hi
            or (kind == "time" and value % NS_PER_CYCLE)
        ):
            raise ValueError(f"dut {name}: {key} must be {allowed_text}, got {raw!r}")
        values[attr] = value
    return cls(**values)
