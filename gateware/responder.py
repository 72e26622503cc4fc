"""ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861) responder of one tester port, so a
DUT that routes can resolve the tester's addresses (behaviour in docs/capture.md).

Receive side (observes the port's receive stream, untagged Ethernet II frames only):

* an ARP request (ethertype 0x0806, htype 1, ptype 0x0800, hlen 6, plen 4, op 1) whose target
  protocol address is ``arp.ipv4``, with a good FCS, counts in ``arp_requests`` and, with
  ``enable`` bit 0, gets an ARP reply to the requester (Ethernet and ARP target = its sender
  hardware address);
* an IPv6 neighbour solicitation (ethertype 0x86DD, version 6, next header 58, hop limit
  255, ICMPv6 type 135 code 0, ICMPv6 length >= 24, correct ICMPv6 checksum) whose target is
  ``arp.ipv6``, with a good FCS, counts in ``ns_received`` and, with ``enable`` bit 1, gets a
  solicited neighbour advertisement (flags S and O, target link-layer address option) sent to
  the solicitation's IPv6 and Ethernet source; a solicitation from :: (duplicate address
  detection) is answered to ff02::1 / 33:33:00:00:00:01 with S clear, as RFC 4861 7.2.4 says.

Commands (``arp.cmd``, always obeyed): bit 0 sends an ARP announcement (RFC 5227: a broadcast
request with sender and target protocol address ours, target hardware address zero), bit 1
an unsolicited neighbour advertisement to ff02::1 with the O flag (RFC 4861 7.2.6). They
wait (one of each) until the responder is free.

Transmit side: one frame at a time, without FCS (the MAC appends it), ARP frames padded to
60 bytes, advertisements 86 bytes. ``pending`` is high from the moment the frame is ready
until its last byte is accepted, and ``source.valid`` equals it, so once a frame starts there
is never a bubble from this side; data holds while ``ready`` is low. A request that is
completed while a reply is being prepared or sent is counted but not answered. A reply is
ready (``pending``) 6 cycles after the request's last byte, an advertisement 75 (its
checksum is summed a byte at a time). ``arp_replies`` counts ARP frames sent (replies and
announcements), ``na_sent`` neighbour advertisements sent (solicited and unsolicited), both
at their last byte.

Size: a frame is a program in a block RAM, one entry per byte (a constant, the checksum, or
a byte of the addresses: ours and the requester's, all read through one multiplexer), and
the receive side keeps only the fields a verdict or a reply needs, comparing the target
addresses with ours a byte at a time as they arrive: about 1.6k LUT sites with its
registers, where picking bytes out of the address registers at every place that needed one
took 2.8k (docs/performance.md, "The smaller responder").
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .streams import RxByte, RxStream, TxStream

__all__ = ["Responder", "SPAN", "ENABLE_ARP", "ENABLE_NS", "CMD_GARP", "CMD_UNA", "ARP_FRAME_LEN",
           "NA_FRAME_LEN"]

ENABLE_ARP, ENABLE_NS = 1, 2
CMD_GARP, CMD_UNA = 1, 2
ARP_FRAME_LEN = 60
NA_FRAME_LEN = 86

ALL_NODES_IP = 0xFF02_0000_0000_0000_0000_0000_0000_0001
ALL_NODES_MAC = 0x3333_0000_0001
BROADCAST_MAC = 0xFFFF_FFFF_FFFF
NA_FLAG_S, NA_FLAG_O = 0x40, 0x20
ICMPV6_NS, ICMPV6_NA = 135, 136
IP_PROTO_ICMPV6 = 58
NA_ICMP_LEN = 32     # NA header 24 + target link-layer address option 8


#: the four frames the transmit side makes (bit 1: a neighbour advertisement)
KIND_ARP_REPLY, KIND_ARP_ANNOUNCE, KIND_NA_SOLICITED, KIND_NA_GROUP = range(4)
#: where a byte of a frame comes from: a constant, a byte of the addresses (FIELD), the
#: ICMPv6 checksum
SRC_CONST, SRC_FIELD, SRC_CSUM_HI, SRC_CSUM_LO = range(4)
#: the address bytes a FIELD entry reads, most significant first: ours (the registers), then
#: the requester's (kept from the frame being answered: Ethernet source, then bytes 22..37,
#: the ARP sender addresses or the IPv6 source)
F_MAC, F_IPV4, F_IPV6, F_ETH_SRC, F_A = 0, 6, 10, 26, 32
F_SHA, F_SPA = F_A, F_A + 6


def _program():
    """{(kind, position): (source, value)} for every byte of the four frames."""
    def const(*values):
        return [(SRC_CONST, v) for v in values]

    def field(first, n):
        return [(SRC_FIELD, first + i) for i in range(n)]

    def be(value, n):
        return const(*value.to_bytes(n, "big"))

    frames = {}
    for kind in (KIND_ARP_REPLY, KIND_ARP_ANNOUNCE):
        reply = kind == KIND_ARP_REPLY
        frames[kind] = ((field(F_SHA, 6) if reply else be(BROADCAST_MAC, 6)) + field(F_MAC, 6)
                        + const(0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0, 2 if reply else 1)
                        + field(F_MAC, 6) + field(F_IPV4, 4)
                        + (field(F_SHA, 6) if reply else const(*[0] * 6))
                        + field(F_SPA if reply else F_IPV4, 4))
        frames[kind] += const(*[0] * (ARP_FRAME_LEN - len(frames[kind])))
    for kind in (KIND_NA_SOLICITED, KIND_NA_GROUP):
        solicited = kind == KIND_NA_SOLICITED
        frames[kind] = ((field(F_ETH_SRC, 6) if solicited else be(ALL_NODES_MAC, 6)) + field(F_MAC, 6)
                        + const(0x86, 0xDD, 0x60, 0, 0, 0, 0, NA_ICMP_LEN, IP_PROTO_ICMPV6, 255)
                        + field(F_IPV6, 16) + (field(F_A, 16) if solicited else be(ALL_NODES_IP, 16))
                        + const(ICMPV6_NA, 0) + [(SRC_CSUM_HI, 0), (SRC_CSUM_LO, 0)]
                        + const(NA_FLAG_S | NA_FLAG_O if solicited else NA_FLAG_O, 0, 0, 0)
                        + field(F_IPV6, 16) + const(2, 1) + field(F_MAC, 6))
    assert [len(frames[k]) for k in range(4)] == [ARP_FRAME_LEN] * 2 + [NA_FRAME_LEN] * 2
    return {(kind, pos): entry for kind, frame in frames.items() for pos, entry in enumerate(frame)}


def be_bytes(value, nbytes):
    """The bytes of ``value`` (a Value) most significant first."""
    return [value[8 * (nbytes - 1 - i):8 * (nbytes - i)] for i in range(nbytes)]


PROGRAM = _program()


#: bytes of the responder's block (``pN.arp.*``)
SPAN = 0x34


class Responder(wiring.Component):
    sink: In(RxStream)
    source: Out(TxStream)
    pending: Out(1)
    clear: In(1)

    def __init__(self, regs, prefix):
        """``regs``: the responder's :class:`~.registers.RegisterBlock` (a bank: at 0), of
        :data:`SPAN` bytes."""
        super().__init__()
        p = f"{prefix}.arp"
        self._mac = regs.add(f"{p}.mac", 48, "rw", offset=0x00, doc="this port's MAC address (sender of replies)")
        self._ipv4 = regs.add(f"{p}.ipv4", 32, "rw", offset=0x08,
                              doc="this port's IPv4 address (ARP target answered)")
        self._ipv6 = regs.add(f"{p}.ipv6", 128, "rw", offset=0x0C, doc="this port's IPv6 address (NS target answered)")
        self._enable = regs.add(f"{p}.enable", 2, "rw", offset=0x1C,
                                doc="bit 0: answer ARP requests, bit 1: answer neighbour solicitations")
        self._cmd = regs.add(f"{p}.cmd", 2, "w", offset=0x20,
                             doc="bit 0: send an ARP announcement, bit 1: send an unsolicited neighbour advertisement")
        self._counters = {name: regs.add(f"{p}.{name}", 32, "r", offset=offset, doc=doc) for name, offset, doc in (
            ("arp_requests", 0x24, "ARP requests for arp.ipv4 received with a good FCS (live)"),
            ("arp_replies", 0x28, "ARP frames sent: replies and announcements (live)"),
            ("ns_received", 0x2C, "valid neighbour solicitations for arp.ipv6 received with a good FCS (live)"),
            ("na_sent", 0x30, "neighbour advertisements sent, solicited and unsolicited (live)"))}

    def elaborate(self, platform):
        m = Module()
        mac, ipv4, ipv6, enable = self._mac, self._ipv4, self._ipv6, self._enable
        cnt = {name: Signal(32, name=f"cnt_{name}") for name in self._counters}
        for name, reg in self._counters.items():
            m.d.comb += reg.eq(cnt[name])

        # ---- receive: one pass parses the frame as an ARP request and as a neighbour
        # solicitation: the fields a verdict or a reply needs go into shift registers (newest
        # byte at the bottom), the target addresses are compared with ours a byte at a time,
        # and the frame is judged at its end. The input is registered first: the MAC's byte
        # comes out of its storage through logic.
        beat, p = Signal(), Signal(RxByte)
        m.d.sync += [beat.eq(self.sink.valid), p.eq(self.sink.p)]
        byte = p.data
        index = Signal(14)                       # position of this byte (saturates; 0 after a last)
        eth_src = Signal(48)                     # bytes 6..11
        hdr = Signal(80)                         # bytes 12..21: ethertype, ARP or IPv6 header
        a = Signal(128)                          # bytes 22..37: ARP SHA/SPA/THA, IPv6 source
        a_zero = Signal()                        # bytes 22..37 are all zero (IPv6 source ::)
        tpa_ok, tgt_ok = Signal(), Signal()      # bytes 38..41 are arp.ipv4, 62..77 arp.ipv6
        icmp = Signal(16)                        # bytes 54..55: ICMPv6 type and code
        plen = hdr[16:32]                        # IPv6 payload length (bytes 18..19, from byte 22 on)
        # ones' complement sum (its carry added back at the next byte) of the pseudo-header's
        # length and next header, then of the 16-bit words from byte 22 on
        acc = Signal(17)

        # where a byte belongs is registered a byte ahead (the comparisons with the index are
        # carry chains, and the shift registers' enables fan out wide): region(lo, hi) is high
        # while the byte is one of lo..hi-1
        def region(lo, hi):
            flag = Signal(name=f"in_{lo}_{hi}")
            with m.If(beat):
                m.d.sync += flag.eq(~p.last & (index >= lo - 1) & (index < hi - 1))
            return flag

        def shift(reg, lo, hi):
            with m.If(beat & region(lo, hi)):
                m.d.sync += reg.eq(Cat(byte, reg[:-8]))

        # likewise the target addresses, compared with ours a byte at a time: our byte the
        # next byte must equal; and the checksum's bytes, 22 up to the end of the payload
        # (54 + its length): sum_stop, the index of its last byte, is known at byte 20
        in_tpa, in_tgt = region(38, 42), region(62, 78)
        in_a = region(22, 38)
        want4, want6 = Signal(8), Signal(8)
        in_sum = Signal()
        sum_stop = Signal(17)
        with m.If(beat):
            m.d.sync += [index.eq(Mux(p.last, 0, Mux(index == 2**14 - 1, index, index + 1))),
                         want4.eq(ipv4.word_select(~(index[:2] - 37)[:2], 8)),
                         want6.eq(ipv6.word_select(~(index[:4] - 61)[:4], 8))]
            with m.If(p.first):
                m.d.sync += [acc.eq(0), a_zero.eq(1), tpa_ok.eq(1), tgt_ok.eq(1)]
            shift(eth_src, 6, 12)
            shift(hdr, 12, 22)
            shift(a, 22, 38)
            shift(icmp, 54, 56)
            with m.If(in_tpa & (byte != want4)):
                m.d.sync += tpa_ok.eq(0)
            with m.If(in_tgt & (byte != want6)):
                m.d.sync += tgt_ok.eq(0)
            with m.If(in_a & (byte != 0)):
                m.d.sync += a_zero.eq(0)
            with m.If(index == 20):              # bytes 18..19, the payload length, are in hdr's bottom
                m.d.sync += [acc.eq(hdr[0:16] + IP_PROTO_ICMPV6), sum_stop.eq(hdr[0:16] + 53)]
            with m.If(in_sum):
                m.d.sync += acc.eq(acc[:16] + acc[16] + Mux(index[0], byte, Cat(Const(0, 8), byte)))
            with m.If(index == 21):
                m.d.sync += in_sum.eq(1)
            with m.If(p.last | (index == sum_stop)):
                m.d.sync += in_sum.eq(0)

        # end of frame, stage A: the verdicts from the captured fields (a new frame may start
        # now: it reaches the first captured byte, 6, long after stage B has used them)
        done, done_err = Signal(), Signal()
        done_len = Signal(14)
        m.d.sync += done.eq(beat & p.last)
        with m.If(beat & p.last):
            m.d.sync += [done_err.eq(p.error), done_len.eq(index + 1)]
        arp_hit, ns_pre, ns_sum_ok, done2 = Signal(), Signal(), Signal(), Signal()
        arp_hdr = int.from_bytes(bytes([0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0, 1]), "big")
        ns_hdr = ((hdr[64:80] == 0x86DD) & (hdr[60:64] == 6) & (hdr[8:16] == IP_PROTO_ICMPV6)
                  & (hdr[0:8] == 255) & (icmp == ICMPV6_NS << 8))
        m.d.sync += done2.eq(done)
        with m.If(done):
            m.d.sync += [
                arp_hit.eq((hdr == arp_hdr) & tpa_ok & ~done_err & (done_len >= 42)),
                ns_pre.eq(ns_hdr & tgt_ok & ~done_err & (plen >= 24) & (done_len >= 54 + plen)),
                # the sum folded is 0xFFFF: acc[:16] + acc[16] (at most 0x10000, which folds to
                # 1) is 0xFFFF, which two compares tell without an adder
                ns_sum_ok.eq((acc == 0x0FFFF) | (acc == 0x1FFFE)),
            ]
        # stage B: count and answer
        ns_hit = Signal()
        m.d.comb += ns_hit.eq(ns_pre & ns_sum_ok)
        with m.If(done2 & arp_hit):
            m.d.sync += cnt["arp_requests"].eq(cnt["arp_requests"] + 1)
        with m.If(done2 & ns_hit):
            m.d.sync += cnt["ns_received"].eq(cnt["ns_received"] + 1)

        # ---- transmit: a frame is a program, one entry per byte (PROGRAM), in a pipeline of
        # three stages that move together (adv): the block RAM's read, the entry in use, the
        # byte it made. A field entry reads one byte of the addresses (ours, and the
        # requester's, kept from the frame being answered) through one multiplexer. An
        # advertisement runs its program twice: from byte 22, summing the bytes for the
        # ICMPv6 checksum, then from byte 0, sending.
        r_eth_src, r_a = Signal(48), Signal(128)
        fields = Cat(*(be_bytes(mac, 6) + be_bytes(ipv4, 4) + be_bytes(ipv6, 16)
                       + be_bytes(r_eth_src, 6) + be_bytes(r_a, 16)))
        kind = Signal(2)
        fetch = Signal(7)                        # the position whose entry is read next
        m.submodules.program = program = Memory(
            shape=unsigned(10), depth=512,
            init=[cls | val << 2 for cls, val in (PROGRAM.get((k, pos), (0, 0))
                                                  for k in range(4) for pos in range(128))])
        rd = program.read_port(domain="sync")   # a block RAM: entries come out registered
        rd_pos = Signal(7)                       # the position of the entry being read
        rd_ok = Signal()                         # an entry has been read
        entry_cls, entry_val = Signal(2), Signal(8)
        entry_pos = Signal(7)                    # the position of the entry in use
        entry_ok = Signal()
        byte_out = Signal(8)                     # the byte the entry in use makes
        data, data_pos, data_ok = Signal(8), Signal(7), Signal()    # the byte made
        summing = Signal()                       # the checksum field reads as zero
        csum = Signal(16)
        adv = Signal()                           # the pipeline moves: read, use, make the byte
        m.d.comb += [rd.addr.eq(Cat(fetch, kind)), rd.en.eq(adv)]
        with m.If(adv):
            m.d.sync += [rd_pos.eq(fetch), fetch.eq(fetch + 1), rd_ok.eq(1),
                         entry_cls.eq(rd.data[:2]), entry_val.eq(rd.data[2:]), entry_pos.eq(rd_pos),
                         entry_ok.eq(rd_ok),
                         data.eq(byte_out), data_pos.eq(entry_pos), data_ok.eq(entry_ok)]
        with m.Switch(entry_cls):
            with m.Case(SRC_CONST):
                m.d.comb += byte_out.eq(entry_val)
            with m.Case(SRC_FIELD):
                m.d.comb += byte_out.eq(fields.word_select(entry_val[:6], 8))
            with m.Case(SRC_CSUM_HI):
                m.d.comb += byte_out.eq(Mux(summing, 0, csum[8:]))
            with m.Case(SRC_CSUM_LO):
                m.d.comb += byte_out.eq(Mux(summing, 0, csum[:8]))
        is_na = kind[1]
        last_pos = Mux(is_na, NA_FRAME_LEN - 1, ARP_FRAME_LEN - 1)

        want_garp, want_una = Signal(), Signal()
        sum_ = Signal(24)

        def start(m, k, first_pos):
            m.d.sync += [kind.eq(k), fetch.eq(first_pos), rd_ok.eq(0), entry_ok.eq(0), data_ok.eq(0)]

        with m.FSM():
            with m.State("IDLE"):
                with m.If(done2 & arp_hit & enable[0]):
                    start(m, KIND_ARP_REPLY, 0)
                    m.d.sync += [r_a.eq(a)]
                    m.next = "SEND"
                with m.Elif(done2 & ns_hit & enable[1]):
                    start(m, Mux(a_zero, KIND_NA_GROUP, KIND_NA_SOLICITED), 22)
                    m.d.sync += [r_eth_src.eq(eth_src), r_a.eq(a), sum_.eq(NA_ICMP_LEN + IP_PROTO_ICMPV6)]
                    m.next = "CSUM"
                with m.Elif(want_garp):
                    start(m, KIND_ARP_ANNOUNCE, 0)
                    m.d.sync += want_garp.eq(0)
                    m.next = "SEND"
                with m.Elif(want_una):
                    start(m, KIND_NA_GROUP, 22)
                    m.d.sync += [want_una.eq(0), sum_.eq(NA_ICMP_LEN + IP_PROTO_ICMPV6)]
                    m.next = "CSUM"
            with m.State("CSUM"):
                # the ICMPv6 checksum: the advertisement from byte 22 (the pseudo-header's
                # addresses, then the ICMPv6 message with its checksum field zero) in 16-bit
                # words, plus the pseudo-header's length and next header
                m.d.comb += [summing.eq(1), adv.eq(1)]
                with m.If(data_ok):
                    m.d.sync += sum_.eq(sum_ + Mux(data_pos[0], data, Cat(Const(0, 8), data)))
                    with m.If(data_pos == NA_FRAME_LEN - 1):
                        m.next = "FOLD"
            with m.State("FOLD"):
                m.d.sync += sum_.eq(sum_[:16] + sum_[16:])
                m.next = "FOLD2"
            with m.State("FOLD2"):
                m.d.sync += csum.eq(~(sum_[:16] + sum_[16]))
                start(m, kind, 0)
                m.next = "SEND"
            with m.State("SEND"):
                # data holds the byte at data_pos while the next ones are read
                m.d.comb += [self.pending.eq(data_ok), self.source.valid.eq(data_ok),
                             self.source.p.data.eq(data),
                             self.source.p.first.eq(data_pos == 0),
                             self.source.p.last.eq(data_pos == last_pos),
                             adv.eq(~data_ok | self.source.ready)]
                with m.If(data_ok & self.source.ready & self.source.p.last):
                    with m.If(is_na):
                        m.d.sync += cnt["na_sent"].eq(cnt["na_sent"] + 1)
                    with m.Else():
                        m.d.sync += cnt["arp_replies"].eq(cnt["arp_replies"] + 1)
                    m.next = "IDLE"

        with m.If(self._cmd[0]):
            m.d.sync += want_garp.eq(1)
        with m.If(self._cmd[1]):
            m.d.sync += want_una.eq(1)
        with m.If(self.clear):
            m.d.sync += [c.eq(0) for c in cnt.values()]
        return m
