"""A register bank on a simple 32-bit CSR bus, declared once and exported as a
:class:`~wirespeed.gateware.regmap.RegisterMap`.

amaranth-soc is the natural home for this, but the package on PyPI is a name placeholder
(version ``0``, no code) and this project installs only from package registries, so the
bank is kept here, small: declare registers with :meth:`RegisterBank.add`, wire the returned
signals into the design, and export the map with :meth:`RegisterBank.register_map`.

Bus protocol (:data:`CSRBusSignature`): ``addr`` is a word address. A read strobe samples
``addr`` on a clock edge; ``r_data`` is valid after the second edge that follows (a read takes
three cycles: memory windows read synchronous block RAM on the first, whose output, 5.8 ns
after the clock on the ECP5, goes into a register of its own before any multiplexing on the
second) and holds until the next read. Read strobes come at most every third cycle. A write strobe writes ``w_data`` on a clock edge. Reading word 0 of a read-only register
wider than 32 bits latches its upper words, so a live 64-bit value is read consistently low
word first.
"""

from dataclasses import dataclass

from amaranth import Cat, Module, Mux, Signal, Const, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .regmap import Register, RegisterMap

__all__ = ["CSRBusSignature", "RegisterBank", "MemoryWindow", "ADDR_WIDTH"]

ADDR_WIDTH = 16
#: register words per first-stage read multiplexer (the read path's pipeline, see elaborate)
GROUP_WORDS = 32

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
    from the memory's synchronous read port on the next cycle. Writes (``"rw"`` windows
    only): for the cycle of a host write, ``w_en`` is high, ``w_addr`` is the entry and
    ``w_data`` is word ``w_word`` of it (least significant word 0): connect a write port with
    32-bit granularity (``en = w_en << w_word``, data replicated in every lane)."""

    addr: Signal
    data: Signal
    w_en: Signal | None = None
    w_addr: Signal | None = None
    w_word: Signal | None = None
    w_data: Signal | None = None

    @property
    def words(self):
        return (len(self.data) + 31) // 32


class RegisterBank(wiring.Component):
    """Registers allocated in declaration order, each on a word boundary.

    ``add(name, width, access)`` returns the register's signal:

    * ``"rw"``: the storage, driven by the bank, read by the design;
    * ``"r"``: a signal the design drives and the host reads;
    * ``"w"``: a strobe the bank drives high for the cycle of a host write.
    """

    bus: In(CSRBusSignature)

    def __init__(self, *, name, version, clk_hz, n_ports):
        super().__init__()
        self._meta = dict(name=name, version=version, clk_hz=clk_hz, n_ports=n_ports)
        self._regs = []  # (Register, Signal)
        self._windows = []  # (Register, entry address Signal, entry data Signal)
        self._next = 0

    def add(self, name, width, access, *, reset=0, doc=""):
        reg = Register(name, self._next, width, access, reset if access == "rw" else 0, doc)
        if (self._next + 4 * reg.words) >> 2 > (1 << ADDR_WIDTH):
            raise ValueError(f"register {name}: bank address space ({1 << ADDR_WIDTH} words) is full")
        sig = Signal(width, name=name.replace(".", "_"), init=reg.reset)
        self._regs.append((reg, sig))
        self._next += 4 * reg.words
        return sig

    def add_memory(self, name, width, depth, *, access="r", doc=""):
        """A window on ``depth`` entries of a memory the design owns; returns a
        :class:`MemoryWindow`. ``access`` is ``"r"`` (host reads) or ``"rw"`` (host reads and
        writes, e.g. tables the design reads). Entries are 1, 2, 4, 8, 16 or 32 words."""
        if access not in ("r", "rw"):
            raise ValueError(f"memory {name}: access must be 'r' or 'rw', not {access!r}")
        reg = Register(name, self._next, width, access, 0, doc, depth)
        if reg.words not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"memory {name}: entries of {width} bits are not 1, 2, 4, 8, 16 or 32 words")
        self.align(4 * reg.words * depth)
        reg = Register(name, self._next, width, access, 0, doc, depth)
        if (self._next + 4 * reg.words * depth) >> 2 > (1 << ADDR_WIDTH):
            raise ValueError(f"memory {name}: bank address space ({1 << ADDR_WIDTH} words) is full")
        base = name.replace(".", "_")
        window = MemoryWindow(addr=Signal(range(depth), name=base + "_addr"),
                              data=Signal(unsigned(width), name=base + "_data"))
        if access == "rw":
            window.w_en = Signal(name=base + "_w_en")
            window.w_addr = Signal(range(depth), name=base + "_w_addr")
            window.w_word = Signal(range(max(reg.words, 2)), name=base + "_w_word")
            window.w_data = Signal(32, name=base + "_w_data")
        self._regs.append((reg, None))
        self._windows.append((reg, window))
        self._next += 4 * reg.words * depth
        return window

    def align(self, boundary):
        """Start the next register on a multiple of ``boundary`` bytes (keeps blocks tidy)."""
        self._next = -(-self._next // boundary) * boundary

    def register_map(self):
        return RegisterMap(registers=[r for r, _ in self._regs], **self._meta)

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        addr = bus.addr
        with m.If(bus.w_stb):
            with m.Switch(bus.addr):
                for reg, sig in self._regs:
                    if reg.access == "r" or sig is None:
                        continue
                    for i, off in enumerate(reg.word_offsets):
                        hi = min(32 * (i + 1), reg.width)
                        with m.Case(off >> 2):
                            if reg.access == "rw":
                                m.d.sync += sig[32 * i:hi].eq(bus.w_data)
                            else:
                                m.d.comb += sig[32 * i:hi].eq(bus.w_data)

        # memory windows: address the memory at the strobe (edge 0), register its whole entry
        # at edge 1 (nothing but a register behind a block RAM's slow output), select the word
        # and OR the windows together into r_data at edge 2.
        window_words, w_hits = [], []
        for reg, window in self._windows:
            base, nwords = reg.offset >> 2, reg.words
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
            entry = rel >> shift
            word_sel = rel[:shift] if shift else Const(0, 1)
            w_hit = Signal(name=f"{window.addr.name}_w_hit")
            m.d.comb += w_hit.eq(inside)
            w_hits.append(w_hit)
            if window.w_en is not None:
                m.d.comb += [
                    window.w_en.eq(bus.w_stb & w_hit),
                    window.w_addr.eq(entry),
                    window.w_word.eq(word_sel),
                    window.w_data.eq(bus.w_data),
                ]
            hit = Signal(name=f"{window.addr.name}_hit")
            sel = Signal(range(max(nwords, 2)), name=f"{window.addr.name}_sel")
            m.d.comb += window.addr.eq(entry)
            hit2 = Signal(name=f"{window.addr.name}_hit2")
            m.d.sync += [hit.eq(bus.r_stb & w_hit), hit2.eq(hit)]
            with m.If(bus.r_stb):
                m.d.sync += sel.eq(word_sel)
            entry_q = Signal(32 * nwords, name=f"{window.addr.name}_q")
            with m.If(hit):
                m.d.sync += entry_q.eq(window.data)
            window_words.append(Mux(hit2, entry_q.word_select(sel, 32), 0))
        # the window's data, the second edge after its strobe (no window is hit otherwise)
        window_read = Signal()
        window_read2 = Signal()
        m.d.sync += [window_read.eq(bus.r_stb & Cat(w_hits).any()), window_read2.eq(window_read)]
        with m.If(window_read2):
            m.d.sync += bus.r_data.eq(_or_tree(window_words))

        # registers, in two pipeline stages (a window's or an unmapped address reads 0 here):
        # at the strobe's edge every group of GROUP_WORDS words registers its addressed word (0
        # unless the address is in the group), at the next edge r_data takes the OR of the
        # groups. Reading word 0 of a wider read-only register latches its upper words at the
        # strobe's edge, so they are read consistently afterwards.
        groups = {}
        for reg, sig in self._regs:
            if reg.access == "w" or sig is None:
                continue
            latched = sig
            if reg.access == "r" and reg.words > 1:
                latched = Signal(reg.width - 32, name=f"{sig.name}_hi")
                with m.If(bus.r_stb & (addr == reg.offset >> 2)):
                    m.d.sync += latched.eq(sig[32:])
            for i, off in enumerate(reg.word_offsets):
                hi = min(32 * (i + 1), reg.width)
                value = sig[32 * i:hi] if latched is sig or i == 0 else latched[32 * (i - 1):hi - 32]
                groups.setdefault((off >> 2) // GROUP_WORDS, []).append(((off >> 2) % GROUP_WORDS, value))
        group_words = []
        low_bits = (GROUP_WORDS - 1).bit_length()
        for group, words in sorted(groups.items()):
            word_q = Signal(32, name=f"r_group{group}_q")
            with m.If(bus.r_stb):
                m.d.sync += word_q.eq(0)
                with m.If(addr[low_bits:] == group):
                    with m.Switch(addr[:low_bits]):
                        for index, value in words:
                            with m.Case(index):
                                m.d.sync += word_q.eq(value)
            group_words.append(word_q)
        reg_read = Signal()
        m.d.sync += reg_read.eq(bus.r_stb)
        with m.If(reg_read):
            m.d.sync += bus.r_data.eq(_or_tree(group_words))
        return m


def _or_tree(values):
    """The OR of ``values`` (0 for none)."""
    if not values:
        return Const(0, 32)
    while len(values) > 1:
        values = [values[i] | values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]
