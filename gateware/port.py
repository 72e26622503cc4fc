"""One tester port: traffic generator, LiteEth MAC, analyzer and latency histogram, with
their registers (``pN.gen.*``, ``pN.modJ.*``, ``pN.ana.*``) declared in the tester's
register bank."""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .analyzer import Analyzer
from .generator import TrafficGenerator
from .histogram import Histogram
from .mac import EthMAC, GMIISignature

__all__ = ["TesterPort", "TX_PIPELINE_NS", "RX_PIPELINE_NS", "PIPELINE_NS", "HIST_BINS"]

HIST_BINS = 1024

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
    ("seq_errors", 64, "test frames whose sequence number was not the expected one"),
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


class TesterPort(wiring.Component):
    start: In(1)
    stop: In(1)
    clear: In(1)
    snapshot: In(1)
    now: In(64)
    gmii: Out(GMIISignature)

    def __init__(self, bank, index):
        super().__init__()
        p = f"p{index}"
        self._gen = TrafficGenerator(bank, p)
        self._ana_snap = {name: bank.add(f"{p}.ana.{name}", bits, "r", doc=doc + " (snapshot)")
                          for name, bits, doc in _ANA_COUNTERS}
        self._hist_offset = bank.add(f"{p}.ana.hist_offset", 32, "rw", doc="latency of the first histogram bin, ns")
        self._hist_shift = bank.add(f"{p}.ana.hist_shift", 5, "rw", reset=3,
                                    doc="histogram bin width is 2**hist_shift ns")
        self._hist_snap = {name: bank.add(f"{p}.ana.hist_{name}", 64, "r", doc=doc + " (snapshot)")
                           for name, doc in (("underflow", "latencies below hist_offset"),
                                             ("overflow", "latencies beyond the last bin"))}
        self._hist_clearing = bank.add(f"{p}.ana.hist_clearing", 1, "r",
                                       doc="1 while CLEAR zeroes the histogram (1024 cycles; live)")
        self._hist_win = bank.add_memory(
            f"{p}.ana.hist", 40, HIST_BINS,
            doc=f"latency histogram, {HIST_BINS} bins of 40-bit frame counts (live: read when traffic has stopped)")

    def elaborate(self, platform):
        m = Module()
        m.submodules.gen = gen = self._gen
        m.submodules.mac = mac = EthMAC()
        m.submodules.ana = ana = Analyzer()
        m.submodules.hist = hist = Histogram(HIST_BINS)

        # A START while CLEAR is still zeroing the histogram waits for the sweep to end, so no
        # latency sample is lost whatever the host's timing (every port clears in step).
        pending = Signal()
        go = Signal()
        m.d.comb += go.eq((self.start | pending) & ~hist.clearing & ~self.clear)
        with m.If(self.stop | go):
            m.d.sync += pending.eq(0)
        with m.Elif(self.start):
            m.d.sync += pending.eq(1)
        m.d.comb += [
            gen.start.eq(go), gen.stop.eq(self.stop), gen.clear.eq(self.clear),
            gen.snapshot.eq(self.snapshot), gen.now.eq(self.now),
            ana.now.eq(self.now), ana.clear.eq(self.clear),
            gen.running_extra.eq(pending),
            hist.sample.eq(ana.lat_sample), hist.value.eq(ana.lat_value), hist.clear.eq(self.clear),
            hist.offset.eq(self._hist_offset), hist.shift.eq(self._hist_shift),
            hist.read_addr.eq(self._hist_win.addr), self._hist_win.data.eq(hist.read_data),
            self._hist_clearing.eq(hist.clearing),
        ]
        wiring.connect(m, gen.source, mac.sink)
        wiring.connect(m, mac.source, ana.sink)
        wiring.connect(m, wiring.flipped(self.gmii), mac.gmii)

        with m.If(self.snapshot):
            for name, reg in self._ana_snap.items():
                m.d.sync += reg.eq(getattr(ana, name))
            for name, reg in self._hist_snap.items():
                m.d.sync += reg.eq(getattr(hist, name))
        return m
