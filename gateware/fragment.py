"""IP fragment recogniser: tells from a received frame's headers whether it is a fragment of an
IP packet (golden model :func:`wirespeed.gateware.frame.is_fragment`).

A frame is a fragment when its EtherType (bytes 12-13, or 16-17 behind one VLAN tag: TPID
0x8100 or 0x88A8) is IPv4 and the header's MF flag is set or its fragment offset is not 0
(IP header bytes 6-7; DF is ignored), or is IPv6 and the fixed header's Next Header is 44,
the Fragment header. A 16-bit field the frame does not hold whole reads 0. Two tags (QinQ),
or a Fragment header behind other IPv6 extension headers, are not looked into.

Each field is compared with its constants as its second byte goes by, and only those
one-bit results are kept, so ``fragment`` is two LUT levels from flip-flops: it holds the
frame's answer on the clock after its last byte (and until the next frame's first byte has
gone by). Every byte is taken as it comes (always ready)."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .streams import RxStream

__all__ = ["FragmentDetector"]

#: the byte (frame offset) that completes each 16-bit field looked at
_ETHERTYPE_END = F.ETH_HDR - 1
_TAGGED_ETHERTYPE_END = _ETHERTYPE_END + F.VLAN_TAG
_FRAG_END = F.ETH_HDR + F.IPV4_FRAG_FIELD + 1
_TAGGED_FRAG_END = _FRAG_END + F.VLAN_TAG
assert F.IPV6_NEXT_HEADER == F.IPV4_FRAG_FIELD      # both read from the same 16-bit word


class FragmentDetector(wiring.Component):
    sink: In(RxStream)
    #: the last frame is an IP fragment: valid on the clock after its last byte
    fragment: Out(1)

    def elaborate(self, platform):
        m = Module()
        s = self.sink
        pos = Signal(range(_TAGGED_FRAG_END + 2))       # this byte's offset, held past the last field
        at = Signal.like(pos)
        m.d.comb += at.eq(Mux(s.p.first, 0, pos))
        prev = Signal(8)                                 # the byte before this one
        word = Signal(16)
        m.d.comb += word.eq(Cat(s.p.data, prev))

        # untagged (index 0) and tagged (index 1) readings of the same fields
        tagged = Signal()
        v4, v6, frag_bits, nh_frag = [Signal(2, name=n) for n in ("v4", "v6", "frag_bits", "nh_frag")]
        with m.If(s.valid):
            m.d.sync += prev.eq(s.p.data)
            with m.If(at <= _TAGGED_FRAG_END):
                m.d.sync += pos.eq(at + 1)
            with m.If(s.p.first):
                m.d.sync += [tagged.eq(0), v4.eq(0), v6.eq(0), frag_bits.eq(0), nh_frag.eq(0)]
            for i, (type_end, frag_end) in enumerate(((_ETHERTYPE_END, _FRAG_END),
                                                      (_TAGGED_ETHERTYPE_END, _TAGGED_FRAG_END))):
                with m.If(at == type_end):
                    m.d.sync += [v4[i].eq(word == F.ETHERTYPE_IPV4), v6[i].eq(word == F.ETHERTYPE_IPV6)]
                    if i == 0:
                        is_tag = 0
                        for tpid in F.VLAN_TPIDS:
                            is_tag = is_tag | (word == tpid)
                        m.d.sync += tagged.eq(is_tag)
                with m.If(at == frag_end):
                    m.d.sync += [frag_bits[i].eq((word & F.IPV4_MF_AND_OFFSET) != 0),
                                 nh_frag[i].eq(prev == F.IPV6_NH_FRAGMENT)]

        plain = (v4[0] & frag_bits[0]) | (v6[0] & nh_frag[0])
        behind_tag = (v4[1] & frag_bits[1]) | (v6[1] & nh_frag[1])
        m.d.comb += self.fragment.eq(Mux(tagged, behind_tag, plain))
        return m
