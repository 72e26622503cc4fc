"""One tester port: traffic generator, LiteEth MAC, analyzer and latency histogram, with
their registers (``pN.gen.*``, ``pN.modJ.*``, ``pN.ana.*``) declared in the tester's
register bank."""

import dataclasses

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .analyzer import Analyzer
from .capture import Capture
from .capture import layout as capture_layout
from .config import CLK_HZ, GROUP_STREAMS, SIM
from .gaps import GAP_FIELDS, GapTracker
from .generator import TrafficGenerator
from .generator import layout as generator_layout
from .histogram import Histogram
from .mac import EthMAC, GMIISignature
from .registers import align_up
from .replica import replicas
from .responder import SPAN as RESPONDER_SPAN
from .responder import Responder
from .skid import SkidBuffer
from .stream_stats import StreamStats
from .streams import TxByte
from .timebase import Timebase

__all__ = ["TesterPort", "TX_PIPELINE_NS", "RX_PIPELINE_NS", "PIPELINE_NS", "HIST_BINS", "HIST_STREAMS",
           "GROUP_STREAMS"]

HIST_BINS = 1024
#: latency histograms per port in the full (simulated) tester, one for each of the stream
#: group's first HIST_STREAMS streams; a build chooses its own (``TesterConfig.hist_streams``,
#: the board's block RAM budget, docs/performance.md). GROUP_STREAMS (16, streams of a port's
#: stream group) comes from :mod:`.config`.
HIST_STREAMS = SIM.hist_streams
GROUP_BITS = (GROUP_STREAMS - 1).bit_length()

#: Fixed delay from a frame's transmit timestamp to the clock edge at which its first byte
#: after the SFD is sampled on the GMII TX pins (generator start, LiteEth TX path).
TX_PIPELINE_NS = 128
#: Fixed delay from the edge at which the first byte after the SFD is sampled on GMII RX to
#: the analyzer's receive timestamp (LiteEth RX path: PHY register, preamble and CRC checkers).
RX_PIPELINE_NS = 72
#: What a latency measured through a zero-length cable reads: subtract to calibrate.
PIPELINE_NS = TX_PIPELINE_NS + RX_PIPELINE_NS

_ANA_COUNTERS = [
    ("rx_frames", 64, "test frames received with a good FCS"),
    ("rx_bytes", 64, "bytes of those frames, FCS included"),
    ("seq_errors", 64, "test frames of stream_group whose sequence number was not the one their stream expected"),
    ("fcs_errors", 64, "frames received with a bad FCS"),
    ("other_frames", 64, "good frames that are not wirespeed test frames"),
    ("lat_min", 32, "smallest latency, ns (0xffffffff before the first frame)"),
    ("lat_max", 32, "largest latency, ns"),
    ("lat_sum", 64, "sum of latencies, ns"),
    ("first_rx_ns", 64, "receive timestamp of the first test frame"),
    ("last_rx_ns", 64, "receive timestamp of the last test frame"),
    ("lat_sq_sum", 96, "sum of squared latencies, ns^2"),
    ("jitter_sum", 64, "sum of |latency - previous latency| over consecutive test frames, ns"),
]
#: analyzer counters added after the histograms' registers, so that none of those moved
_ANA_LATER_COUNTERS = [
    ("fragment_frames", 64, "good frames that are IP fragments (never test frames)"),
]


def layout(base, config, index):
    """Where the blocks of port ``index`` (at byte address ``base``) sit in its block: for
    each block ``config`` gives it, ``(offset, size)``, one block after another in this order:
    the generator (``gen``), the analyzer's configuration (``ana_config``), the responder
    (``arp``), the capture (``cap``) and the analyzer's results (``ana``); ``"end"``: the
    port's size. Each block's size is the one its own layout declares and the bank refuses a
    register outside it, so a register added in a block's free space moves no other."""
    at, end = {}, 0

    def place(name, size):
        nonlocal end
        at[name], end = (end, size), end + size

    if config.has_generator(index):
        place("gen", generator_layout(config.n_streams, config.n_modifiers)["end"])
    if config.has_analyzer(index):
        place("ana_config", _analyzer_config_layout(base + end, config)["end"])
    if config.has_responder(index):
        place("arp", RESPONDER_SPAN)
    if config.capture:
        place("cap", capture_layout(base + end, config.capture_words, config.capture_frames)["end"])
    if config.has_analyzer(index):
        place("ana", _analyzer_results_layout(base + end, config)["end"])
    at["end"] = end
    return at


def _analyzer_config_layout(base, config):
    """Byte offsets in the analyzer's configuration block (at ``base``): ``lat_def`` 0x00,
    ``stream_group`` 0x04, then with the per-stream statistics ``foreign_frames`` 0x08, the
    ``streams`` window on the next multiple of its size and ``streams_copying`` after it."""
    if not config.stream_stats:
        return {"end": 0x08}
    streams = align_up(base + 0x10, 4 * 32 * GROUP_STREAMS) - base
    return {"streams": streams, "streams_copying": streams + 4 * 32 * GROUP_STREAMS,
            "end": streams + 4 * 32 * GROUP_STREAMS + 4}


def _analyzer_results_layout(base, config):
    """Byte offsets in the analyzer's results block (at ``base``): the registers the build has
    one after another (each on the word after the previous one's last) from 0, in the order
    of ``_ANA_COUNTERS``, ``GAP_FIELDS``, the histograms' registers and
    ``_ANA_LATER_COUNTERS``; then the ``hist``
    window on the next multiple of its size, ``hist_uo`` right after it."""
    widths = [(name, bits) for name, bits, _ in _ANA_COUNTERS if config.stream_stats or name != "seq_errors"]
    widths += [(name, bits) for name, bits, _ in GAP_FIELDS if config.stream_stats or not name.startswith("loss_")]
    widths += [("hist_offset", 32), ("hist_shift", 5), ("hist_underflow", 64), ("hist_overflow", 64),
               ("hist_used", config.hist_streams), ("hist_clearing", 1),
               ("hist_stream", max(1, (config.hist_streams - 1).bit_length()))]
    widths += [(name, bits) for name, bits, _ in _ANA_LATER_COUNTERS]
    at, offset = {}, 0
    for name, bits in widths:
        at[name], offset = offset, offset + 4 * ((bits + 31) // 32)
    at["hist"] = align_up(base + offset, 8 * HIST_BINS) - base
    at["hist_uo"] = at["hist"] + 8 * HIST_BINS
    at["end"] = at["hist_uo"] + 16 * config.hist_streams
    return at


class TesterPort(wiring.Component):
    start: In(1)
    stop: In(1)
    clear: In(1)
    snapshot: In(1)
    #: another port is clearing (its histograms, its per-stream statistics): a START waits for it (top.py)
    hold_start: In(1)
    #: this port is clearing (CLEAR zeroing its histograms and per-stream statistics)
    clearing: Out(1)
    gmii: Out(GMIISignature)

    def __init__(self, regs, index, config=SIM, *, hist_streams=None, clk_hz=CLK_HZ):
        """``regs``: the port's :class:`~.registers.RegisterBlock` (a bank: at 0), laid out
        by :func:`layout`. ``config``: the :class:`~.config.TesterConfig` of the build;
        ``hist_streams``, if given, overrides its ``hist_streams``. ``clk_hz``: the sync clock
        (the timebases')."""
        self._clk_hz = clk_hz
        if hist_streams is not None:
            if not 1 <= hist_streams <= GROUP_STREAMS or hist_streams & (hist_streams - 1):
                raise ValueError(f"hist_streams must be a power of two from 1 to {GROUP_STREAMS}, not {hist_streams}")
            config = dataclasses.replace(config, hist_streams=hist_streams)
        self.config = config
        self._hist_streams = config.hist_streams
        super().__init__()
        p = f"p{index}"
        at = layout(regs.base, config, index)
        self._has_gen, self._has_ana = config.has_generator(index), config.has_analyzer(index)
        self._gen = (TrafficGenerator(regs.block(*at["gen"]), p, n_streams=config.n_streams,
                                      n_modifiers=config.n_modifiers) if self._has_gen else None)
        if self._has_ana:
            self._add_analyzer_config(regs.block(*at["ana_config"]), p, config)
        self._resp = Responder(regs.block(*at["arp"]), p) if "arp" in at else None
        self._cap = Capture(regs.block(*at["cap"]), p, data_words=config.capture_words,
                            max_frames=config.capture_frames) if "cap" in at else None
        if self._has_ana:
            self._add_analyzer_results(regs.block(*at["ana"]), p, config)

    def _add_analyzer_config(self, regs, p, config):
        """``pN.ana.*`` before the responder's and capture's registers: the analyzer's
        configuration and the per-stream statistics (offsets: :func:`_analyzer_config_layout`)."""
        at = _analyzer_config_layout(regs.base, config)
        self._lat_def = regs.add(f"{p}.ana.lat_def", 1, "rw", offset=0x00,
                                 doc="latency definition (RFC 1242 3.8): 0 first bit in to first bit out, "
                                     "1 last bit in to first bit out (store and forward)")
        self._stream_group = regs.add(f"{p}.ana.stream_group", 12, "rw", offset=0x04,
                                      doc="per-stream statistics count stream ids group*16 .. group*16+15")
        if config.stream_stats:
            self._foreign = regs.add(f"{p}.ana.foreign_frames", 64, "r", offset=0x08,
                                     doc="test frames of streams outside stream_group (snapshot)")
            self._streams_win = regs.add_memory(f"{p}.ana.streams", 1024, GROUP_STREAMS, word_reads=True,
                                                offset=at["streams"],
                                                doc="per-stream receive statistics (fields in "
                                                    "wirespeed.gateware.stream_stats.STATS_FIELDS; snapshot)")
            self._streams_copying = regs.add(f"{p}.ana.streams_copying", 1, "r", offset=at["streams_copying"],
                                             doc="1 while a SNAPSHOT is being copied into ana.streams (256 "
                                                 "cycles and more under load; live)")

    def _add_analyzer_results(self, regs, p, config):
        """The rest of ``pN.ana.*``: counters, gap tracker and latency histograms (offsets:
        :func:`_analyzer_results_layout`)."""
        hs = config.hist_streams
        at = _analyzer_results_layout(regs.base, config)
        # without the per-stream statistics there are no sequence errors to count, nor gaps
        self._ana_snap = {name: regs.add(f"{p}.ana.{name}", bits, "r", offset=at[name], doc=doc + " (snapshot)")
                          for name, bits, doc in _ANA_COUNTERS + _ANA_LATER_COUNTERS
                          if config.stream_stats or name != "seq_errors"}
        # the gap tracker's loss events come from the per-stream sequence trackers
        self._gap_snap = {name: regs.add(f"{p}.ana.{name}", bits, "r", offset=at[name], doc=doc + " (snapshot)")
                          for name, bits, doc in GAP_FIELDS
                          if config.stream_stats or not name.startswith("loss_")}
        self._hist_offset = regs.add(f"{p}.ana.hist_offset", 32, "rw", offset=at["hist_offset"],
                                     doc="latency of the first histogram bin, ns")
        self._hist_shift = regs.add(f"{p}.ana.hist_shift", 5, "rw", offset=at["hist_shift"], reset=3,
                                    doc="histogram bin width is 2**hist_shift ns")
        self._hist_snap = {name: regs.add(f"{p}.ana.hist_{name}", bits, "r", offset=at[f"hist_{name}"],
                                          doc=doc + " (snapshot)")
                           for name, bits, doc in (
                               ("underflow", 64, "latencies below hist_offset, all streams"),
                               ("overflow", 64, "latencies beyond the last bin, all streams"),
                               ("used", hs, "bit i: stream i of stream_group has latency samples"))}
        self._hist_clearing = regs.add(f"{p}.ana.hist_clearing", 1, "r", offset=at["hist_clearing"],
                                       doc=f"1 while CLEAR zeroes the histograms ({hs * HIST_BINS} "
                                           "cycles; live)")
        self._hist_stream = regs.add(f"{p}.ana.hist_stream", max(1, (hs - 1).bit_length()), "rw",
                                     offset=at["hist_stream"],
                                     doc="the stream (index in stream_group) whose histogram hist shows")
        self._hist_win = regs.add_memory(
            f"{p}.ana.hist", 40, HIST_BINS, offset=at["hist"],
            doc=f"latency histogram of stream hist_stream, {HIST_BINS} bins of 40-bit frame counts "
                "(live: read when traffic has stopped)")
        self._hist_uo_win = regs.add_memory(
            f"{p}.ana.hist_uo", 40, 2 * hs, offset=at["hist_uo"],
            doc="per stream i: entry 2i its latencies below hist_offset, entry 2i+1 beyond the last bin "
                "(live)")

    def elaborate(self, platform):
        m = Module()
        has_gen, has_ana = self._has_gen, self._has_ana
        m.submodules.mac = mac = EthMAC()
        # the MAC's transmit ready reaches the sources through a flip-flop (no clock of latency)
        m.submodules.tx_slice = tx_slice = SkidBuffer(TxByte)
        wiring.connect(m, tx_slice.source, mac.sink)
        # Timebases of their own for the transmit and the receive side: all count from the same
        # reset (or configuration) on the same clock, so they agree to the nanosecond with the
        # tester's (top.py), and a timestamp register is not loaded from one 64-bit counter
        # across the part (routing alone took 5.7 ns of the 8).
        if has_gen:
            m.submodules.tb_tx = tb_tx = Timebase(self._clk_hz)
        if has_ana or self._cap is not None:
            m.submodules.tb_rx = tb_rx = Timebase(self._clk_hz)

        # The commands come straight from the bank's command register (top.py); each block gets
        # registered copies of its own, placed beside its loads: one CLEAR or SNAPSHOT register
        # for the port reached a thousand flip-flops in five blocks across the part.
        stats = has_ana and self.config.stream_stats
        blocks = ["port"] + ["gen"] * has_gen + ["ana", "hist", "gaps"] * has_ana
        blocks += ["stats"] * stats + ["resp"] * (self._resp is not None)
        clear = replicas(m, "sync", self.clear, blocks, prefix="clear")
        snap_blocks = ["gen"] * has_gen
        if has_ana:
            snap_blocks += ["gaps", *(f"ana_{name}" for name in self._ana_snap if name != "seq_errors"), "hist"]
        snapshot = replicas(m, "sync", self.snapshot, snap_blocks + ["stats"] * stats, prefix="snapshot")

        if has_ana:
            ana_clearing = self._elaborate_analyzer(m, mac, tb_rx, clear, snapshot)
            m.d.comb += self.clearing.eq(ana_clearing | clear["port"])
        else:
            m.d.comb += self.clearing.eq(clear["port"])

        if has_gen:
            m.submodules.gen = gen = self._gen
            start, stop = (replicas(m, "sync", cmd, ["port"], prefix=name)["port"]
                           for cmd, name in ((self.start, "start"), (self.stop, "stop")))
            # A START while CLEAR is still zeroing a histogram (this port's, or another's:
            # ``hold_start``) waits for the sweep to end, so no latency sample is lost whatever
            # the host's timing.
            # The generator takes the START a clock later, from a register (``go`` reached its
            # scheduler's launch logic across the part: 8.5 ns on the 25F); ``pending`` and
            # ``gen_go`` keep ``running`` up meanwhile. STOP too (the command's register reached
            # the scheduler's first-pass logic through the START logic: 8.4-9.5 ns on the 25F
            # with the per-stream statistics).
            pending = Signal()
            go = Signal()
            m.d.comb += go.eq((start | pending) & ~self.clearing & ~self.hold_start)
            with m.If(stop | go):
                m.d.sync += pending.eq(0)
            with m.Elif(start):
                m.d.sync += pending.eq(1)
            gen_go, gen_stop = Signal(), Signal()
            m.d.sync += [gen_go.eq(go & ~stop), gen_stop.eq(stop)]
            m.d.comb += [
                gen.start.eq(gen_go), gen.stop.eq(gen_stop), gen.clear.eq(clear["gen"]),
                gen.snapshot.eq(snapshot["gen"]), gen.now.eq(tb_tx.now),
                gen.running_extra.eq(pending | gen_go),
            ]
        else:
            gen = None

        if self._resp is None:
            if gen is not None:
                wiring.connect(m, gen.source, tx_slice.sink)
                m.d.comb += gen.hold.eq(0)
        else:
            self._responder_tx(m, gen, tx_slice.sink)

        # receive: the analyzer, the responder and the capture all watch the MAC's frames
        if self._resp is not None:
            m.submodules.resp = resp = self._resp
            m.d.comb += [resp.sink.valid.eq(mac.source.valid), resp.sink.payload.eq(mac.source.payload),
                         resp.clear.eq(clear["resp"])]
        if self._cap is not None:
            m.submodules.cap = cap = self._cap
            m.d.comb += [cap.sink.valid.eq(mac.source.valid), cap.sink.payload.eq(mac.source.payload),
                         cap.now.eq(tb_rx.now)]
        # a port that sends nothing (no generator, no responder) leaves the MAC's transmit
        # outputs unused, so synthesis removes its transmit path (its state machines would
        # otherwise stay, idle, and be timed like the rest)
        gmii_rx = ("rx_dv", "rx_er", "rxd")
        m.d.comb += [getattr(mac.gmii, name).eq(getattr(self.gmii, name)) for name in gmii_rx]
        if has_gen or self._resp is not None:
            m.d.comb += [getattr(self.gmii, name).eq(getattr(mac.gmii, name)) for name in ("tx_en", "tx_er", "txd")]
        return m

    def _elaborate_analyzer(self, m, mac, tb_rx, clear, snapshot):
        """The receive side: analyzer, latency histograms, gap tracker, per-stream statistics
        and their snapshot registers. Returns whether CLEAR is still zeroing them."""
        m.submodules.ana = ana = Analyzer()
        m.submodules.hist = hist = Histogram(HIST_BINS, self._hist_streams)
        # The MAC's receive output reaches the analyzer through a register (LiteEth's CRC check
        # comes to its output through five LUT levels), and the analyzer's timebase a clock
        # behind with it: every timestamp, so every latency, is as if there were none.
        rx_valid, rx_payload = Signal(), Signal(mac.source.payload.shape())
        rx_now = Signal.like(tb_rx.now)
        m.d.sync += [rx_valid.eq(mac.source.valid), rx_payload.eq(mac.source.payload), rx_now.eq(tb_rx.now)]
        m.d.comb += [ana.sink.valid.eq(rx_valid), ana.sink.payload.eq(rx_payload)]
        m.d.comb += [
            ana.now.eq(rx_now), ana.clear.eq(clear["ana"]),
            hist.value.eq(ana.lat_value), hist.stream.eq(ana.lat_sid), hist.clear.eq(clear["hist"]),
            hist.offset.eq(self._hist_offset), hist.shift.eq(self._hist_shift),
            hist.read_addr.eq(Cat(self._hist_win.addr, self._hist_stream[:(self._hist_streams - 1).bit_length()])),
            self._hist_win.data.eq(hist.read_data),
            hist.uo_read_addr.eq(self._hist_uo_win.addr), self._hist_uo_win.data.eq(hist.uo_read_data),
            self._hist_clearing.eq(hist.clearing),
        ]
        m.d.comb += [
            ana.lat_def.eq(self._lat_def),
            # the histograms follow the per-stream statistics' stream group
            hist.sample.eq(ana.lat_sample & (ana.lat_sid[GROUP_BITS:] == self._stream_group)
                           & (ana.lat_sid[:GROUP_BITS] < self._hist_streams)),
        ]
        m.submodules.gaps = gaps = GapTracker()
        m.d.comb += [
            gaps.ev_valid.eq(ana.ev_valid), gaps.ev_fcs_err.eq(ana.ev_fcs_err), gaps.ev_sid.eq(ana.ev_sid),
            gaps.ev_seq.eq(ana.ev_seq), gaps.ev_rx_ns.eq(ana.ev_rx_ns), gaps.ev_tx_ns.eq(ana.ev_tx_ns),
            gaps.clear.eq(clear["gaps"]), gaps.snapshot.eq(snapshot["gaps"]),
        ]
        clearing = hist.clearing
        if self.config.stream_stats:
            m.submodules.stats = stats = StreamStats(GROUP_STREAMS)
            clearing = clearing | stats.clearing
            m.d.comb += [
                self._streams_copying.eq(stats.copying),
                stats.ev_valid.eq(ana.ev_valid), stats.ev_fcs_err.eq(ana.ev_fcs_err), stats.ev_sid.eq(ana.ev_sid),
                stats.ev_seq.eq(ana.ev_seq), stats.ev_latency.eq(ana.ev_latency),
                stats.ev_rx_ns.eq(ana.ev_rx_ns), stats.ev_bytes.eq(ana.ev_bytes),
                stats.stream_group.eq(self._stream_group),
                stats.clear.eq(clear["stats"]), stats.snapshot.eq(snapshot["stats"]),
                stats.read_addr.eq(self._streams_win.addr), self._streams_win.data.eq(stats.read_data),
                self._foreign.eq(stats.foreign_frames_snap),
                self._ana_snap["seq_errors"].eq(stats.seq_errors_snap),
                gaps.loss_valid.eq(stats.loss_valid), gaps.loss_skip.eq(stats.loss_skip),
            ]
        m.d.comb += [reg.eq(getattr(gaps, name)) for name, reg in self._gap_snap.items()]
        for name, reg in self._ana_snap.items():
            if name != "seq_errors":
                with m.If(snapshot[f"ana_{name}"]):
                    m.d.sync += reg.eq(getattr(ana, name))
        with m.If(snapshot["hist"]):
            for name, reg in self._hist_snap.items():
                m.d.sync += reg.eq(getattr(hist, name))
        return clearing

    def _responder_tx(self, m, gen, tx):
        """Transmit (to ``tx``, the MAC's stream): generator frames, and between them the
        responder's (ARP, ND) frames."""
        resp = self._resp
        resp_owns = Signal()
        gen_idle = ~gen.busy if gen is not None else 1
        with m.If(~resp_owns & gen_idle & resp.pending):
            m.d.sync += resp_owns.eq(1)
        with m.If(resp_owns & resp.source.valid & tx.ready & resp.source.p.last):
            m.d.sync += resp_owns.eq(0)
        # after a responder frame the generator waits out its minimum gap, so its next frame
        # is not held up inside the MAC (which would shift it from its timestamp)
        resp_gap = Signal(range(F.WIRE_OVERHEAD + 1))
        with m.If(resp_owns):
            m.d.sync += resp_gap.eq(F.WIRE_OVERHEAD)
        with m.Elif(resp_gap != 0):
            m.d.sync += resp_gap.eq(resp_gap - 1)
        if gen is not None:
            m.d.comb += gen.hold.eq(resp_owns | resp.pending | (resp_gap != 0))
        with m.If(resp_owns):
            m.d.comb += [tx.valid.eq(resp.source.valid), tx.payload.eq(resp.source.payload),
                         resp.source.ready.eq(tx.ready)]
        if gen is not None:         # (a port without a generator sends the responder's frames only)
            with m.Else():
                m.d.comb += [tx.valid.eq(gen.source.valid), tx.payload.eq(gen.source.payload),
                             gen.source.ready.eq(tx.ready)]
