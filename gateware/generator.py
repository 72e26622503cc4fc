"""Traffic generator of one port: up to 16 streams (``n_streams``, a power of two), each with
its own header template, frame size mode and rate, a pool of ``n_modifiers`` field
modifiers (at most 8), and the signature (stream id,
sequence, transmit timestamp, check) in the last 16 bytes of every frame. The frame format
and every rule are in :mod:`wirespeed.gateware.streamdesc`.

Pipeline: the :class:`~.scheduler.StreamScheduler` offers the earliest-due stream; the
*prepare* stage reads its descriptor, sizes the frame, takes the modifiers' values and
sums the checksums (a few cycles, while the previous frame is still on the wire); the
frame waits until it is due and the line is free, then the *emitter* sends it as an
unbroken run of ``L - 4`` bytes (the MAC appends the FCS and has no underrun protection),
template bytes patched on the fly, zero fill, then the signature. The transmit timestamp is
``now`` at launch, a fixed number of cycles before the first bit reaches the wire.
"""

from amaranth import Module, Signal, Cat, Const, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from . import frame as F
from . import streamdesc as SD
from .modifier import Modifier
from .prng import RandomRange
from .scheduler import StreamScheduler
from .streams import TxStream
from .txcounters import TxStreamCounters

__all__ = ["TrafficGenerator"]

_DESC = {}
_at = 0
for _name, _bits in SD.DESC_FIELDS:
    _DESC[_name] = (_at, _bits)
    _at += _bits


def _field(entry, name):
    at, bits = _DESC[name]
    return entry[at:at + bits]


def _fold(value, width):
    """Ones' complement fold of ``value`` to 16 bits (two end-around carries)."""
    once = value[:16] + value[16:width]
    return (once[:16] + once[16:])[:16]


_CONFIG = [
    ("enable", 1, 0, "1: this port transmits when a trial starts"),
    ("mode", 1, 0, "trial end: 0 after `duration` cycles, 1 after `count` frames"),
    ("duration", 64, 125_000, "trial length in clock cycles (mode 0): frames due before it are sent"),
    ("count", 64, 1000, "frames per trial, all streams together (mode 1)"),
    ("burst_len", 32, 0, "0: frames at their due times; N: bursts of N frames back to back"),
    ("burst_gap", 32, 0, "idle cycles between the end of a burst and the next one"),
    ("seed", 32, 1, "seed of the random size and random modifier generators (applied on CLEAR)"),
    ("phase_at", 64, 0, "rate phase switch, clock cycles (same clock as duration; 0 off): streams not in "
                        "phase2 send only frames due before it, phase2 streams start at it"),
    ("phase2", SD.N_STREAMS, 0, "bit s: stream s belongs to phase 2 (its frame k is due at phase_at + k * period)"),
]
_COUNTERS = [
    ("tx_frames", "test frames sent"),
    ("tx_bytes", "bytes of test frames sent, FCS included"),
    ("first_tx_ns", "transmit timestamp of the first frame"),
    ("last_tx_ns", "transmit timestamp of the last frame"),
]


class TrafficGenerator(wiring.Component):
    start: In(1)
    stop: In(1)
    clear: In(1)
    snapshot: In(1)
    now: In(64)
    hold: In(1)            # keep the line for another source (between frames only)
    running_extra: In(1)   # shown in pN.gen.running too (a START waiting in the port)
    busy: Out(1)           # a frame is being emitted
    running: Out(1)        # trial in progress: scheduling, a frame prepared or on its way
    source: Out(TxStream)

    def __init__(self, bank, prefix, *, n_streams=SD.N_STREAMS, n_modifiers=SD.N_MODIFIERS):
        super().__init__()
        if n_streams not in (2, 4, 8, 16):
            raise ValueError(f"TrafficGenerator: n_streams must be 2, 4, 8 or 16 (4-bit modifier stream field), "
                             f"got {n_streams}")
        if not 0 <= n_modifiers <= SD.N_MODIFIERS:
            raise ValueError(f"TrafficGenerator: n_modifiers must be 0 to {SD.N_MODIFIERS}, got {n_modifiers}")
        self.n_streams, self.n_modifiers = n_streams, n_modifiers
        p = f"{prefix}.gen"
        self._cfg = {name: bank.add(f"{p}.{name}", n_streams if name == "phase2" else bits, "rw", reset=reset,
                                    doc=doc)
                     for name, bits, reset, doc in _CONFIG}
        self._running = bank.add(f"{p}.running", 1, "r",
                                 doc="1 from START (including a START waiting for the histogram clear) until the last frame has left (live)")
        self._snap = {name: bank.add(f"{p}.{name}", 64, "r", doc=doc + " (snapshot)")
                      for name, doc in _COUNTERS}
        self._tmpl = bank.add_memory(f"{p}.tmpl", 8, n_streams * SD.TEMPLATE_BYTES, access="rw",
                                     doc=f"frame header templates: stream s byte i at entry s*{SD.TEMPLATE_BYTES}+i")
        self._desc = bank.add_memory(f"{p}.desc", SD.DESC_BITS, n_streams, access="rw",
                                     doc="stream descriptors (fields in wirespeed.gateware.streamdesc.DESC_FIELDS)")
        self._sizes = bank.add_memory(f"{p}.sizes", 14, SD.SIZE_TABLE, access="rw",
                                      doc="frame size table of sequence (IMIX) streams, bytes")
        self._stream_tx = bank.add_memory(f"{p}.stream_tx", 128, n_streams,
                                          doc="per stream: frames sent (bits 0-63), bytes sent (64-127) (snapshot)")
        self._mods = []
        for j in range(n_modifiers):
            bank.align(64)
            self._mods.append({name: bank.add(f"{prefix}.mod{j}.{name}", bits, "rw", doc=doc)
                               for name, bits, doc in SD.MOD_FIELDS})
        self._live = {name: Signal(64, name=f"live_{name}") for name, _ in _COUNTERS}

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        cfg = self._cfg

        # --- tables written by the host -------------------------------------------------
        m.submodules.tmpl = tmpl = Memory(shape=8, depth=n * SD.TEMPLATE_BYTES, init=[])
        m.submodules.desc = desc = Memory(shape=SD.DESC_BITS, depth=n, init=[])
        m.submodules.sizes = sizes = Memory(shape=14, depth=SD.SIZE_TABLE, init=[])
        for mem, win in ((tmpl, self._tmpl), (desc, self._desc), (sizes, self._sizes)):
            granular = win.words > 1
            wp = mem.write_port(granularity=32) if granular else mem.write_port()
            host = mem.read_port()
            m.d.comb += [wp.addr.eq(win.w_addr), host.addr.eq(win.addr), win.data.eq(host.data)]
            if granular:
                m.d.comb += [wp.data.eq(win.w_data.replicate(win.words)),
                             wp.en.eq(Mux(win.w_en, 1 << win.w_word, 0))]
            else:
                m.d.comb += [wp.data.eq(win.w_data), wp.en.eq(win.w_en)]
        # the streams' enable bits, kept beside the descriptors for the scheduler's scan
        stream_en = Signal(n)
        with m.If(self._desc.w_en & (self._desc.w_word == 0)):
            m.d.sync += stream_en.bit_select(self._desc.w_addr, 1).eq(self._desc.w_data[0])

        # --- scheduler ------------------------------------------------------------------
        m.submodules.sched = sched = StreamScheduler(n)
        m.d.comb += [
            sched.start.eq(self.start), sched.stop.eq(self.stop), sched.enable.eq(cfg["enable"]),
            sched.mode.eq(cfg["mode"]), sched.duration.eq(cfg["duration"]), sched.count.eq(cfg["count"]),
            sched.burst_len.eq(cfg["burst_len"]), sched.burst_gap.eq(cfg["burst_gap"]),
            sched.stream_en.eq(stream_en), sched.phase_at.eq(cfg["phase_at"]), sched.phase2.eq(cfg["phase2"]),
        ]

        # --- per-stream state: sequence numbers and size walk (0 until first written) ---
        m.submodules.seqs = seqs = Memory(shape=32, depth=n, init=[])
        m.submodules.sstate = sstate = Memory(shape=14, depth=n, init=[])
        seq_rd, seq_wr = seqs.read_port(domain="comb"), seqs.write_port()
        ss_rd, ss_wr = sstate.read_port(domain="comb"), sstate.write_port()
        seq_known = Signal(n)
        ss_known = Signal(n)

        # --- modifiers and random sizes -------------------------------------------------
        mods = []
        for j, regs in enumerate(self._mods):
            unit = Modifier()
            m.submodules[f"mod{j}"] = unit
            m.d.comb += [
                unit.mode.eq(regs["mode"]), unit.stream.eq(regs["stream"]), unit.chain.eq(regs["chain"]),
                unit.base.eq(regs["base"]), unit.step.eq(regs["step"]), unit.count.eq(regs["count"]),
                unit.seed.eq(_seed_for(cfg["seed"], j)), unit.clear.eq(self.clear),
                unit.chain_in.eq(mods[-1].wrap_out if mods else 0),
            ]
            mods.append(unit)
        m.submodules.size_rng = size_rng = RandomRange()
        # the size generator is unit N_MODIFIERS whatever the number built (streamdesc, host model)
        m.d.comb += [size_rng.seed.eq(_seed_for(cfg["seed"], SD.N_MODIFIERS)), size_rng.load.eq(self.clear)]

        # --- prepare ----------------------------------------------------------------------
        desc_rd = desc.read_port()
        size_rd = sizes.read_port()
        s = Signal(range(n))          # stream being prepared
        d = Signal(SD.DESC_BITS)      # its descriptor
        prepared = Signal()           # a frame is ready to launch
        pre = _FrameRegs(self.n_modifiers, "pre")
        m.d.comb += [desc_rd.addr.eq(sched.pick_stream), seq_rd.addr.eq(s), ss_rd.addr.eq(s)]

        seq_now = Signal(32)
        m.d.comb += seq_now.eq(Mux(seq_known.bit_select(s, 1), seq_rd.data, 0))
        walk = Signal(14)             # increment: current size; sequence: index in the table
        size_a, size_b, size_step = (_field(d, "size_a"), _field(d, "size_b"), _field(d, "size_step"))
        size_mode = _field(d, "size_mode")
        m.d.comb += walk.eq(Mux(ss_known.bit_select(s, 1), ss_rd.data,
                                Mux(size_mode == SD.SIZE_INCREMENT, size_a, 0)))
        m.d.comb += [size_rd.addr.eq(_field(d, "size_table_base") + walk),
                     size_rng.span.eq(size_b - size_a + 1)]
        frame_len = Signal(14)
        with m.Switch(size_mode):
            with m.Case(SD.SIZE_FIXED):
                m.d.comb += frame_len.eq(size_a)
            with m.Case(SD.SIZE_INCREMENT):
                m.d.comb += frame_len.eq(walk)
            with m.Case(SD.SIZE_RANDOM):
                m.d.comb += frame_len.eq(size_a + size_rng.value)
            with m.Case(SD.SIZE_SEQUENCE):
                m.d.comb += frame_len.eq(size_rd.data)
        next_walk = Signal(14)
        with m.If(size_mode == SD.SIZE_INCREMENT):
            m.d.comb += next_walk.eq(Mux(walk + size_step > size_b, size_a, walk + size_step))
        with m.Else():
            m.d.comb += next_walk.eq(Mux(walk + 1 >= _field(d, "size_table_len"), 0, walk + 1))

        mods_busy = Signal()
        if mods:
            m.d.comb += mods_busy.eq(Cat(u.busy for u in mods).any())
        len1 = Signal(16)
        len2 = Signal(16)
        m.d.comb += [len1.eq(frame_len - _field(d, "len1_adj")), len2.eq(frame_len - _field(d, "len2_adj"))]
        ip_terms, udp_terms = [], []
        for j, (unit, regs) in enumerate(zip(mods, self._mods)):
            mv = Signal(32, name=f"mv{j}")
            m.d.comb += mv.eq(Mux(unit.applies, unit.value & regs["mask"], 0))
            ip_terms += [Mux(regs["csum"][0], mv[16:], 0), Mux(regs["csum"][0], mv[:16], 0)]
            udp_terms += [Mux(regs["csum"][1], mv[16:], 0), Mux(regs["csum"][1], mv[:16], 0)]
        ip_sum = Signal(24)
        udp_sum = Signal(24)
        m.d.comb += [
            # ones' complement sums of 16-bit terms, wide enough not to overflow, folded later
            ip_sum.eq(sum([_field(d, "ipcsum_base"), Mux(_field(d, "len1_en"), len1, 0), *ip_terms])),
            udp_sum.eq(sum([_field(d, "udpcsum_base"), Mux(_field(d, "len2_en"), len2 << 1, 0), *udp_terms])),
        ]
        for unit in mods:
            m.d.comb += unit.frame_stream.eq(s)

        with m.FSM(name="prep"):
            with m.State("IDLE"):
                with m.If(sched.pick_valid & ~prepared & ~self.stop & ~self.start):
                    m.d.sync += s.eq(sched.pick_stream)
                    m.next = "READ"
            with m.State("READ"):          # descriptor on desc_rd.data now
                m.d.sync += d.eq(desc_rd.data)
                m.next = "SIZE"
            with m.State("SIZE"):          # size table read / random size draw issued
                with m.If(size_mode == SD.SIZE_RANDOM):
                    m.d.comb += size_rng.req.eq(1)
                m.next = "WAIT_RNG"
            with m.State("WAIT_RNG"):
                with m.If(((size_mode != SD.SIZE_RANDOM) | size_rng.ready) & ~mods_busy):
                    m.next = "COMMIT"
            with m.State("COMMIT"):
                # freeze the frame, advance every per-stream state, move the due time on
                m.d.comb += [sched.take.eq(1), sched.take_stream.eq(s), sched.take_period.eq(_field(d, "period"))]
                for unit in mods:
                    m.d.comb += unit.frame.eq(1)
                m.d.comb += [seq_wr.addr.eq(s), seq_wr.data.eq(seq_now + 1), seq_wr.en.eq(1),
                             ss_wr.addr.eq(s), ss_wr.data.eq(next_walk),
                             ss_wr.en.eq((size_mode == SD.SIZE_INCREMENT) | (size_mode == SD.SIZE_SEQUENCE))]
                m.d.sync += [seq_known.eq(seq_known | (Const(1, n) << s)),
                             ss_known.eq(ss_known | (Const(1, n) << s))]
                m.d.sync += [
                    prepared.eq(1),
                    pre.stream.eq(s), pre.stream_id.eq(_field(d, "stream_id")), pre.seq.eq(seq_now),
                    pre.frame_len.eq(frame_len), pre.hdr_len.eq(_field(d, "hdr_len")),
                    pre.due.eq(sched.take_due),
                    pre.len1_en.eq(_field(d, "len1_en")), pre.len1_off.eq(_field(d, "len1_off")), pre.len1.eq(len1),
                    pre.len2_en.eq(_field(d, "len2_en")), pre.len2_off.eq(_field(d, "len2_off")), pre.len2.eq(len2),
                    pre.ip_en.eq(_field(d, "ipcsum_en")), pre.ip_off.eq(_field(d, "ipcsum_off")),
                    pre.ip_csum.eq(~_fold(ip_sum, 24)),
                    pre.udp_en.eq(_field(d, "udpcsum_en")), pre.udp_off.eq(_field(d, "udpcsum_off")),
                    pre.udp_sum.eq(_fold(udp_sum, 24)),
                ]
                for j, (unit, regs) in enumerate(zip(mods, self._mods)):
                    m.d.sync += [pre.mod_apply[j].eq(unit.applies), pre.mod_off[j].eq(regs["offset"]),
                                 pre.mod_mask[j].eq(regs["mask"]), pre.mod_value[j].eq(unit.value)]
                m.next = "IDLE"
        m.d.comb += [sched.prepared.eq(prepared), sched.prepared_due.eq(pre.due)]

        live = self._live

        # --- launch and emit --------------------------------------------------------------
        cur = _FrameRegs(self.n_modifiers, "cur")
        go = Signal()
        # the line is free when the previous frame's wire time (preamble, frame, minimum gap)
        # has passed: a frame launched earlier would wait inside the MAC, and its timestamp
        # would no longer be a fixed time before its first bit on the wire
        wire_left = Signal(15)
        with m.If(wire_left != 0):
            m.d.sync += wire_left.eq(wire_left - 1)
        m.d.comb += [sched.line_free.eq(~self.busy & ~self.hold & (wire_left == 0)), go.eq(sched.go)]
        ts = Signal(48)
        idx = Signal(14)              # byte of the frame on the output
        last_idx = Signal(14)
        advance = Signal()
        src = self.source
        m.d.comb += advance.eq(self.busy & src.ready)
        with m.If(go):
            m.d.sync += [cur.eq(pre), prepared.eq(0), self.busy.eq(1), idx.eq(0),
                         wire_left.eq(pre.frame_len + F.WIRE_OVERHEAD - 1),
                         last_idx.eq(pre.frame_len - F.FCS - 1), ts.eq(self.now[:48]),
                         live["tx_frames"].eq(live["tx_frames"] + 1),
                         live["tx_bytes"].eq(live["tx_bytes"] + pre.frame_len),
                         live["last_tx_ns"].eq(self.now)]
            with m.If(live["tx_frames"] == 0):
                m.d.sync += live["first_tx_ns"].eq(self.now)
        with m.Elif(advance):
            m.d.sync += idx.eq(idx + 1)
            with m.If(idx == last_idx):
                m.d.sync += self.busy.eq(0)
        with m.If(self.stop | self.start):
            m.d.sync += prepared.eq(0)

        # template byte: address the next byte a cycle ahead (synchronous read)
        tmpl_rd = tmpl.read_port()
        rd_byte = Signal(7)
        m.d.comb += rd_byte.eq(Mux(go, 0, Mux(advance, idx + 1, idx)))
        m.d.comb += tmpl_rd.addr.eq(Cat(rd_byte, Mux(go, pre.stream, cur.stream)))

        # signature: registered the cycle after launch, check and checksum the cycles after
        check = Signal(16)
        m.d.comb += check.eq(F.SIG_CHECK_SEED ^ cur.stream_id ^ cur.seq[16:] ^ cur.seq[:16]
                             ^ ts[32:] ^ ts[16:32] ^ ts[:16])
        signature = Signal(128)       # first byte in the top bits
        m.d.comb += signature.eq(Cat(check, ts[:16], ts[16:32], ts[32:48], cur.seq[:16], cur.seq[16:],
                                     cur.stream_id, Const(F.SIG_MAGIC, 16)))
        sig_sum = Signal(20)
        m.d.sync += sig_sum.eq(sum(signature.word_select(i, 16) for i in range(8)))
        sig_fold = Signal(16)
        m.d.comb += sig_fold.eq(_fold(sig_sum, 20))
        odd = Signal()
        m.d.comb += odd.eq((cur.frame_len[0] ^ cur.udp_off[0]))
        sig_aligned = Signal(16)
        m.d.comb += sig_aligned.eq(Mux(odd, Cat(sig_fold[8:], sig_fold[:8]), sig_fold))
        udp_total = Signal(17)
        m.d.comb += udp_total.eq(cur.udp_sum + sig_aligned)
        udp_csum = Signal(16)
        m.d.sync += udp_csum.eq(Mux(~_fold(udp_total, 17) == 0, 0xFFFF, ~_fold(udp_total, 17)))

        # the byte on the output
        sig_start = Signal(14)
        m.d.comb += sig_start.eq(cur.frame_len - F.SIG_FROM_END)
        byte = Signal(8)
        with m.If(idx >= sig_start):
            m.d.comb += byte.eq(signature.word_select(~(idx - sig_start)[:4], 8))
        with m.Elif(idx < cur.hdr_len):
            patched = tmpl_rd.data
            for j in range(self.n_modifiers):
                rel = Signal(14, name=f"rel{j}")
                m.d.comb += rel.eq(idx - cur.mod_off[j])
                hit = cur.mod_apply[j] & (rel < 4)
                mask_b = cur.mod_mask[j].word_select(~rel[:2], 8)
                val_b = cur.mod_value[j].word_select(~rel[:2], 8)
                patched = Mux(hit, (patched & ~mask_b) | (val_b & mask_b), patched)
            for en, off, value in ((cur.len1_en, cur.len1_off, cur.len1), (cur.len2_en, cur.len2_off, cur.len2),
                                   (cur.ip_en, cur.ip_off, cur.ip_csum), (cur.udp_en, cur.udp_off, udp_csum)):
                patched = Mux(en & (idx == off), value[8:], Mux(en & (idx == off + 1), value[:8], patched))
            m.d.comb += byte.eq(patched)
        m.d.comb += [
            src.valid.eq(self.busy), src.p.data.eq(byte),
            src.p.first.eq(idx == 0), src.p.last.eq(idx == last_idx),
        ]

        # --- counters, per-stream transmit counts, snapshot --------------------------------
        m.submodules.txc = txc = TxStreamCounters(n)
        m.d.comb += [txc.count.eq(go), txc.stream.eq(pre.stream), txc.frame_len.eq(pre.frame_len),
                     txc.clear.eq(self.clear), txc.snapshot.eq(self.snapshot),
                     txc.read_addr.eq(self._stream_tx.addr), self._stream_tx.data.eq(txc.read_data)]
        with m.If(self.snapshot):
            for name, reg in self._snap.items():
                m.d.sync += reg.eq(live[name])
        with m.If(self.clear):
            for sig in live.values():
                m.d.sync += sig.eq(0)
            m.d.sync += [seq_known.eq(0), ss_known.eq(0)]

        m.d.comb += [self.running.eq(sched.sending | prepared | self.busy),
                     self._running.eq(self.running | self.running_extra)]
        return m


def _seed_for(seed, unit):
    """Gateware form of :func:`streamdesc.seed_for` (never 0)."""
    x = (seed ^ (((unit + 1) * 0x9E3779B9) & 0xFFFFFFFF))[:32]
    return Mux(x == 0, 0x6D2B79F5, x)


class _FrameRegs:
    """The registers describing one frame: filled by prepare, copied by the emitter."""

    def __init__(self, n_modifiers, prefix):
        def sig(name, width):
            return Signal(width, name=f"{prefix}_{name}")
        self.stream, self.stream_id, self.seq = sig("stream", 4), sig("stream_id", 16), sig("seq", 32)
        self.frame_len, self.hdr_len, self.due = sig("frame_len", 14), sig("hdr_len", 7), sig("due", 48)
        self.len1_en, self.len1_off, self.len1 = sig("len1_en", 1), sig("len1_off", 7), sig("len1", 16)
        self.len2_en, self.len2_off, self.len2 = sig("len2_en", 1), sig("len2_off", 7), sig("len2", 16)
        self.ip_en, self.ip_off, self.ip_csum = sig("ip_en", 1), sig("ip_off", 7), sig("ip_csum", 16)
        self.udp_en, self.udp_off, self.udp_sum = sig("udp_en", 1), sig("udp_off", 7), sig("udp_sum", 16)
        self.mod_apply = [sig(f"mod{j}_apply", 1) for j in range(n_modifiers)]
        self.mod_off = [sig(f"mod{j}_off", 7) for j in range(n_modifiers)]
        self.mod_mask = [sig(f"mod{j}_mask", 32) for j in range(n_modifiers)]
        self.mod_value = [sig(f"mod{j}_value", 32) for j in range(n_modifiers)]

    def signals(self):
        return [v for v in vars(self).values() if isinstance(v, Signal)] + \
            self.mod_apply + self.mod_off + self.mod_mask + self.mod_value

    def eq(self, other):
        return [a.eq(b) for a, b in zip(self.signals(), other.signals())]
