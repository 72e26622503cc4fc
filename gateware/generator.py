"""Traffic generator of one port: up to 16 streams (``n_streams``, a power of two), each with
its own header template, frame size mode and rate, a pool of ``n_modifiers`` field
modifiers (at most 8), and the signature (stream id,
sequence, transmit timestamp, check) in the last 16 bytes of every frame. The frame format
and every rule are in :mod:`wirespeed.gateware.streamdesc`.

Pipeline: the :class:`~.scheduler.StreamScheduler` offers the earliest-due stream; the
*prepare* stage reads its descriptor, sizes the frame, takes the modifiers' values and
sums the checksums (five cycles from the pick, more while a random size is drawn, while
the previous frame is still on the wire); the frame waits until it is due and the line is
free, then the *emitter* sends it as an unbroken run of ``L - 4`` bytes (the MAC appends
the FCS and has no underrun protection), template bytes patched, zero fill, then the
signature, the first byte the cycle after the launch. The transmit timestamp is ``now`` at
launch, a fixed number of cycles before the first bit reaches the wire.

Timing (125 MHz on an ECP5, stage by stage in :meth:`TrafficGenerator.elaborate`): every
block RAM output goes straight into a register; the checksums are ones' complement sums
spread over the prepare stages (at most an end-around add, or two carry chains, a cycle);
the byte on the output is a register, computed a byte ahead from registers (the template
byte, and flags saying what the byte is, kept a byte further ahead); the UDP checksum takes
three cycles from the launch, so its field must start at byte 2 or later.
"""

from amaranth import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from . import frame as F
from . import streamdesc as SD
from .modifier import Modifier
from .prng import RandomRange
from .replica import replicas
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


def _ones_add(a, b):
    """Ones' complement sum of two 16-bit values (end-around carry): 0 only if both are 0. Two
    carry chains side by side and a mux: ``a + b``, and ``a - ~b`` (= ``a + b + 1 - 2**16``, a
    subtraction, so one chain with its carry-in set) taken when ``a + b`` carries."""
    t, v = a + b, a - ~b
    return Mux(t[16], v[:16], t[:16])


def _fold(value, width):
    """Ones' complement fold of ``value`` (below 2**32) to 16 bits: both end-around carries,
    as one end-around add of its halves. 0 only if ``value`` is 0."""
    hi = value[16:width]
    return _ones_add(value[:16], Cat(hi, Const(0, 16 - len(hi))))


def _residue(lo, hi):
    """``(hi * 2**16 + lo) % 0xFFFF`` in 0..0xFFFE, for ``hi`` below 16 bits: ``lo + hi``, or
    ``lo - ~hi`` (= ``lo + hi - 0xFFFF``) when that is not negative (two chains side by side)."""
    hi = Cat(hi, Const(0, 16 - len(hi)))
    t, v = lo + hi, lo - ~hi
    return Mux(v[16], t[:16], v[:16])


def _u16(x):
    """``x`` modulo 2**16 (sign-extended first if signed), as 16 bits."""
    x = Value.cast(x)
    if len(x) < 16:
        x = Cat(x, (x[-1] if x.shape().signed else Const(0, 1)).replicate(16 - len(x)))
    return x[:16]


def _rotl1(x):
    """``x`` modulo 2**16 rotated left by one: ``2 * x`` modulo 0xFFFF."""
    x = _u16(x)
    return Cat(x[15], x[:15])


def _priority(flags):
    """``flags`` (first wins) made one-hot: each and none before it."""
    out, before = [], Const(0, 1)
    for flag in flags:
        out.append(flag & ~before)
        before = before | flag
    return out


def _merge_mods(pairs):
    """(mask, value) bytes of modifiers, later ones first where they overlap, merged into one."""
    mask, value = Const(0, 8), Const(0, 8)
    for mk, vl in pairs:
        mask, value = mask | mk, (value & ~mk) | (vl & mk)
    return mask, value


def _select(pairs):
    """OR of the values whose (one-hot) select is set."""
    acc = Const(0, 8)
    for sel, value in pairs:
        acc = acc | Mux(sel, value, 0)
    return acc


def _tree_sum(terms):
    """Sum of ``terms`` as a balanced tree of two-input adders (0 for none)."""
    terms = list(terms)
    if not terms:
        return Const(0, 1)
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


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
                                 doc="1 from START (including a START waiting for the histogram clear) "
                                     "until the last frame has left (live)")
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
        m.submodules.sizes_gen = sizes_gen = Memory(shape=14, depth=SD.SIZE_TABLE, init=[])
        wp = desc.write_port(granularity=32)
        host = desc.read_port()
        win = self._desc
        m.d.comb += [wp.addr.eq(win.w_addr), host.addr.eq(win.addr), win.data.eq(host.data),
                     wp.data.eq(win.w_data.replicate(win.words)), wp.en.eq(Mux(win.w_en, 1 << win.w_word, 0))]
        # block RAM tables in two copies, the host's and the generator's. The host's copy is
        # one port that writes and reads (the host's write address while it writes): a read
        # port beside a write port of its own gets collision logic (a LUT) behind the block
        # RAM's slow output. The generator's copy of the template keeps a write port of its
        # own (a template written during a trial still reaches the frames in order); the
        # size table's shares it too (see prepare).
        m.submodules.tmpl_host = tmpl_host = Memory(shape=8, depth=n * SD.TEMPLATE_BYTES, init=[])
        for mem, win in ((tmpl_host, self._tmpl), (sizes, self._sizes)):
            shared = Signal(range(mem.depth), name=f"{win.addr.name}_port")
            wp, host = mem.write_port(), mem.read_port()
            m.d.comb += [shared.eq(Mux(win.w_en, win.w_addr, win.addr)), wp.addr.eq(shared), host.addr.eq(shared),
                         win.data.eq(host.data), wp.data.eq(win.w_data), wp.en.eq(win.w_en)]
        tmpl_wp = tmpl.write_port()
        m.d.comb += [tmpl_wp.addr.eq(self._tmpl.w_addr), tmpl_wp.data.eq(self._tmpl.w_data),
                     tmpl_wp.en.eq(self._tmpl.w_en)]
        sizes_w = self._sizes
        size_addr = Signal(range(SD.SIZE_TABLE))        # prepare's read address
        size_port = Signal(range(SD.SIZE_TABLE))
        gen_wp, size_rd = sizes_gen.write_port(), sizes_gen.read_port()
        m.d.comb += [size_port.eq(Mux(sizes_w.w_en, sizes_w.w_addr, size_addr)),
                     gen_wp.addr.eq(size_port), size_rd.addr.eq(size_port),
                     gen_wp.data.eq(sizes_w.w_data), gen_wp.en.eq(sizes_w.w_en)]

        # the streams' enable bits, kept beside the descriptors for the scheduler's scan
        stream_en = Signal(n)
        with m.If(self._desc.w_en & (self._desc.w_word == 0)):
            m.d.sync += stream_en.bit_select(self._desc.w_addr, 1).eq(self._desc.w_data[0])

        # the streams' size table bases, kept beside the descriptors (written with their word)
        # so that prepare can address the size table from c0
        tb_at, tb_bits = _DESC["size_table_base"]
        assert tb_at // 32 == (tb_at + tb_bits - 1) // 32, "size_table_base must sit in one descriptor word"
        m.submodules.tbases = tbases = Memory(shape=tb_bits, depth=n, init=[])
        tb_wr, tb_rd = tbases.write_port(), tbases.read_port(domain="comb")
        m.d.comb += [tb_wr.addr.eq(self._desc.w_addr), tb_wr.data.eq(self._desc.w_data[tb_at % 32:][:tb_bits]),
                     tb_wr.en.eq(self._desc.w_en & (self._desc.w_word == tb_at // 32))]

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
        # size walk (14 bits) and, for sequence streams, the next frame's size table address (10)
        m.submodules.sstate = sstate = Memory(shape=14 + 10, depth=n, init=[])
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
        # A frame is prepared in five cycles from the pick (c0) to pre.* (prepared from c5);
        # WAIT_RNG lasts until a random size is drawn (and no modifier is drawing).
        # Each stage is a register, a LUT RAM read, or at most two carry chains deep:
        #   c0 IDLE      the scheduler's pick is taken; the descriptor read is issued (LUT
        #                RAM); the stream's sequence number, size walk, next size table
        #                address, table base and known bits are registered (LUT RAM, read
        #                with the pick), the modifiers' masked values (checksum terms) too
        #   c1 READ      the descriptor is on desc_rd.data: registered (d), with the walk,
        #                the random span and the walk's limits; the size table read is
        #                issued (a block RAM port shared with the host's writes); the
        #                modifier terms are summed in groups of four, the sequence halves
        #   c2 SIZE      the size table word is registered (straight from the block RAM);
        #                a random size draw is requested; the length-field candidates
        #                (size_a - adj, walk - adj), the next walk's sums and compares, the
        #                signature's static words and the checksum bases + modifier terms
        #                (wide, exact) are registered
        #   c3 WAIT_RNG  the frame length, both length fields and their checksum terms for the
        #                stream's size mode are registered, the checksum sums folded to 16
        #                bits, the next walk and size table address chosen
        #   c4 COMMIT    one end-around add per checksum (+ the IPv4 / UDP length field); the
        #                frame is frozen in pre.* with its launch flags (what bytes 0 to 2
        #                are), every per-stream state advances
        # The modifiers' values change only on COMMIT's strobe, so their terms registered at
        # c0 are the values of this frame; the per-stream state written at COMMIT is read
        # again at the earliest n + 1 cycles later (the scheduler's next pass).
        desc_rd = desc.read_port()
        s = Signal(range(n))          # stream being prepared
        d = Signal(SD.DESC_BITS)      # its descriptor (from c2)
        dn = desc_rd.data             # the descriptor at c1 (READ)
        prepared = Signal()           # a frame is ready to launch
        pre = _FrameRegs(self.n_modifiers, "pre")
        pick = sched.pick_stream
        m.d.comb += [desc_rd.addr.eq(pick), seq_rd.addr.eq(pick), ss_rd.addr.eq(pick), tb_rd.addr.eq(pick)]
        for unit in mods:
            m.d.comb += unit.frame_stream.eq(s)

        # c0 (registered in every IDLE cycle: the last one is the pick's)
        seq_now = Signal(32)          # the frame's sequence number
        seq_raw = Signal(32)          # the stream's sequence number, if known (seq_has)
        seq_has = Signal()
        ss_now = Signal(14)           # the stream's size walk, if known (ss_has)
        ss_has = Signal()
        ss_addr = Signal(10)          # its next size table address, if known
        tb_now = Signal(10)           # its size table base
        in_idle = Signal()
        with m.If(in_idle):
            m.d.sync += [seq_raw.eq(seq_rd.data), seq_has.eq(seq_known.bit_select(pick, 1)),
                         ss_now.eq(ss_rd.data[:14]), ss_addr.eq(ss_rd.data[14:]),
                         ss_has.eq(ss_known.bit_select(pick, 1)), tb_now.eq(tb_rd.data)]
        m.d.comb += seq_now.eq(Mux(seq_has, seq_raw, 0))
        # the size table address (from registers at c1): a sequence stream's is kept in sstate,
        # its first one is the base written with the descriptor
        m.d.comb += size_addr.eq(Mux(ss_has, ss_addr, tb_now))
        # the size table word, read from c1 on until a cycle without a host write to the table
        # (it has the port then) has read it; registered straight from the block RAM
        size_w = Signal(14)
        size_have = Signal()          # size_w holds this frame's word
        size_issued = Signal()        # the block RAM read it last cycle
        size_reading = Signal()
        m.d.sync += size_issued.eq(size_reading & ~sizes_w.w_en)
        with m.If(in_idle):
            m.d.sync += size_have.eq(0)
        with m.Elif(size_issued):
            m.d.sync += [size_w.eq(size_rd.data), size_have.eq(1)]
        ip_terms, udp_terms = [], []
        for j, (unit, regs) in enumerate(zip(mods, self._mods)):
            t_ip, t_udp = Signal(32, name=f"mod{j}_ip_term"), Signal(32, name=f"mod{j}_udp_term")
            hits = (regs["mode"] != SD.MOD_OFF) & (regs["stream"] == pick)
            mv = unit.value & regs["mask"]
            with m.If(in_idle):
                m.d.sync += [t_ip.eq(Mux(hits & regs["csum"][0], mv, 0)), t_udp.eq(Mux(hits & regs["csum"][1], mv, 0))]
            ip_terms += [t_ip[16:], t_ip[:16]]
            udp_terms += [t_udp[16:], t_udp[:16]]

        # c1: modifier terms in groups of four (two adder levels), the sequence words
        groups = {"ip": [], "udp": []}
        for kind, terms in (("ip", ip_terms), ("udp", udp_terms)):
            for g in range(0, len(terms), 4):
                part = Signal(18, name=f"{kind}_mods{g // 4}")
                m.d.sync += part.eq(_tree_sum(terms[g:g + 4]))
                groups[kind].append(part)
        seq_pair = Signal(17)
        seq_xor = Signal(16)
        seq_inc = Signal(32)
        m.d.sync += [seq_pair.eq(seq_now[16:] + seq_now[:16]), seq_xor.eq(seq_now[16:] ^ seq_now[:16]),
                     seq_inc.eq(seq_now + 1)]

        walk = Signal(14)             # increment: current size; sequence: index in the table
        span = Signal(32)             # random: size_b - size_a + 1 (sign-extended)
        walk_lim = Signal(signed(16))  # increment: size_b - size_step (walk + step > size_b: walk > this)
        len_m1 = Signal(signed(12))    # sequence: size_table_len - 1 (walk + 1 >= len: walk >= this)

        # c2: from the descriptor and the walk
        size_a, size_step = _field(d, "size_a"), _field(d, "size_step")
        size_mode = _field(d, "size_mode")
        len1_adj, len2_adj = _field(d, "len1_adj"), _field(d, "len2_adj")
        a_len1, a_len2, w_len1, w_len2 = (Signal(16, name=nm) for nm in ("a_len1", "a_len2", "w_len1", "w_len2"))
        walk_step = Signal(15)
        walk_inc = Signal(15)
        walk_addr = Signal(10)        # table base + walk
        walk_over = Signal()          # increment: walk + size_step > size_b
        walk_wrap = Signal()          # sequence: walk + 1 >= size_table_len
        sig_sum = Signal(18)          # signature words but the timestamp and check
        sig_x = Signal(16)            # check but the timestamp words
        ip_wide, udp_wide = Signal(24), Signal(24)
        m.d.sync += [
            a_len1.eq(size_a - len1_adj), a_len2.eq(size_a - len2_adj),
            w_len1.eq(walk - len1_adj), w_len2.eq(walk - len2_adj),
            walk_step.eq(walk + size_step), walk_inc.eq(walk + 1),
            walk_addr.eq(_field(d, "size_table_base") + walk),
            walk_over.eq(walk > walk_lim), walk_wrap.eq(walk >= len_m1),
            sig_sum.eq(F.SIG_MAGIC + _field(d, "stream_id") + seq_pair),
            sig_x.eq(F.SIG_CHECK_SEED ^ _field(d, "stream_id") ^ seq_xor),
            # ones' complement sums of 16-bit terms, exact (wide enough), folded at c3
            ip_wide.eq(_tree_sum([_field(d, "ipcsum_base"), *groups["ip"]])),
            udp_wide.eq(_tree_sum([_field(d, "udpcsum_base"), *groups["udp"]])),
        ]
        m.d.comb += size_rng.span.eq(span)

        # c3: the frame length and length fields of the size mode, the folded checksum bases;
        # the length fields also as the checksums take them: 0 when the field is off (below),
        # and 2 * len2 as len2 rotated left by one (equal modulo 0xFFFF)
        frame_len = Signal(14)
        len1 = Signal(16)
        len2 = Signal(16)
        csum_len1 = Signal(16)
        csum_len2 = Signal(16)
        drawn = size_rng.value[:14]
        sizes = {SD.SIZE_FIXED: (size_a, a_len1, a_len2),
                 SD.SIZE_INCREMENT: (walk, w_len1, w_len2),
                 SD.SIZE_RANDOM: (size_a + drawn, a_len1 + drawn, a_len2 + drawn),
                 SD.SIZE_SEQUENCE: (size_w, size_w - len1_adj, size_w - len2_adj)}
        with m.Switch(size_mode):
            for mode, (length, l1, l2) in sizes.items():
                with m.Case(mode):
                    m.d.sync += [frame_len.eq(length), len1.eq(l1), len2.eq(l2),
                                 csum_len1.eq(l1), csum_len2.eq(_rotl1(l2))]
        with m.If(~_field(d, "len1_en")):
            m.d.sync += csum_len1.eq(0)
        with m.If(~_field(d, "len2_en")):
            m.d.sync += csum_len2.eq(0)
        next_walk = Signal(14)
        next_addr = Signal(10)        # sequence: the next frame's size table address
        with m.If(size_mode == SD.SIZE_INCREMENT):
            m.d.sync += next_walk.eq(Mux(walk_over, size_a, walk_step))
        with m.Else():
            m.d.sync += next_walk.eq(Mux(walk_wrap, 0, walk_inc))
        m.d.sync += next_addr.eq(Mux(walk_wrap, _field(d, "size_table_base"), walk_addr + 1))
        ip_base, udp_base = Signal(16), Signal(16)
        m.d.sync += [ip_base.eq(_fold(ip_wide, 24)), udp_base.eq(_fold(udp_wide, 24))]

        # c4: one end-around add each. The UDP part is stored byte-swapped when the signature
        # starts at an odd distance from the checksum field: the emitter adds the signature
        # unswapped and swaps the result back.
        ip_csum = Signal(16)
        udp_part = Signal(16)
        m.d.comb += [ip_csum.eq(~_ones_add(ip_base, csum_len1)), udp_part.eq(_ones_add(udp_base, csum_len2))]
        odd = frame_len[0] ^ _field(d, "udpcsum_off")[0]

        mods_busy = Signal()
        if mods:
            m.d.comb += mods_busy.eq(Cat(u.busy for u in mods).any())

        take_pick = Signal()          # IDLE takes the pick (c0)
        m.d.comb += take_pick.eq(sched.pick_valid & ~prepared & ~self.stop & ~self.start)
        commit = Signal()             # the COMMIT cycle, registered (the scheduler's take)
        m.d.sync += commit.eq(0)
        commit_next = Signal()        # commit is high next cycle (for the scheduler's compare)

        def abort():
            """START or STOP abort a frame being prepared (before its commit): it belonged to
            the trial before, and the scheduler reads a take's due time the cycle before it."""
            with m.If(self.start | self.stop):
                m.d.sync += commit.eq(0)
                m.next = "IDLE"

        with m.FSM(name="prep") as prep_fsm:
            with m.State("IDLE"):
                with m.If(take_pick):
                    m.d.sync += s.eq(pick)
                    m.next = "READ"
            with m.State("READ"):          # descriptor on desc_rd.data now
                m.d.sync += [walk.eq(Mux(ss_has, ss_now,
                                         Mux(_field(dn, "size_mode") == SD.SIZE_INCREMENT, _field(dn, "size_a"), 0))),
                             span.eq(_field(dn, "size_b") - _field(dn, "size_a") + 1),
                             walk_lim.eq(_field(dn, "size_b") - _field(dn, "size_step")),
                             len_m1.eq(_field(dn, "size_table_len") - 1)]
                m.next = "SIZE"
                abort()
            with m.State("SIZE"):          # size table word out; random size draw issued
                with m.If(size_mode == SD.SIZE_RANDOM):
                    m.d.comb += size_rng.req.eq(1)
                m.next = "WAIT_RNG"
                abort()
            with m.State("WAIT_RNG"):
                with m.If(((size_mode != SD.SIZE_RANDOM) | size_rng.ready) & ~mods_busy & size_have):
                    m.d.comb += commit_next.eq(~self.start & ~self.stop)
                    m.d.sync += commit.eq(1)
                    m.next = "COMMIT"
                abort()
            with m.State("COMMIT"):
                m.next = "IDLE"

        # the descriptor register (over 250 flip-flops) is loaded in READ, which IDLE enters on
        # take_pick: its enable is a register of its own rather than the state's decode
        with m.If(replicas(m, "sync", in_idle & take_pick, ["d"], prefix="read")["d"]):
            m.d.sync += d.eq(dn)

        # COMMIT (the commit register is the FSM's COMMIT state; the frame registers and the
        # scheduler's take, over 500 flip-flops, are enabled by copies of it, commit_next
        # registered)
        commit_r = replicas(m, "sync", commit_next, ["pre", "launch", "sched"], prefix="commit")
        with m.If(commit):
            # advance every per-stream state, move the due time on (the writes' and the take's
            # addresses and data are driven all the time, below)
            m.d.sync += [seq_known.eq(seq_known | (Const(1, n) << s)),
                         ss_known.eq(ss_known | (Const(1, n) << s))]
        with m.If(commit_r["pre"]):
            # freeze the frame
            m.d.sync += [
                pre.stream.eq(s), pre.stream_id.eq(_field(d, "stream_id")), pre.seq.eq(seq_now),
                pre.frame_len.eq(frame_len), pre.hdr_len.eq(_field(d, "hdr_len")),
                pre.len1_en.eq(_field(d, "len1_en")), pre.len1_off.eq(_field(d, "len1_off")), pre.len1.eq(len1),
                pre.len2_en.eq(_field(d, "len2_en")), pre.len2_off.eq(_field(d, "len2_off")), pre.len2.eq(len2),
                pre.ip_en.eq(_field(d, "ipcsum_en")), pre.ip_off.eq(_field(d, "ipcsum_off")),
                pre.ip_csum.eq(ip_csum),
                pre.udp_en.eq(_field(d, "udpcsum_en")), pre.udp_off.eq(_field(d, "udpcsum_off")),
                pre.udp_part.eq(Mux(odd, Cat(udp_part[8:], udp_part[:8]), udp_part)),
                pre.sig_sum.eq(sig_sum), pre.sig_x.eq(sig_x),
            ]
        with m.If(commit_r["launch"]):
            launch = _launch_flags(
                frame_len, _field(d, "hdr_len"),
                [(_field(d, f"{f}_en"), _field(d, f"{f}_off")) for f in ("len1", "len2", "ipcsum")],
                (_field(d, "udpcsum_en"), _field(d, "udpcsum_off")),
                [(unit.applies, regs["offset"]) for unit, regs in zip(mods, self._mods)])
            m.d.sync += [pre.launch[name].eq(value) for name, value in launch.items()]
            pm0, pv0 = _merge_mods([(Mux(launch[f"mod{j}_at0"], regs["mask"][24:], 0), unit.value[24:])
                                    for j, (unit, regs) in enumerate(zip(mods, self._mods))])
            m.d.sync += [pre.pm0.eq(pm0), pre.pv0.eq(pv0)]
            for j, (unit, regs) in enumerate(zip(mods, self._mods)):
                m.d.sync += [pre.mod_apply[j].eq(unit.applies), pre.mod_off[j].eq(regs["offset"]),
                             pre.mod_mask[j].eq(regs["mask"]), pre.mod_value[j].eq(unit.value)]
        m.d.comb += [in_idle.eq(prep_fsm.ongoing("IDLE")),
                     size_reading.eq(~in_idle & ~prep_fsm.ongoing("COMMIT") & ~size_have)]
        m.d.comb += [sched.take.eq(commit_r["sched"]), sched.take_next.eq(commit_next), sched.take_stream.eq(s),
                     sched.take_period.eq(_field(d, "period")),
                     seq_wr.addr.eq(s), seq_wr.data.eq(seq_inc), seq_wr.en.eq(commit),
                     ss_wr.addr.eq(s), ss_wr.data.eq(Cat(next_walk, next_addr)),
                     ss_wr.en.eq(commit & ((size_mode == SD.SIZE_INCREMENT) | (size_mode == SD.SIZE_SEQUENCE)))]
        for unit in mods:
            m.d.comb += unit.frame.eq(commit)

        live = self._live

        # --- launch and emit --------------------------------------------------------------
        # The byte on the output is a register (out), computed a byte ahead from registers
        # only: the template byte (tq, two registers behind the block RAM) and flags saying
        # what the next byte is (signature, header, which field or modifier patches it),
        # updated on each advance from counters a byte further on. The pipeline moves as a
        # whole when the sink takes a byte (advance) and holds while it stalls:
        #   block RAM (byte nidx + 2) -> tq0 (nidx + 1) -> tq (nidx) -> out (byte idx) -> sink
        # Launching needs template bytes 0, 1 and 2 of the prepared stream in place: they are
        # read during the frame's last three advances (the stream being prepared then is the
        # next one, s) or while the line is idle (three cycles, done before prepare is); the
        # UDP checksum bytes come straight from their register into the output (valid from
        # byte 2). The first byte is on the output the cycle after the launch.
        cur = _FrameRegs(self.n_modifiers, "cur")
        go = Signal()
        # the line is free when the previous frame's wire time (preamble, frame, minimum gap)
        # has passed: a frame launched earlier would wait inside the MAC, and its timestamp
        # would no longer be a fixed time before its first bit on the wire
        wire_left = Signal(15)
        wire_idle = Signal(init=1)    # wire_left == 0, registered
        # go never selects data, and enables as few registers as it can: it fans out to the
        # whole emitter otherwise. The registers a launch loads from pre.* (and now) follow
        # them while the line is idle (not busy) instead, and hold from the launch on.
        with m.If(~wire_idle):
            m.d.sync += [wire_left.eq(wire_left - 1), wire_idle.eq(wire_left == 1)]
        with m.Else():
            m.d.sync += [wire_left.eq(pre.frame_len + F.WIRE_OVERHEAD - 1), wire_idle.eq(~go)]
        pf_ready = Signal()           # template bytes 0, 1 and 2 of stream s are in place
        m.d.comb += [sched.line_free.eq(~self.busy & ~self.hold & wire_idle & pf_ready), go.eq(sched.go)]
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
        # busy, and copies of it for the frame registers that follow pre.* and now while the
        # line is idle (over 300 flip-flops, placed across the emitter)
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
        with m.If(~busy["cur"]):
            m.d.sync += cur.eq(pre)
        with m.If(~busy["ts"]):
            m.d.sync += [last_idx.eq(pre.frame_len - F.FCS - 1), ts.eq(self.now[:48])]
        # prepared: from the commit until the launch (START and STOP drop it), and a copy of it
        # for the scheduler, whose launch compares select their due time by it (over 150 loads)
        prepared_next = Signal()
        m.d.comb += prepared_next.eq((commit | prepared) & ~go & ~self.start & ~self.stop)
        m.d.sync += prepared.eq(prepared_next)
        m.d.comb += sched.prepared.eq(replicas(m, "sync", prepared_next, ["sched"], prefix="prepared")["sched"])

        # template bytes: the block RAM (read enable: held while the sink stalls), tq0, tq.
        # Busy with byte idx on the output: tq holds template byte nidx, tq0 byte nidx + 1,
        # the block RAM byte nidx + 2 (an advance shifts them on and reads nidx + 3). Ready to
        # launch: bytes 0, 1 and 2 of stream s in the same places (pf_full), read by the last
        # three advances of the frame before (pf_stream: s at the first of them) or fetched
        # while the line is idle.
        tmpl_rd = tmpl.read_port()
        tq0, tq = Signal(8), Signal(8)
        pf_stream = Signal(range(n))  # the stream whose bytes 0, 1, 2 are fetched
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
        with m.If(self._tmpl.w_en | (in_idle & take_pick)):
            m.d.sync += [pf_have.eq(0), pf_full.eq(0)]

        # signature and UDP checksum, three stages from the launch:
        #   launch cycle: the timestamp's words and the signature's static words summed, the
        #                 check (registered with the timestamp, from `now` and pre.*)
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
        m.d.comb += udp_res.eq(~_residue(udp_total[:16], udp_total[16:]))
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
        #   registered from n3 on each advance); on the launch every flag comes from pre's
        #   launch flags.
        sig_start = Signal(14)        # L - 20 (mod 2**14, as the frame's byte index)
        in_sig, in_hdr = Signal(), Signal()
        sig_k = Signal(4)
        fbyte = Signal(8)
        udp_hi, udp_lo, out_udp_hi, out_udp_lo = Signal(), Signal(), Signal(), Signal()
        fields = (("len1", cur.len1_en, cur.len1_off, cur.len1, pre.len1),
                  ("len2", cur.len2_en, cur.len2_off, cur.len2, pre.len2),
                  ("ip", cur.ip_en, cur.ip_off, cur.ip_csum, pre.ip_csum),
                  ("udp", cur.udp_en, cur.udp_off, None, None))
        f_hi = {name: Signal(name=f"{name}_hi") for name, *_ in fields[:3]}   # nidx == off (enabled)
        at_n2 = {name: Signal(name=f"{name}_at_n2") for name, *_ in fields}   # n2 == off (enabled)
        mod_at_n2 = [Signal(name=f"mod{j}_at_n2") for j in range(self.n_modifiers)]

        msr = [Signal(32, name=f"mod{j}_msr") for j in range(self.n_modifiers)]
        vsr = [Signal(32, name=f"mod{j}_vsr") for j in range(self.n_modifiers)]
        pm, pv = Signal(8), Signal(8)  # their top bytes (byte nidx's) merged
        use_sig, use_f, use_t = Signal(), Signal(), Signal()   # byte nidx: signature, fbyte, patched tq

        out = Signal(8)
        with m.If(self.busy):
            with m.If(advance):
                # byte nidx into out; the flags of byte n2
                byte = _select([(use_sig, signature.word_select(~sig_k, 8)), (use_f, fbyte),
                                (use_t, (tq & ~pm) | (pv & pm))])
                # the fields' flags for byte n2: hi = at_n2, lo = hi of byte nidx; the last field wins
                flags = [(at_n2[name], f_hi[name], value) for name, _, _, value, _ in fields[:3]]
                sels = _priority([flag for hi, lo, _ in reversed(flags) for flag in (hi, lo)])
                fn = _select(list(zip(sels, [v for _, _, value in reversed(flags) for v in (value[8:], value[:8])])))
                in_sig_n, in_hdr_n, f_any_n = n2 >= sig_start, n2 < cur.hdr_len, Cat(sels).any()
                m.d.sync += [out.eq(byte), in_sig.eq(in_sig_n), in_hdr.eq(in_hdr_n), sig_k.eq(sig_k + 1),
                             fbyte.eq(fn), use_sig.eq(in_sig_n),
                             use_f.eq(~in_sig_n & in_hdr_n & f_any_n), use_t.eq(~in_sig_n & in_hdr_n & ~f_any_n),
                             udp_hi.eq(at_n2["udp"]), udp_lo.eq(udp_hi),
                             out_udp_hi.eq(udp_hi & in_hdr & ~in_sig), out_udp_lo.eq(udp_lo & in_hdr & ~in_sig)]
                for name, en, off, *_ in fields:
                    m.d.sync += at_n2[name].eq(en & (n3 == off))
                for name, *_ in fields[:3]:
                    m.d.sync += f_hi[name].eq(at_n2[name])
                tops = []
                for j in range(self.n_modifiers):
                    mk = Mux(mod_at_n2[j], cur.mod_mask[j], msr[j] << 8)
                    vl = Mux(mod_at_n2[j], cur.mod_value[j], vsr[j] << 8)
                    m.d.sync += [msr[j].eq(mk), vsr[j].eq(vl),
                                 mod_at_n2[j].eq(cur.mod_apply[j] & (n3 == cur.mod_off[j]))]
                    tops.append((mk[24:], vl[24:]))
                top_m, top_v = _merge_mods(tops)
                m.d.sync += [pm.eq(top_m), pv.eq(top_v)]
        with m.Else():
            # byte 0 into out, the flags of byte 1 (from pre's launch flags): loaded while the
            # line is idle, held from the launch on
            lf = pre.launch
            f0 = _select([(lf[f"{name}_sel0"], value[8:]) for name, *_, value in fields[:3]])
            byte0 = _select([(lf["sig0"], Const(F.SIG_MAGIC >> 8, 8)), (lf["use0_f"], f0),
                             (lf["use0_t"], (tq & ~pre.pm0) | (pre.pv0 & pre.pm0))])
            f1 = _select([(lf[f"{name}_sel1{hl}"], value[8:] if hl == "hi" else value[:8])
                          for name, *_, value in fields[:3] for hl in ("hi", "lo")])
            m.d.sync += [out.eq(byte0), sig_start.eq(pre.frame_len - F.SIG_FROM_END),
                         in_sig.eq(lf["sig01"]), in_hdr.eq(lf["hdr1"]),
                         sig_k.eq(F.SIG_FROM_END + 1 - pre.frame_len[:4]),
                         fbyte.eq(f1),
                         use_sig.eq(lf["sig01"]), use_f.eq(lf["use1_f"]), use_t.eq(lf["use1_t"]),
                         udp_hi.eq(lf["udp_at1"]), udp_lo.eq(lf["udp_at0"]),
                         out_udp_hi.eq(lf["udp_out0"]), out_udp_lo.eq(0)]
            for name, *_ in fields:
                m.d.sync += at_n2[name].eq(lf[f"{name}_at2"])
            for name, *_ in fields[:3]:
                m.d.sync += f_hi[name].eq(lf[f"{name}_at1"])
            tops = []
            for j in range(self.n_modifiers):
                mk = Mux(lf[f"mod{j}_at1"], pre.mod_mask[j], Mux(lf[f"mod{j}_at0"], pre.mod_mask[j] << 8, 0))
                vl = Mux(lf[f"mod{j}_at1"], pre.mod_value[j], pre.mod_value[j] << 8)
                m.d.sync += [msr[j].eq(mk), vsr[j].eq(vl), mod_at_n2[j].eq(lf[f"mod{j}_at2"])]
                tops.append((mk[24:], vl[24:]))
            top_m, top_v = _merge_mods(tops)
            m.d.sync += [pm.eq(top_m), pv.eq(top_v)]
        m.d.comb += [
            src.valid.eq(self.busy),
            src.p.data.eq(Mux(out_udp_hi, udp_csum[8:], Mux(out_udp_lo, udp_csum[:8], out))),
            src.p.first.eq(is_first), src.p.last.eq(is_last),
        ]

        # --- counters, per-stream transmit counts, snapshot --------------------------------
        # The totals and the per-stream counts see the launch one cycle late (registered: the
        # launch is the scheduler's comb go), and so do their clears. A SNAPSHOT takes the
        # totals as they will be after this cycle (live_n: with a launch of the cycle before),
        # at once: the host may read them the cycle after. The per-stream counts see the
        # snapshot one cycle late too, so all are of the counts at the snapshot's edge.
        launched = Signal()
        clear_d = Signal()
        snapshot_d = Signal()
        now_d = Signal(64)            # now at the launch, on `launched`
        m.d.sync += [launched.eq(go), clear_d.eq(self.clear), snapshot_d.eq(self.snapshot), now_d.eq(self.now)]
        no_tx = Signal(init=1)        # live tx_frames == 0, registered
        live_n = {name: Signal(64, name=f"live_{name}_n") for name in live}
        m.d.comb += [live_n[name].eq(sig) for name, sig in live.items()]
        with m.If(clear_d):
            m.d.comb += [sig.eq(0) for sig in live_n.values()]
            m.d.sync += no_tx.eq(1)
        with m.Elif(launched):
            m.d.comb += [live_n["tx_frames"].eq(live["tx_frames"] + 1),
                         live_n["tx_bytes"].eq(live["tx_bytes"] + cur.frame_len),
                         live_n["last_tx_ns"].eq(now_d)]
            m.d.sync += no_tx.eq(0)
            with m.If(no_tx):
                m.d.comb += live_n["first_tx_ns"].eq(now_d)
        m.d.sync += [sig.eq(live_n[name]) for name, sig in live.items()]
        # the per-stream counts, one more cycle late, all of them (count, clear, snapshot): from
        # registers of their own, which placement keeps beside the counters' LUT RAM (the
        # emitter's cur.stream also addresses the templates, across the generator)
        m.submodules.txc = txc = TxStreamCounters(n)
        m.d.sync += [txc.count.eq(launched), txc.clear.eq(clear_d), txc.snapshot.eq(snapshot_d),
                     txc.stream.eq(cur.stream), txc.frame_len.eq(cur.frame_len)]
        m.d.comb += [txc.read_addr.eq(self._stream_tx.addr), self._stream_tx.data.eq(txc.read_data)]
        with m.If(self.snapshot):
            for name, reg in self._snap.items():
                m.d.sync += reg.eq(live_n[name])
        with m.If(self.clear):
            m.d.sync += [seq_known.eq(0), ss_known.eq(0)]

        m.d.comb += [self.running.eq(sched.sending | prepared | self.busy),
                     self._running.eq(self.running | self.running_extra)]
        return m


def _seed_for(seed, unit):
    """Gateware form of :func:`streamdesc.seed_for` (never 0)."""
    x = (seed ^ (((unit + 1) * 0x9E3779B9) & 0xFFFFFFFF))[:32]
    return Mux(x == 0, 0x6D2B79F5, x)


_FIELDS = ("len1", "len2", "ip")


def _launch_flag_names(n_modifiers):
    names = ["sig0", "sig01", "hdr0", "hdr1", "f0_any", "f1_any", "udp_at0", "udp_at1", "udp_at2", "udp_out0",
             "use0_f", "use0_t", "use1_f", "use1_t"]
    for name in _FIELDS:
        names += [f"{name}_at1", f"{name}_at2", f"{name}_sel0", f"{name}_sel1hi", f"{name}_sel1lo"]
    for j in range(n_modifiers):
        names += [f"mod{j}_at0", f"mod{j}_at1", f"mod{j}_at2"]
    return names


def _launch_flags(frame_len, hdr_len, fields, udp, mods):
    """The launch flags of a frame, from its length, header length, fields ((en, off) of
    len1, len2, ip), UDP field (en, off) and modifiers ((applies, off)): whether byte 0 is the
    signature's first (sig0), bytes 0, 1 in the signature (sig01) or header (hdr0, hdr1);
    which field's byte is byte 0 (sel0) and byte 1 (sel1hi/lo; by priority, the last field
    wins) or a field starts at byte 1 or 2 (at1, at2); the same for the UDP checksum and the
    modifiers (at0..2)."""
    flags = {"sig0": frame_len == F.SIG_FROM_END,
             "sig01": (frame_len == F.SIG_FROM_END) | (frame_len == F.SIG_FROM_END + 1),
             "hdr0": hdr_len != 0, "hdr1": hdr_len > 1}
    at = {}
    for name, (en, off) in zip(_FIELDS, fields):
        for k in range(3):
            at[name, k] = en & (off == k)
        flags[f"{name}_at1"], flags[f"{name}_at2"] = at[name, 1], at[name, 2]
    order = list(reversed(_FIELDS))
    sel0 = _priority([at[name, 0] for name in order])
    sel1 = _priority([at[name, k] for name in order for k in (1, 0)])
    for i, name in enumerate(order):
        flags[f"{name}_sel0"] = sel0[i]
        flags[f"{name}_sel1hi"], flags[f"{name}_sel1lo"] = sel1[2 * i], sel1[2 * i + 1]
    flags["f0_any"], flags["f1_any"] = Cat(sel0).any(), Cat(sel1).any()
    # bytes 0 and 1: a field's byte (use_f) or the patched template's (use_t), else the
    # signature's (sig0, sig01) or zero fill
    for k, sig, hdr in ((0, flags["sig0"], flags["hdr0"]), (1, flags["sig01"], flags["hdr1"])):
        flags[f"use{k}_f"] = ~sig & hdr & flags[f"f{k}_any"]
        flags[f"use{k}_t"] = ~sig & hdr & ~flags[f"f{k}_any"]
    en, off = udp
    for k in range(3):
        flags[f"udp_at{k}"] = en & (off == k)
    flags["udp_out0"] = flags["udp_at0"] & flags["hdr0"] & ~flags["sig0"]
    for j, (applies, off) in enumerate(mods):
        for k in range(3):
            flags[f"mod{j}_at{k}"] = applies & (off == k)
    return flags


class _FrameRegs:
    """The registers describing one frame: filled by prepare, copied by the emitter."""

    def __init__(self, n_modifiers, prefix):
        def sig(name, width):
            return Signal(width, name=f"{prefix}_{name}")
        self.stream, self.stream_id, self.seq = sig("stream", 4), sig("stream_id", 16), sig("seq", 32)
        self.frame_len, self.hdr_len = sig("frame_len", 14), sig("hdr_len", 7)
        self.len1_en, self.len1_off, self.len1 = sig("len1_en", 1), sig("len1_off", 7), sig("len1", 16)
        self.len2_en, self.len2_off, self.len2 = sig("len2_en", 1), sig("len2_off", 7), sig("len2", 16)
        self.ip_en, self.ip_off, self.ip_csum = sig("ip_en", 1), sig("ip_off", 7), sig("ip_csum", 16)
        # udp_part: the UDP checksum's sum but the signature's (byte-swapped if odd, see prepare)
        self.udp_en, self.udp_off, self.udp_part = sig("udp_en", 1), sig("udp_off", 7), sig("udp_part", 16)
        # the signature's static words: magic + stream id + sequence halves; the check's
        # stream id ^ sequence halves ^ seed
        self.sig_sum, self.sig_x = sig("sig_sum", 18), sig("sig_x", 16)
        self.mod_apply = [sig(f"mod{j}_apply", 1) for j in range(n_modifiers)]
        self.mod_off = [sig(f"mod{j}_off", 7) for j in range(n_modifiers)]
        self.mod_mask = [sig(f"mod{j}_mask", 32) for j in range(n_modifiers)]
        self.mod_value = [sig(f"mod{j}_value", 32) for j in range(n_modifiers)]
        # the modifiers' mask and value on byte 0, merged (a later modifier wins)
        self.pm0, self.pv0 = sig("pm0", 8), sig("pv0", 8)
        # what bytes 0, 1 and 2 are, for the emitter's launch (see _launch_flags)
        self.launch = {name: sig(name, 1) for name in _launch_flag_names(n_modifiers)}

    def signals(self):
        return [v for v in vars(self).values() if isinstance(v, Signal)] + \
            self.mod_apply + self.mod_off + self.mod_mask + self.mod_value + list(self.launch.values())

    def eq(self, other):
        return [a.eq(b) for a, b in zip(self.signals(), other.signals())]
