"""A register bank on a simple 32-bit CSR bus, declared once and exported as a
:class:`~wirespeed.gateware.regmap.RegisterMap`.

amaranth-soc is the natural home for this, but the package on PyPI is a name placeholder
(version ``0``, no code) and this project installs only from package registries, so the
bank is kept here, small: each block declares its registers at explicit byte offsets in its
:class:`RegisterBlock` (:meth:`RegisterBank.block`) with ``add`` and ``add_memory``, wires the
returned signals into the design, and the map is exported with
:meth:`RegisterBank.register_map`.

Bus protocol (:data:`CSRBusSignature`): ``addr`` is a word address. The bus is pipelined (see
:meth:`RegisterBank.elaborate`): a read strobe samples ``addr`` on a clock edge and ``r_data``
is valid after the :data:`READ_LATENCY` th edge that follows, holding until the next read. A
write strobe samples ``addr`` and ``w_data`` on a clock edge and the write lands
:data:`WRITE_LATENCY` edges later (a ``"w"`` register's strobe is high for the cycle after
that). Strobes may come on consecutive cycles and are served in order; a read strobe
:data:`WRITE_TO_READ` or more cycles after a write strobe sees what the write did, including the
registers a SNAPSHOT command fills. Reading word 0 of a read-only register wider than 32 bits
latches its upper words, so a live 64-bit value is read consistently low word first.
"""

from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .regmap import Register, RegisterMap
from .replica import replicas

__all__ = ["CSRBusSignature", "RegisterBank", "RegisterBlock", "MemoryWindow", "WindowSignature", "align_up",
           "ADDR_WIDTH", "READ_LATENCY", "READ_SAMPLE", "WRITE_LATENCY", "WRITE_TO_READ", "WORD_READ_LATENCY"]

ADDR_WIDTH = 16
#: the bus address's top bits select a region, whose decode has a register stage of its own
REGION_BITS = 2
#: register words per first-stage read multiplexer (the read path's pipeline, see elaborate),
#: unless a block asks for larger groups (:meth:`RegisterBank.block`)
GROUP_WORDS = 4
#: groups ORed together by one register of the read path's third stage
CHUNK_GROUPS = 8
#: edges from the one that samples a read strobe to the one after which ``r_data`` is valid
READ_LATENCY = 5
#: edges from the one that samples a read strobe to the one that samples the register's value
#: (or addresses the window's memory)
READ_SAMPLE = 2
#: cycles from a word-read window's ``addr`` to the ``data`` the bank samples
WORD_READ_LATENCY = 2
#: edges from the one that samples a write strobe to the one at which the write lands
WRITE_LATENCY = 2
#: a read strobe that comes this many cycles or more after a write strobe sees what the write
#: did, a command's immediate effects (a SNAPSHOT's registers) included
WRITE_TO_READ = 3

#: The CSR bus from the initiator's side (the host bridge drives addr, strobes and w_data);
#: the register bank takes it as ``In(CSRBusSignature)``.
CSRBusSignature = wiring.Signature({
    "addr":   Out(ADDR_WIDTH),
    "r_stb":  Out(1),
    "r_data": In(32),
    "w_stb":  Out(1),
    "w_data": Out(32),
})


@dataclass
class MemoryWindow:
    """The design's side of a memory window (see :meth:`RegisterBank.add_memory`).

    Reads: the bank drives ``addr`` (entry index) during a read strobe and registers ``data``
    from the memory's synchronous read port on the next cycle. A window added with
    ``word_reads=True`` is read a 32-bit word at a time instead: ``addr`` is the word's index
    in the window (``entry * words + word``) and ``data`` is that word (a memory stored in
    narrow words, e.g. block RAM, need not present a whole entry at once), sampled the second
    cycle after ``addr`` (:data:`WORD_READ_LATENCY`: the design registers the word after its
    block RAM, the bank has no word to select). Writes (``"rw"`` windows
    only): for the cycle of a host write, ``w_en`` is high, ``w_addr`` is the entry and
    ``w_data`` is word ``w_word`` of it (least significant word 0): connect a write port with
    32-bit granularity (``en = w_en << w_word``, data replicated in every lane)."""

    addr: Signal
    data: Signal
    w_en: Signal | None = None
    w_addr: Signal | None = None
    w_word: Signal | None = None
    w_data: Signal | None = None
    word_reads: bool = False

    @property
    def words(self):
        return (len(self.data) + 31) // 32

    def connect(self, m, port):
        """Drive ``port``, a component's ``In(WindowSignature(...))`` of this window's shape,
        from the bank's side of the window, and the window's read data from it."""
        m.d.comb += [port.addr.eq(self.addr), self.data.eq(port.data)]
        if self.w_en is not None:
            m.d.comb += [port.w_en.eq(self.w_en), port.w_addr.eq(self.w_addr), port.w_word.eq(self.w_word),
                         port.w_data.eq(self.w_data)]


class WindowSignature(wiring.Signature):
    """A memory window of ``depth`` entries of ``width`` bits read an entry at a time, from
    the bank's side (the signals of :class:`MemoryWindow`, as :meth:`RegisterBank.add_memory`
    makes them): a component that owns the memory takes it as ``In(WindowSignature(...))``.
    ``writable``: an ``"rw"`` window."""

    def __init__(self, depth, width, *, writable=True):
        members = {"addr": Out(range(depth)), "data": In(width)}
        if writable:
            members |= {"w_en": Out(1), "w_addr": Out(range(depth)), "w_word": Out(range(max((width + 31) // 32, 2))),
                        "w_data": Out(32)}
        super().__init__(members)


def align_up(offset, size):
    """The first multiple of ``size`` at or after ``offset``."""
    return -(-offset // size) * size


class RegisterBank(wiring.Component):
    """Registers and memory windows at the byte offsets their blocks declare.

    Nothing is allocated: every :meth:`add` and :meth:`add_memory` names its ``offset``, so a
    register keeps its address whatever another block declares. A block declares its
    registers in a :class:`RegisterBlock` (:meth:`block`: a base address, offsets within it,
    optionally a size its registers must stay within). The bank refuses, with a ValueError
    naming both, a register that overlaps another; a memory window must start on a multiple
    of its size.

    ``add(name, width, access, offset=...)`` returns the register's signal:

    * ``"rw"``: the storage, driven by the bank, read by the design;
    * ``"r"``: a signal the design drives and the host reads;
    * ``"w"``: a strobe the bank drives high for the cycle of a host write.

    The map lists the registers in declaration order.
    """

    bus: In(CSRBusSignature)
    #: byte address of offset 0 (a bank is the block of the whole address space)
    base = 0

    def __init__(self, *, name, version, clk_hz, n_ports):
        super().__init__()
        self._meta = dict(name=name, version=version, clk_hz=clk_hz, n_ports=n_ports)
        self._regs = []  # (Register, Signal)
        self._windows = []  # (Register, entry address Signal, entry data Signal)
        self._group_words = {}  # register name: words of its read group, where not GROUP_WORDS

    def block(self, base, size=None, *, group_words=None):
        """A :class:`RegisterBlock` at byte address ``base`` (of ``size`` bytes, if given).
        ``group_words``: the words of each of its registers' read groups (4, 8 or 16; default
        :data:`GROUP_WORDS`), for a block of configuration registers: a larger group has fewer
        registers of its own in the read path and a wider multiplexer, and if its registers
        are all ``"rw"`` and one word wide, they are the words of a memory (one write port)."""
        return RegisterBlock(self, base, size, group_words)

    def _place(self, reg, span):
        """Check ``reg`` (``span`` bytes from its offset) against the bank and its neighbours."""
        end = reg.offset + span
        if end > 4 << ADDR_WIDTH:
            raise ValueError(f"register {reg.name}: {reg.offset:#x}..{end:#x} is beyond the bank's "
                             f"{4 << ADDR_WIDTH:#x} bytes")
        for other, _ in self._regs:
            if other.name == reg.name:
                raise ValueError(f"register {reg.name} declared twice")
            other_end = other.offset + 4 * other.words * other.depth
            if reg.offset < other_end and other.offset < end:
                raise ValueError(f"register {reg.name} at {reg.offset:#x}..{end:#x} overlaps {other.name} at "
                                 f"{other.offset:#x}..{other_end:#x}")

    def add(self, name, width, access, *, offset, reset=0, doc="", group_words=None):
        """A register at byte address ``offset``; returns its signal. ``group_words``: as
        :meth:`block` takes it."""
        reg = Register(name, offset, width, access, reset if access == "rw" else 0, doc)
        self._place(reg, 4 * reg.words)
        if group_words is not None and group_words != GROUP_WORDS:
            if group_words not in (8, 16):
                raise ValueError(f"register {name}: group_words must be 4, 8 or 16, not {group_words}")
            self._group_words[name] = group_words
        sig = Signal(width, name=name.replace(".", "_"), init=reg.reset)
        self._regs.append((reg, sig))
        return sig

    def add_memory(self, name, width, depth, *, offset, access="r", doc="", word_reads=False):
        """A window on ``depth`` entries of a memory the design owns, at byte address
        ``offset`` (a multiple of the window's size); returns a :class:`MemoryWindow`.
        ``access`` is ``"r"`` (host reads) or ``"rw"`` (host reads and writes, e.g. tables
        the design reads). Entries are 1, 2, 4, 8, 16 or 32 words."""
        if access not in ("r", "rw"):
            raise ValueError(f"memory {name}: access must be 'r' or 'rw', not {access!r}")
        if word_reads and access != "r":
            raise ValueError(f"memory {name}: word_reads windows are read-only")
        reg = Register(name, offset, width, access, 0, doc, depth)
        if reg.words not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"memory {name}: entries of {width} bits are not 1, 2, 4, 8, 16 or 32 words")
        size = 4 * reg.words * depth
        if offset % size:
            raise ValueError(f"memory {name}: offset {offset:#x} is not a multiple of its size ({size:#x} bytes)")
        self._place(reg, size)
        base = name.replace(".", "_")
        if word_reads:
            window = MemoryWindow(addr=Signal(range(depth * reg.words), name=base + "_addr"),
                                  data=Signal(32, name=base + "_data"), word_reads=True)
        else:
            window = MemoryWindow(addr=Signal(range(depth), name=base + "_addr"),
                                  data=Signal(unsigned(width), name=base + "_data"))
        if access == "rw":
            window.w_en = Signal(name=base + "_w_en")
            window.w_addr = Signal(range(depth), name=base + "_w_addr")
            window.w_word = Signal(range(max(reg.words, 2)), name=base + "_w_word")
            window.w_data = Signal(32, name=base + "_w_data")
        self._regs.append((reg, None))
        self._windows.append((reg, window))
        return window

    def register_map(self):
        return RegisterMap(registers=[r for r, _ in self._regs], **self._meta)

    def elaborate(self, platform):
        # The bank is spread over the whole part (its registers sit beside the logic they
        # configure or count), so the bus is pipelined and its decode replicated: no register
        # stage drives more than a few dozen loads, and no stage has more than a few LUTs.
        #
        #   E0  per region (the bus address's top REGION_BITS): address, strobes, write data
        #   E1  per group of GROUP_WORDS words and per memory window: hit, low address bits;
        #       a window's entry address (its memory samples it at E2); the region's write data
        #   E2  writes land (rw registers, the memories of "rw" windows); "w" strobes are
        #       registered, high for the cycle after E2; each group registers its addressed
        #       word (0 unless hit)
        #   E3  groups ORed in chunks; each window registers its memory's whole entry (nothing
        #       but a register behind a block RAM's slow output)
        #   E4  the chunks ORed; each window selects its word
        #   E5  r_data: the OR of both (a read's data, held until the next read)
        #
        # A copy that is only loaded when its own part of the address is hit differs from its
        # siblings, so synthesis cannot merge the copies back into one high fan-out register.
        m = Module()
        bus = self.bus
        low_bits = (GROUP_WORDS - 1).bit_length()
        region_lo = ADDR_WIDTH - REGION_BITS

        # (address bits below the group's, group): its words. Groups of different sizes may
        # cover the same addresses (each word is in one group): a group's word is 0 on a read
        # of an address it has no register at, and writes only its own.
        groups = {}
        for reg, sig in self._regs:
            if sig is None:
                continue
            bits = (self._group_words.get(reg.name, GROUP_WORDS) - 1).bit_length()
            for i, off in enumerate(reg.word_offsets):
                hi, word = min(32 * (i + 1), reg.width), off >> 2
                groups.setdefault((bits, word >> bits), []).append((word & ((1 << bits) - 1), reg, sig, i, hi))
        regions = sorted({group >> (region_lo - bits) for bits, group in groups}
                         | {(reg.offset >> 2) >> region_lo for reg, _ in self._windows})
        for reg, _window in self._windows:
            first, last = reg.offset >> 2, (reg.offset >> 2) + reg.words * reg.depth - 1
            if first >> region_lo != last >> region_lo:
                raise ValueError(f"memory {reg.name}: crosses a bus region boundary")

        # E0: one register set per region
        rg = {}
        for r in regions:
            hit_in = bus.addr[region_lo:] == r
            addr = Signal(region_lo, name=f"rg{r}_addr")
            r_stb, w_stb = Signal(name=f"rg{r}_r_stb"), Signal(name=f"rg{r}_w_stb")
            w_data = Signal(32, name=f"rg{r}_w_data")
            m.d.sync += [r_stb.eq(bus.r_stb & hit_in), w_stb.eq(bus.w_stb & hit_in)]
            with m.If((bus.r_stb | bus.w_stb) & hit_in):
                m.d.sync += addr.eq(bus.addr[:region_lo])
            w_data2 = Signal(32, name=f"rg{r}_w_data2")       # E1, what the region's writes land
            with m.If(bus.w_stb & hit_in):
                m.d.sync += w_data.eq(bus.w_data)
            with m.If(w_stb):
                m.d.sync += w_data2.eq(w_data)
            rg[r] = (addr, r_stb, w_stb, w_data, w_data2)

        # the read's valid bits, set at E0 .. E4: r_data loads at E5
        rd = Signal(READ_LATENCY)
        m.d.sync += rd.eq(Cat(bus.r_stb, rd[:-1]))

        # registers: E1 group decode, E2 write / strobe / word, E3 chunk OR
        latches = {}   # register name: the upper words of a wide read-only register, latched
        group_words = []
        # groups by their first word (the smaller first where two start at the same one)
        for (bits, group), words in sorted(groups.items(), key=lambda kv: (kv[0][1] << kv[0][0], kv[0][0])):
            r = group >> (region_lo - bits)
            addr, r_stb, w_stb, _, g_data = rg[r]
            inside = addr[bits:] == group & ((1 << (region_lo - bits)) - 1)
            gname = f"g{group}" if bits == low_bits else f"g{group}x{1 << bits}"
            g_r, g_w = Signal(name=f"{gname}_r"), Signal(name=f"{gname}_w")
            g_lo = Signal(bits, name=f"{gname}_lo")
            m.d.sync += [g_r.eq(r_stb & inside), g_w.eq(w_stb & inside)]
            with m.If((r_stb | w_stb) & inside):
                m.d.sync += g_lo.eq(addr[:bits])
            word_q = Signal(32, name=f"{gname}_q")
            if bits > low_bits and all(reg.access == "rw" and reg.words == 1 for _, reg, *_ in words):
                # a larger group of storage registers is a memory of its words: one write
                # port, not a write enable per register, which a cycle-based simulator tests
                # on every clock
                addressed = _stored_group(m, gname, bits, words, g_w, g_lo, g_data)
            else:
                addressed = _flop_group(m, gname, words, g_r, g_w, g_lo, g_data, latches)
            _pulse(m, word_q, g_r, addressed)
            group_words.append(word_q)
        # a chunk's words are 0 but in the cycle after E2 of a read: its load is the OR or 0
        chunk_words = [group_words[k:k + CHUNK_GROUPS] for k in range(0, len(group_words), CHUNK_GROUPS)]
        chunk_loads = replicas(m, "sync", rd[1], range(len(chunk_words)), prefix="rd_chunk_load")
        chunks = []
        for index, words in enumerate(chunk_words):
            chunk_q = Signal(32, name=f"rd_chunk{index}")
            _pulse(m, chunk_q, chunk_loads[index], _or_tree(words))
            chunks.append(chunk_q)
        regs_q = Signal(32, name="rd_regs")           # E4
        _pulse(m, regs_q, rd[3], _or_tree(chunks))

        # memory windows: E1 decode and entry address, E2 memory read / write, E3 entry
        # register, E4 word select
        window_words = []
        for reg, window in self._windows:
            r = (reg.offset >> 2) >> region_lo
            addr, r_stb, w_stb, w_data, _ = rg[r]
            base, nwords = (reg.offset >> 2) & ((1 << region_lo) - 1), reg.words
            shift = nwords.bit_length() - 1
            span = nwords * reg.depth
            size = 1 << (span - 1).bit_length()              # the window within its aligned block
            if base % size == 0:
                inside = addr[(size - 1).bit_length():] == base >> (size - 1).bit_length()
                rel = addr[:(size - 1).bit_length()]
                if span != size:
                    inside = inside & (rel < span)
            else:
                inside = (addr >= base) & (addr < base + span)
                rel = addr - base
            name = window.addr.name
            h1, h2, h3 = (Signal(name=f"{name}_hit{k}") for k in (1, 2, 3))
            sel1, sel2, sel3 = (Signal(range(max(nwords, 2)), name=f"{name}_sel{k}") for k in (1, 2, 3))
            m.d.sync += [h1.eq(r_stb & inside), h2.eq(h1), h3.eq(h2), sel2.eq(sel1), sel3.eq(sel2)]
            if window.word_reads:                        # the window's memory selects the word
                shift, nwords = 0, 1
            with m.If((r_stb | w_stb) & inside):
                m.d.sync += [window.addr.eq(rel >> shift), sel1.eq(rel[:shift] if shift else 0)]
            if window.w_en is not None:
                m.d.sync += window.w_en.eq(w_stb & inside)
                with m.If(w_stb & inside):
                    m.d.sync += [window.w_addr.eq(rel >> shift), window.w_word.eq(rel[:shift] if shift else 0),
                                 window.w_data.eq(w_data)]
            word_q = Signal(32, name=f"{name}_word")
            if window.word_reads:                        # the design's register is the E3 stage
                assert WORD_READ_LATENCY == 2
                _pulse(m, word_q, h3, window.data)
            else:
                entry_q = Signal(32 * nwords, name=f"{name}_q")
                with m.If(h2):
                    m.d.sync += entry_q.eq(window.data)
                _pulse(m, word_q, h3, entry_q.word_select(sel3, 32))
            window_words.append(word_q)

        with m.If(rd[-1]):                                 # E5
            m.d.sync += bus.r_data.eq(_or_tree([regs_q, *window_words]))
        return m


class RegisterBlock:
    """The registers of one block: ``base`` (a byte address in ``bank``) and, if ``size`` is
    given, the bytes they must stay within. :meth:`add` and :meth:`add_memory` take the
    bank's arguments with ``offset`` relative to ``base``."""

    def __init__(self, bank, base, size=None, group_words=None):
        if base % 4:
            raise ValueError(f"register block at {base:#x}: not word aligned")
        self.bank, self.base, self.size, self.group_words = bank, base, size, group_words

    def _check(self, name, offset, span):
        if offset < 0 or (self.size is not None and offset + span > self.size):
            extent = "" if self.size is None else f"{self.size:#x} bytes "
            raise ValueError(f"register {name}: offset {offset:#x}..{offset + span:#x} is outside its block "
                             f"({extent}at {self.base:#x})")

    def block(self, offset, size=None, *, group_words=None):
        """A block within this one, at ``offset`` from its base (``group_words``: as
        :meth:`RegisterBank.block`; by default this block's)."""
        self._check(f"block at {offset:#x}", offset, size or 0)
        return RegisterBlock(self.bank, self.base + offset, size, group_words or self.group_words)

    def add(self, name, width, access, *, offset, **kwargs):
        self._check(name, offset, 4 * ((width + 31) // 32))
        return self.bank.add(name, width, access, offset=self.base + offset, group_words=self.group_words, **kwargs)

    def add_memory(self, name, width, depth, *, offset, **kwargs):
        self._check(name, offset, 4 * ((width + 31) // 32) * depth)
        return self.bank.add_memory(name, width, depth, offset=self.base + offset, **kwargs)


def _flop_group(m, name, words, g_r, g_w, g_lo, g_data, latches):
    """The registers ``words`` of a group as flip-flops: each written by the group's writes
    (``g_w``, ``g_lo``, ``g_data``) at its index; returns the word at ``g_lo`` as the host
    reads it (0 where there is none). ``latches``: the upper words of wide read-only
    registers, by name, shared by the groups of a bank."""
    for index, reg, sig, i, hi in words:
        at = g_lo == index
        if reg.access == "rw":
            with m.If(g_w & at):
                m.d.sync += sig[32 * i:hi].eq(g_data)
        elif reg.access == "w":
            # registered strobe: g_data for the cycle after E2, 0 otherwise
            m.d.sync += sig[32 * i:hi].eq(Mux(g_w & at, g_data, 0))
    values = []
    for index, reg, sig, i, hi in words:
        if reg.access == "w":
            continue
        value = sig[32 * i:hi]
        if reg.access == "r" and reg.words > 1:
            # reading word 0 latches the upper words, so a live value is read consistently
            # low word first
            if reg.name not in latches:
                latches[reg.name] = Signal(reg.width - 32, name=f"{sig.name}_hi")
            latched = latches[reg.name]
            if i == 0:
                with m.If(g_r & (g_lo == index)):
                    m.d.sync += latched.eq(sig[32:])
            else:
                value = latched[32 * (i - 1):hi - 32]
        values.append((index, value))
    addressed = Signal(32, name=f"{name}_word")
    with m.Switch(g_lo):
        for index, value in values:
            with m.Case(index):
                m.d.comb += addressed.eq(value)
    return addressed


def _stored_group(m, name, bits, words, g_w, g_lo, g_data):
    """The registers ``words`` of a group (all ``"rw"``, one word each) as the words of a
    memory: written by the group's writes (``g_w``, ``g_lo``, ``g_data``), each register its
    word's low bits; returns the word at ``g_lo`` as the host reads it (0 where there is
    none). Synthesis keeps it in flip-flops (``ram_style``): a LUT RAM has one read port, the
    group as many as it has registers."""
    init = [0] * (1 << bits)
    for index, reg, *_ in words:
        init[index] = reg.reset
    m.submodules[f"{name}_mem"] = mem = Memory(shape=32, depth=1 << bits, init=init, attrs={"ram_style": "logic"})
    wr = mem.write_port()
    m.d.comb += [wr.en.eq(g_w), wr.addr.eq(g_lo), wr.data.eq(g_data)]
    for index, _, sig, _, hi in words:
        rd = mem.read_port(domain="comb")
        m.d.comb += [rd.addr.eq(index), sig.eq(rd.data[:hi])]
    host = mem.read_port(domain="comb")
    m.d.comb += host.addr.eq(g_lo)
    addressed = Signal(32, name=f"{name}_word")
    with m.Switch(g_lo):
        for index, _, _, _, hi in words:
            with m.Case(index):
                m.d.comb += addressed.eq(host.data[:hi])
    return addressed


def _pulse(m, word, hit, value):
    """``word`` registers ``value`` after a cycle with ``hit`` and is 0 after any other: the
    trace of ``word.eq(Mux(hit, value, 0))`` every cycle. Written as a load under ``hit`` and a
    clear the cycle after, so that a cycle-based simulator computes ``value`` only on a hit
    (the bank's words are read every few thousand cycles)."""
    held = Signal(name=f"{word.name}_held")
    m.d.sync += held.eq(hit)
    with m.If(hit):
        m.d.sync += word.eq(value)
    with m.Elif(held):
        m.d.sync += word.eq(0)


def _or_tree(values):
    """The OR of ``values`` (0 for none)."""
    if not values:
        return Const(0, 32)
    while len(values) > 1:
        values = [values[i] | values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]
