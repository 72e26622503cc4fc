"""The golden model of the generator: the frames a port sends, in transmit order, each able to
build its bytes with scapy from its stream's logical fields (never from the compiled tables),
and :func:`dissect`, which parses a frame and checks its IPv4 header and UDP checksums."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.frame import SIG_LEN, signature

from .compile import CompiledPort, PortProgram
from .spec import ETH_HDR, FCS, IP_PROTO_UDP, IPV6_HDR, M32, MODIFIER_FIELDS, VLAN_TAG, ModifierSpec, StreamSpec

__all__ = ["ExpectedFrame", "expected_frames", "dissect"]


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
            full = spec.field_value(mod.field)       # a vlan modifier's spec has a VLAN id (validated)
            mine.append(_Walk(mod, full & ((1 << MODIFIER_FIELDS[mod.field]) - 1),
                              sd.seed_for(compiled.seed, unit)))
        walks.append(mine)
    periods = [cs.descriptor["period"] for cs in compiled.streams]
    limit = None if duration_cycles is None else duration_cycles << 32

    def allowed(i: int, due: int) -> bool:
        if limit is not None and due >= limit:
            return False
        return not phase_at or bool(phase2 >> i & 1) or due < phase_at << 32

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
            r, size_rng = sd.draw(size_rng, size.top - size.a + 1)
            length = size.a + r
        else:
            length = size.sequence[k % len(size.sequence)]
        fields: dict[str, Any] = {name: spec.field_value(name) for name in ("src_mac", "dst_mac", "src_port",
                                                                            "dst_port")}
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
