"""The traffic generator's *prepare* stage: from the scheduler's pick to a frame ready to
launch (:class:`.gen_layouts.PreparedFrame`), while the previous frame is still on the wire.

It reads the stream's descriptor, sizes the frame (fixed, increment, random or sequence, from
the stream's size walk), takes the sequence number and the modifiers' values, sums the IPv4
and UDP checksums but for the signature's timestamp and check, and works out what the frame's
first three bytes are (the launch flags). It owns the per-stream state (sequence numbers, size
walks), the pool of field modifiers and the random size generator. Rules: :mod:`.streamdesc`.

A frame is prepared in five cycles from the pick (c0) to ``handoff.frame`` (prepared from
c5); WAIT_RNG lasts until a random size is drawn (and no modifier is drawing). Each stage is a
register, a LUT RAM read, or at most two carry chains deep:

  c0 IDLE      the scheduler's pick is taken; the descriptor read is issued (LUT RAM); the
               stream's sequence number, size walk, next size table address, table base and
               known bits are registered (LUT RAM, read with the pick), the modifiers' masked
               values (checksum terms) too
  c1 READ      the descriptor is on ``desc_rd.data``: registered (d), with the walk, the
               random span and the walk's limits; the size table read is issued (a block RAM
               port shared with the host's writes); the modifier terms are summed in groups of
               four, the sequence halves
  c2 SIZE      the size table word is registered (straight from the block RAM); a random size
               draw is requested; the length-field candidates (size_a - adj, walk - adj), the
               next walk's sums and compares, the signature's static words and the checksum
               bases + modifier terms (wide, exact) are registered
  c3 WAIT_RNG  the frame length, both length fields and their checksum terms for the stream's
               size mode are registered, the checksum sums folded to 16 bits, the next walk
               and size table address chosen
  c4 COMMIT    one end-around add per checksum (+ the IPv4 / UDP length field); the frame is
               frozen in ``handoff.frame`` with its launch flags (what bytes 0 to 2 are), every
               per-stream state advances, the scheduler takes the stream

The modifiers' values change only on COMMIT's strobe, so their terms registered at c0 are the
values of this frame; the per-stream state written at COMMIT is read again at the earliest
n + 1 cycles later (the scheduler's next pass). ``prepared`` is high from the commit until the
launch (``go``); START and STOP drop it, and abort a frame being prepared.
"""

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.memory import Memory, ReadPort
from amaranth.lib.wiring import In, Out

from . import frame as F
from . import streamdesc as SD
from .gen_layouts import DESC_LAYOUT, FIELDS, FrameHandoff, merge_mods, priority
from .modifier import Modifier
from .onescomp import fold, ones_add, rotl1, tree_sum
from .prng import RandomRange
from .replica import replicas

__all__ = ["FramePrepare", "MOD_CONFIG", "seed_for"]

#: the registers of one modifier unit (``pN.mod{j}.*``), from the register bank's side
MOD_CONFIG = wiring.Signature({name: Out(bits) for name, bits, _ in SD.MOD_FIELDS})


def seed_for(seed, unit):
    """Gateware form of :func:`.streamdesc.seed_for` (never 0)."""
    x = (seed ^ (((unit + 1) * 0x9E3779B9) & 0xFFFFFFFF))[:32]
    return Mux(x == 0, 0x6D2B79F5, x)


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
    for name, (en, off) in zip(FIELDS, fields):
        for k in range(3):
            at[name, k] = en & (off == k)
        flags[f"{name}_at1"], flags[f"{name}_at2"] = at[name, 1], at[name, 2]
    order = list(reversed(FIELDS))
    sel0 = priority([at[name, 0] for name in order])
    sel1 = priority([at[name, k] for name in order for k in (1, 0)])
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


class FramePrepare(wiring.Component):
    """``start``, ``stop``, ``clear``: the port's commands; ``seed`` and ``mods``: the
    generator's seed and the modifier units' registers. ``pick_*`` / ``take*``: the
    scheduler's pick, and the take of it at the commit (``take_next`` the cycle before,
    ``take_stream`` and ``take_period`` steady for three cycles before it). ``go``: the
    scheduler launches the prepared frame. ``desc_rd``, ``tbase_rd``, ``size_rd`` and
    ``size_busy``: the tables (:class:`.gen_tables.GeneratorTables`). ``handoff``: the
    prepared frame, to the emitter. ``prepared``: a frame is ready to launch
    (``sched_prepared``: the same, a register of its own for the scheduler)."""

    def __init__(self, n_streams, n_modifiers):
        self.n_streams, self.n_modifiers = n_streams, n_modifiers
        sbits = (n_streams - 1).bit_length()
        super().__init__({
            "start": In(1), "stop": In(1), "clear": In(1),
            "seed": In(32),
            "mods": In(MOD_CONFIG).array(n_modifiers),
            "pick_valid": In(1), "pick_stream": In(range(n_streams)),
            "take": Out(1), "take_next": Out(1), "take_stream": Out(range(n_streams)), "take_period": Out(64),
            "go": In(1),
            "prepared": Out(1), "sched_prepared": Out(1),
            "desc_rd": In(ReadPort.Signature(addr_width=sbits, shape=DESC_LAYOUT)),
            "tbase_rd": In(ReadPort.Signature(addr_width=sbits, shape=DESC_LAYOUT["size_table_base"].shape)),
            "size_rd": In(ReadPort.Signature(addr_width=(SD.SIZE_TABLE - 1).bit_length(), shape=14)),
            "size_busy": In(1),
            "handoff": Out(FrameHandoff(n_streams, n_modifiers)),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        regs = self.mods
        pre = self.handoff.frame
        prepared = self.prepared

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
        for j, cfg in enumerate(regs):
            unit = Modifier()
            m.submodules[f"mod{j}"] = unit
            m.d.comb += [
                unit.mode.eq(cfg.mode), unit.stream.eq(cfg.stream), unit.chain.eq(cfg.chain),
                unit.base.eq(cfg.base), unit.step.eq(cfg.step), unit.count.eq(cfg.count),
                unit.seed.eq(seed_for(self.seed, j)), unit.clear.eq(self.clear),
                unit.chain_in.eq(mods[-1].wrap_out if mods else 0),
            ]
            mods.append(unit)
        m.submodules.size_rng = size_rng = RandomRange()
        # the size generator is unit N_MODIFIERS whatever the number built (streamdesc, host model)
        m.d.comb += [size_rng.seed.eq(seed_for(self.seed, SD.N_MODIFIERS)), size_rng.load.eq(self.clear)]

        s = Signal(range(n))          # stream being prepared
        d = Signal(DESC_LAYOUT)       # its descriptor (from c2)
        dn = self.desc_rd.data        # the descriptor at c1 (READ)
        pick = self.pick_stream
        m.d.comb += [self.desc_rd.addr.eq(pick), seq_rd.addr.eq(pick), ss_rd.addr.eq(pick),
                     self.tbase_rd.addr.eq(pick)]
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
                         ss_has.eq(ss_known.bit_select(pick, 1)), tb_now.eq(self.tbase_rd.data)]
        m.d.comb += seq_now.eq(Mux(seq_has, seq_raw, 0))
        # the size table address (from registers at c1): a sequence stream's is kept in sstate,
        # its first one is the base written with the descriptor
        m.d.comb += self.size_rd.addr.eq(Mux(ss_has, ss_addr, tb_now))
        # the size table word, read from c1 on until a cycle without a host write to the table
        # (it has the port then) has read it; registered straight from the block RAM
        size_w = Signal(14)
        size_have = Signal()          # size_w holds this frame's word
        size_issued = Signal()        # the block RAM read it last cycle
        size_reading = Signal()
        m.d.sync += size_issued.eq(size_reading & ~self.size_busy)
        with m.If(in_idle):
            m.d.sync += size_have.eq(0)
        with m.Elif(size_issued):
            m.d.sync += [size_w.eq(self.size_rd.data), size_have.eq(1)]
        take_pick = Signal()          # IDLE takes the pick (c0)
        # the modifiers' checksum terms (the masked value if the unit writes the stream
        # picked, and its csum bits), registered with the pick: what READ reads is the same
        # as if they loaded in every IDLE cycle, and a cycle-based simulator computes them
        # once per frame instead of on every clock (each expression read once, under the pick)
        ip_terms, udp_terms = [], []
        for j, (unit, cfg) in enumerate(zip(mods, regs)):
            term, csum = Signal(32, name=f"mod{j}_term"), Signal(2, name=f"mod{j}_csum")
            with m.If(in_idle & take_pick):
                m.d.sync += [term.eq(Mux((cfg.mode != SD.MOD_OFF) & (cfg.stream == pick), unit.value & cfg.mask, 0)),
                             csum.eq(cfg.csum)]
            for terms, bit in ((ip_terms, 0), (udp_terms, 1)):
                terms += [Mux(csum[bit], term[16:], 0), Mux(csum[bit], term[:16], 0)]

        # c1: modifier terms in groups of four (two adder levels), loaded in READ (c2 reads
        # them; a copy of READ's strobe of their own, as the descriptor register has below),
        # the sequence words
        groups = {"ip": [], "udp": []}
        in_read = replicas(m, "sync", in_idle & take_pick, ["mods"], prefix="read")["mods"] if mods else Const(0)
        for kind, terms in (("ip", ip_terms), ("udp", udp_terms)):
            for g in range(0, len(terms), 4):
                part = Signal(18, name=f"{kind}_mods{g // 4}")
                with m.If(in_read):
                    m.d.sync += part.eq(tree_sum(terms[g:g + 4]))
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
        size_a, size_step = d.size_a, d.size_step
        size_mode = d.size_mode
        len1_adj, len2_adj = d.len1_adj, d.len2_adj
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
            walk_addr.eq(d.size_table_base + walk),
            walk_over.eq(walk > walk_lim), walk_wrap.eq(walk >= len_m1),
            sig_sum.eq(F.SIG_MAGIC + d.stream_id + seq_pair),
            sig_x.eq(F.SIG_CHECK_SEED ^ d.stream_id ^ seq_xor),
            # ones' complement sums of 16-bit terms, exact (wide enough), folded at c3
            ip_wide.eq(tree_sum([d.ipcsum_base, *groups["ip"]])),
            udp_wide.eq(tree_sum([d.udpcsum_base, *groups["udp"]])),
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
                                 csum_len1.eq(l1), csum_len2.eq(rotl1(l2))]
        with m.If(~d.len1_en):
            m.d.sync += csum_len1.eq(0)
        with m.If(~d.len2_en):
            m.d.sync += csum_len2.eq(0)
        next_walk = Signal(14)
        next_addr = Signal(10)        # sequence: the next frame's size table address
        with m.If(size_mode == SD.SIZE_INCREMENT):
            m.d.sync += next_walk.eq(Mux(walk_over, size_a, walk_step))
        with m.Else():
            m.d.sync += next_walk.eq(Mux(walk_wrap, 0, walk_inc))
        m.d.sync += next_addr.eq(Mux(walk_wrap, d.size_table_base, walk_addr + 1))
        ip_base, udp_base = Signal(16), Signal(16)
        m.d.sync += [ip_base.eq(fold(ip_wide, 24)), udp_base.eq(fold(udp_wide, 24))]

        # c4: one end-around add each. The UDP part is stored byte-swapped when the signature
        # starts at an odd distance from the checksum field: the emitter adds the signature
        # unswapped and swaps the result back.
        ip_csum = Signal(16)
        udp_part = Signal(16)
        m.d.comb += [ip_csum.eq(~ones_add(ip_base, csum_len1)), udp_part.eq(ones_add(udp_base, csum_len2))]
        odd = frame_len[0] ^ d.udpcsum_off[0]

        mods_busy = Signal()
        if mods:
            m.d.comb += mods_busy.eq(Cat(u.busy for u in mods).any())

        m.d.comb += take_pick.eq(self.pick_valid & ~prepared & ~self.stop & ~self.start)
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
                m.d.sync += [walk.eq(Mux(ss_has, ss_now, Mux(dn.size_mode == SD.SIZE_INCREMENT, dn.size_a, 0))),
                             span.eq(dn.size_b - dn.size_a + 1),
                             walk_lim.eq(dn.size_b - dn.size_step),
                             len_m1.eq(dn.size_table_len - 1)]
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
                pre.stream.eq(s), pre.stream_id.eq(d.stream_id), pre.seq.eq(seq_now),
                pre.frame_len.eq(frame_len), pre.hdr_len.eq(d.hdr_len),
                pre.len1_en.eq(d.len1_en), pre.len1_off.eq(d.len1_off), pre.len1.eq(len1),
                pre.len2_en.eq(d.len2_en), pre.len2_off.eq(d.len2_off), pre.len2.eq(len2),
                pre.ip_en.eq(d.ipcsum_en), pre.ip_off.eq(d.ipcsum_off), pre.ip_csum.eq(ip_csum),
                pre.udp_en.eq(d.udpcsum_en), pre.udp_off.eq(d.udpcsum_off),
                pre.udp_part.eq(Mux(odd, Cat(udp_part[8:], udp_part[:8]), udp_part)),
                pre.sig_sum.eq(sig_sum), pre.sig_x.eq(sig_x),
            ]
        with m.If(commit_r["launch"]):
            launch = _launch_flags(
                frame_len, d.hdr_len,
                [(d[f"{f}_en"], d[f"{f}_off"]) for f in ("len1", "len2", "ipcsum")],
                (d.udpcsum_en, d.udpcsum_off),
                [(unit.applies, cfg.offset) for unit, cfg in zip(mods, regs)])
            m.d.sync += [getattr(pre.launch, name).eq(value) for name, value in launch.items()]
            pm0, pv0 = merge_mods([(Mux(launch[f"mod{j}_at0"], cfg.mask[24:], 0), unit.value[24:])
                                   for j, (unit, cfg) in enumerate(zip(mods, regs))])
            m.d.sync += [pre.pm0.eq(pm0), pre.pv0.eq(pv0)]
            for j, (unit, cfg) in enumerate(zip(mods, regs)):
                m.d.sync += [pre.mod_apply[j].eq(unit.applies), pre.mod_off[j].eq(cfg.offset),
                             pre.mod_mask[j].eq(cfg.mask), pre.mod_value[j].eq(unit.value)]
        m.d.comb += [in_idle.eq(prep_fsm.ongoing("IDLE")),
                     size_reading.eq(~in_idle & ~prep_fsm.ongoing("COMMIT") & ~size_have)]
        m.d.comb += [self.take.eq(commit_r["sched"]), self.take_next.eq(commit_next), self.take_stream.eq(s),
                     self.take_period.eq(d.period),
                     seq_wr.addr.eq(s), seq_wr.data.eq(seq_inc), seq_wr.en.eq(commit),
                     ss_wr.addr.eq(s), ss_wr.data.eq(Cat(next_walk, next_addr)),
                     ss_wr.en.eq(commit & ((size_mode == SD.SIZE_INCREMENT) | (size_mode == SD.SIZE_SEQUENCE)))]
        for unit in mods:
            m.d.comb += unit.frame.eq(commit)

        # prepared: from the commit until the launch (START and STOP drop it), and a copy of it
        # for the scheduler, whose launch compares select their due time by it (over 150 loads)
        prepared_next = Signal()
        m.d.comb += prepared_next.eq((commit | prepared) & ~self.go & ~self.start & ~self.stop)
        m.d.sync += prepared.eq(prepared_next)
        m.d.comb += self.sched_prepared.eq(replicas(m, "sync", prepared_next, ["sched"], prefix="prepared")["sched"])

        # the emitter fetches the template of the stream being prepared ahead
        m.d.comb += [self.handoff.stream.eq(s), self.handoff.picked.eq(in_idle & take_pick)]
        if mods:
            m.d.comb += self.handoff.committed.eq(commit_r["launch"])

        with m.If(self.clear):
            m.d.sync += [seq_known.eq(0), ss_known.eq(0)]
        return m
