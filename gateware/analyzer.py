"""Receive analyzer: recognises wirespeed test frames by their signature (layout in
:mod:`wirespeed.gateware.frame`) and measures them in hardware.

A frame is a test frame when its last 16 bytes before the FCS hold the magic and a check
that matches the other signature fields, whatever comes in front (Ethernet II, 802.1Q,
IPv4, IPv6, headers a DUT rewrote), unless it is an IP fragment
(:mod:`wirespeed.gateware.fragment`: the last fragment of a test packet ends with its
signature); a frame of fewer than 16 bytes (FCS stripped) never is.
The analyzer keeps the latest 16 bytes in a shift register: at the frame's last byte the
signature is in it.

Latency (RFC 1242 3.8) is measured from the receive timestamp, ``now`` when the frame's
first byte leaves the MAC, and the transmit timestamp in the signature, in ns modulo 2**32,
by one of two definitions chosen by ``lat_def``:

* 0: first bit in to first bit out (bit-forwarding devices): ``rx_ts - tx_ts``;
* 1: last bit in to first bit out (store-and-forward devices): ``rx_ts - tx_ts - 8 * L``,
  L the received length in bytes, FCS included (8 ns per byte at 1 Gb/s), 0 if negative.

The selected latency feeds every latency statistic, ``lat_value`` and the per-frame events.

Per port: test frames and bytes (good FCS, FCS included), FCS errors (any frame the MAC
flags), IP fragments with a good FCS, other (non-test, non-fragment) frames with a good
FCS, and the latency of every good test frame as min, max, sum and sum of
squares in ns, and jitter as the sum of |latency - previous latency| over consecutive test
frames (RFC 4689 3.2.5 / RFC 3550 style mean absolute delay variation = jitter_sum /
(frames - 1)). Each good test frame's latency is also offered on ``lat_sample``/``lat_value``
with its stream id on ``lat_sid`` (for the per-stream histograms).

Every test frame, good FCS or bad, is also offered once as an event (``ev_valid`` for one
cycle with ``ev_fcs_err``, ``ev_sid``, ``ev_seq``, ``ev_latency``, ``ev_rx_ns``,
``ev_tx_ns`` (the signature's 48-bit transmit timestamp), ``ev_bytes``) to the per-stream
statistics (:mod:`wirespeed.gateware.stream_stats`) and the gap and loss tracker
(:mod:`wirespeed.gateware.gaps`).

Widths: 64-bit counters and sums, a 96-bit sum of squares: in 24 hours at 1.488 Mframes/s
no counter wraps, the sums hold a mean latency up to 143 ms and the sum of squares an RMS
latency up to 0.78 s (docs/analyzer.md). The analyzer is always ready: it never
backpressures the MAC. Pipeline (125 MHz on ECP5), one clock each: the last byte, then
decode, latency definition, count and event (and beside them the square's three 16x16
partial products and |latency - previous latency|, registered), then the sum of squares and
the jitter sum; a new frame may end on every clock.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import frame as F
from .fragment import FragmentDetector
from .replica import replicas
from .square import SerialSquare
from .streams import RxStream

__all__ = ["Analyzer", "LAT_MIN_INIT", "LAT_FIRST_BIT", "LAT_LAST_BIT"]

LAT_MAX_INIT = 0
LAT_MIN_INIT = (1 << 32) - 1
#: ``lat_def`` values: RFC 1242 3.8 first bit in to first bit out, last bit in to first bit out
LAT_FIRST_BIT, LAT_LAST_BIT = 0, 1
#: ns per byte at 1 Gb/s
NS_PER_BYTE = 8


class Analyzer(wiring.Component):
    sink: In(RxStream)
    now: In(64)
    clear: In(1)
    lat_def: In(1)

    rx_frames: Out(64)
    rx_bytes: Out(64)
    fcs_errors: Out(64)
    other_frames: Out(64)
    fragment_frames: Out(64)
    lat_min: Out(32, init=LAT_MIN_INIT)
    lat_max: Out(32)
    lat_sum: Out(64)
    first_rx_ns: Out(64)
    last_rx_ns: Out(64)
    lat_sq_sum: Out(96)
    jitter_sum: Out(64)
    lat_sample: Out(1)
    lat_value: Out(32)
    lat_sid: Out(16)

    ev_valid: Out(1)
    ev_fcs_err: Out(1)
    ev_sid: Out(16)
    ev_seq: Out(32)
    ev_latency: Out(32)
    ev_rx_ns: Out(64)
    ev_tx_ns: Out(48)
    ev_bytes: Out(16)

    def elaborate(self, platform):
        m = Module()
        s = self.sink
        m.submodules.fragment = frag = FragmentDetector()
        m.d.comb += [frag.sink.valid.eq(s.valid), frag.sink.payload.eq(s.payload)]

        # Byte stage: every byte shifts into the signature window; the receive timestamp is
        # taken at the first byte.
        length = Signal(16)                      # bytes of this frame so far (FCS stripped)
        rx_ts = Signal(64)
        sig = Signal(8 * F.SIG_LEN)              # latest 16 bytes, the oldest in the top bits
        count = Signal(16)                       # bytes of this frame including the current one
        m.d.comb += count.eq(Mux(s.p.first, 1, length + 1))
        done = Signal()
        done_err = Signal()
        done_len = Signal(16)                    # FCS included
        # done_len >= SIG_FROM_END (long enough for a signature), decided here from ``length``
        # rather than in the decode stage: count + FCS >= SIG_FROM_END in 16 bits
        done_long = Signal()
        long_from, long_to = F.SIG_FROM_END - F.FCS - 1, (1 << 16) - 1 - F.FCS - 1
        m.d.sync += done.eq(s.valid & s.p.last)
        with m.If(s.valid):
            m.d.sync += [length.eq(count), sig.eq(Cat(s.p.data, sig[:-8]))]
            with m.If(s.p.first):
                m.d.sync += rx_ts.eq(self.now)
            with m.If(s.p.last):
                m.d.sync += [done_err.eq(s.p.error), done_len.eq(count + F.FCS),
                             done_long.eq(~s.p.first & (length >= long_from) & (length <= long_to))]

        # Decode stage: the window holds the last 16 bytes (the next frame may already be
        # shifting in behind, so everything needed later is registered here).
        magic, sid, seq, ts, check = (sig[112:128], sig[96:112], sig[64:96], sig[16:64], sig[0:16])
        want_check = Signal(16)
        m.d.comb += want_check.eq(F.SIG_CHECK_SEED ^ sid ^ seq[16:] ^ seq[:16] ^ ts[32:] ^ ts[16:32] ^ ts[:16])
        is_test = Signal()
        m.d.comb += is_test.eq(done_long & (magic == F.SIG_MAGIC) & (check == want_check))
        d_valid, d_test, d_err, d_frag = Signal(), Signal(), Signal(), Signal()
        d_sid, d_seq, d_len, d_rx, d_raw = Signal(16), Signal(32), Signal(16), Signal(64), Signal(32)
        d_tx = Signal(48)
        # ``frag.fragment`` holds the frame's answer on this clock, the one after its last byte
        m.d.sync += [d_valid.eq(done), d_test.eq(is_test), d_err.eq(done_err), d_sid.eq(sid), d_tx.eq(ts),
                     d_frag.eq(frag.fragment),
                     d_seq.eq(seq), d_len.eq(done_len), d_rx.eq(rx_ts),
                     d_raw.eq(rx_ts[:32] - ts[:32])]      # first bit in to first bit out, mod 2**32

        # Latency definition stage. ``c_good``: a good test frame, registered (the enables of the
        # count stage's latency registers are then one LUT after their comparison); ``sq_lat``:
        # a copy of the latency of good test frames only, for the square alone (a register
        # placed by it rather than the widely used ``c_lat``).
        serial = Signal(20)
        lat = Signal(32)
        m.d.comb += [serial.eq(d_len * NS_PER_BYTE),
                     lat.eq(Mux(self.lat_def == LAT_LAST_BIT, Mux(d_raw >= serial, d_raw - serial, 0), d_raw))]
        c_valid, c_test, c_err, c_frag = Signal(), Signal(), Signal(), Signal()
        c_sid, c_seq, c_len, c_rx, c_lat = Signal(16), Signal(32), Signal(16), Signal(64), Signal(32)
        c_tx = Signal(48)
        sq_lat = Signal(32)
        # a fragment is never a test frame, whatever its last 16 bytes
        d_test_frame = d_test & ~d_frag
        m.d.sync += [c_valid.eq(d_valid), c_test.eq(d_test_frame), c_err.eq(d_err), c_frag.eq(d_frag),
                     c_sid.eq(d_sid), c_tx.eq(d_tx),
                     c_seq.eq(d_seq), c_len.eq(d_len), c_rx.eq(d_rx), c_lat.eq(lat)]
        # one copy of c_good per counter it enables (each placed by its counter: together they
        # enable over 300 flip-flops)
        c_good = replicas(m, "sync", d_valid & d_test_frame & ~d_err,
                          ["frames", "bytes", "sum", "rx", "min", "max", "sq", "jit"], prefix="c_good")
        with m.If(d_valid & d_test_frame & ~d_err):
            m.d.sync += sq_lat.eq(lat)

        # Count stage: port counters and the per-frame event.
        m.d.comb += [self.ev_valid.eq(c_valid & c_test), self.ev_fcs_err.eq(c_err),
                     self.ev_sid.eq(c_sid), self.ev_seq.eq(c_seq), self.ev_latency.eq(c_lat),
                     self.ev_rx_ns.eq(c_rx), self.ev_tx_ns.eq(c_tx), self.ev_bytes.eq(c_len)]
        # ``have_first``: rx_frames != 0, without a 64-bit zero test
        have_first = Signal()
        with m.If(c_valid):
            with m.If(c_err):
                m.d.sync += self.fcs_errors.eq(self.fcs_errors + 1)
            with m.Elif(c_frag):
                m.d.sync += self.fragment_frames.eq(self.fragment_frames + 1)
            with m.Elif(~c_test):
                m.d.sync += self.other_frames.eq(self.other_frames + 1)
        with m.If(c_good["frames"]):
            m.d.sync += self.rx_frames.eq(self.rx_frames + 1)
        with m.If(c_good["bytes"]):
            m.d.sync += self.rx_bytes.eq(self.rx_bytes + c_len)
        with m.If(c_good["sum"]):
            m.d.sync += self.lat_sum.eq(self.lat_sum + c_lat)
        with m.If(c_good["rx"]):
            m.d.sync += [self.last_rx_ns.eq(c_rx), have_first.eq(1)]
            with m.If(~have_first):
                m.d.sync += self.first_rx_ns.eq(c_rx)
        with m.If(c_good["min"] & (c_lat < self.lat_min)):
            m.d.sync += self.lat_min.eq(c_lat)
        with m.If(c_good["max"] & (c_lat > self.lat_max)):
            m.d.sync += self.lat_max.eq(c_lat)

        # Square stage: the histogram sample (``lat_sample``/``lat_value``/``lat_sid``), the sum of
        # squares and the jitter sum. Neither a 32x32 square nor a subtraction and its |.| fit in
        # one clock with the wide accumulation after them (125 MHz on ECP5): |latency - previous
        # latency| (the previous good test frame's, from the second one after CLEAR on) is
        # registered beside the count stage, the square is worked out over 16 clocks (below),
        # and each is then added to its sum.
        s2 = Signal()
        m.d.sync += s2.eq(c_good["sq"])
        with m.If(c_valid):
            m.d.sync += [self.lat_value.eq(c_lat), self.lat_sid.eq(c_sid)]
        m.d.comb += self.lat_sample.eq(s2)

        # The square (:class:`~.square.SerialSquare`, 17 clocks), then added to the sum. A
        # square that comes while one is in progress waits in ``sq_pend`` (a 16-byte test frame
        # right after another: on the wire, with its preamble and gap, good test frames are at
        # least 36 clocks apart).
        m.submodules.square = sq = SerialSquare(32)
        sq_pend, sq_pend_x = Signal(), Signal(32)
        m.d.comb += [sq.start.eq(sq_pend | s2), sq.x.eq(Mux(sq_pend, sq_pend_x, sq_lat)), sq.clear.eq(self.clear)]
        with m.If(s2):                                 # sq_lat: c_lat of the count stage's good frame
            m.d.sync += sq_pend_x.eq(sq_lat)
        with m.If(~sq.busy & sq_pend):
            m.d.sync += sq_pend.eq(s2)                 # the pending one loads, this one waits
        with m.Elif(sq.busy & s2):
            m.d.sync += sq_pend.eq(1)
        have_prev, j_valid = Signal(), Signal()
        prev, j_diff = Signal(32), Signal(32)
        m.d.sync += j_valid.eq(c_good["jit"] & have_prev)
        with m.If(c_good["jit"]):
            m.d.sync += [prev.eq(c_lat), have_prev.eq(1),
                         j_diff.eq(Mux(c_lat >= prev, c_lat - prev, prev - c_lat))]

        with m.If(sq.done):
            m.d.sync += self.lat_sq_sum.eq(self.lat_sq_sum + sq.p)
        with m.If(j_valid):
            m.d.sync += self.jitter_sum.eq(self.jitter_sum + j_diff)

        with m.If(self.clear):
            # a frame counted on this clock is dropped here too (its square and variation with it)
            m.d.sync += [self.lat_sq_sum.eq(0), self.jitter_sum.eq(0), have_prev.eq(0), s2.eq(0), sq_pend.eq(0),
                         j_valid.eq(0)]
            m.d.sync += [
                self.rx_frames.eq(0), self.rx_bytes.eq(0),
                self.fcs_errors.eq(0), self.other_frames.eq(0), self.fragment_frames.eq(0),
                self.lat_min.eq(LAT_MIN_INIT), self.lat_max.eq(LAT_MAX_INIT), self.lat_sum.eq(0),
                self.first_rx_ns.eq(0), self.last_rx_ns.eq(0), have_first.eq(0),
            ]
        return m
