"""The compiler: one port's streams (:class:`PortProgram`) into the generator's tables
(:mod:`wirespeed.gateware.streamdesc`: templates, descriptors, modifier units, size table), and
the rates of the generator's Q32.32 periods.

:meth:`PortProgram.compile` gives a :class:`CompiledPort`: per stream the template bytes and
the descriptor fields, the size table and the modifier units' register values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.config import CLK_HZ
from wirespeed.gateware.frame import SIG_LEN, WIRE_OVERHEAD

from .. import sizes
from ..ethernet import LINK_BPS, line_rate_fps
from .spec import (
    ETH_HDR,
    ETHERTYPE_IPV4,
    ETHERTYPE_IPV6,
    FCS,
    IP_PROTO_UDP,
    IPV6_HDR,
    M32,
    MODIFIER_FIELDS,
    TPID,
    UDP_HDR,
    ModifierSpec,
    StreamSpec,
    default_stream_id,
)

__all__ = ["PortProgram", "CompiledStream", "CompiledPort", "rate_to_period", "period_to_rate", "ns_to_cycles"]

_MOD_MODE = {"increment": sd.MOD_INCREMENT, "decrement": sd.MOD_DECREMENT, "random": sd.MOD_RANDOM}
_SIZE_MODE = {"fixed": sd.SIZE_FIXED, "increment": sd.SIZE_INCREMENT, "random": sd.SIZE_RANDOM,
              "sequence": sd.SIZE_SEQUENCE}


def _fold(s: int) -> int:
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _words(data: bytes) -> int:
    """Sum of the big-endian 16-bit words of ``data`` (padded with a zero byte)."""
    if len(data) % 2:
        data += b"\0"
    return sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))


# Rates --------------------------------------------------------------------------------------------


def _cycles_per_frame_at_line_rate(frame_len, clk_hz: int) -> Fraction:
    return Fraction(clk_hz * 8 * (sizes.mean_len(frame_len) + WIRE_OVERHEAD)) / LINK_BPS


def rate_to_period(rate_fps: float, frame_len: "sizes.SizePoint", clk_hz: int) -> int:
    """``pN.gen.period`` (Q32.32 clock cycles between frame starts) for ``rate_fps``.

    100 % of line rate is exactly ``frame_len + 20`` cycles at 125 MHz (a mix: its mean
    size + 20); the result is never below that. Raises ValueError for a rate that is not
    positive or above line rate."""
    if not rate_fps > 0:
        raise ValueError(f"rate must be > 0 frames/s, not {rate_fps}")
    minimum = _cycles_per_frame_at_line_rate(frame_len, clk_hz)
    period = Fraction(clk_hz) / Fraction(rate_fps)
    if period < minimum * (1 - Fraction(1, 10**9)):
        raise ValueError(f"{rate_fps} frames/s is above the line rate of {sizes.text(frame_len)} frames "
                         f"({line_rate_fps(frame_len):.2f} frames/s)")
    return max(round(period * 2**32), -(-minimum.numerator * 2**32 // minimum.denominator))


def period_to_rate(period_q32: int, clk_hz: int) -> float:
    """Frames per second that a programmed Q32.32 period gives."""
    return clk_hz * 2**32 / period_q32


def ns_to_cycles(ns: int, clk_hz: int) -> int:
    """Clock cycles that last at least ``ns`` nanoseconds (8 ns per cycle at 125 MHz)."""
    return -(-ns * clk_hz // 1_000_000_000)


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
        weights = {i: Fraction(1 if (w := self.streams[i].weight) is None else w) for i in weighted}
        total = sum(weights.values(), Fraction(0))
        return [f if f is not None else left * weights[i] / total for i, f in enumerate(fracs)]

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
        ids = [s.stream_id if s.stream_id is not None else default_stream_id(self.port, i)
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
    base = s.field_value(mod.field) & ((1 << bits) - 1)      # a vlan modifier's spec has a VLAN id (validated)
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
