"""Capture of received frames into block RAM, read by the host through two memory windows
(layout and trigger semantics in docs/capture.md).

The block taps the port's receive byte stream (it only observes: the stream is always
ready). ``{prefix}.cap.arm`` starts a capture: the block waits for the trigger frame, then
records it and the following frames until ``count`` frames are recorded or the data memory
cannot hold another frame of ``snaplen`` bytes.

Triggers (``{prefix}.cap.trigger``):

* 0: the first frame that starts after the arm;
* 1: the first frame with a bad FCS (``error`` on its last byte);
* 2: the first frame that is not a wirespeed test frame: its last 16 bytes (the FCS is
  already stripped) are not a valid signature, i.e. :func:`wirespeed.gateware.frame.parse_signature`
  returns None (whatever the FCS; frames shorter than 16 bytes are not test frames).
  The block keeps its own 16-byte shift register for this, so it needs no input from the
  analyzer.

Whether a frame triggers is only known at its last byte, so while armed every frame is
written speculatively from data word 0 and kept only if it triggers. The trigger frame is
the first captured frame. The decision is taken on the clock after the last byte; a frame
starting on that clock (no idle clock between frames: never from a MAC) is not recorded.

Per frame, an index entry of 128 bits (least significant first): receive timestamp (64,
``now`` at the first byte), wire length (16, bytes including the FCS), stored length (16,
``min(wire length - 4, snaplen)``), flags (16; bit 0: bad FCS) and the data word offset
(16). Data: the first ``stored length`` bytes packed big-endian into 32-bit words (first
byte in bits 31..24), each frame starting on a word boundary, the unused bytes of its last
word zero.
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In

from . import frame as F
from .registers import align_up
from .streams import RxByte, RxStream

__all__ = ["Capture", "layout", "STATE_IDLE", "STATE_ARMED", "STATE_CAPTURING", "STATE_DONE",
           "TRIGGER_ANY", "TRIGGER_FCS", "TRIGGER_NOT_TEST", "capture_model", "SNAPLEN_MIN", "SNAPLEN_MAX",
           "SNAPLEN_DEFAULT"]

STATE_IDLE, STATE_ARMED, STATE_CAPTURING, STATE_DONE = 0, 1, 2, 3
TRIGGER_ANY, TRIGGER_FCS, TRIGGER_NOT_TEST = 0, 1, 2
SNAPLEN_MIN, SNAPLEN_MAX, SNAPLEN_DEFAULT = 16, 1024, 128


def layout(base, data_words, max_frames):
    """Byte offsets in the capture's block (at byte address ``base``) of its windows, and the
    block's size (``"end"``): after the six registers (0x00..0x17), the index window on the
    next byte address that is a multiple of its size, the data window on the next multiple of
    its size after that."""
    index = align_up(base + 0x18, 16 * max_frames) - base
    data = align_up(base + index + 16 * max_frames, 4 * data_words) - base
    return {"index": index, "data": data, "end": data + 4 * data_words}


class Capture(wiring.Component):
    sink: In(RxStream)
    now: In(64)

    def __init__(self, regs, prefix, *, data_words=1024, max_frames=32):
        """``regs``: the capture's :class:`~.registers.RegisterBlock` (a bank: at 0), laid out
        by :func:`layout`."""
        if not SNAPLEN_MAX // 4 <= data_words <= 65536:
            raise ValueError(f"Capture: data_words must be {SNAPLEN_MAX // 4}..65536 (one frame of "
                             f"the largest snaplen must fit), got {data_words}")
        if not 1 <= max_frames <= 65536:
            raise ValueError(f"Capture: max_frames must be 1..65536, got {max_frames}")
        super().__init__()
        self.data_words, self.max_frames = data_words, max_frames
        p = f"{prefix}.cap"
        at = layout(regs.base, data_words, max_frames)
        self._arm = regs.add(f"{p}.arm", 1, "w", offset=0x00,
                             doc="write 1: start a new capture (forgets the previous one)")
        self._trigger = regs.add(f"{p}.trigger", 2, "rw", offset=0x04,
                                 doc="0 first frame after arm, 1 first frame with a bad FCS, "
                                     "2 first frame that is not a wirespeed test frame (latched at arm)")
        self._snaplen = regs.add(f"{p}.snaplen", 11, "rw", offset=0x08, reset=SNAPLEN_DEFAULT,
                                 doc=f"bytes stored per frame, {SNAPLEN_MIN}..{SNAPLEN_MAX} (clamped; latched at arm)")
        self._count = regs.add(f"{p}.count", max_frames.bit_length(), "rw", offset=0x0C, reset=max_frames,
                               doc=f"frames to capture from the trigger on, 1..{max_frames} (clamped; latched at arm)")
        self._frames = regs.add(f"{p}.frames", max_frames.bit_length(), "r", offset=0x10,
                                doc="frames captured so far")
        self._state = regs.add(f"{p}.state", 2, "r", offset=0x14,
                               doc="0 idle, 1 armed (waiting for the trigger), 2 capturing, 3 done")
        self._index_win = regs.add_memory(
            f"{p}.index", 128, max_frames, word_reads=True, offset=at["index"],
            doc="per frame: timestamp ns (bits 0-63), wire length incl. FCS (64-79), stored length "
                "(80-95), flags (96-111, bit 0 bad FCS), data word offset (112-127)")
        self._data_win = regs.add_memory(
            f"{p}.data", 32, data_words, word_reads=True, offset=at["data"],
            doc="frame bytes, big-endian in 32-bit words, each frame from a word boundary")

    def elaborate(self, platform):
        m = Module()
        nwords, nframes = self.data_words, self.max_frames
        m.submodules.data = data = Memory(shape=unsigned(32), depth=nwords, init=[])
        m.submodules.index = index = Memory(shape=unsigned(128), depth=nframes, init=[])
        d_wr, d_rd = data.write_port(), data.read_port()
        i_wr, i_rd = index.write_port(), index.read_port()
        # host reads a word at a time, through a register right behind each block RAM (the
        # RAM's output is slow; the bank sits far away)
        i_sel, i_sel_q, i_entry = Signal(2), Signal(2), Signal(128)
        d_word = Signal(32)
        m.d.comb += [
            d_rd.addr.eq(self._data_win.addr), self._data_win.data.eq(d_word),
            i_rd.addr.eq(self._index_win.addr >> 2),
            self._index_win.data.eq(i_entry.word_select(i_sel_q, 32)),
        ]
        m.d.sync += [d_word.eq(d_rd.data), i_entry.eq(i_rd.data),
                     i_sel.eq(self._index_win.addr[:2]), i_sel_q.eq(i_sel)]

        # configuration, latched at arm and clamped to the legal ranges
        trigger = Signal(2)
        snaplen = Signal(range(SNAPLEN_MAX + 1), init=SNAPLEN_DEFAULT)
        count = Signal(range(nframes + 1), init=nframes)
        # the last data word a frame may start its end at and still leave room for another
        # frame of snaplen bytes: ``nwords - ceil(snaplen / 4)``
        room_limit = Signal(range(nwords + 1), init=nwords - (SNAPLEN_DEFAULT + 3) // 4)

        state = Signal(2)
        frames = Signal(range(nframes + 1))
        wp = Signal(range(nwords + 1))          # first free data word
        m.d.comb += [self._state.eq(state), self._frames.eq(frames)]
        recording = Signal()
        m.d.comb += recording.eq((state == STATE_ARMED) | (state == STATE_CAPTURING))

        # The input is registered (byte and timestamp together, so timestamps are unchanged),
        # then the frame is recorded in two steps, so that no carry chain follows another:
        # the byte step stores its bytes and keeps running counts; the clock after the last
        # byte (``ending``) decides from registers alone whether the frame is kept, writes
        # its index entry and moves the write pointer. A frame starting on that very clock
        # (no idle clock between frames: a MAC never sends that) is not recorded.
        beat = Signal()
        p = Signal(RxByte)
        now = Signal(64)
        m.d.sync += [beat.eq(self.sink.valid), p.eq(self.sink.p), now.eq(self.now)]
        first, byte = p.first, p.data

        # the current frame
        active = Signal()                        # the frame being received is being recorded
        length = Signal(16)                      # bytes received so far (FCS stripped)
        stored = Signal(range(SNAPLEN_MAX + 1))  # bytes stored so far
        left = Signal(range(SNAPLEN_MAX + 1))    # bytes it may still store
        can_store = Signal()                     # left != 0
        one_left = Signal()                      # left == 1
        start = Signal(range(nwords))            # its first data word
        dptr = Signal(range(nwords + 1))         # its data word being filled (after the last: the next free one)
        ts = Signal(64)
        word = Signal(32)                        # the data word being filled
        sig = Signal(8 * F.SIG_LEN)              # the last 16 bytes, first in the top bits
        test_sig = Signal()                      # sig (with the byte just received) is a valid signature
        ending = Signal()                        # the clock after a recorded frame's last byte
        error = Signal()                         # that frame's bad-FCS flag

        act = Signal()
        m.d.comb += act.eq(Mux(first, recording & ~ending, active))
        cur_len = Signal(16)
        m.d.comb += cur_len.eq(Mux(first, 1, length + 1))
        cur_stored = Signal.like(stored)         # bytes stored before this one
        m.d.comb += cur_stored.eq(Mux(first, 0, stored))
        cur_left = Signal.like(left)
        m.d.comb += cur_left.eq(Mux(first, snaplen, left))
        cur_dptr = Signal.like(dptr)
        m.d.comb += cur_dptr.eq(Mux(first, wp, dptr))
        store = Signal()                         # snaplen >= 16: the first byte is always stored
        m.d.comb += store.eq(beat & act & (first | can_store))
        lane = Signal(2)
        m.d.comb += lane.eq(cur_stored[:2])
        new_word = Signal(32)
        m.d.comb += new_word.eq(Mux(lane == 0, 0, word) | (byte << Cat(Const(0, 3), ~lane)))
        flush = Signal()                         # the word is complete: write it
        m.d.comb += flush.eq(store & ((lane == 3) | p.last | (~first & one_left)))
        m.d.sync += [d_wr.en.eq(flush), d_wr.addr.eq(cur_dptr), d_wr.data.eq(new_word)]
        with m.If(store):
            m.d.sync += [word.eq(new_word), stored.eq(cur_stored + 1), left.eq(cur_left - 1),
                         can_store.eq(cur_left != 1), one_left.eq(cur_left == 2)]
        with m.If(beat & act):
            m.d.sync += dptr.eq(cur_dptr + flush)
        full_sig = Signal(8 * F.SIG_LEN)
        m.d.comb += full_sig.eq(Cat(byte, sig[:-8]))
        magic, stream, seq, sts, check = (full_sig[112:128], full_sig[96:112], full_sig[64:96],
                                          full_sig[16:64], full_sig[0:16])
        with m.If(beat):
            m.d.sync += [
                length.eq(cur_len), sig.eq(full_sig),
                test_sig.eq((magic == F.SIG_MAGIC) & (
                    check == (F.SIG_CHECK_SEED ^ stream ^ seq[16:] ^ seq[:16] ^ sts[32:] ^ sts[16:32] ^ sts[:16]))),
            ]
            with m.If(first):
                m.d.sync += [active.eq(act), start.eq(cur_dptr), ts.eq(now)]
        m.d.sync += [ending.eq(beat & p.last & act), error.eq(p.error)]

        # the clock after the last byte: does the frame trigger, and record it
        fires = Signal()
        with m.Switch(trigger):
            with m.Case(TRIGGER_ANY):
                m.d.comb += fires.eq(1)
            with m.Case(TRIGGER_FCS):
                m.d.comb += fires.eq(error)
            with m.Case(TRIGGER_NOT_TEST):
                # length >= SIG_LEN as an OR of its high bits (SIG_LEN is a power of two), not
                # a carry chain: this decides the index memory's write enable, which fans out
                # across the part
                assert F.SIG_LEN & (F.SIG_LEN - 1) == 0
                m.d.comb += fires.eq(~(test_sig & length[(F.SIG_LEN - 1).bit_length():].any()))
        keep = Signal()
        m.d.comb += keep.eq(ending & ((state == STATE_CAPTURING) | ((state == STATE_ARMED) & fires)))
        m.d.comb += [
            i_wr.addr.eq(frames),
            i_wr.data.eq(Cat(ts, (length + F.FCS)[:16], stored.as_unsigned(),
                             Const(0, 16 - len(stored)), error, Const(0, 15),
                             start, Const(0, 16 - len(start)))),
        ]
        with m.If(keep):
            m.d.comb += i_wr.en.eq(1)
            m.d.sync += [frames.eq(frames + 1), wp.eq(dptr), state.eq(STATE_CAPTURING)]
            with m.If((frames + 1 >= count) | (dptr > room_limit)):
                m.d.sync += state.eq(STATE_DONE)

        with m.If(self._arm):
            clamped = Signal.like(snaplen)
            m.d.comb += clamped.eq(Mux(self._snaplen < SNAPLEN_MIN, SNAPLEN_MIN,
                                       Mux(self._snaplen > SNAPLEN_MAX, SNAPLEN_MAX, self._snaplen)))
            m.d.sync += [
                state.eq(STATE_ARMED), frames.eq(0), wp.eq(0), active.eq(0), ending.eq(0),
                trigger.eq(self._trigger), snaplen.eq(clamped),
                room_limit.eq(nwords - ((clamped + 3) >> 2)),
                count.eq(Mux(self._count == 0, 1, Mux(self._count > nframes, nframes, self._count))),
            ]
        return m


def capture_model(frames, trigger, snaplen, count, data_words):
    """Golden model of a capture. ``frames``: (data without FCS, bad FCS, receive timestamp)
    of the frames that start after the arm. Returns the index entries (timestamp, wire length
    with FCS, bytes stored, flags, word offset), the data memory's words (big-endian, zero
    padded) and the next free word."""
    from . import frame as F
    entries, words, wp, armed = [], [0] * data_words, 0, True
    for data, error, ts in frames:
        if armed:
            fires = (trigger == TRIGGER_ANY or (trigger == TRIGGER_FCS and error)
                     or (trigger == TRIGGER_NOT_TEST and F.parse_signature(data) is None))
            if not fires:
                continue
            armed = False
        stored = min(len(data), snaplen)
        chunk = data[:stored] + bytes(-stored % 4)
        for i in range(0, len(chunk), 4):
            words[wp + i // 4] = int.from_bytes(chunk[i:i + 4], "big")
        entries.append((ts, len(data) + 4, stored, int(error), wp))
        wp += len(chunk) // 4
        if len(entries) >= count or data_words - wp < -(-snaplen // 4):
            break
    return entries, words, wp
