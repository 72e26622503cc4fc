"""Etherbone in gateware: requests in as a byte stream with frame boundaries, answers out as
a byte stream, a CSR bus master (the bus of the simulation top, docs/architecture.md) in
between. The record format is the one the host's transport speaks
(:func:`wirespeed.host.transport.encode_request` / ``decode_answer``):

* packet header ``4e 6f 10 44 00 00 00 00`` (magic, version 1, 32-bit addresses and data;
  the probe flag is not supported here), then **exactly one record**: flags (bit 6 ``wff``:
  every write goes to the base address), byte enable, ``wcount``, ``rcount``; if ``wcount``:
  the base write address and ``wcount`` words; then ``base_ret_addr`` and ``rcount`` read
  addresses. All words big-endian, addresses are byte addresses. ``rcount`` must be >= 1:
  ``base_ret_addr`` is the request's **tag**.
* the record's writes are done before its reads; addresses at or above 256 KiB (beyond
  the 16-bit word address of the bus) are not accessed (writes ignored, reads return 0).
* the answer is one record (flags 0, the request's byte enable, ``wcount = rcount``,
  ``rcount = 0``) writing the read values to ``base_ret_addr`` = the tag.

Retries never execute twice. The engine keeps the tag of the last executed request and its
answer (the read values in block RAM). A request with that tag is answered from the cache
and not executed again. A request whose tag is *older* (serial-number arithmetic: ``tag -
last`` modulo 2^32 is 2^31 or more) is a late copy of a request already superseded: it is
not executed either, and gets a *stale* answer instead, a record with ``wcount = 0``,
``rcount = 1``, ``base_ret_addr`` = its tag and one "read address" = the last executed tag
(a host that starts with a random tag uses it to resynchronise). Any other tag (newer, or
the first request after reset) is executed. Frames that are not such a packet, or that end
with ``drop`` (the framing layer's CRC check failed), are discarded before any access;
``malformed`` counts the former.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .registers import ADDR_WIDTH, READ_LATENCY

__all__ = ["EtherboneEngine", "FRAME_IN", "FRAME_OUT", "MAX_WORDS", "ETHERBONE_HEADER"]

#: A frame byte into the engine: ``last`` marks the frame's last byte, ``drop`` (valid with
#: ``last``) discards the whole frame.
FRAME_IN = data.StructLayout({"data": 8, "last": 1, "drop": 1})
#: An answer byte: ``last`` marks the frame's last byte.
FRAME_OUT = data.StructLayout({"data": 8, "last": 1})
MAX_WORDS = 255
#: The 8-byte packet header of requests and answers.
ETHERBONE_HEADER = bytes([0x4E, 0x6F, 0x10, 0x44, 0, 0, 0, 0])

_HDR, _WBASE, _WDATA, _RBASE, _RADDR, _DONE = range(6)
_READS = 256  # request RAM: write data at 0..254, read addresses at 256..510


class _Port:
    """What the engine drives and reads of a memory: ``addr`` is set apart, ``data``/``en``
    written, ``data`` read (a plain holder of signals, for :func:`_halves`)."""

    def __init__(self, name, write):
        self.data = Signal(32, name=f"{name}_{'w' if write else 'r'}_data")
        if write:
            self.en = Signal(name=f"{name}_w_en")


def _halves(m, name, depth, addr):
    """A 32-bit memory of ``depth`` words as two 16-bit halves sharing ``addr``: each half is
    one read-write port of an ECP5 block RAM. (A 32-bit port exists only in the block RAM's
    pseudo-dual-port mode, whose separate read port gets collision logic, a LUT, behind the
    block RAM's 5.6 ns clock-to-out.) Returns the write and read side."""
    w, r = _Port(name, True), _Port(name, False)
    for i in range(2):
        mem = Memory(shape=16, depth=depth, init=[])
        m.submodules[f"{name}{i}"] = mem
        wp, rp = mem.write_port(), mem.read_port()
        m.d.comb += [wp.addr.eq(addr), rp.addr.eq(addr), wp.data.eq(w.data[16 * i:16 * i + 16]),
                     wp.en.eq(w.en), r.data[16 * i:16 * i + 16].eq(rp.data)]
    return w, r


class EtherboneEngine(wiring.Component):
    """One request at a time: parse (``i.ready`` high), execute on the bus, answer on ``o``
    (``i.ready`` low meanwhile). Counters wrap."""

    i: In(stream.Signature(FRAME_IN))
    o: Out(stream.Signature(FRAME_OUT))
    csr_addr: Out(ADDR_WIDTH)
    csr_r_stb: Out(1)
    csr_r_data: In(32)
    csr_w_stb: Out(1)
    csr_w_data: Out(32)
    requests: Out(32)    # requests executed
    replays: Out(16)     # answered from the cache (retry of the last request)
    stale: Out(16)       # late copies of older requests, not executed
    malformed: Out(16)   # frames dropped by the parser

    def elaborate(self, platform):
        m = Module()
        # one address per memory, shared by its read and write port (they are never used in
        # the same cycle)
        req_addr = Signal(9)
        ans_addr = Signal(8)
        req_w, req_r = _halves(m, "req", 512, req_addr)
        ans_w, ans_r = _halves(m, "ans", 256, ans_addr)

        # parser
        field = Signal(range(6))
        hpos = Signal(range(12))
        k = Signal(2)
        word = Signal(32)
        idx = Signal(8)
        bad = Signal()
        wff = Signal()
        be = Signal(8)
        wcount = Signal(8)
        rcount = Signal(8)
        wbase = Signal(32)
        tag = Signal(32)
        # cache
        c_valid = Signal()
        c_tag = Signal(32)
        c_count = Signal(8)
        # execution and answer
        addr = Signal(32)
        r_wait = Signal(range(READ_LATENCY))
        # block RAM read data goes straight into these (no enable, no reset: timing on ECP5)
        req_q = Signal(32, reset_less=True)
        ans_q = Signal(32, reset_less=True)
        m.d.sync += [req_q.eq(req_r.data), ans_q.eq(ans_r.data)]
        in_range = Signal()
        stale_mode = Signal()
        spos = Signal(range(16))
        widx = Signal(8)
        bpos = Signal(2)
        sword = Signal(32)

        byte = self.i.payload.data
        full = Signal(32)
        m.d.comb += full.eq(Cat(byte, word[:24]))
        # registered: widx moves at the end of SEND_WORD, three states before it is used again
        # (the compare's carry chain in front of the state register took 9.3 ns on the 25F)
        last_word = Signal()
        m.d.sync += last_word.eq(Mux(stale_mode, 1, widx + 1 == c_count))
        # likewise the last write and the last read of a request: idx holds still for two
        # states (W_ADDR, W_WAIT; R_ADDR to R_WAIT) before W_DO and R_DATA use them, and for
        # the three bytes of a word while PARSE collects the request (it moves on the fourth)
        w_last, r_last = Signal(), Signal()
        m.d.sync += [w_last.eq(idx + 1 == wcount), r_last.eq(idx + 1 == rcount)]
        # the request RAM's address is idx and a register that selects the read addresses'
        # half (_READS = 256), set a clock ahead of each use: no logic between the FSM and the
        # block RAM's address (the state decode in front of it took 8.5 ns on the 25F)
        req_reads = Signal()
        m.d.comb += req_addr.eq(Cat(idx, req_reads))
        # likewise its write data: the word being collected, whatever the state (the enable
        # says when it is written)
        m.d.comb += req_w.data.eq(full)

        m.d.sync += [self.csr_r_stb.eq(0), self.csr_w_stb.eq(0)]
        m.d.comb += ans_addr.eq(widx)       # R_DATA overrides it to write

        with m.FSM():
            with m.State("PARSE"):
                # (field moves on at a word's last byte; the next write is a word later)
                m.d.sync += req_reads.eq(field == _RADDR)
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid):
                    complete = (field == _RADDR) & (k == 3) & r_last
                    with m.Switch(field):
                        with m.Case(_HDR):
                            m.d.sync += hpos.eq(hpos + 1)
                            with m.Switch(hpos):
                                with m.Case(0):
                                    with m.If(byte != 0x4E):
                                        m.d.sync += bad.eq(1)
                                with m.Case(1):
                                    with m.If(byte != 0x6F):
                                        m.d.sync += bad.eq(1)
                                with m.Case(2):
                                    with m.If((byte[4:] != 1) | byte[0]):
                                        m.d.sync += bad.eq(1)
                                with m.Case(3):
                                    with m.If(byte != 0x44):
                                        m.d.sync += bad.eq(1)
                                with m.Case(8):
                                    m.d.sync += wff.eq(byte[6])
                                with m.Case(9):
                                    m.d.sync += be.eq(byte)
                                with m.Case(10):
                                    m.d.sync += wcount.eq(byte)
                                with m.Case(11):
                                    m.d.sync += rcount.eq(byte)
                                    with m.If(byte == 0):
                                        m.d.sync += [bad.eq(1), field.eq(_DONE)]
                                    with m.Elif(wcount != 0):
                                        m.d.sync += field.eq(_WBASE)
                                    with m.Else():
                                        m.d.sync += field.eq(_RBASE)
                        with m.Case(_WBASE, _WDATA, _RBASE, _RADDR):
                            m.d.sync += [k.eq(k + 1), word.eq(full)]
                            with m.If(k == 3):
                                with m.Switch(field):
                                    with m.Case(_WBASE):
                                        m.d.sync += [wbase.eq(full), idx.eq(0), field.eq(_WDATA)]
                                    with m.Case(_WDATA):
                                        m.d.comb += req_w.en.eq(1)
                                        m.d.sync += idx.eq(idx + 1)
                                        with m.If(w_last):
                                            m.d.sync += field.eq(_RBASE)
                                    with m.Case(_RBASE):
                                        m.d.sync += [tag.eq(full), idx.eq(0), field.eq(_RADDR)]
                                    with m.Case(_RADDR):
                                        m.d.comb += req_w.en.eq(1)
                                        m.d.sync += idx.eq(idx + 1)
                                        with m.If(r_last):
                                            m.d.sync += field.eq(_DONE)
                        with m.Case(_DONE):
                            m.d.sync += bad.eq(1)       # bytes after the record
                    with m.If(self.i.payload.last):
                        m.d.sync += [field.eq(_HDR), hpos.eq(0), k.eq(0), bad.eq(0), idx.eq(0)]
                        with m.If(complete & ~bad & ~self.i.payload.drop):
                            m.next = "CHECK"
                        with m.Elif(~self.i.payload.drop):
                            m.d.sync += self.malformed.eq(self.malformed + 1)

            # the request's tag against the last executed one: compared here, registered, and
            # acted on in DISPATCH (a 32-bit compare and subtraction before the state's own
            # logic do not fit one 8 ns clock)
            same, older = Signal(), Signal()
            with m.State("CHECK"):
                diff = Signal(32)
                m.d.comb += diff.eq(tag - c_tag)
                m.d.sync += [same.eq(c_valid & (tag == c_tag)), older.eq(c_valid & diff[31])]
                m.next = "DISPATCH"

            with m.State("DISPATCH"):
                m.d.sync += [idx.eq(0), addr.eq(wbase), spos.eq(0), widx.eq(0), bpos.eq(0),
                             req_reads.eq(wcount == 0)]
                with m.If(same):
                    m.d.sync += [self.replays.eq(self.replays + 1), stale_mode.eq(0)]
                    m.next = "SEND_HDR"
                with m.Elif(older):
                    m.d.sync += [self.stale.eq(self.stale + 1), stale_mode.eq(1)]
                    m.next = "SEND_HDR"
                with m.Else():
                    m.d.sync += [self.requests.eq(self.requests + 1), c_valid.eq(0), stale_mode.eq(0)]
                    with m.If(wcount != 0):
                        m.next = "W_ADDR"
                    with m.Else():
                        m.next = "R_ADDR"

            with m.State("W_ADDR"):
                m.next = "W_WAIT"
            with m.State("W_WAIT"):
                m.next = "W_DO"
            with m.State("W_DO"):
                m.d.sync += [
                    self.csr_w_stb.eq(addr[2 + ADDR_WIDTH:] == 0),
                    self.csr_addr.eq(addr[2:2 + ADDR_WIDTH]),
                    self.csr_w_data.eq(req_q),
                    idx.eq(idx + 1),
                ]
                with m.If(~wff):
                    m.d.sync += addr.eq(addr + 4)
                with m.If(w_last):
                    m.d.sync += [idx.eq(0), req_reads.eq(1)]
                    m.next = "R_ADDR"
                with m.Else():
                    m.next = "W_ADDR"

            with m.State("R_ADDR"):
                m.next = "R_LATCH"
            with m.State("R_LATCH"):   # the read address goes into req_q
                m.next = "R_STB"
            with m.State("R_STB"):
                ok = req_q[2 + ADDR_WIDTH:] == 0
                m.d.sync += [self.csr_r_stb.eq(ok), self.csr_addr.eq(req_q[2:2 + ADDR_WIDTH]),
                             in_range.eq(ok)]
                m.next = "R_W1"
            with m.State("R_W1"):      # csr_r_stb is high in this cycle
                m.d.sync += r_wait.eq(READ_LATENCY - 1)
                m.next = "R_WAIT"
            with m.State("R_WAIT"):    # the bus's READ_LATENCY edges after the strobe's
                m.d.sync += r_wait.eq(r_wait - 1)
                with m.If(r_wait == 0):
                    m.next = "R_DATA"
            with m.State("R_DATA"):    # csr_r_data is valid
                m.d.comb += [ans_addr.eq(idx), ans_w.data.eq(Mux(in_range, self.csr_r_data, 0)),
                             ans_w.en.eq(1)]
                m.d.sync += idx.eq(idx + 1)
                with m.If(r_last):
                    m.d.sync += [c_valid.eq(1), c_tag.eq(tag), c_count.eq(rcount)]
                    m.next = "SEND_HDR"
                with m.Else():
                    m.next = "R_ADDR"

            with m.State("SEND_HDR"):
                hdr = Signal(8)
                with m.Switch(spos):
                    for i, b in enumerate(ETHERBONE_HEADER):
                        with m.Case(i):
                            m.d.comb += hdr.eq(b)
                    with m.Case(9):
                        m.d.comb += hdr.eq(be)
                    with m.Case(10):
                        m.d.comb += hdr.eq(Mux(stale_mode, 0, c_count))
                    with m.Case(11):
                        m.d.comb += hdr.eq(stale_mode)
                    for i in range(4):
                        with m.Case(12 + i):
                            m.d.comb += hdr.eq(tag.word_select(3 - i, 8))
                    with m.Default():
                        m.d.comb += hdr.eq(0)
                m.d.comb += [self.o.valid.eq(1), self.o.payload.data.eq(hdr)]
                with m.If(self.o.ready):
                    m.d.sync += spos.eq(spos + 1)
                    with m.If(spos == 15):
                        m.next = "SEND_WAIT"
            with m.State("SEND_WAIT"):   # the answer RAM reads widx
                m.next = "SEND_LATCH"
            with m.State("SEND_LATCH"):   # the answer word goes into ans_q
                m.next = "SEND_LOAD"
            with m.State("SEND_LOAD"):
                m.d.sync += [sword.eq(Mux(stale_mode, c_tag, ans_q)), bpos.eq(0)]
                m.next = "SEND_WORD"
            with m.State("SEND_WORD"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.data.eq(sword[24:]),
                             self.o.payload.last.eq(last_word & (bpos == 3))]
                with m.If(self.o.ready):
                    m.d.sync += [sword.eq(sword << 8), bpos.eq(bpos + 1)]
                    with m.If(bpos == 3):
                        with m.If(last_word):
                            m.next = "PARSE"
                        with m.Else():
                            m.d.sync += widx.eq(widx + 1)
                            m.next = "SEND_WAIT"
        return m
