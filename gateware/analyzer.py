"""Receive analyzer: recognises wirespeed test frames by their signature (layout in
:mod:`wirespeed.gateware.frame`) and measures them in hardware.

Per port: test frames and bytes (FCS included), sequence errors (frames whose sequence
number is not the one expected; the expectation then follows the received number, so one
lost frame counts one error), FCS errors (any frame the MAC flags), other (non-test) frames,
and the latency of every test frame: receive timestamp (``now`` when the first byte leaves
the MAC) minus the transmit timestamp in the signature, as min, max, sum and sum of squares
in ns, and jitter as the sum of |latency - previous latency| over consecutive test frames
(RFC 4689 3.2.5 / RFC 3550 style mean absolute delay variation = jitter_sum / (frames - 1)).
Each test frame's latency is also offered on ``lat_sample``/``lat_value`` (for the histogram).
Widths: 64-bit counters and sums, a 96-bit sum of squares: none wraps in 24 hours at
1.488 Mframes/s with latencies up to 4.29 s.
The analyzer is always ready: it never backpressures the MAC.
"""

from amaranth import Module, Signal, Cat, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .streams import RxStream

__all__ = ["Analyzer"]

LAT_MAX_INIT = 0
LAT_MIN_INIT = (1 << 32) - 1


class Analyzer(wiring.Component):
    sink: In(RxStream)
    now: In(64)
    clear: In(1)

    rx_frames: Out(64)
    rx_bytes: Out(64)
    seq_errors: Out(64)
    fcs_errors: Out(64)
    other_frames: Out(64)
    lat_min: Out(32, init=LAT_MIN_INIT)
    lat_max: Out(32)
    lat_sum: Out(64)
    first_rx_ns: Out(64)
    last_rx_ns: Out(64)
    lat_sq_sum: Out(96)
    jitter_sum: Out(64)
    lat_sample: Out(1)
    lat_value: Out(32)

    def elaborate(self, platform):
        m = Module()
        s = self.sink

        index = Signal(range(F.HEADER_LEN + 1))   # saturates at HEADER_LEN
        length = Signal(16)                      # bytes of this frame so far (FCS stripped)
        rx_ts = Signal(64)
        hdr_ok = Signal()                        # Ethernet/IPv4/UDP fields seen so far match
        sig = Signal(8 * F.SIG_LEN)              # signature bytes, first byte in the top bits

        beat = Signal()
        m.d.comb += beat.eq(s.valid)
        byte = s.p.data
        idx = Signal.like(index)                 # position of the current byte
        m.d.comb += idx.eq(Mux(s.p.first, 0, index))
        count = Signal(16)                       # bytes of this frame including the current one
        m.d.comb += count.eq(Mux(s.p.first, 1, length + 1))

        with m.If(beat):
            m.d.sync += [index.eq(Mux(idx < F.HEADER_LEN, idx + 1, idx)), length.eq(count)]
            with m.If(s.p.first):
                m.d.sync += [rx_ts.eq(self.now), hdr_ok.eq(1)]
            for pos, want in ((12, 0x08), (13, 0x00), (14, 0x45), (23, F.IP_PROTO_UDP)):
                with m.If((idx == pos) & (byte != want)):
                    m.d.sync += hdr_ok.eq(0)
            with m.If((idx >= F.SIG_OFFSET) & (idx < F.HEADER_LEN)):
                m.d.sync += sig.eq(Cat(byte, sig[:-8]))

        # End of frame: decode in one register stage, count in the next.
        done = Signal()
        done_err = Signal()
        done_len = Signal(16)
        m.d.sync += done.eq(beat & s.p.last)
        with m.If(beat & s.p.last):
            m.d.sync += [done_err.eq(s.p.error), done_len.eq(count + F.FCS)]
        # full frames have had sig completely shifted in by now
        magic, stream, seq, ts, check = (sig[112:128], sig[96:112], sig[64:96], sig[16:64], sig[0:16])
        want_check = Signal(16)
        m.d.comb += want_check.eq(F.SIG_CHECK_SEED ^ stream ^ seq[16:] ^ seq[:16] ^ ts[32:] ^ ts[16:32] ^ ts[:16])
        is_test = Signal()
        m.d.comb += is_test.eq(hdr_ok & (done_len >= F.HEADER_LEN + F.FCS) & (magic == F.SIG_MAGIC)
                               & (check == want_check))
        latency = Signal(48)
        m.d.comb += latency.eq(rx_ts[:48] - ts)
        lat32 = Signal(32)
        m.d.comb += lat32.eq(latency[:32])
        expected = Signal(32)

        with m.If(done):
            with m.If(done_err):
                m.d.sync += self.fcs_errors.eq(self.fcs_errors + 1)
            with m.Elif(is_test):
                m.d.sync += [
                    self.rx_frames.eq(self.rx_frames + 1),
                    self.rx_bytes.eq(self.rx_bytes + done_len),
                    self.lat_sum.eq(self.lat_sum + lat32),
                    self.last_rx_ns.eq(rx_ts),
                    expected.eq(seq + 1),
                ]
                with m.If(seq != expected):
                    m.d.sync += self.seq_errors.eq(self.seq_errors + 1)
                with m.If(lat32 < self.lat_min):
                    m.d.sync += self.lat_min.eq(lat32)
                with m.If(lat32 > self.lat_max):
                    m.d.sync += self.lat_max.eq(lat32)
                with m.If(self.rx_frames == 0):
                    m.d.sync += self.first_rx_ns.eq(rx_ts)
            with m.Else():
                m.d.sync += self.other_frames.eq(self.other_frames + 1)

        # one more stage for the square, the delay variation and the histogram sample
        s2 = Signal()
        m.d.sync += s2.eq(done & ~done_err & is_test)
        with m.If(done):
            m.d.sync += self.lat_value.eq(lat32)
        have_prev = Signal()
        prev = Signal(32)
        square = Signal(64)
        m.d.comb += [square.eq(self.lat_value * self.lat_value), self.lat_sample.eq(s2)]
        with m.If(s2):
            m.d.sync += [self.lat_sq_sum.eq(self.lat_sq_sum + square), prev.eq(self.lat_value),
                         have_prev.eq(1)]
            with m.If(have_prev):
                with m.If(self.lat_value >= prev):
                    m.d.sync += self.jitter_sum.eq(self.jitter_sum + (self.lat_value - prev))
                with m.Else():
                    m.d.sync += self.jitter_sum.eq(self.jitter_sum + (prev - self.lat_value))

        with m.If(self.clear):
            m.d.sync += [self.lat_sq_sum.eq(0), self.jitter_sum.eq(0), have_prev.eq(0), s2.eq(0)]
            m.d.sync += [
                self.rx_frames.eq(0), self.rx_bytes.eq(0), self.seq_errors.eq(0),
                self.fcs_errors.eq(0), self.other_frames.eq(0), self.lat_min.eq(LAT_MIN_INIT),
                self.lat_max.eq(LAT_MAX_INIT), self.lat_sum.eq(0), self.first_rx_ns.eq(0),
                self.last_rx_ns.eq(0), expected.eq(0),
            ]
        return m
