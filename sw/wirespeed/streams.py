"""Streams of test frames for the multi-stream generator: the model the user writes, the
compiler that turns one port's streams into the generator's tables, and a golden model of
the frames the generator sends.

The tables and their meaning are :mod:`wirespeed.gateware.streamdesc` (templates,
descriptors, modifier units, size table); this module follows that contract:

* :class:`SizeSpec`, :class:`ModifierSpec`, :class:`StreamSpec` and :class:`PortProgram`
  describe what to send (pydantic, frozen, validated);
* :meth:`PortProgram.compile` gives a :class:`CompiledPort`: per stream the template bytes
  and the descriptor fields, the size table and the modifier units' register values;
* :func:`expected_frames` lists the frames a port sends, in transmit order, each able to
  build its bytes with scapy from the stream's logical fields (not from the compiled tables);
* :func:`dissect` parses a frame and checks its IPv4 header and UDP checksums.

Frames are Ethernet II, optional 802.1Q tag, IPv4 (RFC 2544 Appendix C, addresses from
198.18.0.0/15) or IPv6 (RFC 5180, 2001:2::/48), UDP, zero fill and the 16-byte signature
(:func:`wirespeed.gateware.frame.signature`) just before the FCS. Sizes count the FCS.

Modifiers walk a field over ``count`` values (RFC 2544 section 12 and RFC 4814 style address
and port ranges): ``increment`` ``base, base + step, ...``, ``decrement``, or ``random``
``base + r * step`` with ``r`` drawn uniformly in ``[0, count)`` (``step`` a power of two).
The base is the stream's own field value; MACs and IPv6 addresses change in their low 32
bits only (no carry into the upper bits), ports wrap modulo 2**16 and VLAN ids modulo 4096.
A ``chain`` modifier advances only when the previous modifier of its stream wraps, so two
modifiers walk every combination (``count0 * count1`` frames).
"""

from __future__ import annotations

import heapq
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_address
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.frame import SIG_LEN, WIRE_OVERHEAD, signature

from . import imix
from .host.device import BENCHMARK_NET, BenchmarkRangeWarning, MacAddress, tester_ip, tester_mac

__all__ = [
    "SizeSpec", "ModifierSpec", "StreamSpec", "PortProgram", "CompiledStream", "CompiledPort",
    "ExpectedFrame", "expected_frames", "dissect", "tester_ipv6", "BENCHMARK_NET6",
    "MODIFIER_FIELDS", "CLK_HZ", "LINK_BPS", "error_text",
]

CLK_HZ = 125_000_000
LINK_BPS = 1_000_000_000
#: RFC 5180 section 5: the IPv6 benchmarking range.
BENCHMARK_NET6 = IPv6Network("2001:2::/48")
MIN_FRAME, MAX_FRAME = 64, sd.MAX_FRAME
ETH_HDR, VLAN_TAG, IPV4_HDR, IPV6_HDR, UDP_HDR, FCS = 14, 4, 20, 40, 8, 4
TPID, ETHERTYPE_IPV4, ETHERTYPE_IPV6, IP_PROTO_UDP = 0x8100, 0x0800, 0x86DD, 17
#: field -> bits the modifier walks (MACs and IPv6 addresses: the low 32 bits)
MODIFIER_FIELDS = {"src_mac": 32, "dst_mac": 32, "src_ip": 32, "dst_ip": 32,
                   "src_port": 16, "dst_port": 16, "vlan": 12}
_MOD_MODE = {"increment": sd.MOD_INCREMENT, "decrement": sd.MOD_DECREMENT, "random": sd.MOD_RANDOM}
_SIZE_MODE = {"fixed": sd.SIZE_FIXED, "increment": sd.SIZE_INCREMENT, "random": sd.SIZE_RANDOM,
              "sequence": sd.SIZE_SEQUENCE}
M32 = 0xFFFFFFFF


def tester_ipv6(port: int) -> IPv6Address:
    """Default IPv6 address of tester port ``port`` in RFC 5180's 2001:2::/48: one /64 per
    port (port 0: 2001:2::1, port 1: 2001:2:0:1::1)."""
    return IPv6Address((int(BENCHMARK_NET6.network_address) | (port << 64)) + 1)


def _fold(s: int) -> int:
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _words(data: bytes) -> int:
    """Sum of the big-endian 16-bit words of ``data`` (padded with a zero byte)."""
    if len(data) % 2:
        data += b"\0"
    return sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))


# Sizes -------------------------------------------------------------------------------------------


_SIZE_SYNTAX = "N, A-B or A-B/STEP (increment), rand:A-B, seq:N,N,..., imix:GENOME or imix:SIZE:WEIGHT,..."


class SizeSpec(BaseModel):
    """Frame sizes of a stream (bytes, FCS included, 64..9018): ``fixed`` ``a``;
    ``increment`` ``a, a + step, ...`` up to ``b``, then ``a`` again; ``random`` uniform in
    ``a..b``; ``sequence`` the repeating list ``sequence`` (an RFC 6985 IMIX, see
    :mod:`wirespeed.imix`)."""

    model_config = ConfigDict(frozen=True)

    mode: Literal["fixed", "increment", "random", "sequence"] = "fixed"
    a: int = MIN_FRAME
    b: int | None = None
    step: int = 1
    sequence: tuple[int, ...] = ()
    #: how the user wrote it (imix genome or weighted mix), for display
    label: str | None = None

    @model_validator(mode="after")
    def _check(self):
        for size in (self.a, self.b):
            if size is not None and not MIN_FRAME <= size <= MAX_FRAME:
                raise ValueError(f"{size} bytes is outside the tester's frame sizes {MIN_FRAME}..{MAX_FRAME} "
                                 "(FCS included)")
        if self.step < 1:
            raise ValueError(f"the size step must be >= 1, not {self.step}")
        if self.mode in ("increment", "random"):
            if self.b is None or self.b < self.a:
                raise ValueError(f"{self.mode} sizes need a <= b, got a={self.a} b={self.b}")
        if self.mode == "sequence":
            if not 1 <= len(self.sequence) <= sd.SIZE_TABLE:
                raise ValueError(f"a size sequence has 1..{sd.SIZE_TABLE} entries, not {len(self.sequence)}")
            for size in self.sequence:
                if not MIN_FRAME <= size <= MAX_FRAME:
                    raise ValueError(f"size {size} in the sequence is outside {MIN_FRAME}..{MAX_FRAME}")
        elif self.sequence:
            raise ValueError(f"a {self.mode} size has no sequence")
        return self

    @classmethod
    def fixed(cls, n: int) -> "SizeSpec":
        return cls(mode="fixed", a=n)

    @classmethod
    def increment(cls, a: int, b: int, step: int = 1) -> "SizeSpec":
        return cls(mode="increment", a=a, b=b, step=step)

    @classmethod
    def random(cls, a: int, b: int) -> "SizeSpec":
        return cls(mode="random", a=a, b=b)

    @classmethod
    def of_sequence(cls, sizes, label: str | None = None) -> "SizeSpec":
        sizes = tuple(int(s) for s in sizes)
        return cls(mode="sequence", a=min(sizes, default=MIN_FRAME), sequence=sizes, label=label)

    @classmethod
    def parse(cls, text: str) -> "SizeSpec":
        """``64``, ``64-1518`` / ``64-1518/64`` (increment), ``rand:64-1518``,
        ``seq:64,128,1518``, ``imix:aaaaaaag``, ``imix:aaz,z=1500``,
        ``imix:64:7,576:4,1518:1``. Raises ValueError (one line)."""
        raw = str(text).strip()
        low = raw.lower()
        try:
            if low.startswith("imix:"):
                return cls.of_sequence(imix.parse_mix(raw[5:]), label=raw)
        except ValueError as exc:
            raise ValueError(f"frame size {raw!r}: {error_text(exc)}") from None
        try:        # the syntax
            if low.startswith("seq:"):
                build, args = cls.of_sequence, ([int(v) for v in raw[4:].split(",")],)
            elif low.startswith("rand:"):
                a, b = raw[5:].split("-")
                build, args = cls.random, (int(a), int(b))
            elif "-" in raw:
                rng, slash, step = raw.partition("/")
                a, b = rng.split("-")
                build, args = cls.increment, (int(a), int(b), int(step) if slash else 1)
            else:
                build, args = cls.fixed, (int(raw),)
        except ValueError:
            raise ValueError(f"frame size {raw!r}: give {_SIZE_SYNTAX}") from None
        try:        # the values
            return build(*args)
        except ValueError as exc:
            raise ValueError(f"frame size {raw!r}: {error_text(exc)}") from None

    def __str__(self) -> str:
        if self.mode == "fixed":
            return str(self.a)
        if self.mode == "increment":
            return f"{self.a}-{self.b}/{self.step}"
        if self.mode == "random":
            return f"rand:{self.a}-{self.b}"
        return self.label or "seq:" + ",".join(map(str, self.sequence))

    @property
    def values(self) -> tuple[int, ...]:
        """Every size the stream cycles through (random: a and b)."""
        if self.mode == "fixed":
            return (self.a,)
        if self.mode == "increment":
            return tuple(range(self.a, self.b + 1, self.step))
        if self.mode == "random":
            return (self.a, self.b)
        return self.sequence

    @property
    def min(self) -> int:
        return min(self.values)

    @property
    def max(self) -> int:
        return max(self.values)

    @property
    def mean(self) -> Fraction:
        """Mean frame size (random: (a + b) / 2)."""
        v = self.values
        if self.mode == "random":
            return Fraction(self.a + self.b, 2)
        return Fraction(sum(v), len(v))


def error_text(exc: Exception) -> str:
    """The one-line message of a ValueError, or of the first error of a pydantic
    ValidationError (which is a ValueError too), led by the field it concerns."""
    if isinstance(exc, ValidationError) and exc.errors():
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {msg}" if where else msg
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# Modifiers ---------------------------------------------------------------------------------------


class ModifierSpec(BaseModel):
    """One field walk of a stream (see the module doc)."""

    model_config = ConfigDict(frozen=True)

    field: Literal["src_mac", "dst_mac", "src_ip", "dst_ip", "src_port", "dst_port", "vlan"]
    mode: Literal["increment", "decrement", "random"] = "increment"
    count: int = Field(ge=1, le=M32, description="values before wrapping (random: values drawn from)")
    step: int = Field(1, ge=1, le=M32)
    chain: bool = Field(False, description="advance only when the previous modifier of the stream wraps")

    @model_validator(mode="after")
    def _check(self):
        bits = MODIFIER_FIELDS[self.field]
        if self.step >= 1 << bits:
            raise ValueError(f"{self.field} modifier: step {self.step} does not fit the field's "
                             f"{bits} bits (at most {(1 << bits) - 1})")
        if self.mode == "random" and self.step & (self.step - 1):
            raise ValueError(f"{self.field} modifier: a random modifier's step must be a power of "
                             f"two (1, 2, 4, ...), not {self.step}")
        return self


# Streams -----------------------------------------------------------------------------------------


def _ip_version(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, (IPv4Address, IPv6Address)):
        return value.version
    try:
        return ip_address(str(value)).version
    except ValueError:
        return None     # the field validator names the bad address


class StreamSpec(BaseModel):
    """One stream of a port: headers, sizes, its share of the port's rate and modifiers.

    Addresses default to the tester's (RFC 2544 Appendix C: port 0 198.18.0.1 -> port 1
    198.19.0.1; IPv6, RFC 5180: 2001:2::1 -> 2001:2:0:1::1); the IP version follows the
    addresses given, else ``ip_version``. ``ttl`` is the IPv6 hop limit for IPv6. The UDP
    checksum is always on for IPv6 (RFC 8200). Rate share: ``fraction`` of the port's rate, or
    a ``weight`` (default 1) among the streams without a fraction, which share what the
    fractions leave.
    """

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    stream_id: int | None = Field(None, ge=0, le=0xFFFF, description="default: port * 16 + index")
    dst_mac: MacAddress = tester_mac(1)
    src_mac: MacAddress = tester_mac(0)
    vlan: int | None = Field(None, ge=0, le=4095, description="802.1Q VLAN id; None: untagged")
    pcp: int = Field(0, ge=0, le=7, description="802.1Q priority")
    ip_version: Literal[4, 6] = 4
    src_ip: IPv4Address | IPv6Address = tester_ip(0)
    dst_ip: IPv4Address | IPv6Address = tester_ip(1)
    ttl: int = Field(10, ge=1, le=255, description="IPv4 TTL or IPv6 hop limit")
    dscp: int = Field(0, ge=0, le=63)
    src_port: int = Field(0xC020, ge=0, le=0xFFFF)
    dst_port: int = Field(7, ge=0, le=0xFFFF)
    udp_checksum: bool = False
    size: SizeSpec = SizeSpec()
    weight: float | None = Field(None, gt=0)
    fraction: float | None = Field(None, gt=0, le=1)
    modifiers: tuple[ModifierSpec, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("size"), (str, int)):
            data["size"] = SizeSpec.parse(str(data["size"]))
        versions = {v for v in (_ip_version(data.get("src_ip")), _ip_version(data.get("dst_ip"))) if v}
        if "ip_version" not in data and len(versions) == 1:
            data["ip_version"] = versions.pop()
        if data.get("ip_version") == 6:
            data.setdefault("src_ip", tester_ipv6(0))
            data.setdefault("dst_ip", tester_ipv6(1))
            data["udp_checksum"] = True
        return data

    @model_validator(mode="after")
    def _check(self):
        for what, ip in (("src_ip", self.src_ip), ("dst_ip", self.dst_ip)):
            if ip.version != self.ip_version:
                raise ValueError(f"{what} {ip} is not an IPv{self.ip_version} address")
        if self.pcp and self.vlan is None:
            raise ValueError("pcp needs a VLAN tag: give vlan too")
        if self.weight is not None and self.fraction is not None:
            raise ValueError("give a stream either a weight or a fraction of the port's rate, not both")
        seen = set()
        for i, mod in enumerate(self.modifiers):
            if mod.field in seen:
                raise ValueError(f"two modifiers on {mod.field}: one per field and stream")
            seen.add(mod.field)
            if mod.field == "vlan" and self.vlan is None:
                raise ValueError("a vlan modifier needs a VLAN tag: give vlan too")
            if mod.chain and i == 0:
                raise ValueError(f"the first modifier ({mod.field}) cannot chain: there is no "
                                 "previous modifier in the stream")
        self._warn_ranges()
        return self

    def _warn_ranges(self) -> None:
        net = BENCHMARK_NET if self.ip_version == 4 else BENCHMARK_NET6
        rfc = "RFC 6815" if self.ip_version == 4 else "RFC 5180"
        mods = {m.field: m for m in self.modifiers}
        for what in ("src_ip", "dst_ip"):
            ip = getattr(self, what)
            addrs = [ip]
            mod = mods.get(what)
            if mod:
                span = (mod.count - 1) * mod.step
                low = int(ip) & ~M32
                last = (int(ip) + (-span if mod.mode == "decrement" else span)) & M32
                addrs.append(type(ip)(low | last))
            for addr in addrs:
                if addr not in net:
                    warnings.warn(f"{addr} is outside the benchmarking range {net}: {rfc} keeps these "
                                  "tests on isolated test networks", BenchmarkRangeWarning, stacklevel=3)
                    break

    # layout

    @property
    def l3(self) -> int:
        """Offset of the IP header."""
        return ETH_HDR + (VLAN_TAG if self.vlan is not None else 0)

    @property
    def l4(self) -> int:
        """Offset of the UDP header."""
        return self.l3 + (IPV4_HDR if self.ip_version == 4 else IPV6_HDR)

    @property
    def hdr_len(self) -> int:
        return self.l4 + UDP_HDR

    @property
    def min_frame(self) -> int:
        """Smallest frame of this stream: headers, signature and FCS, and at least 64."""
        return max(MIN_FRAME, self.hdr_len + SIG_LEN + FCS)

    def field_value(self, name: str) -> int:
        """A header field as an integer (MACs and addresses whole)."""
        value = getattr(self, name)
        if name.endswith("_mac"):
            return int(value.replace(":", ""), 16)
        return int(value)


# The compiled port -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledStream:
    index: int
    stream_id: int
    #: the first ``hdr_len`` frame bytes, zero under modifier masks and in length and checksum fields
    template: bytes
    #: values of :data:`streamdesc.DESC_FIELDS`
    descriptor: dict[str, int]
    #: frames/s that the programmed period gives
    fps: float
    #: modifier units of this stream, in the order of its modifiers
    units: tuple[int, ...]

    @property
    def packed(self) -> int:
        return sd.pack_descriptor(**self.descriptor)


@dataclass(frozen=True)
class CompiledPort:
    """Everything a port's generator tables hold for a :class:`PortProgram`."""

    port: int
    seed: int
    streams: tuple[CompiledStream, ...]
    #: size table entry -> size (sequence streams only)
    size_table: dict[int, int]
    #: :data:`streamdesc.N_MODIFIERS` dicts of :data:`streamdesc.MOD_FIELDS` values (unused: all 0)
    modifiers: tuple[dict[str, int], ...]
    program: "PortProgram" = field(repr=False)
    clk_hz: int = CLK_HZ

    def descriptors(self) -> list[int]:
        """The :data:`streamdesc.N_STREAMS` packed descriptor entries (unused: 0, disabled)."""
        out = [0] * sd.N_STREAMS
        for s in self.streams:
            out[s.index] = s.packed
        return out

    def template_entries(self) -> dict[int, int]:
        """``pN.gen.tmpl`` entry -> byte, every byte of every used stream's 128."""
        out = {}
        for s in self.streams:
            padded = s.template.ljust(sd.TEMPLATE_BYTES, b"\0")
            out.update({s.index * sd.TEMPLATE_BYTES + i: b for i, b in enumerate(padded)})
        return out

    @property
    def total_fps(self) -> float:
        return sum(s.fps for s in self.streams)

    @property
    def line_fraction(self) -> float:
        """Share of the line's bit time the port's frames take, at the streams' mean sizes."""
        return sum(s.fps * (float(spec.size.mean) + WIRE_OVERHEAD) * 8
                   for s, spec in zip(self.streams, self.program.streams)) / LINK_BPS


class PortProgram(BaseModel):
    """The streams of one tester port (at most :data:`streamdesc.N_STREAMS`), the port's total
    rate (``rate_fps``, or ``rate_pct`` of line rate for the streams' mean frame size, default
    100 %) and the seed of its random generators."""

    model_config = ConfigDict(frozen=True)

    port: int = Field(0, ge=0)
    streams: tuple[StreamSpec, ...] = Field(min_length=1, max_length=sd.N_STREAMS)
    rate_fps: float | None = Field(None, gt=0)
    rate_pct: float | None = Field(None, gt=0, le=100)
    seed: int = Field(1, ge=0, le=M32)
    clk_hz: int = Field(CLK_HZ, gt=0)

    @model_validator(mode="after")
    def _check(self):
        if self.rate_fps is not None and self.rate_pct is not None:
            raise ValueError("give the port's rate as rate_fps or rate_pct, not both")
        self.compile()      # every other error, early
        return self

    def _label(self, i: int) -> str:
        name = self.streams[i].name
        return f"stream {i}" + (f" ({name})" if name else "")

    def shares(self) -> list[Fraction]:
        """Each stream's share of the port's frames/s."""
        fracs = [Fraction(s.fraction) if s.fraction is not None else None for s in self.streams]
        taken = sum((f for f in fracs if f is not None), Fraction(0))
        if taken > 1 + Fraction(1, 10**9):
            raise ValueError(f"port {self.port}: the streams' fractions add up to {float(taken):g}, more than 1")
        weighted = [i for i, f in enumerate(fracs) if f is None]
        left = max(Fraction(0), 1 - taken)
        if weighted and left == 0:
            raise ValueError(f"port {self.port}: the fractions take all of the rate, nothing is left for "
                             + ", ".join(self._label(i) for i in weighted))
        weights = {i: Fraction(self.streams[i].weight if self.streams[i].weight is not None else 1)
                   for i in weighted}
        total = sum(weights.values(), Fraction(0))
        return [fracs[i] if fracs[i] is not None else left * weights[i] / total
                for i in range(len(self.streams))]

    def stream_rates(self) -> list[Fraction]:
        """Frames/s of every stream."""
        shares = self.shares()
        if self.rate_fps is not None:
            port_fps = Fraction(self.rate_fps)
        else:
            pct = Fraction(self.rate_pct if self.rate_pct is not None else 100)
            mean = sum((sh * s.size.mean for sh, s in zip(shares, self.streams)), Fraction(0)) / sum(shares)
            port_fps = pct / 100 * Fraction(LINK_BPS, 8) / (mean + WIRE_OVERHEAD)
        return [sh * port_fps for sh in shares]

    def compile(self) -> CompiledPort:
        """The generator's tables for this port; ValueError (one line) when they cannot hold
        the program or the rate is above line rate."""
        for i, s in enumerate(self.streams):
            if s.hdr_len > sd.TEMPLATE_BYTES:
                raise ValueError(f"port {self.port} {self._label(i)}: {s.hdr_len} header bytes do not fit "
                                 f"the {sd.TEMPLATE_BYTES}-byte template")
            if s.size.min < s.min_frame:
                raise ValueError(f"port {self.port} {self._label(i)}: frames of {s.size.min} bytes are "
                                 f"shorter than its minimum of {s.min_frame} ({s.hdr_len} header bytes, "
                                 f"{SIG_LEN}-byte signature, FCS)")
        ids = [s.stream_id if s.stream_id is not None else (self.port * sd.N_STREAMS + i) & 0xFFFF
               for i, s in enumerate(self.streams)]
        if len(set(ids)) != len(ids):
            raise ValueError(f"port {self.port}: stream ids {ids} are not all different")

        rates = self.stream_rates()
        wire = sum((r * (s.size.mean + WIRE_OVERHEAD) * 8 for r, s in zip(rates, self.streams)), Fraction(0))
        if wire > LINK_BPS * (1 + Fraction(1, 10**9)):
            raise ValueError(f"port {self.port}: the streams need {float(wire) / 1e6:.1f} Mb/s on the wire "
                             f"({float(wire) / LINK_BPS * 100:.2f} % of line rate) at their mean frame "
                             "sizes: lower the rate")

        # modifier units, in stream order
        units: list[dict[str, int]] = []
        stream_units: list[tuple[int, ...]] = []
        needed = sum(len(s.modifiers) for s in self.streams)
        if needed > sd.N_MODIFIERS:
            raise ValueError(f"port {self.port}: the streams have {needed} modifiers, the generator has "
                             f"{sd.N_MODIFIERS} modifier units per port")
        for i, s in enumerate(self.streams):
            mine = []
            for mod in s.modifiers:
                mine.append(len(units))
                units.append(_modifier_unit(s, i, mod))
            stream_units.append(tuple(mine))
        modifiers = tuple(units + [{name: 0 for name, _, _ in sd.MOD_FIELDS}
                                   for _ in range(sd.N_MODIFIERS - len(units))])

        # size table regions, in stream order
        size_table: dict[int, int] = {}
        regions = {}
        for i, s in enumerate(self.streams):
            if s.size.mode == "sequence":
                base = len(size_table)
                if base + len(s.size.sequence) > sd.SIZE_TABLE:
                    used = sum(len(t.size.sequence) for t in self.streams if t.size.mode == "sequence")
                    raise ValueError(f"port {self.port}: the size sequences have {used} entries in all, "
                                     f"the size table holds {sd.SIZE_TABLE} ({self._label(i)} does not fit)")
                regions[i] = base
                size_table.update({base + k: size for k, size in enumerate(s.size.sequence)})

        streams = []
        for i, (s, rate) in enumerate(zip(self.streams, rates)):
            # nearest: within 2**-33 cycles per frame, and a rate given as a float at exactly
            # line rate lands on the line-rate period whichever way the float rounded
            period = round(Fraction(self.clk_hz) * 2**32 / rate)
            if not 0 < period < 1 << 64:
                raise ValueError(f"port {self.port} {self._label(i)}: {float(rate):g} frames/s gives a "
                                 "period outside the generator's 64-bit Q32.32 range")
            template = _template(s, [units[j] for j in stream_units[i]])
            desc = _descriptor(s, template, ids[i], int(period), regions.get(i, 0))
            streams.append(CompiledStream(index=i, stream_id=ids[i], template=template, descriptor=desc,
                                          fps=self.clk_hz * 2**32 / int(period), units=stream_units[i]))
        return CompiledPort(port=self.port, seed=self.seed, streams=tuple(streams), size_table=size_table,
                            modifiers=modifiers, program=self, clk_hz=self.clk_hz)


def _field_place(s: StreamSpec, name: str) -> tuple[int, int, int, int]:
    """(offset, mask, shift, csum bits) of a modifier on field ``name`` of stream ``s``: the
    unit writes ``value << shift`` under ``mask`` into bytes offset..offset+3."""
    v4 = s.ip_version == 4
    ip_csum = sd.CSUM_IPV4 | sd.CSUM_UDP if v4 else sd.CSUM_UDP
    return {
        "dst_mac": (2, M32, 0, 0),
        "src_mac": (8, M32, 0, 0),
        "vlan": (ETH_HDR, 0x0FFF0000, 16, 0),
        "src_ip": (s.l3 + (12 if v4 else 20), M32, 0, ip_csum),
        "dst_ip": (s.l3 + (16 if v4 else 36), M32, 0, ip_csum),
        "src_port": (s.l4, 0xFFFF0000, 16, sd.CSUM_UDP),
        "dst_port": (s.l4 + 2, 0xFFFF0000, 16, sd.CSUM_UDP),
    }[name]


def _modifier_unit(s: StreamSpec, index: int, mod: ModifierSpec) -> dict[str, int]:
    offset, mask, shift, csum = _field_place(s, mod.field)
    bits = MODIFIER_FIELDS[mod.field]
    base = s.vlan if mod.field == "vlan" else s.field_value(mod.field) & ((1 << bits) - 1)
    return {"mode": _MOD_MODE[mod.mode], "stream": index, "chain": int(mod.chain), "offset": offset,
            "mask": mask, "base": (base << shift) & M32, "step": (mod.step << shift) & M32,
            "count": mod.count, "csum": csum}


def _template(s: StreamSpec, units: list[dict[str, int]]) -> bytes:
    """Header bytes with zero lengths and checksums, and zero under the modifiers' masks."""
    out = bytearray(bytes.fromhex(s.dst_mac.replace(":", "")) + bytes.fromhex(s.src_mac.replace(":", "")))
    ethertype = ETHERTYPE_IPV4 if s.ip_version == 4 else ETHERTYPE_IPV6
    if s.vlan is not None:
        out += TPID.to_bytes(2, "big") + ((s.pcp << 13) | s.vlan).to_bytes(2, "big")
    out += ethertype.to_bytes(2, "big")
    if s.ip_version == 4:
        out += bytes([0x45, s.dscp << 2, 0, 0, 0, 0, 0, 0, s.ttl, IP_PROTO_UDP, 0, 0])
        out += s.src_ip.packed + s.dst_ip.packed
    else:
        out += ((6 << 28) | (s.dscp << 22)).to_bytes(4, "big") + bytes([0, 0, IP_PROTO_UDP, s.ttl])
        out += s.src_ip.packed + s.dst_ip.packed
    out += s.src_port.to_bytes(2, "big") + s.dst_port.to_bytes(2, "big") + bytes(4)
    assert len(out) == s.hdr_len
    for u in units:
        off = u["offset"]
        assert off % 2 == 0 and off + 4 <= len(out)
        word = int.from_bytes(out[off:off + 4], "big") & ~u["mask"] & M32
        out[off:off + 4] = word.to_bytes(4, "big")
    return bytes(out)


def _descriptor(s: StreamSpec, t: bytes, stream_id: int, period: int, table_base: int) -> dict[str, int]:
    size = s.size
    d = {"enable": 1, "size_mode": _SIZE_MODE[size.mode], "hdr_len": s.hdr_len, "stream_id": stream_id,
         "size_a": size.min if size.mode == "sequence" else size.a,
         "size_b": size.max if size.mode in ("sequence", "fixed") else size.b,
         "size_step": size.step if size.mode == "increment" else 0,
         "size_table_base": table_base if size.mode == "sequence" else 0,
         "size_table_len": len(size.sequence) if size.mode == "sequence" else 0,
         "period": period}
    l3, l4 = s.l3, s.l4
    if s.ip_version == 4:
        d |= {"len1_en": 1, "len1_off": l3 + 2, "len1_adj": l3 + FCS,
              "ipcsum_en": 1, "ipcsum_off": l3 + 10, "ipcsum_base": _fold(_words(t[l3:l4]))}
        addrs = t[l3 + 12:l3 + 20]
    else:
        d |= {"len1_en": 1, "len1_off": l3 + 4, "len1_adj": l3 + IPV6_HDR + FCS}
        addrs = t[l3 + 8:l3 + 40]
    d |= {"len2_en": 1, "len2_off": l4 + 4, "len2_adj": l4 + FCS}
    if s.udp_checksum:
        d |= {"udpcsum_en": 1, "udpcsum_off": l4 + 6,
              "udpcsum_base": _fold(_words(addrs) + IP_PROTO_UDP + _words(t[l4:l4 + UDP_HDR]))}
    return d


# The golden model --------------------------------------------------------------------------------


def _mac_text(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


@dataclass
class ExpectedFrame:
    """One frame of the port, in transmit order: ``index`` in the port, ``stream`` (index in
    the program), ``stream_id``, ``seq`` (the stream's frame number k), ``length`` (FCS
    included), ``due`` (Q32.32 clock cycles after START) and the header field values after
    the modifiers (``fields``: src_mac, dst_mac (ints), src_ip, dst_ip (addresses), src_port,
    dst_port, vlan)."""

    index: int
    stream: int
    stream_id: int
    seq: int
    length: int
    due: int
    fields: dict
    spec: StreamSpec = field(repr=False)

    def build(self, ts: int = 0) -> bytes:
        """The frame without FCS (``length - 4`` bytes), made by scapy from the logical fields:
        scapy computes the lengths and the IPv4 and UDP checksums."""
        from scapy.layers.inet import IP, UDP
        from scapy.layers.inet6 import IPv6
        from scapy.layers.l2 import Dot1Q, Ether
        from scapy.packet import Raw

        s, f = self.spec, self.fields
        pkt = Ether(dst=_mac_text(f["dst_mac"]), src=_mac_text(f["src_mac"]))
        if s.vlan is not None:
            pkt = pkt / Dot1Q(prio=s.pcp, dei=0, vlan=f["vlan"])
        if s.ip_version == 4:
            pkt = pkt / IP(src=str(f["src_ip"]), dst=str(f["dst_ip"]), ttl=s.ttl, tos=s.dscp << 2,
                           id=0, flags=0, frag=0, proto=IP_PROTO_UDP)
        else:
            pkt = pkt / IPv6(src=str(f["src_ip"]), dst=str(f["dst_ip"]), hlim=s.ttl, tc=s.dscp << 2,
                             fl=0, nh=IP_PROTO_UDP)
        udp = UDP(sport=f["src_port"], dport=f["dst_port"])
        if not s.udp_checksum:
            udp.chksum = 0
        fill = self.length - FCS - s.hdr_len - SIG_LEN
        pkt = pkt / udp / Raw(bytes(fill) + signature(self.stream_id, self.seq, ts))
        data = bytes(pkt)
        assert len(data) == self.length - FCS, (len(data), self.length)
        return data


class _Walk:
    """A modifier's logical walk over its field (see the module doc and streamdesc)."""

    def __init__(self, mod: ModifierSpec, base: int, seed: int):
        self.mod, self.bits = mod, MODIFIER_FIELDS[mod.field]
        self.base, self.idx, self.r, self.state = base, 0, 0, seed

    def value(self) -> int:
        m = self.mod
        if m.mode == "random":
            offset = self.r * m.step
        else:
            offset = (self.idx % m.count) * m.step * (-1 if m.mode == "decrement" else 1)
        return (self.base + offset) % (1 << self.bits)

    def advance(self) -> bool:
        """Step to the next value; True when the walk wrapped."""
        if self.mod.mode == "random":
            self.r, self.state = sd.draw(self.state, self.mod.count)
            return True
        self.idx += 1
        return self.idx % self.mod.count == 0


def expected_frames(program: "CompiledPort | PortProgram", *, count: int | None = None,
                    duration_cycles: int | None = None, phase_at: int = 0,
                    phase2: int = 0) -> Iterator[ExpectedFrame]:
    """The frames the port sends after CLEAR and START, in transmit order: the merge of the
    streams' due times ``k * period`` (ties to the lower stream). ``count``: the first
    ``count`` frames of the port (``pN.gen.mode`` 1); ``duration_cycles``: the frames due
    before that many cycles (mode 0); neither: without end. ``phase_at`` (cycles, 0: off) and
    ``phase2`` (a stream mask) are ``pN.gen.phase_at`` / ``pN.gen.phase2``: a stream not in
    phase2 sends frame k while ``k * period < phase_at``; one in it has frame k due at
    ``phase_at + k * period``."""
    compiled = program if isinstance(program, CompiledPort) else program.compile()
    specs = compiled.program.streams
    size_rng = sd.seed_for(compiled.seed, sd.N_MODIFIERS)
    walks = []
    for cs, spec in zip(compiled.streams, specs):
        mine = []
        for mod, unit in zip(spec.modifiers, cs.units):
            full = spec.vlan if mod.field == "vlan" else spec.field_value(mod.field)
            mine.append(_Walk(mod, full & ((1 << MODIFIER_FIELDS[mod.field]) - 1),
                              sd.seed_for(compiled.seed, unit)))
        walks.append(mine)
    periods = [cs.descriptor["period"] for cs in compiled.streams]
    limit = None if duration_cycles is None else duration_cycles << 32

    def allowed(i: int, due: int) -> bool:
        if limit is not None and due >= limit:
            return False
        return not phase_at or phase2 >> i & 1 or due < phase_at << 32

    starts = [(phase_at << 32) if phase_at and phase2 >> i & 1 else 0 for i in range(len(specs))]
    heap = [(starts[i], i, 0) for i in range(len(specs)) if allowed(i, starts[i])]
    heapq.heapify(heap)
    n = 0
    while heap and (count is None or n < count):
        due, i, k = heapq.heappop(heap)
        nxt = due + periods[i]
        if allowed(i, nxt):
            heapq.heappush(heap, (nxt, i, k + 1))
        spec = specs[i]
        size = spec.size
        if size.mode == "fixed":
            length = size.a
        elif size.mode == "increment":
            length = size.values[k % len(size.values)]
        elif size.mode == "random":
            r, size_rng = sd.draw(size_rng, size.b - size.a + 1)
            length = size.a + r
        else:
            length = size.sequence[k % len(size.sequence)]
        fields = {name: spec.field_value(name) for name in ("src_mac", "dst_mac", "src_port", "dst_port")}
        fields |= {"src_ip": spec.src_ip, "dst_ip": spec.dst_ip, "vlan": spec.vlan}
        values = [w.value() for w in walks[i]]
        for w, v in zip(walks[i], values):
            name = w.mod.field
            if name == "vlan":
                fields["vlan"] = v
            elif name.endswith("_port"):
                fields[name] = v
            elif name.endswith("_mac"):
                fields[name] = (fields[name] & ~M32) | v
            else:
                ip = fields[name]
                fields[name] = type(ip)((int(ip) & ~M32) | v)
        wrapped = False
        for w in walks[i]:
            wrapped = w.advance() if (not w.mod.chain or wrapped) else False
        yield ExpectedFrame(index=n, stream=i, stream_id=compiled.streams[i].stream_id, seq=k,
                            length=length, due=due, fields=fields, spec=spec)
        n += 1


def dissect(frame: bytes):
    """``(packet, ok)``: the frame (without FCS) parsed by scapy, and whether its IPv4 header
    checksum and UDP checksum (when not 0 over IPv4) are right, recomputed by scapy over the
    frame's own bytes."""
    from scapy.layers.inet import IP, UDP, in4_chksum
    from scapy.layers.inet6 import IPv6, in6_chksum
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.utils import checksum

    pkt = Ether(frame)
    ok = True
    if IP in pkt:
        ip = pkt[IP]
        start = ETH_HDR + (VLAN_TAG if Dot1Q in pkt else 0)
        header = bytearray(frame[start:start + ip.ihl * 4])
        header[10:12] = b"\0\0"
        ok &= checksum(bytes(header)) == ip.chksum
        if UDP in pkt and pkt[UDP].chksum != 0:
            seg = bytearray(frame[start + ip.ihl * 4:start + ip.len])
            seg[6:8] = b"\0\0"
            ck = in4_chksum(IP_PROTO_UDP, ip, bytes(seg)) or 0xFFFF
            ok &= ck == pkt[UDP].chksum
    elif IPv6 in pkt and UDP in pkt:
        ip6 = pkt[IPv6]
        start = ETH_HDR + (VLAN_TAG if Dot1Q in pkt else 0) + IPV6_HDR
        seg = bytearray(frame[start:start + ip6.plen])
        seg[6:8] = b"\0\0"
        ck = in6_chksum(IP_PROTO_UDP, ip6, bytes(seg)) or 0xFFFF
        ok &= ck == pkt[UDP].chksum
    return pkt, bool(ok)
