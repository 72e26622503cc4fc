"""The wirespeed test frame: headers (by default RFC 2544 Appendix C: Ethernet II / IPv4 /
UDP), zero fill, and a 16-byte signature in the last 16 bytes before the FCS, where the
analyzer finds it whatever the headers (VLAN, IPv6, a DUT that rewrites them). Plain
Python, shared by the generator, the analyzer, their golden models and the host.

Offsets are of the frame without preamble, FCS included in lengths (L = 64..9018).
"""

ETH_HDR = 14
IPV4_HDR = 20
UDP_HDR = 8
FCS = 4
#: Bytes a frame occupies on the wire beyond its length: preamble 7, SFD 1, minimum gap 12.
WIRE_OVERHEAD = 20
MIN_FRAME = 64
MAX_FRAME = 1518

#: headers of the default (Appendix C) frame
HEADER_LEN = ETH_HDR + IPV4_HDR + UDP_HDR  # 42
SIG_MAGIC = 0x5753  # "WS"
SIG_CHECK_SEED = 0xA55A
SIG_LEN = 16
#: the signature ends this many bytes before the end of the frame (the FCS)
SIG_FROM_END = SIG_LEN + 4
JUMBO_FRAME = 9018

ETHERTYPE_IPV4 = 0x0800
IP_PROTO_UDP = 17
DEFAULT_TTL = 10
#: RFC 2544 Appendix C.2.6.4: UDP source port 0xC020, destination port 7 (echo).
DEFAULT_SRC_PORT = 0xC020
DEFAULT_DST_PORT = 7


def signature_check(stream_id, seq, ts):
    """The 16-bit check value that tells a signature from random payload."""
    ts &= (1 << 48) - 1
    return (SIG_CHECK_SEED ^ stream_id ^ (seq >> 16) ^ (seq & 0xFFFF)
            ^ (ts >> 32) ^ ((ts >> 16) & 0xFFFF) ^ (ts & 0xFFFF)) & 0xFFFF


def ipv4_checksum(header: bytes) -> int:
    """RFC 791 header checksum (ones' complement of the ones' complement sum)."""
    s = sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, len(header), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def signature(stream_id, seq, ts) -> bytes:
    """The 16 signature bytes: magic, stream id, sequence, timestamp (48 bits, ns), check."""
    return (SIG_MAGIC.to_bytes(2, "big") + stream_id.to_bytes(2, "big") + seq.to_bytes(4, "big")
            + (ts & ((1 << 48) - 1)).to_bytes(6, "big")
            + signature_check(stream_id, seq, ts).to_bytes(2, "big"))


def build_frame(*, frame_len, dst_mac, src_mac, src_ip, dst_ip, src_port=DEFAULT_SRC_PORT,
                dst_port=DEFAULT_DST_PORT, ttl=DEFAULT_TTL, stream_id=0, seq=0, ts=0):
    """Golden model of the default test frame (Appendix C, UDP checksum 0), without FCS
    (``frame_len - 4`` bytes). Addresses and MACs are integers."""
    if not MIN_FRAME <= frame_len <= JUMBO_FRAME:
        raise ValueError(f"frame_len must be {MIN_FRAME}..{JUMBO_FRAME}, got {frame_len}")
    eth = dst_mac.to_bytes(6, "big") + src_mac.to_bytes(6, "big") + ETHERTYPE_IPV4.to_bytes(2, "big")
    ip_len = frame_len - ETH_HDR - FCS
    ip = bytearray(b"\x45\x00" + ip_len.to_bytes(2, "big") + b"\x00\x00\x00\x00"
                   + bytes([ttl, IP_PROTO_UDP]) + b"\x00\x00"
                   + src_ip.to_bytes(4, "big") + dst_ip.to_bytes(4, "big"))
    ip[10:12] = ipv4_checksum(bytes(ip)).to_bytes(2, "big")
    udp = (src_port.to_bytes(2, "big") + dst_port.to_bytes(2, "big")
           + (ip_len - IPV4_HDR).to_bytes(2, "big") + b"\x00\x00")
    body = eth + bytes(ip) + udp
    return body + bytes(frame_len - SIG_FROM_END - len(body)) + signature(stream_id, seq, ts)


def parse_signature(frame: bytes):
    """Golden model of the analyzer's recogniser (``frame`` without FCS): (stream_id, seq,
    ts) or None."""
    if len(frame) < SIG_LEN:
        return None
    sig = frame[-SIG_LEN:]
    if int.from_bytes(sig[0:2], "big") != SIG_MAGIC:
        return None
    stream_id = int.from_bytes(sig[2:4], "big")
    seq = int.from_bytes(sig[4:8], "big")
    ts = int.from_bytes(sig[8:14], "big")
    if int.from_bytes(sig[14:16], "big") != signature_check(stream_id, seq, ts):
        return None
    return stream_id, seq, ts


ETHERTYPE_IPV6 = 0x86DD
#: one VLAN tag (802.1Q C-tag, 802.1ad S-tag) moves the EtherType 4 bytes on
VLAN_TPIDS = (0x8100, 0x88A8)
VLAN_TAG = 4
#: IPv4 header bytes 6-7: flags (reserved, DF, MF) and the 13-bit fragment offset
IPV4_FRAG_FIELD = 6
IPV4_MF_AND_OFFSET = 0x3FFF
#: IPv6 fixed header byte 6: Next Header; 44 is the Fragment header (RFC 8200 4.5)
IPV6_NEXT_HEADER = 6
IPV6_NH_FRAGMENT = 44


def is_fragment(frame: bytes) -> bool:
    """Golden model of the analyzer's fragment recogniser (``frame`` without FCS): an IPv4
    packet with MF set or a non-zero fragment offset, or an IPv6 packet whose fixed header's
    Next Header is the Fragment header, untagged or behind one VLAN tag. A 16-bit field the
    frame does not hold whole reads 0."""
    def word(at):
        return int.from_bytes(frame[at:at + 2], "big") if len(frame) >= at + 2 else 0

    at = ETH_HDR - 2
    if word(at) in VLAN_TPIDS:
        at += VLAN_TAG
    ethertype, ip = word(at), at + 2
    if ethertype == ETHERTYPE_IPV4:
        return word(ip + IPV4_FRAG_FIELD) & IPV4_MF_AND_OFFSET != 0
    if ethertype == ETHERTYPE_IPV6:
        return word(ip + IPV6_NEXT_HEADER) >> 8 == IPV6_NH_FRAGMENT
    return False
