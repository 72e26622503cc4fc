"""The board's management path: Etherbone records over a UART (docs/management.md).

    rx pin -> UartRx -> FIFO -> SlipCrcRx -> EtherboneEngine -> SlipCrcTx -> UartTx -> tx pin
                                                 |
                                        CSR bus master (csr_*)

Framing is SLIP (RFC 1055: END 0xC0 before and after every frame, ESC 0xDB, 0xC0 sent as
DB DC, 0xDB as DB DD). Each frame is an Etherbone packet followed by its CRC-32 (the
Ethernet/zlib CRC, ``zlib.crc32``, appended least significant byte first), computed before
escaping. A frame with a bad CRC, a bad escape, a UART framing error or a byte lost to a
full receive FIFO is dropped whole (``bad_frames``); the host retries, and the engine's
reply cache makes the retry harmless (see :mod:`wirespeed.gateware.etherbone`).
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import crc, data, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from .etherbone import FRAME_IN, FRAME_OUT, EtherboneEngine
from .registers import ADDR_WIDTH
from .synth_hints import no_collision_name
from .uart import UartRx, UartTx, uart_divisor

__all__ = ["UartBridge", "SlipCrcRx", "SlipCrcTx", "SLIP_END", "SLIP_ESC", "CRC_PARAMS",
           "RX_ITEM"]

SLIP_END, SLIP_ESC, SLIP_ESC_END, SLIP_ESC_ESC = 0xC0, 0xDB, 0xDC, 0xDD
CRC_PARAMS = crc.catalog.CRC32_ETHERNET(8)
#: A received byte, or (``error``) the mark of a byte lost or garbled on the line.
RX_ITEM = data.StructLayout({"data": 8, "error": 1})


class SlipCrcRx(wiring.Component):
    """SLIP frames with a trailing CRC-32 in, frame bytes (without the CRC) out. A frame's
    bytes leave 5 bytes late, so that its last byte carries ``last`` and ``drop`` (CRC or
    escape or line error). Frames shorter than 5 bytes produce nothing (and count as bad);
    empty frames (END END) are ignored. The output is a register: an item is taken only when
    it is empty, so what follows it (``o.ready``) reaches no further than that register."""

    i: In(stream.Signature(RX_ITEM))
    o: Out(stream.Signature(FRAME_IN))
    bad_frames: Out(16)

    def elaborate(self, platform):
        m = Module()
        m.submodules.crc = checker = CRC_PARAMS.create()
        held = Signal(40)        # the last 5 decoded bytes, newest in bits 0..7
        count = Signal(range(6))
        bad = Signal()
        esc = Signal()

        # Input register: an item and what it is, classified on the way in, so the decoder
        # below works from flip-flops (its compares after the FIFO's stage took 8.3 ns on the
        # 25F). It takes an item only when empty: items reach the decoder two clocks apart
        # or more, so the CRC's match, registered, is up to date when END comes.
        a_valid = Signal()
        a_data = Signal(8)
        a_error, a_end, a_esc, a_esc_end, a_esc_esc = (Signal(name=f"a_{n}") for n in
                                                        ("error", "end", "esc", "esc_end", "esc_esc"))
        item = self.i.payload
        m.d.comb += self.i.ready.eq(~a_valid)
        with m.If(~a_valid & self.i.valid):
            m.d.sync += [a_valid.eq(1), a_data.eq(item.data), a_error.eq(item.error),
                         a_end.eq(item.data == SLIP_END), a_esc.eq(item.data == SLIP_ESC),
                         a_esc_end.eq(item.data == SLIP_ESC_END), a_esc_esc.eq(item.data == SLIP_ESC_ESC)]
        match = Signal()
        m.d.sync += match.eq(checker.match_detected)

        take = Signal()
        m.d.comb += take.eq(a_valid & ~self.o.valid)
        with m.If(take):
            m.d.sync += a_valid.eq(0)
        with m.If(self.o.ready):
            m.d.sync += self.o.valid.eq(0)

        decoded = Signal(8)
        is_byte = Signal()
        with m.If(esc):
            m.d.comb += decoded.eq(Mux(a_esc_end, SLIP_END, SLIP_ESC))
        with m.Else():
            m.d.comb += decoded.eq(a_data)
        m.d.comb += is_byte.eq(~a_error & ~a_end & (esc | ~a_esc))

        m.d.comb += [checker.data.eq(decoded), checker.valid.eq(take & is_byte),
                     checker.start.eq(count == 0)]
        emit = Signal()
        with m.If(emit):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.data.eq(held[32:]), self.o.payload.last.eq(0),
                         self.o.payload.drop.eq(0)]

        with m.If(take):
            with m.If(a_error):
                m.d.sync += bad.eq(1)
            with m.Elif(a_end):
                m.d.sync += [count.eq(0), bad.eq(0), esc.eq(0)]
                with m.If(count == 5):
                    m.d.comb += emit.eq(1)
                    m.d.sync += [self.o.payload.last.eq(1), self.o.payload.drop.eq(bad | esc | ~match)]
                    with m.If(bad | esc | ~match):
                        m.d.sync += self.bad_frames.eq(self.bad_frames + 1)
                with m.Elif((count != 0) | bad):
                    m.d.sync += self.bad_frames.eq(self.bad_frames + 1)
            with m.Elif(~esc & a_esc):
                m.d.sync += esc.eq(1)
            with m.Else():
                m.d.sync += [esc.eq(0), held.eq(Cat(decoded, held[:32]))]
                with m.If(esc & ~a_esc_end & ~a_esc_esc):
                    m.d.sync += bad.eq(1)
                with m.If(count == 5):
                    m.d.comb += emit.eq(1)
                with m.Else():
                    m.d.sync += count.eq(count + 1)
        return m


class SlipCrcTx(wiring.Component):
    """Frame bytes in, SLIP frames with the CRC-32 appended out."""

    i: In(stream.Signature(FRAME_OUT))
    o: Out(stream.Signature(8))

    def elaborate(self, platform):
        m = Module()
        m.submodules.crc = gen = CRC_PARAMS.create()
        out = Signal(8)
        special = (out == SLIP_END) | (out == SLIP_ESC)
        crc_word = Signal(32)
        nbyte = Signal(2)
        second = Signal(8)
        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += gen.start.eq(1)
                with m.If(self.i.valid):
                    m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(SLIP_END)]
                    with m.If(self.o.ready):
                        m.next = "BODY"
            with m.State("BODY"):
                m.d.comb += [out.eq(self.i.payload.data), self.o.valid.eq(self.i.valid),
                             self.o.payload.eq(out)]
                with m.If(special):
                    m.d.comb += self.o.payload.eq(SLIP_ESC)
                with m.If(self.i.valid & self.o.ready):
                    m.d.comb += [self.i.ready.eq(1), gen.valid.eq(1), gen.data.eq(out)]
                    m.d.sync += second.eq(Mux(out == SLIP_END, SLIP_ESC_END, SLIP_ESC_ESC))
                    with m.If(special):
                        m.next = "ESC_BODY"
                        with m.If(self.i.payload.last):
                            m.next = "ESC_LAST"
                    with m.Elif(self.i.payload.last):
                        m.next = "CRC"
            with m.State("ESC_BODY"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(second)]
                with m.If(self.o.ready):
                    m.next = "BODY"
            with m.State("ESC_LAST"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(second)]
                with m.If(self.o.ready):
                    m.next = "CRC"
            with m.State("CRC"):
                m.d.sync += [crc_word.eq(gen.crc), nbyte.eq(0)]
                m.next = "CRC_BYTE"
            with m.State("CRC_BYTE"):
                m.d.comb += [out.eq(crc_word[:8]), self.o.valid.eq(1), self.o.payload.eq(out)]
                with m.If(special):
                    m.d.comb += self.o.payload.eq(SLIP_ESC)
                with m.If(self.o.ready):
                    m.d.sync += [crc_word.eq(crc_word >> 8), nbyte.eq(nbyte + 1),
                                 second.eq(Mux(out == SLIP_END, SLIP_ESC_END, SLIP_ESC_ESC))]
                    with m.If(special):
                        m.next = "ESC_CRC"
                    with m.Elif(nbyte == 3):
                        m.next = "END"
            with m.State("ESC_CRC"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(second)]
                with m.If(self.o.ready):
                    with m.If(nbyte == 0):   # wrapped: that was the fourth CRC byte
                        m.next = "END"
                    with m.Else():
                        m.next = "CRC_BYTE"
            with m.State("END"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(SLIP_END)]
                with m.If(self.o.ready):
                    m.next = "IDLE"
        return m


class _Stage(wiring.Component):
    """One pipeline register on a stream that cuts every path through it, ready included: it
    takes an item only when empty, so it passes one item every two cycles (a UART byte
    comes every ten bit times, 1,250 cycles at 1 Mbaud). A ready that ran through every stage
    was the bridge's slowest path in the whole design (13.1 ns on the 45F)."""

    def __init__(self, shape):
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.i.ready.eq(~self.o.valid)
        with m.If(~self.o.valid):
            m.d.sync += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload)]
        with m.Elif(self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        return m


class UartBridge(wiring.Component):
    """Etherbone over a UART to a CSR bus master: the board's management port.

    ``clk_hz``: the clock of the domain it runs in (``sync``); ``baud``: the line rate
    (8N1; ValueError if ``clk_hz / baud`` is not within 1 % of an integer >= 4);
    ``rx_fifo_depth``: bytes buffered while a request executes or an answer is sent.

    Members: ``rx`` (In, from the host's TXD), ``tx`` (Out, to the host's RXD), the CSR bus
    master ``csr_addr`` (Out 16, word address), ``csr_r_stb`` (Out), ``csr_r_data`` (In 32,
    valid ``READ_LATENCY`` edges after the one that samples ``csr_r_stb``), ``csr_w_stb`` (Out),
    ``csr_w_data`` (Out 32),
    and wrapping counters for a status register: ``requests`` (32, executed), ``replays``
    (16, answered from the reply cache), ``stale`` (16, late copies not executed),
    ``malformed`` (16, frames with a good CRC that are not a request), ``bad_frames`` (16,
    CRC, escape or line errors) and ``rx_errors`` (16, UART framing errors and overruns).
    """

    rx: In(1, init=1)
    tx: Out(1, init=1)
    csr_addr: Out(ADDR_WIDTH)
    csr_r_stb: Out(1)
    csr_r_data: In(32)
    csr_w_stb: Out(1)
    csr_w_data: Out(32)
    requests: Out(32)
    replays: Out(16)
    stale: Out(16)
    malformed: Out(16)
    bad_frames: Out(16)
    rx_errors: Out(16)

    def __init__(self, clk_hz, baud, *, rx_fifo_depth=2048):
        self.clk_hz, self.baud = clk_hz, baud
        try:
            self.divisor = uart_divisor(clk_hz, baud)
            if rx_fifo_depth < 16:
                raise ValueError(f"rx_fifo_depth must be >= 16, not {rx_fifo_depth}")
        except ValueError:
            self._MustUse__silence = True    # never built
            raise
        self.rx_fifo_depth = rx_fifo_depth
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.uart_rx = urx = UartRx(self.divisor)
        m.submodules.uart_tx = utx = UartTx(self.divisor)
        # a block RAM whose ports never meet (synth_hints): its data out goes straight to the
        # stage register behind it, without the collision LUT that made 8.1-8.4 ns paths on
        # the 25F
        fifo = SyncFIFOBuffered(width=9, depth=self.rx_fifo_depth)
        m.submodules[no_collision_name("fifo")] = fifo
        m.submodules.deframe = deframe = SlipCrcRx()
        m.submodules.engine = engine = EtherboneEngine()
        # pipeline registers around the FIFO's block RAM, the engine and the framer (the
        # deframer's output is a register of its own): 125 MHz on ECP5
        m.submodules.stage_fifo = stage_fifo = _Stage(RX_ITEM)
        m.submodules.stage_answer = stage_answer = _Stage(FRAME_OUT)
        m.submodules.stage_line = stage_line = _Stage(8)
        m.submodules.frame = frame = SlipCrcTx()

        # line errors and lost bytes become an error item in the FIFO, in order; the items go
        # in through a stage of their own, so the FIFO's level logic (its write ready) and the
        # receiver's are a register apart (placed apart, they made a 8.4 ns path on the 25F)
        m.submodules.stage_rx = stage_rx = _Stage(RX_ITEM)
        lost = Signal()
        m.d.comb += [urx.rx.eq(self.rx), urx.o.ready.eq(stage_rx.i.ready)]
        with m.If(urx.framing_error | urx.overrun):
            m.d.sync += [lost.eq(1), self.rx_errors.eq(self.rx_errors + 1)]
        with m.If(lost):
            m.d.comb += [stage_rx.i.valid.eq(1), stage_rx.i.payload.eq(1 << 8), urx.o.ready.eq(0)]
            with m.If(stage_rx.i.ready):
                m.d.sync += lost.eq(0)
        with m.Else():
            m.d.comb += [stage_rx.i.valid.eq(urx.o.valid), stage_rx.i.payload.eq(urx.o.payload)]
        m.d.comb += [fifo.w_en.eq(stage_rx.o.valid), fifo.w_data.eq(stage_rx.o.payload),
                     stage_rx.o.ready.eq(fifo.w_rdy)]
        m.d.comb += [
            stage_fifo.i.valid.eq(fifo.r_rdy),
            stage_fifo.i.payload.eq(fifo.r_data),
            fifo.r_en.eq(stage_fifo.i.ready),
        ]
        wiring.connect(m, stage_fifo.o, deframe.i)
        wiring.connect(m, deframe.o, engine.i)
        wiring.connect(m, engine.o, stage_answer.i)
        wiring.connect(m, stage_answer.o, frame.i)
        wiring.connect(m, frame.o, stage_line.i)
        wiring.connect(m, stage_line.o, utx.i)
        m.d.comb += [
            self.tx.eq(utx.tx),
            self.csr_addr.eq(engine.csr_addr), self.csr_r_stb.eq(engine.csr_r_stb),
            self.csr_w_stb.eq(engine.csr_w_stb), self.csr_w_data.eq(engine.csr_w_data),
            engine.csr_r_data.eq(self.csr_r_data),
            self.requests.eq(engine.requests), self.replays.eq(engine.replays),
            self.stale.eq(engine.stale), self.malformed.eq(engine.malformed),
            self.bad_frames.eq(deframe.bad_frames),
        ]
        return m
