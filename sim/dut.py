"""Specifications of the simulated devices under test (DUT models of the C++ harness).

A DUT is written as ``model[:key=value,...]``::

    loopback                          a cable, 40 ns
    loopback:delay=0ns
    router:rate=400k,queue=16,latency=20us
    router:latency=10us,jitter=2us,seed=7
    loopback:delay=40ns,loss=0.01,dup=0.001,reorder=0.01,corrupt=0.001
    router:rate=400k,blackout=5ms:2ms
    switch                            a learning bridge: 2us, queue 256, table 8192, aging 300s
    switch:latency=5us,queue=64,table=1024,aging=10s,rate=1M

Impairments, accepted by every model (see sim/harness/dut_impair.h for the exact rules):
``loss``, ``dup``, ``reorder``, ``corrupt`` are probabilities 0..1 (at most 9 decimals) per
frame; ``blackout=START:LENGTH`` drops the frames the model puts out during
[START, START+LENGTH) of simulated time (counted from the first clock cycle of the
simulation; reset takes the first 128 ns); ``seed`` (0..4294967295, default 1) seeds every
random decision, so runs are reproducible. The router also takes ``jitter`` (a time): each
frame's latency is ``latency + U[0, jitter]`` and frames still leave in order; and
``collapse=RATE,recover=TIME`` (RFC 2544 26.5 system recovery): an overload that overflows
its queue makes it serve at ``collapse`` frames/s until ``recover`` after frames stop coming
faster than ``rate`` (exact rules in sim/harness/dut_router.h). ``reboot=TIME`` (any model;
RFC 2544 26.6 / RFC 6201): the device can be reset by the host through the simulation's DUT
control window (:mod:`wirespeed.sim.control`); a reset takes it down for TIME, losing what
it held (sim/harness/dut_reset.h).

The switch (``switch``, sim/harness/dut_switch.h for the exact rules) is a two-port Ethernet
learning bridge, store and forward: a frame with a bad FCS is dropped; the source address of
every good frame is learned against its ingress port (``table`` entries at most, then new
addresses are not learned; an entry ages out ``aging`` after the last frame from that address,
``aging=0s``: never; ``learning=0`` turns learning off); a frame to an address known on the
other port is forwarded, one to an address known on its ingress port is filtered (dropped),
unknown unicast, broadcast and multicast are flooded (with two ports: sent to the other port).
A forwarded frame joins the egress queue (``queue`` frames, tail drop) ``latency`` after its
last byte arrived and leaves at line rate; ``rate`` (frames/s, default: wire speed) limits the
forwarding rate. Its two directions share one MAC table.

``linux-router`` and ``linux-bridge`` (:mod:`.dut_linux`, docs/linux-dut.md) put the machine's
own Linux kernel between the ports, through two TAP devices in a namespace the simulation owns.

Profiles (:data:`PROFILES`) name boxes of the seed labs, e.g. ``bsdrp-306m`` (a forwarder
saturating at 400 kpps) or ``openbsd49-i386-em``; ``NAME:key=value`` overrides their
parameters.

Times take a unit (``ns``, ``us``, ``ms``, ``s``) and must be whole multiples of the 8 ns
clock; rates are frames per second, optionally with a ``k`` or ``M`` suffix. The same model
with the same parameters is placed in both directions (port 0 -> port 1 and back); the
switch's two directions are the two ports of one device and share its MAC table.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from wirespeed.gateware.config import CLK_HZ, NS_PER_CYCLE

from .dut_base import (
    _KINDS,
    _OPTIONAL,
    IMPAIR_LIMITS,
    IMPAIR_PARAMS,
    MAX_BLACKOUT_NS,
    MAX_SWITCH_AGING_NS,
    DutSpec,
    ImpairmentsMixin,
    _int_text,
    _limits,
    _ranged,
    _time_field_check,
    _time_text,
    format_time,
)
from .dut_linux import LINUX_MODELS
from .dut_params import param

__all__ = ["DutSpec", "LoopbackSpec", "RouterSpec", "SwitchSpec", "parse_dut", "MODELS", "PROFILES", "Profile",
           "profile_description", "format_time", "IMPAIR_PARAMS", "_KINDS", "_OPTIONAL"]


class LoopbackSpec(ImpairmentsMixin, DutSpec):
    """A cable: every byte arrives exactly ``delay_ns`` later; nothing is lost."""

    model: Literal["loopback"] = "loopback"
    delay_ns: int = param("loopback", "delay_ns").default

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "delay": ("delay_ns", "time", _time_text(param("loopback", "delay_ns"), "40ns, 2us")),
        **IMPAIR_PARAMS,
    }
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {"delay_ns": _limits(param("loopback", "delay_ns")), **IMPAIR_LIMITS}

    @field_validator("delay_ns")
    @classmethod
    def _check_delay(cls, v: int) -> int:
        return _time_field_check("delay", v, *cls.LIMITS["delay_ns"])

    def harness_args(self) -> list[str]:
        return ["--dut", "loopback", "--dut-param", f"delay_ns={self.delay_ns}",
                *self.impairment_args()]

    def describe(self) -> dict:
        return {"model": "loopback", "spec": str(self), "delay_ns": self.delay_ns,
                **self.impairment_describe()}


class RouterSpec(ImpairmentsMixin, DutSpec):
    """Store-and-forward device: input queue of ``queue`` frames, one server at ``rate``
    frames/s, then a fixed ``latency_ns``, then the output at line rate."""

    model: Literal["router"] = "router"
    rate: int = _ranged(param("router", "rate"))
    queue: int = _ranged(param("router", "queue"))
    latency_ns: int = param("router", "latency_ns").default
    jitter_ns: int = param("router", "jitter_ns").default
    collapse: int = _ranged(param("router", "collapse"))
    recover_ns: int = param("router", "recover_ns").default

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "rate": ("rate", "rate",
                 f"an integer number of frames/s 1..{CLK_HZ} (k and M suffixes allowed, e.g. 400k, 1.2M)"),
        "queue": ("queue", "int", _int_text(param("router", "queue"))),
        "latency": ("latency_ns", "time", _time_text(param("router", "latency_ns"), "10us")),
        "jitter": ("jitter_ns", "time", _time_text(param("router", "jitter_ns"), "2us")),
        "collapse": ("collapse", "rate", "a service rate in frames/s below rate, used after an overload "
                                          "(e.g. 20k); needs recover"),
        "recover": ("recover_ns", "time", _time_text(param("router", "recover_ns"), "2s", lo=NS_PER_CYCLE)),
        **IMPAIR_PARAMS,
    }
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {
        "rate": _limits(param("router", "rate")),
        "queue": _limits(param("router", "queue")),
        "latency_ns": _limits(param("router", "latency_ns")),
        "jitter_ns": _limits(param("router", "jitter_ns")),
        "collapse": _limits(param("router", "collapse"), True),
        "recover_ns": _limits(param("router", "recover_ns"), True),
        **IMPAIR_LIMITS,
    }

    @field_validator("latency_ns")
    @classmethod
    def _check_latency(cls, v: int) -> int:
        return _time_field_check("latency", v, *cls.LIMITS["latency_ns"])

    @field_validator("jitter_ns")
    @classmethod
    def _check_jitter(cls, v: int) -> int:
        return _time_field_check("jitter", v, *cls.LIMITS["jitter_ns"])

    @field_validator("recover_ns")
    @classmethod
    def _check_recover(cls, v: int) -> int:
        return _time_field_check("recover", v, 0, MAX_BLACKOUT_NS)

    @model_validator(mode="after")
    def _check_collapse(self):
        if self.collapse and self.collapse >= self.rate:
            raise ValueError(f"dut router: collapse must be below rate ({self.rate} frames/s), got {self.collapse}")
        if bool(self.collapse) != bool(self.recover_ns):
            raise ValueError("dut router: collapse and recover go together (e.g. collapse=20k,recover=2s)")
        return self

    def harness_args(self) -> list[str]:
        return [
            "--dut", "router",
            "--dut-param", f"rate={self.rate}",
            "--dut-param", f"queue={self.queue}",
            "--dut-param", f"latency_ns={self.latency_ns}",
            *(["--dut-param", f"jitter_ns={self.jitter_ns}"] if self.jitter_ns else []),
            *(["--dut-param", f"collapse={self.collapse}", "--dut-param", f"recover_ns={self.recover_ns}"]
              if self.collapse else []),
            *self.impairment_args(),
        ]

    def describe(self) -> dict:
        return {
            "model": "router",
            "spec": str(self),
            "rate_fps": self.rate,
            "queue_frames": self.queue,
            "latency_ns": self.latency_ns,
            "service_ns": 1e9 / self.rate,
            **({"jitter_ns": self.jitter_ns} if self.jitter_ns else {}),
            **({"collapse_fps": self.collapse, "recover_ns": self.recover_ns} if self.collapse else {}),
            **self.impairment_describe(),
        }


class SwitchSpec(ImpairmentsMixin, DutSpec):
    """Two-port Ethernet learning bridge, store and forward: ``latency_ns`` after a frame's
    last byte it joins the egress queue of ``queue`` frames; MAC table of ``table`` entries
    aging out after ``aging_ns`` (0: never), shared by both ports; ``rate`` frames/s limits
    forwarding (0: wire speed)."""

    model: Literal["switch"] = "switch"
    latency_ns: int = param("switch", "latency_ns").default
    queue: int = _ranged(param("switch", "queue"))
    table: int = _ranged(param("switch", "table"))
    aging_ns: int = param("switch", "aging_ns").default
    rate: int = _ranged(param("switch", "rate"))  # 0: wire speed
    learning: int = _ranged(param("switch", "learning"))

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "latency": ("latency_ns", "time", _time_text(param("switch", "latency_ns"), "2us")),
        "queue": ("queue", "int", _int_text(param("switch", "queue"))),
        "table": ("table", "int", _int_text(param("switch", "table"))),
        "aging": ("aging_ns", "time", f"a time 0s..{format_time(MAX_SWITCH_AGING_NS)}, multiple of "
                                      f"{NS_PER_CYCLE}ns, 0s: never (e.g. 300s)"),
        "rate": ("rate", "rate", f"an integer number of frames/s 1..{CLK_HZ} (k and M suffixes allowed, "
                                 "e.g. 400k, 1.2M)"),
        "learning": ("learning", "int", "0 or 1"),
        **IMPAIR_PARAMS,
    }
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {
        "latency_ns": _limits(param("switch", "latency_ns")),
        "queue": _limits(param("switch", "queue")),
        "table": _limits(param("switch", "table")),
        "aging_ns": _limits(param("switch", "aging_ns")),
        "rate": _limits(param("switch", "rate"), True),
        "learning": _limits(param("switch", "learning")),
        **IMPAIR_LIMITS,
    }
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"rate", "learning"})

    @field_validator("latency_ns")
    @classmethod
    def _check_latency(cls, v: int) -> int:
        return _time_field_check("latency", v, *cls.LIMITS["latency_ns"])

    @field_validator("aging_ns")
    @classmethod
    def _check_aging(cls, v: int) -> int:
        return _time_field_check("aging", v, *cls.LIMITS["aging_ns"])

    def harness_args(self) -> list[str]:
        return [
            "--dut", "switch",
            "--dut-param", f"latency_ns={self.latency_ns}",
            "--dut-param", f"queue={self.queue}",
            "--dut-param", f"table={self.table}",
            "--dut-param", f"aging_ns={self.aging_ns}",
            *(["--dut-param", f"rate={self.rate}"] if self.rate else []),
            *(["--dut-param", "learning=0"] if not self.learning else []),
            *self.impairment_args(),
        ]

    def describe(self) -> dict:
        return {
            "model": "switch",
            "spec": str(self),
            "latency_ns": self.latency_ns,
            "queue_frames": self.queue,
            "table_entries": self.table,
            "aging_ns": self.aging_ns,
            **({"rate_fps": self.rate, "service_ns": 1e9 / self.rate} if self.rate else {}),
            **({"learning": False} if not self.learning else {}),
            **self.impairment_describe(),
        }


MODELS: dict[str, type[DutSpec]] = {"loopback": LoopbackSpec, "router": RouterSpec, "switch": SwitchSpec,
                                    **LINUX_MODELS}

class Profile(BaseModel):
    """A named DUT that mimics a box of the seed labs (``../shared/seeds``) from its published
    figures: ``spec`` is the model it expands to, ``source`` where the figures come from and
    ``assumed`` what the lab did not publish and the profile had to choose."""

    model_config = ConfigDict(frozen=True)

    spec: str
    title: str
    source: str
    assumed: str


#: Seed-lab boxes. ``--dut NAME`` uses one as is; ``--dut NAME:key=value,...`` overrides or
#: adds parameters of its model (e.g. ``bsdrp-306m:loss=0.001,seed=2``).
PROFILES: dict[str, Profile] = {
    "bsdrp-306m": Profile(
        spec="router:rate=400k,queue=1024,latency=20us",
        title="BSDRP on an IBM eServer 306m, Intel 82546GB (em), default settings",
        source="bsdrp-forwarding-lab-ibm-306m-82546gb: 400.07 kpps forwarded (netmap pkt-gen at "
               "1.4 Mpps, 5 runs); hw.em.rxd 1024",
        assumed="latency 20 us"),
    "bsdrp-306m-tuned": Profile(
        spec="router:rate=410k,queue=4096,latency=20us",
        title="the same box with 4096 descriptors and rx_process_limit -1",
        source="bsdrp-forwarding-lab-ibm-306m-82546gb: 410 kpps; hw.em.rxd 4096",
        assumed="latency 20 us"),
    "bsdrp-306m-ipfw": Profile(
        spec="router:rate=320k,queue=1024,latency=25us",
        title="the same box with an ipfw firewall",
        source="bsdrp-forwarding-lab-ibm-306m-82546gb: 320 kpps with ipfw",
        assumed="latency 25 us"),
    "bsdrp-306m-pf": Profile(
        spec="router:rate=274k,queue=1024,latency=30us",
        title="the same box with pf",
        source="bsdrp-forwarding-lab-ibm-306m-82546gb: 274 kpps with pf under a 1.4 Mpps load (its 'router is "
               "not responsive at all' is about the console, not forwarding)",
        assumed="latency 30 us"),
    "openbsd49-i386-em": Profile(
        spec="router:rate=298k,queue=256,latency=50us",
        title="OpenBSD 4.9 i386 bsd.sp forwarding on em0 (SmartBits)",
        source="openbsd49-smartbits-throughput-latency: 298,247 frames/s at 128 B on em0, 'close to "
               "300k pps with any configuration'",
        assumed="queue 256, latency 50 us"),
    "openbsd49-amd64-em": Profile(
        spec="router:rate=347812,queue=256,latency=40us",
        title="OpenBSD 4.9 amd64 forwarding on em (SmartBits), its best small-frame figure",
        source="openbsd49-smartbits-throughput-latency: maximum 347,812 pps with the em NIC",
        assumed="queue 256, latency 40 us"),
    "freebsd-livelock": Profile(
        spec="router:rate=148k,queue=256,latency=100us,collapse=10k,recover=5s",
        title="an interrupt-driven FreeBSD firewall that live-locks under load (before polling(4))",
        source="freebsd-device-polling-gige: 'the machine going into live lockup during periods of high "
               "network activity'",
        assumed="every figure: 148 kpps (10 % of 64 B line rate), collapse to 10 kpps for 5 s"),
}


def _expand_profile(text: str) -> str:
    """``NAME[:overrides]`` of a profile -> the model text with the overrides applied."""
    name, colon, rest = text.partition(":")
    profile = PROFILES[name.strip()]
    model, _, params = profile.spec.partition(":")
    merged: dict[str, str] = dict(item.split("=", 1) for item in params.split(",")) if params else {}
    for item in (i.strip() for i in rest.split(",")) if colon and rest.strip() else ():
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"dut {name.strip()}: expected key=value, got {item!r}")
        merged[key.strip()] = raw.strip()
    return model + (":" + ",".join(f"{k}={v}" for k, v in merged.items()) if merged else "")


def profile_description(text: str | None) -> dict:
    """For results files: the profile ``text`` names (with what it was given as), else {}."""
    name = (text or "").strip().partition(":")[0].strip()
    if name not in PROFILES:
        return {}
    return {"profile": {"name": name, "given": text.strip(), **PROFILES[name].model_dump()}}


def parse_dut(text: str) -> DutSpec:
    """Parse ``model[:key=value,...]`` or a profile ``NAME[:key=value,...]``. Raises ValueError
    with one line naming the problem."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"dut: empty specification, expected one of: {', '.join(MODELS)} "
                         "(e.g. 'router:rate=400k,queue=256,latency=20us') or a profile: "
                         f"{', '.join(PROFILES)}")
    if text.strip().partition(":")[0].strip() in PROFILES:
        text = _expand_profile(text.strip())
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    cls = MODELS.get(name)
    if cls is None:
        raise ValueError(f"dut {name!r}: unknown model, known models: {', '.join(MODELS)}; "
                         f"profiles: {', '.join(PROFILES)}")
    values: dict[str, object] = {}
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
        value = _KINDS[kind][0](raw)
        lo, hi = cls.LIMITS.get(attr, (0, 0))
        if kind in ("file", "netns", "ifname"):
            bad = value is None
        elif kind == "window":
            bad = value is None or not all(lo <= t <= hi for t in value) or value[1] == 0
        else:
            bad = (value is None or not lo <= value <= hi
                   or (kind == "time" and value % NS_PER_CYCLE))
        if bad:
            raise ValueError(f"dut {name}: {key} must be {allowed_text}, got {raw!r}")
        values[attr] = value
    try:
        return cls(**values)
    except ValidationError as exc:           # rules across parameters: one line, like the rest
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ValueError(msg if msg.startswith(f"dut {name}") else f"dut {name}: {msg}") from None
