"""What every simulated DUT specification shares: the :class:`DutSpec` base, the impairments
every model takes (:class:`ImpairmentsMixin`) and the parameter kinds (time, rate, probability,
window, integer) with their parsers and canonical text (:data:`_KINDS`). The models and the
parser of ``--dut`` text are in :mod:`.dut`."""

from __future__ import annotations

import os
import re
from abc import abstractmethod
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from wirespeed.errors import ConnectError
from wirespeed.gateware.config import NS_PER_CYCLE

from .dut_params import ANY, HarnessParam, param

__all__ = ["DutSpec", "DutStartError", "ImpairmentsMixin", "IMPAIR_PARAMS", "IMPAIR_LIMITS", "format_time"]


_TIME_UNITS = {"ns": Decimal(1), "us": Decimal(10**3), "ms": Decimal(10**6), "s": Decimal(10**9)}
_RATE_SUFFIX = {"": Decimal(1), "k": Decimal(10**3), "M": Decimal(10**6)}
_TIME_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s)$")
_RATE_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(k|M)?$")
_INT_RE = re.compile(r"^[0-9]+$")
_PROB_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
PPB = 10**9
# Defaults and limits come from the harness's table (sim/dut_params.py), their one source.
MAX_BLACKOUT_NS = param(ANY, "blackout_len_ns").hi
MAX_SWITCH_TABLE = param("switch", "table").hi
MAX_SWITCH_AGING_NS = param("switch", "aging_ns").hi
_SEED = param(ANY, "seed")


def _limits(p: HarnessParam, optional: bool = False) -> tuple[int, int]:
    """The range a given value must be in: an optional feature (0: off) is given on, so from
    one step up."""
    return (max(p.lo, p.step) if optional else p.lo), p.hi


def _ranged(p: HarnessParam) -> int:
    """A pydantic field with the table's default and range."""
    field: int = Field(default=p.default, ge=p.lo, le=p.hi)
    return field


def _int_text(p: HarnessParam) -> str:
    return f"an integer {p.lo}..{p.hi}"


def _time_text(p: HarnessParam, example: str, lo: int | None = None) -> str:
    lo = p.lo if lo is None else lo
    return f"a time {format_time(lo)}..{format_time(p.hi)}, multiple of {NS_PER_CYCLE}ns (e.g. {example})"


def _prob_ppb(p: float) -> int | None:
    """Probability -> parts per 10^9, or None if not in 0..1 with at most 9 decimals."""
    try:
        d = Decimal(repr(float(p))) * PPB
    except (InvalidOperation, ValueError, TypeError):
        return None
    if d != d.to_integral_value() or not 0 <= d <= PPB:
        return None
    return int(d)


def _format_prob(p: float) -> str:
    text = format(Decimal(_prob_ppb(p)) / PPB, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


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


class DutStartError(ConnectError):
    """The DUT could not be set up once the simulation was ready: one line, about ``--dut``;
    ``exit_code`` 2 when the user's input is at fault (a ruleset nft refuses), else 1."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__("--dut", message, exit_code=exit_code)


class DutSpec(BaseModel):
    """Base of all DUT specifications. Subclasses set ``model`` and implement the methods."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    #: text parameter name -> (attribute, kind, description of what is allowed)
    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {}
    #: parameters left out of the canonical text while they have their default value
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def harness_args(self) -> list[str]:
        """Command-line arguments selecting this model in the C++ harness."""

    @abstractmethod
    def describe(self) -> dict:
        """JSON-friendly description for results files."""

    def unavailable(self) -> str | None:
        """Why this machine cannot simulate this DUT (one line), or None."""
        return None

    def with_addresses(self, addresses: Mapping[int, Any]) -> DutSpec:
        """This DUT set up for the tester ports' own ``addresses`` (port -> PortAddress, the
        others the defaults); itself when its setup does not depend on them. ValueError, one
        line, when it cannot work with them."""
        return self

    def start(self, pid: int) -> None:
        """Set up what the DUT needs beyond the harness's arguments, once the simulation
        process ``pid`` is ready and before any traffic (:class:`DutStartError` on failure)."""

    def state(self, pid: int) -> dict:
        """What the DUT reports of itself while the simulation process ``pid`` runs."""
        return {}

    def __str__(self) -> str:
        """Canonical text form; ``parse_dut(str(spec)) == spec``."""
        parts = []
        for name, (attr, kind, _) in self.PARAMS.items():
            value = getattr(self, attr)
            if (name in _OPTIONAL or name in self.OPTIONAL) and value == type(self).model_fields[attr].default:
                continue
            text = _KINDS[kind][1](value)
            parts.append(f"{name}={text}")
        return f"{self.model}:{','.join(parts)}" if parts else self.model


def _time_field_check(name: str, value: int, lo: int, hi: int) -> int:
    if not (lo <= value <= hi) or value % NS_PER_CYCLE:
        raise ValueError(
            f"{name} must be a multiple of {NS_PER_CYCLE} ns in {format_time(lo) if lo else '0ns'}"
            f"..{format_time(hi)}, got {value} ns"
        )
    return value


# Parameters left out of the canonical text, the harness arguments and describe() while they
# have their default value (so a spec without impairments reads as its plain model).
_OPTIONAL = frozenset({"jitter", "collapse", "recover", "loss", "dup", "reorder", "corrupt", "blackout", "seed",
                       "reboot"})

_PROB_TEXT = "a probability 0..1 with at most 9 decimals (e.g. 0.01)"
IMPAIR_PARAMS: dict[str, tuple[str, str, str]] = {
    "loss": ("loss", "prob", _PROB_TEXT),
    "dup": ("dup", "prob", _PROB_TEXT),
    "reorder": ("reorder", "prob", _PROB_TEXT),
    "corrupt": ("corrupt", "prob", _PROB_TEXT),
    "blackout": ("blackout_ns", "window",
                 "START:LENGTH, two times 0ns..3600s, multiples of 8ns, LENGTH > 0 (e.g. 5ms:2ms)"),
    "seed": ("seed", "int", _int_text(_SEED)),
    "reboot": ("reboot_ns", "time", _time_text(param(ANY, "reboot_ns"), "2s", lo=NS_PER_CYCLE)),
}
IMPAIR_LIMITS: dict[str, tuple[int, int]] = {
    "loss": (0, 1), "dup": (0, 1), "reorder": (0, 1), "corrupt": (0, 1),
    "blackout_ns": (0, MAX_BLACKOUT_NS), "seed": _limits(_SEED), "reboot_ns": _limits(param(ANY, "reboot_ns"), True),
}


class ImpairmentsMixin(BaseModel):
    """Impairments every model accepts (applied to the model's output by the harness)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    loss: float = 0.0
    dup: float = 0.0
    reorder: float = 0.0
    corrupt: float = 0.0
    blackout_ns: tuple[int, int] | None = None  # (start, length)
    seed: int = Field(default=_SEED.default, ge=_SEED.lo, le=_SEED.hi)
    reboot_ns: int = 0      # a reset (host command) takes the device down this long; 0: no reset

    @field_validator("loss", "dup", "reorder", "corrupt")
    @classmethod
    def _check_prob(cls, v: float, info) -> float:
        if _prob_ppb(v) is None:
            raise ValueError(f"{info.field_name} must be {_PROB_TEXT}, got {v!r}")
        return float(v)

    @field_validator("reboot_ns")
    @classmethod
    def _check_reboot(cls, v: int) -> int:
        return _time_field_check("reboot", v, 0, MAX_BLACKOUT_NS)

    @field_validator("blackout_ns")
    @classmethod
    def _check_blackout(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None:
            start, length = v
            _time_field_check("blackout start", start, 0, MAX_BLACKOUT_NS)
            _time_field_check("blackout length", length, NS_PER_CYCLE, MAX_BLACKOUT_NS)
        return v

    def impairment_args(self) -> list[str]:
        args: list[str] = []
        for name in ("loss", "dup", "reorder", "corrupt"):
            ppb = _prob_ppb(getattr(self, name))
            if ppb:
                args += ["--dut-param", f"{name}_ppb={ppb}"]
        if self.blackout_ns is not None:
            args += ["--dut-param", f"blackout_start_ns={self.blackout_ns[0]}",
                     "--dut-param", f"blackout_len_ns={self.blackout_ns[1]}"]
        if self.seed != _SEED.default:
            args += ["--dut-param", f"seed={self.seed}"]
        if self.reboot_ns:
            args += ["--dut-param", f"reboot_ns={self.reboot_ns}"]
        return args

    def impairment_describe(self) -> dict:
        d: dict = {}
        for name in ("loss", "dup", "reorder", "corrupt"):
            if getattr(self, name):
                d[name] = getattr(self, name)
        if self.blackout_ns is not None:
            d["blackout_start_ns"], d["blackout_len_ns"] = self.blackout_ns
        if self.seed != _SEED.default:
            d["seed"] = self.seed
        return ({"impairments": d} if d else {}) | ({"reboot_ns": self.reboot_ns} if self.reboot_ns else {})



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


def _parse_prob(text: str) -> float | None:
    if not _PROB_RE.match(text):
        return None
    d = Decimal(text) * PPB
    return float(Decimal(text)) if d == d.to_integral_value() else None


def _parse_file(text: str) -> str | None:
    """A readable file's absolute path, or None."""
    path = os.path.abspath(os.path.expanduser(text))
    return path if text and os.path.isfile(path) and os.access(path, os.R_OK) else None


def _parse_netns(text: str) -> str | None:
    """An existing file's absolute path (a network namespace such as /run/netns/NAME), or None."""
    path = os.path.abspath(os.path.expanduser(text))
    return path if text and os.path.exists(path) else None


_IFNAME_RE = re.compile(r"[^/:\s]{1,15}")


def _parse_ifname(text: str) -> str | None:
    """A Linux interface name (1..15 characters, no '/', ':' or white space), or None."""
    return text if _IFNAME_RE.fullmatch(text) and text not in (".", "..") else None


def _parse_window(text: str) -> tuple[int, int] | None:
    start, colon, length = text.partition(":")
    if not colon:
        return None
    s, n = _parse_time(start.strip()), _parse_time(length.strip())
    if s is None or n is None or s % NS_PER_CYCLE or n % NS_PER_CYCLE:
        return None
    return (s, n)



def _parse_int(text: str) -> int | None:
    return int(text) if _INT_RE.match(text) else None


#: parameter kind -> (parse text to a value or None, format a value as canonical text)
_KINDS = {
    "time": (_parse_time, format_time),
    "rate": (_parse_rate, _format_rate),
    "prob": (_parse_prob, _format_prob),
    "window": (_parse_window, lambda v: f"{format_time(v[0])}:{format_time(v[1])}"),
    "int": (_parse_int, str),
    "file": (_parse_file, str),
    "netns": (_parse_netns, str),
    "ifname": (_parse_ifname, str),
}
