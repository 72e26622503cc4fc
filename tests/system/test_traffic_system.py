"""The traffic engine through the Verilated tester: both ports sending and receiving at
100 % of line rate at once with 16 streams each and modifiers active, and the rate
precision of the generator at fractional loads."""

import pytest

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.stream_stats import unpack_entry
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec

pytestmark = pytest.mark.slow

WAIT_NS = 200_000


def run(dev, programs, *, count=None, duration_ns=None):
    """Load {port: PortProgram}, CLEAR, START, wait for the generators and the frames in
    flight, SNAPSHOT; returns the port counters and, per port, the per-stream transmit and
    receive tables."""
    dev.stop()
    for port in range(dev.n_ports):
        if port not in programs:
            dev.write(f"p{port}.gen.enable", 0)
    for port, program in programs.items():
        dev.load_program(port, program.compile(), count=count, duration_ns=duration_ns)
        dev.write(f"p{1 - port}.ana.stream_group", port)   # stream ids are port * 16 + index
    dev.clear()
    dev.start()
    names = [f"p{port}.gen.running" for port in programs]
    while any(dev.read_many(names).values()):
        dev.wait_ns(100_000)
    dev.wait_ns(WAIT_NS)
    counters = dev.snapshot_counters()
    tx = {p: [(e & (2**64 - 1), e >> 64) for e in dev.read_memory(f"p{p}.gen.stream_tx")] for p in range(2)}
    rx = {p: [unpack_entry(e) for e in dev.read_memory(f"p{p}.ana.streams")] for p in range(2)}
    return counters, tx, rx


def sixteen_streams(port):
    """16 streams of 64-byte frames sharing the port's line rate equally, modifiers on four:
    the seed lab's 100 sources x 20 destinations, a random UDP port, a decrementing MAC and
    an incrementing destination port."""
    peer = 1 - port
    base = dict(src_mac=f"02:00:00:00:00:0{port + 1}", dst_mac=f"02:00:00:00:00:0{peer + 1}",
                src_ip=f"198.{18 + port}.0.1", dst_ip=f"198.{18 + peer}.0.1", udp_checksum=True)
    mods = {
        0: (ModifierSpec(field="src_ip", count=100), ModifierSpec(field="dst_ip", count=20, chain=True)),
        5: (ModifierSpec(field="src_port", mode="random", count=4096),),
        9: (ModifierSpec(field="src_mac", mode="decrement", count=50),),
        13: (ModifierSpec(field="dst_port", count=1000, step=3),),
    }
    streams = tuple(StreamSpec(**base, modifiers=mods.get(i, ())) for i in range(16))
    return PortProgram(port=port, streams=streams, rate_pct=100)


def test_bidirectional_sixteen_streams_at_line_rate(tester):
    dev = tester("loopback:delay=1us")
    count = 40_000
    counters, tx, rx = run(dev, {0: sixteen_streams(0), 1: sixteen_streams(1)}, count=count)
    for port in (0, 1):
        sent, got = counters[port], counters[1 - port]
        assert sent.tx_frames == got.rx_frames == count, (port, sent.tx_frames, got.rx_frames)
        assert got.seq_errors == 0 and got.fcs_errors == 0 and got.other_frames == 0
        assert got.lat_min == got.lat_max, "constant latency through a loopback"
        # line rate, exactly: frames left every 84 clock cycles
        span = sent.last_tx_ns - sent.first_tx_ns
        assert span == (count - 1) * 84 * 8, span
        for i in range(16):
            frames, nbytes = tx[port][i]
            s = rx[1 - port][i]
            assert frames == count // 16 and nbytes == 64 * frames
            assert (s["rx_frames"], s["in_order"], s["lost"], s["duplicate"], s["out_of_order"], s["late"]) == \
                (frames, frames, 0, 0, 0, 0), (port, i, s)
        assert dev.read(f"p{1 - port}.ana.foreign_frames") == 0


@pytest.mark.parametrize("size", [64, 1518])
@pytest.mark.parametrize("pct", [10, 33.3, 50, 99.9])
def test_rate_precision(tester, size, pct, record_property):
    """Offered rate measured from the transmit timestamps of the first and last frame of a
    10 ms trial: within 1 ppm (launch times are whole 8 ns cycles: at most 8 ns over the
    trial, 0.8 ppm)."""
    dev = tester("loopback:delay=0ns")
    want = line_rate_fps(size) * pct / 100
    program = PortProgram(port=0, streams=(StreamSpec(size=str(size)),), rate_fps=want)
    counters, tx, rx = run(dev, {0: program}, duration_ns=10_000_000)
    c = counters[0]
    measured = (c.tx_frames - 1) * 1e9 / (c.last_tx_ns - c.first_tx_ns)
    ppm = (measured - want) / want * 1e6
    record_property("ppm", ppm)
    print(f"{size} B at {pct} %: {want:.3f} fps wanted, {measured:.3f} measured, {ppm:+.3f} ppm")
    assert abs(ppm) < 1.0
    assert counters[1].rx_frames == c.tx_frames


def test_per_stream_latency_histograms(tester):
    """Four streams of different sizes through a store-and-forward router with jitter: each
    stream's latency differs by its frame's reception time, so each histogram is its own. Every
    stream's histogram holds exactly its received frames, inside its [min, max] latency from
    the per-stream statistics, and the port's distribution is their sum."""
    from wirespeed.host.models import HistogramConfig
    from wirespeed.host.streamstats import stream_results

    dev = tester("router:rate=1000000,queue=512,latency=2us,jitter=1us,seed=3")
    sizes = (64, 256, 1024, 1518)
    program = PortProgram(port=0, streams=tuple(StreamSpec(size=s) for s in sizes), rate_pct=40)
    config = HistogramConfig(offset_ns=2_000, shift=4)          # 16 ns bins, 2.0 .. 18.4 us
    dev.configure_histogram(1, config)
    counters, _, _ = run(dev, {0: program}, count=4_000)
    assert counters[1].rx_frames == 4_000 and counters[1].hist_underflow == counters[1].hist_overflow == 0
    results = stream_results(dev, [(0, 1)], snapshot=False, histogram=config)
    assert [r.stream_id for r in results] == [0, 1, 2, 3]
    lows = []
    for size, r in zip(sizes, results):
        h = r.histogram
        assert r.rx_frames == r.tx_frames == 1_000 and r.lost == 0
        assert h.total == r.rx_frames, (size, h.total, r.rx_frames)
        low, high = min(h.counts), max(h.counts)
        assert config.offset_ns + low * 16 <= r.latency_min_ns < config.offset_ns + (low + 1) * 16
        assert config.offset_ns + high * 16 <= r.latency_max_ns < config.offset_ns + (high + 1) * 16
        mean = sum((config.offset_ns + (i + 0.5) * 16) * n for i, n in h.counts.items()) / h.total
        assert abs(mean - r.latency_avg_ns) <= 8, (size, mean, r.latency_avg_ns)
        assert r.percentiles_ns["p50"] is not None
        lows.append(r.latency_min_ns)
    # a bigger frame takes longer to receive before the router forwards it: 8 ns per byte
    assert lows == sorted(lows) and lows[3] - lows[0] >= 8 * (1518 - 64) - 1_000
    port = dev.read_histogram(1, config, counters[1])
    summed = {}
    for r in results:
        for i, n in r.histogram.counts.items():
            summed[i] = summed.get(i, 0) + n
    assert port.counts == summed and port.total == 4_000
