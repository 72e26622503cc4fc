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
completed while a reply is being prepared or sent is counted but not answered.
``arp_replies`` counts ARP frames sent (replies and announcements), ``na_sent`` neighbour
advertisements sent (solicited and unsolicited), both at their last byte.
"""

from amaranth import Module, Signal, Cat, Const, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .streams import RxStream, TxStream

__all__ = ["Responder", "ENABLE_ARP", "ENABLE_NS", "CMD_GARP", "CMD_UNA", "ARP_FRAME_LEN",
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


def be_bytes(value, nbytes):
    """The bytes of ``value`` (a Value) most significant first."""
    return [value[8 * (nbytes - 1 - i):8 * (nbytes - i)] for i in range(nbytes)]


class Responder(wiring.Component):
    sink: In(RxStream)
    source: Out(TxStream)
    pending: Out(1)
    clear: In(1)

    def __init__(self, bank, prefix):
        super().__init__()
        p = f"{prefix}.arp"
        self._mac = bank.add(f"{p}.mac", 48, "rw", doc="this port's MAC address (sender of replies)")
        self._ipv4 = bank.add(f"{p}.ipv4", 32, "rw", doc="this port's IPv4 address (ARP target answered)")
        self._ipv6 = bank.add(f"{p}.ipv6", 128, "rw", doc="this port's IPv6 address (NS target answered)")
        self._enable = bank.add(f"{p}.enable", 2, "rw", doc="bit 0: answer ARP requests, bit 1: answer neighbour solicitations")
        self._cmd = bank.add(f"{p}.cmd", 2, "w",
                             doc="bit 0: send an ARP announcement, bit 1: send an unsolicited neighbour advertisement")
        self._counters = {name: bank.add(f"{p}.{name}", 32, "r", doc=doc) for name, doc in (
            ("arp_requests", "ARP requests for arp.ipv4 received with a good FCS (live)"),
            ("arp_replies", "ARP frames sent: replies and announcements (live)"),
            ("ns_received", "valid neighbour solicitations for arp.ipv6 received with a good FCS (live)"),
            ("na_sent", "neighbour advertisements sent, solicited and unsolicited (live)"))}

    def elaborate(self, platform):
        m = Module()
        mac, ipv4, ipv6, enable = self._mac, self._ipv4, self._ipv6, self._enable
        cnt = {name: Signal(32, name=f"cnt_{name}") for name in self._counters}
        for name, reg in self._counters.items():
            m.d.comb += reg.eq(cnt[name])

        # ---- receive: parse, in one pass, as an ARP request and as a neighbour solicitation
        s = self.sink
        beat, byte = s.valid, s.p.data
        index = Signal(14)                       # position of the next byte (saturates)
        idx = Signal(14)
        m.d.comb += idx.eq(Mux(s.p.first, 0, index))
        arp_ok, ns_ok = Signal(), Signal()       # every byte so far fits
        eth_src = Signal(48)                     # bytes 6..11
        a = Signal(128)                          # bytes 22..37: ARP SHA/SPA/THA, IPv6 source
        plen = Signal(16)                        # IPv6 payload length, bytes 18..19
        acc = Signal(32)                         # sum of the 16-bit words from byte 22 on
        with m.If(beat):
            m.d.sync += index.eq(Mux(idx == 2**14 - 1, idx, idx + 1))
            with m.If(s.p.first):
                m.d.sync += [arp_ok.eq(1), ns_ok.eq(1), acc.eq(0)]
            with m.If((idx >= 6) & (idx < 12)):
                m.d.sync += eth_src.eq(Cat(byte, eth_src[:-8]))
            with m.If((idx >= 22) & (idx < 38)):
                m.d.sync += a.eq(Cat(byte, a[:-8]))
            with m.If((idx >= 22) & (idx < 54 + plen)):
                m.d.sync += acc.eq(acc + Mux(idx[0], byte, Cat(Const(0, 8), byte)))
            with m.Switch(idx):
                for pos, want in ((12, 0x08), (13, 0x06), (14, 0x00), (15, 0x01), (16, 0x08),
                                  (17, 0x00), (18, 6), (19, 4), (20, 0), (21, 1)):
                    with m.Case(pos):
                        with m.If(byte != want):
                            m.d.sync += arp_ok.eq(0)
                        if pos == 12:
                            with m.If(byte != 0x86):
                                m.d.sync += ns_ok.eq(0)
                        elif pos == 13:
                            with m.If(byte != 0xDD):
                                m.d.sync += ns_ok.eq(0)
                        elif pos == 14:
                            with m.If(byte[4:] != 6):
                                m.d.sync += ns_ok.eq(0)
                        elif pos == 18:
                            m.d.sync += plen[8:].eq(byte)
                        elif pos == 19:
                            m.d.sync += plen[:8].eq(byte)
                        elif pos == 20:
                            with m.If(byte != IP_PROTO_ICMPV6):
                                m.d.sync += ns_ok.eq(0)
                        elif pos == 21:
                            with m.If(byte != 255):
                                m.d.sync += ns_ok.eq(0)
                for k, want in enumerate(be_bytes(ipv4, 4)):
                    with m.Case(38 + k):
                        with m.If(byte != want):
                            m.d.sync += arp_ok.eq(0)
                for pos, want in ((54, ICMPV6_NS), (55, 0)):
                    with m.Case(pos):
                        with m.If(byte != want):
                            m.d.sync += ns_ok.eq(0)
                for k, want in enumerate(be_bytes(ipv6, 16)):
                    with m.Case(62 + k):
                        with m.If(byte != want):
                            m.d.sync += ns_ok.eq(0)

        # end of frame, stage A: latch the verdict and the fields (a new frame may start now)
        done, done_err = Signal(), Signal()
        done_len = Signal(14)
        m.d.sync += done.eq(beat & s.p.last)
        with m.If(beat & s.p.last):
            m.d.sync += [done_err.eq(s.p.error), done_len.eq(idx + 1)]
        arp_hit, ns_pre, done2 = Signal(), Signal(), Signal()
        r_eth_src, r_a = Signal(48), Signal(128)
        total = Signal(32)
        m.d.comb += total.eq(acc + plen + IP_PROTO_ICMPV6)
        f1 = Signal(17)
        m.d.sync += done2.eq(done)
        with m.If(done):
            m.d.sync += [
                arp_hit.eq(arp_ok & ~done_err & (done_len >= 42)),
                ns_pre.eq(ns_ok & ~done_err & (plen >= 24) & (done_len >= 54 + plen)),
                r_eth_src.eq(eth_src), r_a.eq(a),
                f1.eq(total[:16] + total[16:]),
            ]
        # stage B: the checksum verdict; count and answer
        f2 = Signal(16)
        m.d.comb += f2.eq(f1[:16] + f1[16])
        ns_hit = Signal()
        m.d.comb += ns_hit.eq(ns_pre & (f2 == 0xFFFF))
        with m.If(done2 & arp_hit):
            m.d.sync += cnt["arp_requests"].eq(cnt["arp_requests"] + 1)
        with m.If(done2 & ns_hit):
            m.d.sync += cnt["ns_received"].eq(cnt["ns_received"] + 1)

        # ---- transmit
        want_garp, want_una = Signal(), Signal()
        is_na = Signal()
        op = Signal(8)
        dst_mac, tha = Signal(48), Signal(48)
        tpa = Signal(32)
        dst_ip = Signal(128)
        flags = Signal(8)
        csum = Signal(16)
        sum_ = Signal(24)
        step = Signal(4)
        tx_idx = Signal(7)

        arp_bytes = (be_bytes(dst_mac, 6) + be_bytes(mac, 6) + [0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0]
                     + [op] + be_bytes(mac, 6) + be_bytes(ipv4, 4) + be_bytes(tha, 6) + be_bytes(tpa, 4))
        arp_bytes += [0] * (ARP_FRAME_LEN - len(arp_bytes))
        na_bytes = (be_bytes(dst_mac, 6) + be_bytes(mac, 6) + [0x86, 0xDD, 0x60, 0, 0, 0, 0, NA_ICMP_LEN,
                                                               IP_PROTO_ICMPV6, 255]
                    + be_bytes(ipv6, 16) + be_bytes(dst_ip, 16) + [ICMPV6_NA, 0] + be_bytes(csum, 2)
                    + [flags, 0, 0, 0] + be_bytes(ipv6, 16) + [2, 1] + be_bytes(mac, 6))
        assert len(arp_bytes) == ARP_FRAME_LEN and len(na_bytes) == NA_FRAME_LEN

        with m.FSM():
            with m.State("IDLE"):
                m.d.sync += tx_idx.eq(0)
                with m.If(done2 & arp_hit & enable[0]):
                    m.d.sync += [is_na.eq(0), op.eq(2), dst_mac.eq(r_a[80:128]), tha.eq(r_a[80:128]),
                                 tpa.eq(r_a[48:80])]
                    m.next = "SEND"
                with m.Elif(done2 & ns_hit & enable[1]):
                    dad = r_a == 0
                    m.d.sync += [is_na.eq(1), dst_mac.eq(Mux(dad, ALL_NODES_MAC, r_eth_src)),
                                 dst_ip.eq(Mux(dad, ALL_NODES_IP, r_a)),
                                 flags.eq(Mux(dad, NA_FLAG_O, NA_FLAG_S | NA_FLAG_O)),
                                 sum_.eq(0), step.eq(0)]
                    m.next = "CSUM"
                with m.Elif(want_garp):
                    m.d.sync += [is_na.eq(0), op.eq(1), dst_mac.eq(BROADCAST_MAC), tha.eq(0),
                                 tpa.eq(ipv4), want_garp.eq(0)]
                    m.next = "SEND"
                with m.Elif(want_una):
                    m.d.sync += [is_na.eq(1), dst_mac.eq(ALL_NODES_MAC), dst_ip.eq(ALL_NODES_IP),
                                 flags.eq(NA_FLAG_O), sum_.eq(0), step.eq(0), want_una.eq(0)]
                    m.next = "CSUM"
            with m.State("CSUM"):
                # ICMPv6 checksum over the pseudo-header and the advertisement, 16 bits a term:
                # source and target are both ipv6, hence twice its words
                m.d.sync += step.eq(step + 1)
                with m.If(step < 8):
                    m.d.sync += sum_.eq(sum_ + (ipv6.word_select(step[:3], 16) << 1)
                                        + dst_ip.word_select(step[:3], 16))
                with m.Elif(step == 8):
                    m.d.sync += sum_.eq(sum_ + (NA_ICMP_LEN + IP_PROTO_ICMPV6 + (ICMPV6_NA << 8) + 0x0201)
                                        + Cat(Const(0, 8), flags) + mac[:16] + mac[16:32] + mac[32:])
                with m.Elif(step == 9):
                    m.d.sync += sum_.eq(sum_[:16] + sum_[16:])
                with m.Else():
                    m.d.sync += csum.eq(~(sum_[:16] + sum_[16]))
                    m.next = "SEND"
            with m.State("SEND"):
                m.d.comb += [self.pending.eq(1), self.source.valid.eq(1),
                             self.source.p.first.eq(tx_idx == 0),
                             self.source.p.last.eq(tx_idx == Mux(is_na, NA_FRAME_LEN - 1, ARP_FRAME_LEN - 1))]
                with m.Switch(tx_idx):
                    for i in range(NA_FRAME_LEN):
                        with m.Case(i):
                            arp_b = arp_bytes[i] if i < ARP_FRAME_LEN else 0
                            m.d.comb += self.source.p.data.eq(Mux(is_na, na_bytes[i], arp_b))
                with m.If(self.source.ready):
                    m.d.sync += tx_idx.eq(tx_idx + 1)
                    with m.If(self.source.p.last):
                        with m.If(is_na):
                            m.d.sync += cnt["na_sent"].eq(cnt["na_sent"] + 1)
                        with m.Else():
                            m.d.sync += cnt["arp_replies"].eq(cnt["arp_replies"] + 1)
                        m.d.sync += tx_idx.eq(0)
                        m.next = "IDLE"

        with m.If(self._cmd[0]):
            m.d.sync += want_garp.eq(1)
        with m.If(self._cmd[1]):
            m.d.sync += want_una.eq(1)
        with m.If(self.clear):
            m.d.sync += [c.eq(0) for c in cnt.values()]
        return m
