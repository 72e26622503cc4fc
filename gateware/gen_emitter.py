"""The traffic generator's *emitter*: sends the prepared frame (:class:`.gen_layouts.FrameHandoff`)
when the scheduler launches it (``go``), as an unbroken run of ``L - 4`` bytes on ``source``
(the MAC appends the FCS and has no underrun protection): template bytes with the length,
checksum and modifier patches, zero fill, then the signature with the transmit timestamp
(``now`` at the launch) and its check, the first byte the cycle after the launch.

The byte on the output is a register (``out``), computed a byte ahead from registers only: the
template byte (``tq``, two registers behind the block RAM) and flags saying what the next byte
is (signature, header, which field or modifier patches it), updated on each advance from
counters a byte further on. The pipeline moves as a whole when the sink takes a byte
(advance) and holds while it stalls:

  block RAM (byte nidx + 2) -> tq0 (nidx + 1) -> tq (nidx) -> out (byte idx) -> sink

Launching needs template bytes 0, 1 and 2 of the prepared stream in place: they are read
during the frame's last three advances (the stream being prepared then is the next one,
``handoff.stream``) or while the line is idle (three cycles, done before prepare is); the UDP
checksum bytes come straight from their register into the output, so its field must start at
byte 2 or later (the checksum takes three cycles from the launch).

``line_free`` (to the scheduler): nothing is being sent, the previous frame's wire time
(preamble, frame, minimum gap) has passed, ``hold`` is low and the next frame's template bytes
are in place. A frame launched earlier would wait inside the MAC, and its timestamp would no
longer be a fixed time before its first bit on the wire.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import ReadPort
from amaranth.lib.wiring import In, Out

from . import frame as F
from . import streamdesc as SD
from .gen_layouts import FIELDS, FrameHandoff, PreparedFrame, merge_mods, priority, select
from .onescomp import residue
from .replica import replicas
from .streams import TxStream

__all__ = ["FrameEmitter"]


class FrameEmitter(wiring.Component):
    """``handoff``: the prepared frame; ``go``: its launch. ``tmpl_rd`` and ``tmpl_written``:
    the template table (:class:`.gen_tables.GeneratorTables`). ``busy``: a frame is being
    sent. ``sent_stream``, ``sent_len``: the stream and length of the frame launched last, from
    the cycle after its launch."""

    def __init__(self, n_streams, n_modifiers):
        self.n_streams, self.n_modifiers = n_streams, n_modifiers
        super().__init__({
            "handoff": In(FrameHandoff(n_streams, n_modifiers)),
            "go": In(1),
            "now": In(64),
            "hold": In(1),
            "tmpl_rd": In(ReadPort.Signature(addr_width=(n_streams * SD.TEMPLATE_BYTES - 1).bit_length(), shape=8)),
            "tmpl_written": In(1),
            "line_free": Out(1),
            "busy": Out(1),
            "source": Out(TxStream),
            "sent_stream": Out(4), "sent_len": Out(14),
        })

    def elaborate(self, platform):
        m = Module()
        pre = self.handoff.frame
        s = self.handoff.stream
        go = self.go
        cur = PreparedFrame(self.n_modifiers).create(path=("cur",))   # the frame on the line
        m.d.comb += [self.sent_stream.eq(cur.stream), self.sent_len.eq(cur.frame_len)]

        # the line's wire time. go never selects data, and enables as few registers as it can:
        # it fans out to the whole emitter otherwise. The registers a launch loads from the
        # handoff (and now) follow it while the line is idle (not busy) instead, and hold from
        # the launch on.
        wire_left = Signal(15)
        wire_idle = Signal(init=1)    # wire_left == 0, registered
        with m.If(~wire_idle):
            m.d.sync += [wire_left.eq(wire_left - 1), wire_idle.eq(wire_left == 1)]
        with m.Else():
            m.d.sync += [wire_left.eq(pre.frame_len + F.WIRE_OVERHEAD - 1), wire_idle.eq(~go)]
        pf_ready = Signal()           # template bytes 0, 1 and 2 of stream s are in place
        m.d.comb += self.line_free.eq(~self.busy & ~self.hold & wire_idle & pf_ready)
        nidx = Signal(14)             # idx + 1: the byte computed next
        n2 = Signal(14)               # idx + 2
        n3 = Signal(14)               # idx + 3
        n4 = Signal(7)                # (idx + 4) % 128: the template byte read on an advance
        last_idx = Signal(14)
        is_first = Signal()           # idx == 0
        is_last = Signal()            # idx == last_idx
        pre_last = Signal()           # idx + 1 == last_idx
        pre2_last = Signal()          # idx + 2 == last_idx
        advance = Signal()
        src = self.source
        ts = Signal(48)               # the transmit timestamp: now at the launch
        m.d.comb += advance.eq(self.busy & src.ready)
        # busy, and copies of it for the frame registers that follow the handoff and now while
        # the line is idle (over 300 flip-flops, placed across the emitter)
        busy_next = Signal()
        m.d.comb += busy_next.eq(Mux(self.busy, ~(advance & is_last), go))
        m.d.sync += self.busy.eq(busy_next)
        busy = replicas(m, "sync", busy_next, ["cur", "ts"], prefix="busy")
        with m.If(self.busy):
            with m.If(advance):
                m.d.sync += [nidx.eq(n2), n2.eq(n3), n3.eq(n3 + 1), n4.eq(n4 + 1), is_first.eq(0),
                             is_last.eq(pre_last), pre_last.eq(pre2_last), pre2_last.eq(n3 == last_idx)]
        with m.Else():                # as a launch leaves them (held from the launch on)
            m.d.sync += [nidx.eq(1), n2.eq(2), n3.eq(3), n4.eq(4),
                         is_first.eq(1), is_last.eq(pre.frame_len == F.FCS + 1),
                         pre_last.eq(pre.frame_len == F.FCS + 2), pre2_last.eq(pre.frame_len == F.FCS + 3)]
        # The modifiers' registers that follow the handoff while the line is idle load only
        # when that can change them: the cycle after a commit or after the line was busy. They
        # hold the same values as if they loaded on every idle cycle, and a cycle-based
        # simulator does not copy them on every clock.
        mods_follow = Signal(init=1) if self.n_modifiers else None
        if mods_follow is not None:
            m.d.sync += mods_follow.eq(self.handoff.committed | self.busy)
        with m.If(~busy["cur"]):
            m.d.sync += PreparedFrame.copy(cur, pre, mods=False)
            if mods_follow is not None:
                with m.If(mods_follow):
                    m.d.sync += PreparedFrame.copy(cur, pre, mods=True)
        with m.If(~busy["ts"]):
            m.d.sync += [last_idx.eq(pre.frame_len - F.FCS - 1), ts.eq(self.now[:48])]

        # template bytes: the block RAM (read enable: held while the sink stalls), tq0, tq.
        # Busy with byte idx on the output: tq holds template byte nidx, tq0 byte nidx + 1,
        # the block RAM byte nidx + 2 (an advance shifts them on and reads nidx + 3). Ready to
        # launch: bytes 0, 1 and 2 of stream s in the same places (pf_full), read by the last
        # three advances of the frame before (pf_stream: s at the first of them) or fetched
        # while the line is idle.
        tmpl_rd = self.tmpl_rd
        tq0, tq = Signal(8), Signal(8)
        pf_stream = Signal(range(self.n_streams))  # the stream whose bytes 0, 1, 2 are fetched
        pf_have = Signal(2)           # idle fetch: bytes read so far (0 .. 2)
        pf_full = Signal()            # bytes 0, 1, 2 of stream pf_stream (== s) in place
        shift = Signal()              # tq <- tq0 <- block RAM
        m.d.comb += pf_ready.eq(pf_full)
        with m.If(shift):
            m.d.sync += [tq.eq(tq0), tq0.eq(tmpl_rd.data)]
        with m.If(self.busy):
            with m.If(is_last):               # the last three advances: bytes 2, 1, 0 of the next frame
                m.d.comb += tmpl_rd.addr.eq(Cat(Const(2, 7), pf_stream))
            with m.Elif(pre_last):
                m.d.comb += tmpl_rd.addr.eq(Cat(Const(1, 7), pf_stream))
            with m.Elif(pre2_last):
                m.d.comb += tmpl_rd.addr.eq(Cat(Const(0, 7), s))
            with m.Else():
                m.d.comb += tmpl_rd.addr.eq(Cat(n4, cur.stream))
            m.d.comb += [tmpl_rd.en.eq(src.ready), shift.eq(advance)]
            with m.If(advance):
                with m.If(is_last):
                    m.d.sync += [pf_have.eq(0), pf_full.eq(pf_stream == s)]
                with m.Elif(pre2_last & ~pre_last):
                    m.d.sync += pf_stream.eq(s)
        with m.Elif(~pf_full):                        # idle: fetch bytes 0, 1 and 2 of stream s
            m.d.comb += [tmpl_rd.addr.eq(Cat(pf_have, Const(0, 5), s)), tmpl_rd.en.eq(1),
                         shift.eq(pf_have != 0)]
            m.d.sync += [pf_stream.eq(s), pf_have.eq(pf_have + 1), pf_full.eq(pf_have == 2)]
        with m.Else():                                # ready: byte 3 is read on the launch
            m.d.comb += [tmpl_rd.addr.eq(Cat(Const(3, 7), s)), tmpl_rd.en.eq(go), shift.eq(go)]
            with m.If(go):
                m.d.sync += [pf_have.eq(0), pf_full.eq(0)]
        # fetch again when prepare takes another stream (s changes) or the host writes a template
        with m.If(self.tmpl_written | self.handoff.picked):
            m.d.sync += [pf_have.eq(0), pf_full.eq(0)]

        # signature and UDP checksum, three stages from the launch:
        #   launch cycle: the timestamp's words and the signature's static words summed, the
        #                 check (registered with the timestamp, from `now` and the handoff)
        #   +1: + check + the UDP part (byte-swapped when odd, see prepare)
        #   +2: the sum's residue modulo 0xFFFF in 0..0xFFFE (so 0 becomes 0xFFFF once
        #       inverted, RFC 768), inverted, swapped back: valid from the frame's byte 2
        now = self.now
        ts_sum = Signal(20)
        check = Signal(16)
        with m.If(~busy["ts"]):
            m.d.sync += [ts_sum.eq((now[32:48] + now[16:32]) + (now[:16] + pre.sig_sum)),
                         check.eq(pre.sig_x ^ now[32:48] ^ now[16:32] ^ now[:16])]
        signature = Signal(128)       # first byte in the top bits
        m.d.comb += signature.eq(Cat(check, ts[:16], ts[16:32], ts[32:48], cur.seq[:16], cur.seq[16:],
                                     cur.stream_id, Const(F.SIG_MAGIC, 16)))
        udp_total = Signal(20)
        m.d.sync += udp_total.eq(ts_sum + check + cur.udp_part)
        udp_res = Signal(16)
        m.d.comb += udp_res.eq(~residue(udp_total[:16], udp_total[16:]))
        udp_csum = Signal(16)
        m.d.sync += udp_csum.eq(Mux(cur.frame_len[0] ^ cur.udp_off[0], Cat(udp_res[8:], udp_res[:8]), udp_res))

        # what byte nidx is (flags registered on the launch for byte 1, on an advance for
        # the byte after), and the byte itself (out, from them):
        #   in_sig: nidx >= L - 20 (sig_k: its byte in the signature, mod 16); in_hdr: nidx
        #   < hdr_len; the length and IPv4 checksum fields' bytes resolved by priority into
        #   fbyte; each modifier's mask and value, shifted a byte per advance from its offset
        #   (0 outside), their top bytes merged (pm, pv); which of the signature, fbyte or the
        #   patched template byte it is (use_*, else zero fill); the UDP checksum's (udp_hi,
        #   udp_lo), moved on to the output's own flags (out_udp_hi, out_udp_lo) on the next
        #   advance. A field or modifier starts at nidx + 1 when at_n2 (n2 == its offset,
        #   registered from n3 on each advance); on the launch every flag comes from the
        #   handoff's launch flags.
        sig_start = Signal(14)        # L - 20 (mod 2**14, as the frame's byte index)
        in_sig, in_hdr = Signal(), Signal()
        sig_k = Signal(4)
        fbyte = Signal(8)
        udp_hi, udp_lo, out_udp_hi, out_udp_lo = Signal(), Signal(), Signal(), Signal()
        # (name, enabled, offset, value on the line, value prepared) of each patch field
        fields = [(name, getattr(cur, f"{name}_en"), getattr(cur, f"{name}_off"), getattr(cur, _value(name)),
                   getattr(pre, _value(name))) for name in FIELDS]
        fields.append(("udp", cur.udp_en, cur.udp_off, None, None))
        f_hi = {name: Signal(name=f"{name}_hi") for name in FIELDS}         # nidx == off (enabled)
        at_n2 = {name: Signal(name=f"{name}_at_n2") for name, *_ in fields}  # n2 == off (enabled)
        mod_at_n2 = [Signal(name=f"mod{j}_at_n2") for j in range(self.n_modifiers)]

        msr = [Signal(32, name=f"mod{j}_msr") for j in range(self.n_modifiers)]
        vsr = [Signal(32, name=f"mod{j}_vsr") for j in range(self.n_modifiers)]
        pm, pv = Signal(8), Signal(8)  # their top bytes (byte nidx's) merged
        use_sig, use_f, use_t = Signal(), Signal(), Signal()   # byte nidx: signature, fbyte, patched tq

        out = Signal(8)
        with m.If(self.busy):
            with m.If(advance):
                # byte nidx into out; the flags of byte n2
                byte = select([(use_sig, signature.word_select(~sig_k, 8)), (use_f, fbyte),
                               (use_t, (tq & ~pm) | (pv & pm))])
                # the fields' flags for byte n2: hi = at_n2, lo = hi of byte nidx; the last field wins
                flags = [(at_n2[name], f_hi[name], value) for name, _, _, value, _ in fields[:3]]
                sels = priority([flag for hi, lo, _ in reversed(flags) for flag in (hi, lo)])
                fn = select(list(zip(sels, [v for _, _, value in reversed(flags) for v in (value[8:], value[:8])])))
                in_sig_n, in_hdr_n, f_any_n = n2 >= sig_start, n2 < cur.hdr_len, Cat(sels).any()
                m.d.sync += [out.eq(byte), in_sig.eq(in_sig_n), in_hdr.eq(in_hdr_n), sig_k.eq(sig_k + 1),
                             fbyte.eq(fn), use_sig.eq(in_sig_n),
                             use_f.eq(~in_sig_n & in_hdr_n & f_any_n), use_t.eq(~in_sig_n & in_hdr_n & ~f_any_n),
                             udp_hi.eq(at_n2["udp"]), udp_lo.eq(udp_hi),
                             out_udp_hi.eq(udp_hi & in_hdr & ~in_sig), out_udp_lo.eq(udp_lo & in_hdr & ~in_sig)]
                for name, en, off, *_ in fields:
                    m.d.sync += at_n2[name].eq(en & (n3 == off))
                for name in FIELDS:
                    m.d.sync += f_hi[name].eq(at_n2[name])
                tops = []
                for j in range(self.n_modifiers):
                    mk = Mux(mod_at_n2[j], cur.mod_mask[j], msr[j] << 8)
                    vl = Mux(mod_at_n2[j], cur.mod_value[j], vsr[j] << 8)
                    m.d.sync += [msr[j].eq(mk), vsr[j].eq(vl),
                                 mod_at_n2[j].eq(cur.mod_apply[j] & (n3 == cur.mod_off[j]))]
                    tops.append((mk[24:], vl[24:]))
                top_m, top_v = merge_mods(tops)
                m.d.sync += [pm.eq(top_m), pv.eq(top_v)]
        with m.Else():
            # byte 0 into out, the flags of byte 1 (from the handoff's launch flags): loaded
            # while the line is idle, held from the launch on
            lf = pre.launch
            f0 = select([(getattr(lf, f"{name}_sel0"), value[8:]) for name, *_, value in fields[:3]])
            byte0 = select([(lf.sig0, Const(F.SIG_MAGIC >> 8, 8)), (lf.use0_f, f0),
                            (lf.use0_t, (tq & ~pre.pm0) | (pre.pv0 & pre.pm0))])
            f1 = select([(getattr(lf, f"{name}_sel1{hl}"), value[8:] if hl == "hi" else value[:8])
                         for name, *_, value in fields[:3] for hl in ("hi", "lo")])
            m.d.sync += [out.eq(byte0), sig_start.eq(pre.frame_len - F.SIG_FROM_END),
                         in_sig.eq(lf.sig01), in_hdr.eq(lf.hdr1),
                         sig_k.eq(F.SIG_FROM_END + 1 - pre.frame_len[:4]),
                         fbyte.eq(f1),
                         use_sig.eq(lf.sig01), use_f.eq(lf.use1_f), use_t.eq(lf.use1_t),
                         udp_hi.eq(lf.udp_at1), udp_lo.eq(lf.udp_at0),
                         out_udp_hi.eq(lf.udp_out0), out_udp_lo.eq(0)]
            for name, *_ in fields:
                m.d.sync += at_n2[name].eq(getattr(lf, f"{name}_at2"))
            for name in FIELDS:
                m.d.sync += f_hi[name].eq(getattr(lf, f"{name}_at1"))
            tops = []
            for j in range(self.n_modifiers):
                mask, value = pre.mod_mask[j], pre.mod_value[j]
                mk = Mux(getattr(lf, f"mod{j}_at1"), mask, Mux(getattr(lf, f"mod{j}_at0"), mask << 8, 0))
                vl = Mux(getattr(lf, f"mod{j}_at1"), value, value << 8)
                with m.If(mods_follow):
                    m.d.sync += [msr[j].eq(mk), vsr[j].eq(vl), mod_at_n2[j].eq(getattr(lf, f"mod{j}_at2"))]
                tops.append((mk[24:], vl[24:]))
            top_m, top_v = merge_mods(tops)
            if mods_follow is not None:
                with m.If(mods_follow):
                    m.d.sync += [pm.eq(top_m), pv.eq(top_v)]
            else:
                m.d.sync += [pm.eq(top_m), pv.eq(top_v)]
        m.d.comb += [
            src.valid.eq(self.busy),
            src.p.data.eq(Mux(out_udp_hi, udp_csum[8:], Mux(out_udp_lo, udp_csum[:8], out))),
            src.p.first.eq(is_first), src.p.last.eq(is_last),
        ]
        return m


def _value(field):
    """The frame layout's member holding the value of patch field ``field``."""
    return "ip_csum" if field == "ip" else field
