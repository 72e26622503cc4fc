"""Traffic generator of one port: up to 16 streams (``n_streams``, a power of two), each with
its own header template, frame size mode and rate, a pool of ``n_modifiers`` field
modifiers (at most 8), and the signature (stream id, sequence, transmit timestamp, check) in
the last 16 bytes of every frame. The frame format and every rule are in
:mod:`wirespeed.gateware.streamdesc`; the generator's registers are declared here.

The generator is a pipeline of stages, each a component of its own:

* :class:`~.gen_tables.GeneratorTables`: the templates, descriptors and size table the host
  writes, and the read ports of the stages below;
* :class:`~.scheduler.StreamScheduler`: offers the earliest-due stream (the pick), and
  launches the prepared frame (``go``) when it is due and the line is free;
* :class:`~.gen_prepare.FramePrepare`: from the pick, reads the stream's descriptor, sizes
  the frame, takes the modifiers' values and sums the checksums (five cycles from the pick,
  more while a random size is drawn, while the previous frame is still on the wire), and
  hands the frame to the emitter (:class:`~.gen_layouts.FrameHandoff`);
* :class:`~.gen_emitter.FrameEmitter`: sends the frame as an unbroken run of ``L - 4``
  bytes, template bytes patched, zero fill, then the signature, the first byte the cycle
  after the launch. The transmit timestamp is ``now`` at launch, a fixed number of cycles
  before the first bit reaches the wire;
* :class:`~.gen_counters.GeneratorCounters`: the port's transmit totals and per-stream counts.

Timing (125 MHz on an ECP5, stage by stage in each module): every block RAM output goes
straight into a register; the checksums are ones' complement sums (:mod:`.onescomp`) spread
over the prepare stages (at most an end-around add, or two carry chains, a cycle); the byte
on the output is a register, computed a byte ahead from registers.
"""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import streamdesc as SD
from .gen_counters import TOTALS, GeneratorCounters
from .gen_emitter import FrameEmitter
from .gen_prepare import FramePrepare
from .gen_tables import GeneratorTables
from .registers import align_up
from .scheduler import StreamScheduler
from .streams import TxStream

__all__ = ["TrafficGenerator", "layout", "OFFSETS", "MOD_SPAN", "MOD_END"]


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
#: byte offset in the generator's block of each register (``pN.gen.<name>``)
OFFSETS = {"enable": 0x00, "mode": 0x04, "duration": 0x08, "count": 0x10, "burst_len": 0x18, "burst_gap": 0x1C,
           "seed": 0x20, "phase_at": 0x24, "phase2": 0x2C, "running": 0x30, "tx_frames": 0x34, "tx_bytes": 0x3C,
           "first_tx_ns": 0x44, "last_tx_ns": 0x4C}
#: bytes of each modifier unit's block (``pN.mod{j}.*``): MOD_FIELDS' field k at word k
MOD_SPAN = 0x40
#: bytes of the last modifier unit's block that the generator's block includes
MOD_END = 0x24


def layout(n_streams, n_modifiers):
    """Byte offsets in the generator's block of its windows and modifier blocks, and the
    block's size (``"end"``). Each window starts on a multiple of its size: the templates at
    their size (the registers, OFFSETS, fit below it), the descriptors right after them, the
    size table on the next multiple of its size, the per-stream counts right after it; then
    modifier unit j at ``mods + j * MOD_SPAN``."""
    tmpl = 4 * n_streams * SD.TEMPLATE_BYTES
    desc = 2 * tmpl
    sizes = align_up(desc + n_streams * SD.DESC_BITS // 8, 4 * SD.SIZE_TABLE)
    stream_tx = sizes + 4 * SD.SIZE_TABLE
    mods = align_up(stream_tx + 16 * n_streams, MOD_SPAN)
    end = mods + MOD_SPAN * (n_modifiers - 1) + MOD_END if n_modifiers else stream_tx + 16 * n_streams
    return {"tmpl": tmpl, "desc": desc, "sizes": sizes, "stream_tx": stream_tx, "mods": mods, "end": end}


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

    def __init__(self, regs, prefix, *, n_streams=SD.N_STREAMS, n_modifiers=SD.N_MODIFIERS):
        """``regs``: the generator's :class:`~.registers.RegisterBlock` (a bank: at 0), whose
        base is a multiple of its largest window (:func:`layout`)."""
        super().__init__()
        if n_streams not in (2, 4, 8, 16):
            raise ValueError(f"TrafficGenerator: n_streams must be 2, 4, 8 or 16 (4-bit modifier stream field), "
                             f"got {n_streams}")
        if not 0 <= n_modifiers <= SD.N_MODIFIERS:
            raise ValueError(f"TrafficGenerator: n_modifiers must be 0 to {SD.N_MODIFIERS}, got {n_modifiers}")
        self.n_streams, self.n_modifiers = n_streams, n_modifiers
        p = f"{prefix}.gen"
        at = layout(n_streams, n_modifiers)
        self._cfg = {name: regs.add(f"{p}.{name}", n_streams if name == "phase2" else bits, "rw",
                                    offset=OFFSETS[name], reset=reset, doc=doc)
                     for name, bits, reset, doc in _CONFIG}
        self._running = regs.add(f"{p}.running", 1, "r", offset=OFFSETS["running"],
                                 doc="1 from START (including a START waiting for the histogram clear) "
                                     "until the last frame has left (live)")
        self._snap = {name: regs.add(f"{p}.{name}", 64, "r", offset=OFFSETS[name], doc=doc + " (snapshot)")
                      for name, doc in TOTALS}
        self._tmpl = regs.add_memory(f"{p}.tmpl", 8, n_streams * SD.TEMPLATE_BYTES, access="rw", offset=at["tmpl"],
                                     doc=f"frame header templates: stream s byte i at entry s*{SD.TEMPLATE_BYTES}+i")
        self._desc = regs.add_memory(f"{p}.desc", SD.DESC_BITS, n_streams, access="rw", offset=at["desc"],
                                     doc="stream descriptors (fields in wirespeed.gateware.streamdesc.DESC_FIELDS)")
        self._sizes = regs.add_memory(f"{p}.sizes", 14, SD.SIZE_TABLE, access="rw", offset=at["sizes"],
                                      doc="frame size table of sequence (IMIX) streams, bytes")
        self._stream_tx = regs.add_memory(f"{p}.stream_tx", 128, n_streams, offset=at["stream_tx"],
                                          doc="per stream: frames sent (bits 0-63), bytes sent (64-127) (snapshot)")
        self._mods = []
        for j in range(n_modifiers):
            # a unit's registers, written once per trial, make one group of the bank's read path
            mod = regs.block(at["mods"] + j * MOD_SPAN, MOD_END, group_words=MOD_SPAN // 4)
            self._mods.append({name: mod.add(f"{prefix}.mod{j}.{name}", bits, "rw", offset=4 * k, doc=doc)
                               for k, (name, bits, doc) in enumerate(SD.MOD_FIELDS)})

    def elaborate(self, platform):
        m = Module()
        n, n_mod = self.n_streams, self.n_modifiers
        cfg = self._cfg

        m.submodules.tables = tables = GeneratorTables(n)
        for window, port in ((self._tmpl, tables.tmpl_win), (self._desc, tables.desc_win),
                             (self._sizes, tables.sizes_win)):
            window.connect(m, port)

        m.submodules.sched = sched = StreamScheduler(n)
        m.d.comb += [
            sched.start.eq(self.start), sched.stop.eq(self.stop), sched.enable.eq(cfg["enable"]),
            sched.mode.eq(cfg["mode"]), sched.duration.eq(cfg["duration"]), sched.count.eq(cfg["count"]),
            sched.burst_len.eq(cfg["burst_len"]), sched.burst_gap.eq(cfg["burst_gap"]),
            sched.stream_en.eq(tables.stream_en), sched.phase_at.eq(cfg["phase_at"]), sched.phase2.eq(cfg["phase2"]),
        ]

        m.submodules.prep = prep = FramePrepare(n, n_mod)
        m.d.comb += [prep.start.eq(self.start), prep.stop.eq(self.stop), prep.clear.eq(self.clear),
                     prep.seed.eq(cfg["seed"]), prep.go.eq(sched.go),
                     prep.pick_valid.eq(sched.pick_valid), prep.pick_stream.eq(sched.pick_stream),
                     sched.take.eq(prep.take), sched.take_next.eq(prep.take_next),
                     sched.take_stream.eq(prep.take_stream), sched.take_period.eq(prep.take_period),
                     sched.prepared.eq(prep.sched_prepared)]
        for unit, regs in zip(prep.mods, self._mods):
            m.d.comb += [getattr(unit, name).eq(regs[name]) for name in regs]
        wiring.connect(m, tables.desc_rd, prep.desc_rd)
        wiring.connect(m, tables.tbase_rd, prep.tbase_rd)
        wiring.connect(m, tables.size_rd, prep.size_rd)
        m.d.comb += prep.size_busy.eq(tables.size_busy)

        m.submodules.emit = emit = FrameEmitter(n, n_mod)
        wiring.connect(m, prep.handoff, emit.handoff)
        wiring.connect(m, tables.tmpl_rd, emit.tmpl_rd)
        wiring.connect(m, emit.source, wiring.flipped(self.source))
        m.d.comb += [emit.go.eq(sched.go), emit.now.eq(self.now), emit.hold.eq(self.hold),
                     emit.tmpl_written.eq(tables.tmpl_written), sched.line_free.eq(emit.line_free),
                     self.busy.eq(emit.busy)]

        m.submodules.counters = counters = GeneratorCounters(n)
        m.d.comb += [counters.launch.eq(sched.go), counters.stream.eq(emit.sent_stream),
                     counters.frame_len.eq(emit.sent_len), counters.now.eq(self.now),
                     counters.clear.eq(self.clear), counters.snapshot.eq(self.snapshot)]
        m.d.comb += [reg.eq(getattr(counters.snap, name)) for name, reg in self._snap.items()]
        self._stream_tx.connect(m, counters.stream_tx)

        m.d.comb += [self.running.eq(sched.sending | prep.prepared | self.busy),
                     self._running.eq(self.running | self.running_extra)]
        return m
