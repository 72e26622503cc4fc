"""The traffic generator's tables, written by the host through memory windows of the register
bank: header templates, stream descriptors, the frame size table (formats in
:mod:`.streamdesc`), and the read ports the generator's stages use.

Block RAM tables are kept in two copies, the host's and the generator's. The host's copy is
one port that writes and reads (the host's write address while it writes): a read port beside
a write port of its own gets collision logic (a LUT) behind the block RAM's slow output. The
generator's copy of the template keeps a write port of its own (a template written during a
trial still reaches the frames in order); the size table's shares its port with the host's
writes: a read issued while the host writes is lost (``size_busy``), and prepare issues it
again. The descriptors are one LUT RAM with the host's read port and prepare's.

Beside the descriptors, written with their word, the streams' enable bits (``stream_en``, for
the scheduler's scan) and their size table bases (``tbase``, read as soon as the scheduler
picks a stream, so that prepare can address the size table a cycle earlier).
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory, ReadPort
from amaranth.lib.wiring import In, Out

from . import streamdesc as SD
from .gen_layouts import DESC_LAYOUT
from .registers import WindowSignature

__all__ = ["GeneratorTables"]

_TB = DESC_LAYOUT["size_table_base"]
assert _TB.offset // 32 == (_TB.offset + _TB.width - 1) // 32, "size_table_base must sit in one descriptor word"
assert DESC_LAYOUT["enable"].offset == 0, "the enable bit is bit 0 of word 0"


class GeneratorTables(wiring.Component):
    """``tmpl_win``, ``desc_win``, ``sizes_win``: the host's windows. ``desc_rd`` (synchronous),
    ``tbase_rd`` (asynchronous), ``size_rd`` (synchronous, lost while ``size_busy``): prepare's
    reads. ``tmpl_rd`` (synchronous, with enable) and ``tmpl_written`` (a host write to any
    template): the emitter's."""

    def __init__(self, n_streams):
        self.n_streams = n = n_streams
        tmpl_depth = n * SD.TEMPLATE_BYTES
        super().__init__({
            "tmpl_win": In(WindowSignature(tmpl_depth, 8)),
            "desc_win": In(WindowSignature(n, SD.DESC_BITS)),
            "sizes_win": In(WindowSignature(SD.SIZE_TABLE, 14)),
            "stream_en": Out(n),
            "desc_rd": Out(ReadPort.Signature(addr_width=(n - 1).bit_length(), shape=SD.DESC_BITS)),
            "tbase_rd": Out(ReadPort.Signature(addr_width=(n - 1).bit_length(), shape=_TB.width)),
            "size_rd": Out(ReadPort.Signature(addr_width=(SD.SIZE_TABLE - 1).bit_length(), shape=14)),
            "size_busy": Out(1),
            "tmpl_rd": Out(ReadPort.Signature(addr_width=(tmpl_depth - 1).bit_length(), shape=8)),
            "tmpl_written": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_streams
        m.submodules.tmpl = tmpl = Memory(shape=8, depth=n * SD.TEMPLATE_BYTES, init=[])
        m.submodules.desc = desc = Memory(shape=SD.DESC_BITS, depth=n, init=[])
        m.submodules.sizes = sizes = Memory(shape=14, depth=SD.SIZE_TABLE, init=[])
        m.submodules.sizes_gen = sizes_gen = Memory(shape=14, depth=SD.SIZE_TABLE, init=[])
        wp = desc.write_port(granularity=32)
        host = desc.read_port()
        win = self.desc_win
        words = SD.DESC_BITS // 32
        m.d.comb += [wp.addr.eq(win.w_addr), host.addr.eq(win.addr), win.data.eq(host.data),
                     wp.data.eq(win.w_data.replicate(words)), wp.en.eq(Mux(win.w_en, 1 << win.w_word, 0))]
        m.submodules.tmpl_host = tmpl_host = Memory(shape=8, depth=n * SD.TEMPLATE_BYTES, init=[])
        for mem, win, name in ((tmpl_host, self.tmpl_win, "tmpl"), (sizes, self.sizes_win, "sizes")):
            shared = Signal(range(mem.depth), name=f"{name}_port")
            wp, host = mem.write_port(), mem.read_port()
            m.d.comb += [shared.eq(Mux(win.w_en, win.w_addr, win.addr)), wp.addr.eq(shared), host.addr.eq(shared),
                         win.data.eq(host.data), wp.data.eq(win.w_data), wp.en.eq(win.w_en)]

        # the generator's copies: the template (a write port of its own) and the size table
        # (one port, the host's writes first)
        tmpl_wp, tmpl_rd = tmpl.write_port(), tmpl.read_port()
        m.d.comb += [tmpl_wp.addr.eq(self.tmpl_win.w_addr), tmpl_wp.data.eq(self.tmpl_win.w_data),
                     tmpl_wp.en.eq(self.tmpl_win.w_en), self.tmpl_written.eq(self.tmpl_win.w_en),
                     tmpl_rd.addr.eq(self.tmpl_rd.addr), tmpl_rd.en.eq(self.tmpl_rd.en),
                     self.tmpl_rd.data.eq(tmpl_rd.data)]
        sizes_w = self.sizes_win
        size_port = Signal(range(SD.SIZE_TABLE))
        gen_wp, size_rd = sizes_gen.write_port(), sizes_gen.read_port()
        m.d.comb += [size_port.eq(Mux(sizes_w.w_en, sizes_w.w_addr, self.size_rd.addr)),
                     gen_wp.addr.eq(size_port), size_rd.addr.eq(size_port),
                     gen_wp.data.eq(sizes_w.w_data), gen_wp.en.eq(sizes_w.w_en),
                     self.size_rd.data.eq(size_rd.data), self.size_busy.eq(sizes_w.w_en)]

        desc_rd = desc.read_port()
        m.d.comb += [desc_rd.addr.eq(self.desc_rd.addr), self.desc_rd.data.eq(desc_rd.data)]

        # the streams' enable bits, kept beside the descriptors for the scheduler's scan
        win = self.desc_win
        with m.If(win.w_en & (win.w_word == 0)):
            m.d.sync += self.stream_en.bit_select(win.w_addr, 1).eq(win.w_data[0])

        # the streams' size table bases, kept beside the descriptors (written with their word)
        m.submodules.tbases = tbases = Memory(shape=_TB.width, depth=n, init=[])
        tb_wr, tb_rd = tbases.write_port(), tbases.read_port(domain="comb")
        m.d.comb += [tb_wr.addr.eq(win.w_addr), tb_wr.data.eq(win.w_data[_TB.offset % 32:][:_TB.width]),
                     tb_wr.en.eq(win.w_en & (win.w_word == _TB.offset // 32)),
                     tb_rd.addr.eq(self.tbase_rd.addr), self.tbase_rd.data.eq(tb_rd.data)]
        return m
