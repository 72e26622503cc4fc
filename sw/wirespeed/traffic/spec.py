"""What to send: the model a user writes of a port's streams (pydantic, frozen, validated).

* :class:`SizeSpec`: a stream's frame sizes, FCS included;
* :class:`ModifierSpec`: a field walk (RFC 2544 section 12 and RFC 4814 style address and port
  ranges): ``increment`` ``base, base + step, ...``, ``decrement``, or ``random``
  ``base + r * step`` with ``r`` drawn uniformly in ``[0, count)`` (``step`` a power of two).
  The base is the stream's own field value; MACs and IPv6 addresses change in their low 32 bits
  only (no carry into the upper bits), ports wrap modulo 2**16 and VLAN ids modulo 4096. A
  ``chain`` modifier advances only when the previous modifier of its stream wraps, so two
  modifiers walk every combination (``count0 * count1`` frames);
* :class:`StreamSpec`: one stream's headers, sizes, modifiers and share of its port's rate;
* :class:`Flow`: a stream from one tester port to another, as a test sends it
  (:func:`flow_stream` makes the usual one).

Frames are Ethernet II, optional 802.1Q tag, IPv4 (RFC 2544 Appendix C, addresses from
198.18.0.0/15) or IPv6 (RFC 5180, 2001:2::/48), UDP, zero fill and the 16-byte signature
(:func:`wirespeed.gateware.frame.signature`) just before the FCS.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from fractions import Fraction
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.frame import SIG_LEN

from .. import imix
from .. import sizes as size_points
from .addressing import (
    BENCHMARK_NET,
    BENCHMARK_NET6,
    BenchmarkRangeWarning,
    MacAddress,
    PortAddress,
    tester_ip,
    tester_ipv6,
    tester_mac,
)

__all__ = ["SizeSpec", "ModifierSpec", "StreamSpec", "Flow", "flow_stream", "default_stream_id", "error_text",
           "MODIFIER_FIELDS", "MIN_FRAME", "MAX_FRAME", "IpVersion"]

MIN_FRAME, MAX_FRAME = 64, sd.MAX_FRAME
ETH_HDR, VLAN_TAG, IPV4_HDR, IPV6_HDR, UDP_HDR, FCS = 14, 4, 20, 40, 8, 4
TPID, ETHERTYPE_IPV4, ETHERTYPE_IPV6, IP_PROTO_UDP = 0x8100, 0x0800, 0x86DD, 17
#: field -> bits the modifier walks (MACs and IPv6 addresses: the low 32 bits)
MODIFIER_FIELDS = {"src_mac": 32, "dst_mac": 32, "src_ip": 32, "dst_ip": 32,
                   "src_port": 16, "dst_port": 16, "vlan": 12}
M32 = 0xFFFFFFFF
#: the IP versions a test frame can carry
IpVersion = Literal[4, 6]


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
        build: Callable[..., SizeSpec]
        args: tuple[object, ...]
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
    def top(self) -> int:
        """``b`` of an increment or a random size (``a`` of the others, which have none)."""
        return self.a if self.b is None else self.b

    @property
    def values(self) -> tuple[int, ...]:
        """Every size the stream cycles through (random: a and b)."""
        if self.mode == "fixed":
            return (self.a,)
        if self.mode == "increment":
            return tuple(range(self.a, self.top + 1, self.step))
        if self.mode == "random":
            return (self.a, self.top)
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
            return Fraction(self.a + self.top, 2)
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
    ip_version: IpVersion = 4
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

    # the size point (wirespeed.sizes): what tests and results call a frame size

    @property
    def point(self) -> size_points.SizePoint:
        """The frame size, or the mix's label, of a fixed-size or mix stream."""
        if self.size.mode == "fixed":
            return self.size.a
        if self.size.mode == "sequence" and self.size.label is not None:
            return self.size.label
        raise ValueError(f"a {self.size.mode} size ({self.size}) is no RFC 2544 frame size")

    @property
    def sizes(self) -> tuple[int, ...]:
        """The repeating sequence of frame sizes sent (a fixed size: one)."""
        return self.size.sequence if self.size.mode == "sequence" else (self.size.a,)

    @property
    def mean_len(self) -> Fraction:
        return Fraction(sum(self.sizes), len(self.sizes))


class Flow(BaseModel):
    """Test frames sent by one tester port and counted by another."""

    model_config = ConfigDict(frozen=True)

    tx_port: int = Field(ge=0)
    rx_port: int = Field(ge=0)
    spec: StreamSpec

    @property
    def stream_id(self) -> int:
        """The stream id its frames carry: the spec's, else that of the first stream of
        ``tx_port``'s program (a flow is sent as a one-stream program)."""
        return self.spec.stream_id if self.spec.stream_id is not None else default_stream_id(self.tx_port, 0)


def default_stream_id(port: int, index: int) -> int:
    """The stream id of stream ``index`` of port ``port``'s program when its spec gives none."""
    return (port * sd.N_STREAMS + index) & 0xFFFF


def flow_stream(tx_port: int, rx_port: int, point: size_points.SizePoint,
                addresses: Mapping[int, PortAddress] | None = None, *, sources: int = 1,
                destinations: int = 1, ip_version: IpVersion = 4) -> StreamSpec:
    """The RFC 2544 test stream from tester port ``tx_port`` to ``rx_port`` (Appendix C UDP,
    TTL 10), with the addresses of both (``addresses[port]``, else the defaults), the sending
    port's number as stream id, frames of the size point ``point`` (bytes, or a mix's label) and
    ``sources`` x ``destinations`` flows counting up from the addresses (IPv4, or the ports' IPv6
    addresses with ``ip_version`` 6, RFC 5180): the sources walk,
    the destinations once per full pass of the sources (the seed lab's "100 sources x 20
    destinations": every pair once per sources x destinations frames)."""
    addresses = addresses or {}
    src = addresses.get(tx_port) or PortAddress.default(tx_port)
    dst = addresses.get(rx_port) or PortAddress.default(rx_port)
    walks = []
    if sources > 1:
        walks.append(ModifierSpec(field="src_ip", count=sources))
    if destinations > 1:
        walks.append(ModifierSpec(field="dst_ip", count=destinations, chain=bool(walks)))
    size = (SizeSpec.of_sequence(size_points.sizes_of(point), label=point) if size_points.is_mix(point)
            else SizeSpec.fixed(int(point)))
    src_ip, dst_ip = (src.ipv4, dst.ipv4) if ip_version == 4 else (src.ipv6, dst.ipv6)
    return StreamSpec(stream_id=tx_port, dst_mac=dst.mac, src_mac=src.mac, ip_version=ip_version, src_ip=src_ip,
                      dst_ip=dst_ip, size=size, modifiers=tuple(walks))
