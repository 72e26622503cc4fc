"""Frame generator: emits one RFC 2544 Appendix C test frame (Ethernet II / IPv4 / UDP,
RFC 791 header checksum) per ``start`` pulse, stamped with stream id, sequence number and
transmit timestamp (layout in :mod:`wirespeed.gateware.frame`).

Frames leave as an unbroken run of ``frame_len - 4`` bytes (the MAC appends the FCS and
has no underrun protection, so the generator never inserts a bubble inside a frame). The
sequence number of a frame is the count of frames sent since ``clear``; the timestamp is
``now`` at the ``start`` pulse, a fixed number of cycles before the first bit reaches the
wire.
"""

from amaranth import Module, Signal, Cat, Const
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .streams import TxStream

__all__ = ["FrameGenerator"]


def _be(value, nbytes):
    """The bytes of ``value`` in network order, first byte in the lowest bits."""
    return Cat(*(value[8 * i:8 * (i + 1)] for i in reversed(range(nbytes))))


class FrameGenerator(wiring.Component):
    # configuration, static during a trial
    frame_len: In(16)
    dst_mac: In(48)
    src_mac: In(48)
    src_ip: In(32)
    dst_ip: In(32)
    src_port: In(16)
    dst_port: In(16)
    ttl: In(8)
    stream_id: In(16)
    # control
    start: In(1)
    clear: In(1)
    now: In(64)
    busy: Out(1)
    # counters (live)
    tx_frames: Out(64)
    tx_bytes: Out(64)
    first_tx_ns: Out(64)
    last_tx_ns: Out(64)

    source: Out(TxStream)

    def elaborate(self, platform):
        m = Module()

        # IPv4 header checksum of the configuration, one register stage per step.
        ip_len = Signal(16)
        m.d.comb += ip_len.eq(self.frame_len - F.ETH_HDR - F.FCS)
        udp_len = Signal(16)
        m.d.comb += udp_len.eq(ip_len - F.IPV4_HDR)
        words = [Const(0x4500, 16), ip_len, Cat(Const(F.IP_PROTO_UDP, 8), self.ttl),
                 self.src_ip[16:], self.src_ip[:16], self.dst_ip[16:], self.dst_ip[:16]]
        total = Signal(20)
        m.d.sync += total.eq(sum(words))
        fold = Signal(17)
        m.d.sync += fold.eq(total[:16] + total[16:])
        ip_csum = Signal(16)
        m.d.comb += ip_csum.eq(~(fold[:16] + fold[16]))

        seq = Signal(32)
        m.d.comb += seq.eq(self.tx_frames[:32])
        ts = Signal(48)
        m.d.comb += ts.eq(self.now[:48])
        check = Signal(16)
        m.d.comb += check.eq(F.SIG_CHECK_SEED ^ self.stream_id ^ seq[16:] ^ seq[:16]
                             ^ ts[32:] ^ ts[16:32] ^ ts[:16])

        header = Cat(
            _be(self.dst_mac, 6), _be(self.src_mac, 6), _be(Const(F.ETHERTYPE_IPV4, 16), 2),
            Const(0x45, 8), Const(0, 8), _be(ip_len, 2), Const(0, 32),
            self.ttl, Const(F.IP_PROTO_UDP, 8), _be(ip_csum, 2), _be(self.src_ip, 4), _be(self.dst_ip, 4),
            _be(self.src_port, 2), _be(self.dst_port, 2), _be(udp_len, 2), Const(0, 16),
            _be(Const(F.SIG_MAGIC, 16), 2), _be(self.stream_id, 2), _be(seq, 4), _be(ts, 6), _be(check, 2),
        )
        assert len(header) == 8 * F.HEADER_LEN
        shift = Signal(len(header))
        remaining = Signal(16)   # bytes still to send after the current one
        first = Signal()

        src = self.source
        m.d.comb += [
            src.valid.eq(self.busy),
            src.p.data.eq(shift[:8]),
            src.p.first.eq(first),
            src.p.last.eq(remaining == 0),
        ]
        with m.If(self.busy & src.ready):
            m.d.sync += [shift.eq(shift >> 8), remaining.eq(remaining - 1), first.eq(0)]
            with m.If(remaining == 0):
                m.d.sync += self.busy.eq(0)

        with m.If(self.start & ~self.busy):
            m.d.sync += [
                shift.eq(header),
                remaining.eq(self.frame_len - F.FCS - 1),
                first.eq(1),
                self.busy.eq(1),
                self.tx_frames.eq(self.tx_frames + 1),
                self.tx_bytes.eq(self.tx_bytes + self.frame_len),
                self.last_tx_ns.eq(self.now),
            ]
            with m.If(self.tx_frames == 0):
                m.d.sync += self.first_tx_ns.eq(self.now)

        with m.If(self.clear):
            m.d.sync += [self.tx_frames.eq(0), self.tx_bytes.eq(0),
                         self.first_tx_ns.eq(0), self.last_tx_ns.eq(0)]
        return m
