"""Analyzer against a golden model: recognition of the signature at the end of the frame
whatever the headers, IP fragments counted apart, counters, sequence, both latency
definitions and the per-frame events, across frame sizes, back-to-back frames and idle
cycles inside frames."""

import random

import pytest
from amaranth.sim import Simulator
from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, IPv6ExtHdrFragment, Raw

from wirespeed.gateware import frame as F
from wirespeed.gateware.analyzer import LAT_FIRST_BIT, LAT_LAST_BIT, LAT_MIN_INIT, Analyzer

CFG = dict(dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001, dst_ip=0xC6130001)
EVENT_FIELDS = ("ev_fcs_err", "ev_sid", "ev_seq", "ev_latency", "ev_rx_ns", "ev_tx_ns", "ev_bytes")


def latency(rx_ts, ts, length, lat_def):
    """RFC 1242 3.8: first bit in to first bit out, or last bit in (8 ns per byte of the
    ``length``-byte frame, FCS included, after the first) to first bit out, clamped at 0."""
    lat = (rx_ts - ts) & 0xFFFFFFFF
    if lat_def == LAT_LAST_BIT:
        lat = max(lat - 8 * length, 0)
    return lat


class AnalyzerModel:
    """What the analyzer must count and report, from the frames it is given."""

    def __init__(self, lat_def):
        self.lat_def = lat_def
        self.c = dict(rx_frames=0, rx_bytes=0, fcs_errors=0, other_frames=0, fragment_frames=0,
                      lat_min=LAT_MIN_INIT, lat_max=0, lat_sum=0, first_rx_ns=0, last_rx_ns=0,
                      lat_sq_sum=0, jitter_sum=0)
        self.prev = None
        self.samples = []
        self.events = []

    def frame(self, data, error, rx_ts):
        c = self.c
        fragment = F.is_fragment(data)
        sig = None if fragment else F.parse_signature(data)       # a fragment is never a test frame
        length = len(data) + F.FCS
        if sig is not None:
            sid, seq, ts = sig
            lat = latency(rx_ts, ts, length, self.lat_def)
            self.events.append(dict(ev_fcs_err=error, ev_sid=sid, ev_seq=seq, ev_latency=lat,
                                    ev_rx_ns=rx_ts, ev_tx_ns=ts, ev_bytes=length))
        if error:
            c["fcs_errors"] += 1
            return
        if fragment:
            c["fragment_frames"] += 1
            return
        if sig is None:
            c["other_frames"] += 1
            return
        if c["rx_frames"] == 0:
            c["first_rx_ns"] = rx_ts
        c["rx_frames"] += 1
        c["rx_bytes"] += length
        c["lat_min"] = min(c["lat_min"], lat)
        c["lat_max"] = max(c["lat_max"], lat)
        c["lat_sum"] += lat
        c["lat_sq_sum"] += lat * lat
        if self.prev is not None:
            c["jitter_sum"] += abs(lat - self.prev)
        self.prev = lat
        self.samples.append(lat)
        c["last_rx_ns"] = rx_ts


def with_signature(head, frame_len, sid, seq, ts):
    """``head`` (any headers), zero fill and the signature: a ``frame_len``-byte test frame
    without its FCS."""
    return head + bytes(frame_len - F.SIG_FROM_END - len(head)) + F.signature(sid, seq, ts)


ETH = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
HEADERS = {
    "vlan_ipv4": ETH / Dot1Q(vlan=100, prio=5) / IP(src="198.18.0.1", dst="198.19.0.1", ttl=10)
                 / UDP(sport=0xC020, dport=7),
    "ipv6": ETH / IPv6(src="2001:2::1", dst="2001:2::2", hlim=10) / UDP(sport=0xC020, dport=7),
    "qinq_ipv6": ETH / Dot1Q(vlan=10) / Dot1Q(vlan=20) / IPv6(src="2001:2::1", dst="2001:2::2") / UDP(dport=7),
    "raw_ethertype": Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01", type=0x88B5) / Raw(b"x" * 3),
}


def appendix_c(size, seq, sid=3):
    """A default (RFC 2544 Appendix C) test frame, its timestamp chosen at the first byte."""
    return lambda rx_ts, lat: F.build_frame(frame_len=size, seq=seq, ts=rx_ts - lat, stream_id=sid, **CFG)


def headed(name, size, seq, sid):
    head = bytes(HEADERS[name])
    return lambda rx_ts, lat: with_signature(head, size, sid, seq, rx_ts - lat)


def fixed(data):
    return lambda rx_ts, lat: data


def make_traffic(rng, sizes):
    """(frame maker, fcs error) items: in-order, lost, duplicated, reordered test frames,
    foreign frames, a corrupted signature, bad FCS frames, runts and a minimal test frame."""
    seqs = [0, 1, 2, 4, 5, 5, 7, 6, 8, 9]
    items = [(appendix_c(sizes[i % len(sizes)], seq), 0) for i, seq in enumerate(seqs)]
    items.insert(3, (fixed(bytes(rng.randrange(256) for _ in range(60))), 0))    # random payload
    bad_check = bytearray(F.build_frame(frame_len=64, seq=99, ts=5, **CFG))
    bad_check[-3] ^= 1
    items.insert(5, (fixed(bytes(bad_check)), 0))                                  # signature check fails
    items.insert(7, (appendix_c(128, 10), 1))                                       # bad FCS, test frame
    items.insert(8, (fixed(F.build_frame(frame_len=64, seq=10, ts=9, **CFG)[:40]), 0))  # truncated: no signature
    # a runt holding the last 15 signature bytes right after a frame ending in the first: the
    # window holds a valid signature, but 15 bytes are too few for one
    sig = F.signature(3, 11, 1234)
    items.insert(9, (fixed(bytes(30) + sig[:1]), 0))
    items.insert(10, (fixed(sig[1:]), 0))
    items.insert(11, (fixed(bytes(rng.randrange(256) for _ in range(70))), 1))    # bad FCS, not a test frame
    items.append((lambda rx_ts, lat: F.signature(3, 12, rx_ts - lat), 0))          # 16 bytes: the smallest test frame
    arp = bytearray(F.build_frame(frame_len=64, seq=13, ts=9, **CFG))
    arp[12:14] = b"\x08\x06"
    items.append((fixed(bytes(arp)), 0))                                            # headers are not checked
    return items


GAPS = {"back_to_back": (0, 0.0), "gaps": (12, 0.0), "idle_inside_frames": (3, 0.25)}


def run(items, *, lat_def, gap_cycles, idle_p, rng, latencies):
    """Feed the frames to an analyzer and its model; return both."""
    dut = Analyzer()
    model = AnalyzerModel(lat_def)
    samples, events = [], []

    async def sampler(ctx):
        async for _clk, _rst, valid, value, ev_valid, *ev in ctx.tick().sample(
                dut.lat_sample, dut.lat_value, dut.ev_valid, *(getattr(dut, f) for f in EVENT_FIELDS)):
            if valid:
                samples.append(value)
            if ev_valid:
                events.append(dict(zip(EVENT_FIELDS, ev)))

    async def bench(ctx):
        ctx.set(dut.lat_def, lat_def)
        now = 1 << 33                                    # timestamps beyond 32 bits
        for n, (maker, error) in enumerate(items):
            data = None
            for i in range(1 << 16):
                while rng.random() < idle_p:
                    ctx.set(dut.sink.valid, 0)
                    ctx.set(dut.now, now)
                    await ctx.tick()
                    now += 8
                if i == 0:
                    data = maker(now, latencies[n % len(latencies)])
                    model.frame(data, error, now)
                last = i == len(data) - 1
                ctx.set(dut.sink.valid, 1)
                ctx.set(dut.sink.p, {"data": data[i], "first": i == 0, "last": last, "error": error and last})
                ctx.set(dut.now, now)
                await ctx.tick()
                now += 8
                if last:
                    break
            ctx.set(dut.sink.valid, 0)
            for _ in range(gap_cycles):
                await ctx.tick()
                now += 8
        # the last frame's figures: the count stage, then its square up to 35 clocks after it
        # (16 clocks, after the one before it)
        await ctx.tick().repeat(40)
        got = {name: ctx.get(getattr(dut, name)) for name in model.c}
        assert got == model.c

        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        assert ctx.get(dut.rx_frames) == 0 and ctx.get(dut.lat_min) == LAT_MIN_INIT

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.add_process(sampler)
    sim.run()
    assert samples == model.samples            # every good test frame's latency offered once, in order
    assert events == model.events              # every test frame offered once, in order
    return model


#: latencies to aim at, ns: around 8 * L (where last-bit latency clamps at 0) and far
LATENCIES = [0, 100, 511, 512, 513, 1000, 12_144, 80_000, 3_000_000_000]


@pytest.mark.parametrize("lat_def", [LAT_FIRST_BIT, LAT_LAST_BIT])
@pytest.mark.parametrize("gap", GAPS)
@pytest.mark.parametrize("sizes", [[64], [65, 67, 99, 127], [128, 1518], [64, 1518, 71]], ids=str)
def test_counters_match_model(sizes, gap, lat_def):
    rng = random.Random(len(sizes) * 7 + len(gap) + lat_def)
    items = make_traffic(rng, sizes)
    gap_cycles, idle_p = GAPS[gap]
    model = run(items, lat_def=lat_def, gap_cycles=gap_cycles, idle_p=idle_p, rng=rng, latencies=LATENCIES)
    # the traffic really exercised every counter
    assert model.c["fcs_errors"] == 2 and model.c["other_frames"] == 5
    assert any(e["ev_fcs_err"] for e in model.events) and len(model.events) == 13
    if lat_def == LAT_LAST_BIT:
        assert 0 in model.samples              # clamped


@pytest.mark.parametrize("lat_def", [LAT_FIRST_BIT, LAT_LAST_BIT])
def test_any_headers_and_jumbo(lat_def):
    """VLAN, QinQ, IPv6 and unknown headers in front of the signature; every odd size
    65..127, 1518 and a 9018-byte jumbo; several streams."""
    rng = random.Random(5 + lat_def)
    sizes = list(range(65, 128, 2)) + [1518, F.JUMBO_FRAME, 66, 64]
    items = []
    for i, size in enumerate(sizes):
        fitting = [name for name, pkt in HEADERS.items() if len(pkt) + F.SIG_FROM_END <= size]
        items.append((headed(fitting[i % len(fitting)], size, i, sid=0x100 + i % 5), 0))
    items.insert(7, (headed("ipv6", 300, 99, 7), 1))                                 # bad FCS
    model = run(items, lat_def=lat_def, gap_cycles=0, idle_p=0.02, rng=rng,
                latencies=[200, 50_000, 8 * 1522 - 1, 8 * 9018 + 3])
    assert model.c["rx_frames"] == len(sizes) and model.c["fcs_errors"] == 1
    assert F.JUMBO_FRAME in [e["ev_bytes"] for e in model.events]


def test_squares_of_test_frames_back_to_back():
    """Signature-only (16-byte) test frames back to back, 16 clocks apart, closer than a
    square takes (16 clocks after its load): each waits for the one before it, and every
    square reaches lat_sq_sum."""
    rng = random.Random(4)
    items = [(lambda rx_ts, lat, seq=seq: F.signature(3, seq, rx_ts - lat), 0) for seq in range(8)]
    model = run(items, lat_def=LAT_FIRST_BIT, gap_cycles=0, idle_p=0.0, rng=rng,
                latencies=[3_000_000_000, 4_294_967_295, 1, 80_000])
    assert model.c["rx_frames"] == 8
    assert model.c["lat_sq_sum"] == 2 * (3_000_000_000 ** 2 + 4_294_967_295 ** 2 + 1 + 80_000 ** 2)


FRAGMENTS = {
    "ipv4_more_fragments": ETH / IP(src="198.18.0.1", dst="198.19.0.1", flags="MF") / UDP(dport=7),
    "ipv4_last_fragment": ETH / IP(src="198.18.0.1", dst="198.19.0.1", frag=185),
    "ipv4_df_and_offset": ETH / IP(src="198.18.0.1", dst="198.19.0.1", flags="DF", frag=1),
    "ipv6_fragment_header": ETH / IPv6(src="2001:2::1", dst="2001:2::2") / IPv6ExtHdrFragment(offset=1),
    "vlan_ipv4_fragment": ETH / Dot1Q(vlan=100) / IP(src="198.18.0.1", dst="198.19.0.1", frag=185),
    "s_tag_ipv6_fragment": Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01", type=0x88A8) / Dot1Q(vlan=7)
                           / IPv6(src="2001:2::1", dst="2001:2::2") / IPv6ExtHdrFragment(m=1),
}
#: whole packets: test frames, whatever DF says
NOT_FRAGMENTS = {
    "ipv4_df": ETH / IP(src="198.18.0.1", dst="198.19.0.1", flags="DF") / UDP(dport=7),
    "vlan_ipv4_df": ETH / Dot1Q(vlan=100) / IP(src="198.18.0.1", dst="198.19.0.1", flags="DF") / UDP(dport=7),
    "ipv6_udp": HEADERS["ipv6"],
}


def with_headers(pkt, size, seq, sid=3):
    """``pkt`` and the signature in ``size`` bytes, or as few more as they need."""
    head = bytes(pkt)
    size = max(size, len(head) + F.SIG_FROM_END)
    return lambda rx_ts, lat: with_signature(head, size, sid, seq, rx_ts - lat)


def fragment_traffic(sizes):
    """Every fragment kind ending with a valid signature, among test frames of the same
    stream in order; a bad-FCS fragment; a signature-only frame right after a fragment."""
    items, seq = [], 0
    kinds = [*FRAGMENTS.values(), *NOT_FRAGMENTS.values()]
    for i, pkt in enumerate(kinds * 2):
        fragment = i % len(kinds) < len(FRAGMENTS)
        size = sizes[i % len(sizes)]
        items.append((with_headers(pkt, size, 1000 + i if fragment else seq), 0))
        seq += not fragment
        items.append((appendix_c(sizes[-1 - i % len(sizes)], seq), 0))
        seq += 1
    items.insert(3, (with_headers(FRAGMENTS["ipv4_last_fragment"], 80, 2000), 1))     # bad FCS
    items.insert(5, (lambda rx_ts, lat: F.signature(3, 3000, rx_ts - lat), 0))       # after a fragment
    return items


@pytest.mark.parametrize("gap", GAPS)
@pytest.mark.parametrize("sizes", [[64], [65, 99, 127], [128, 1518, 71]], ids=str)
def test_fragments_are_counted_apart(sizes, gap):
    """An IP fragment (IPv4 MF or offset, IPv6 Fragment header, untagged or behind one VLAN
    tag) is counted in fragment_frames, never as a test frame, even when its last 16 bytes
    are a valid signature: no rx count, no latency, no event. DF alone is not a fragment."""
    rng = random.Random(len(sizes) + len(gap))
    gap_cycles, idle_p = GAPS[gap]
    items = fragment_traffic(sizes)
    model = run(items, lat_def=LAT_LAST_BIT, gap_cycles=gap_cycles, idle_p=idle_p, rng=rng, latencies=LATENCIES)
    assert model.c["fragment_frames"] == 2 * len(FRAGMENTS) and model.c["fcs_errors"] == 1
    assert model.c["other_frames"] == 0
    assert model.c["rx_frames"] == 2 * len(NOT_FRAGMENTS) + 2 * (len(FRAGMENTS) + len(NOT_FRAGMENTS)) + 1
    assert all(e["ev_seq"] < 1000 or e["ev_seq"] == 3000 for e in model.events)


def test_fragment_golden_model():
    """The golden model reads the fields where the headers put them."""
    for name, pkt in FRAGMENTS.items():
        assert F.is_fragment(bytes(pkt)), name
    for name, pkt in {**NOT_FRAGMENTS, **HEADERS}.items():
        assert not F.is_fragment(bytes(pkt)), name
    assert not F.is_fragment(bytes(FRAGMENTS["ipv4_more_fragments"])[:21])       # flags not held whole
    qinq = ETH / Dot1Q(vlan=1) / Dot1Q(vlan=2) / IP(flags="MF")
    assert not F.is_fragment(bytes(qinq))                                        # one tag is looked behind
