"""The stream model, its compiler (streamdesc tables), the golden model and loading a port."""

import heapq
import random
import warnings
from fractions import Fraction

import pytest

from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.frame import signature
from wirespeed.gateware.regmap import Register, RegisterMap
from wirespeed.host.device import Device
from wirespeed.host.program import write_port_program
from wirespeed.traffic import (
    BenchmarkRangeWarning,
    ModifierSpec,
    PortProgram,
    SizeSpec,
    StreamSpec,
    dissect,
    error_text,
    expected_frames,
)
from wirespeed.traffic import tester_ipv6 as ipv6_of_port

# A model of the generator written from the streamdesc docstring alone, on the compiled tables --------


def _fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def _halves(v):
    return (v >> 16) + (v & 0xFFFF)


def contract_frames(compiled, n, ts=lambda i: 1000 * i + 7):
    """The first ``n`` frames (without FCS) as the streamdesc contract builds them from the
    packed descriptors, template entries, size table and modifier registers."""
    descs = [sd.unpack_descriptor(v) for v in compiled.descriptors()]
    tmpl = compiled.template_entries()
    units = compiled.modifiers
    idx = [0] * sd.N_MODIFIERS
    rnd = [0] * sd.N_MODIFIERS
    rng = [sd.seed_for(compiled.seed, j) for j in range(sd.N_MODIFIERS)]
    size_rng = sd.seed_for(compiled.seed, sd.N_MODIFIERS)
    heap = [(0, s, 0) for s, d in enumerate(descs) if d["enable"]]
    heapq.heapify(heap)
    out = []
    for i in range(n):
        due, s, k = heapq.heappop(heap)
        d = descs[s]
        heapq.heappush(heap, (due + d["period"], s, k + 1))
        mode = d["size_mode"]
        if mode == sd.SIZE_FIXED:
            L = d["size_a"]
        elif mode == sd.SIZE_INCREMENT:
            L = d["size_a"] + (k % ((d["size_b"] - d["size_a"]) // d["size_step"] + 1)) * d["size_step"]
        elif mode == sd.SIZE_RANDOM:
            r, size_rng = sd.draw(size_rng, d["size_b"] - d["size_a"] + 1)
            L = d["size_a"] + r
        else:
            L = compiled.size_table[d["size_table_base"] + k % d["size_table_len"]]
        h = d["hdr_len"]
        f = bytearray(tmpl[s * 128 + b] for b in range(h))
        ipsum, udpsum = 0, 0
        mine = [j for j, u in enumerate(units) if u["mode"] != sd.MOD_OFF and u["stream"] == s]
        for j in mine:
            u = units[j]
            if u["mode"] == sd.MOD_INCREMENT:
                v = u["base"] + (idx[j] % u["count"]) * u["step"]
            elif u["mode"] == sd.MOD_DECREMENT:
                v = u["base"] - (idx[j] % u["count"]) * u["step"]
            else:
                v = u["base"] + rnd[j] * u["step"]
            v &= 0xFFFFFFFF
            o = u["offset"]
            old = int.from_bytes(f[o:o + 4], "big")
            f[o:o + 4] = ((old & ~u["mask"]) | (v & u["mask"])).to_bytes(4, "big")
            if u["csum"] & sd.CSUM_IPV4:
                ipsum += _halves(v & u["mask"])
            if u["csum"] & sd.CSUM_UDP:
                udpsum += _halves(v & u["mask"])
        wrapped = {}
        for j in mine:
            u = units[j]
            if u["chain"] and not wrapped.get(j - 1, False):
                wrapped[j] = False
                continue
            if u["mode"] == sd.MOD_RANDOM:
                rnd[j], rng[j] = sd.draw(rng[j], u["count"])
                wrapped[j] = True
            else:
                idx[j] += 1
                wrapped[j] = idx[j] % u["count"] == 0
        sig = signature(d["stream_id"], k, ts(i))
        f += bytes(L - 20 - h) + sig
        assert len(f) == L - 4
        len1 = L - d["len1_adj"]
        len2 = L - d["len2_adj"]
        if d["len1_en"]:
            f[d["len1_off"]:d["len1_off"] + 2] = len1.to_bytes(2, "big")
        if d["len2_en"]:
            f[d["len2_off"]:d["len2_off"] + 2] = len2.to_bytes(2, "big")
        if d["ipcsum_en"]:
            c = ~_fold(d["ipcsum_base"] + len1 + ipsum) & 0xFFFF
            f[d["ipcsum_off"]:d["ipcsum_off"] + 2] = c.to_bytes(2, "big")
        if d["udpcsum_en"]:
            sigsum = _fold(sum(int.from_bytes(sig[b:b + 2], "big") for b in range(0, 16, 2)))
            if (L ^ d["udpcsum_off"]) & 1:
                sigsum = ((sigsum & 0xFF) << 8) | (sigsum >> 8)
            c = ~_fold(d["udpcsum_base"] + 2 * len2 + udpsum + sigsum) & 0xFFFF
            f[d["udpcsum_off"]:d["udpcsum_off"] + 2] = (c or 0xFFFF).to_bytes(2, "big")
        out.append((s, k, bytes(f)))
    return out


def check_against_golden(program, n):
    compiled = program.compile()
    golden = list(expected_frames(compiled, count=n))
    assert len(golden) == n
    contract = contract_frames(compiled, n)
    for i, (g, (s, k, frame)) in enumerate(zip(golden, contract)):
        assert (g.stream, g.seq) == (s, k), f"frame {i}"
        built = g.build(1000 * i + 7)
        assert built == frame, f"frame {i} (stream {s}, seq {k}, {g.length} bytes)"
        assert dissect(built)[1]
    return golden


# Sizes ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, mode, values", [
    ("64", "fixed", (64,)),
    ("64-70", "increment", tuple(range(64, 71))),
    ("64-1518/64", "increment", tuple(range(64, 1519, 64))),
    ("rand:64-1518", "random", (64, 1518)),
    ("seq:64,128,64", "sequence", (64, 128, 64)),
    ("imix:aaaaaaag", "sequence", (64,) * 7 + (1518,)),
    ("imix:64:7,576:4,1518:1", "sequence", (64, 576, 64, 64, 576, 64, 1518, 64, 576, 64, 576, 64)),
    ("imix:aaz,z=9018", "sequence", (64, 64, 9018)),
])
def test_size_parse(text, mode, values):
    size = SizeSpec.parse(text)
    assert size.mode == mode and size.values == values
    assert SizeSpec.parse(str(size)) == size


def test_size_mean():
    assert SizeSpec.parse("64").mean == 64
    assert SizeSpec.parse("64-128/32").mean == Fraction(64 + 96 + 128, 3)
    assert SizeSpec.parse("rand:64-1518").mean == Fraction(64 + 1518, 2)
    assert SizeSpec.parse("imix:64:7,576:4,1518:1").mean == Fraction(7 * 64 + 4 * 576 + 1518, 12)


SYNTAX = "give N, A-B or A-B/STEP (increment), rand:A-B, seq:N,N,..., imix:GENOME or imix:SIZE:WEIGHT,..."


@pytest.mark.parametrize("text, message", [
    ("64x", f"frame size '64x': {SYNTAX}"),
    ("rand:64", f"frame size 'rand:64': {SYNTAX}"),
    ("64-128/x", f"frame size '64-128/x': {SYNTAX}"),
    ("63", "frame size '63': 63 bytes is outside the tester's frame sizes 64..9018 (FCS included)"),
    ("64-9019", "frame size '64-9019': 9019 bytes is outside the tester's frame sizes 64..9018 (FCS included)"),
    ("128-64", "frame size '128-64': increment sizes need a <= b, got a=128 b=64"),
    ("64-128/0", "frame size '64-128/0': the size step must be >= 1, not 0"),
    ("rand:200-100", "frame size 'rand:200-100': random sizes need a <= b, got a=200 b=100"),
    ("seq:64,40", "frame size 'seq:64,40': 40 bytes is outside the tester's frame sizes 64..9018 (FCS included)"),
    ("imix:aaq", "frame size 'imix:aaq': IMIX genome 'aaq': 'q' at position 2 is not a genome letter "
                 "(a-j, z, RFC 6985)"),
])
def test_size_errors(text, message):
    with pytest.raises(ValueError) as info:
        SizeSpec.parse(text)
    assert str(info.value) == message


# Modifiers and streams ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"field": "src_ip", "count": 0}, "count: Input should be greater than or equal to 1"),
    ({"field": "src_ip", "count": 4, "mode": "random", "step": 3},
     "src_ip modifier: a random modifier's step must be a power of two (1, 2, 4, ...), not 3"),
    ({"field": "vlan", "count": 4, "step": 4096}, "vlan modifier: step 4096 does not fit the field's 12 bits "
                                                  "(at most 4095)"),
    ({"field": "ttl", "count": 4}, "field: Input should be 'src_mac', 'dst_mac', 'src_ip', 'dst_ip', "
                                   "'src_port', 'dst_port' or 'vlan'"),
])
def test_modifier_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        ModifierSpec(**kwargs)
    assert error_text(info.value) == message


@pytest.mark.parametrize("kwargs, message", [
    ({"src_ip": "2001:2::1", "dst_ip": "198.19.0.1"}, "src_ip 2001:2::1 is not an IPv4 address"),
    ({"ip_version": 6, "dst_ip": "198.19.0.1"}, "dst_ip 198.19.0.1 is not an IPv6 address"),
    ({"pcp": 3}, "pcp needs a VLAN tag: give vlan too"),
    ({"vlan": 4096}, "vlan: Input should be less than or equal to 4095"),
    ({"weight": 1, "fraction": 0.5}, "give a stream either a weight or a fraction of the port's rate, not both"),
    ({"modifiers": [{"field": "vlan", "count": 2}]}, "a vlan modifier needs a VLAN tag: give vlan too"),
    ({"modifiers": [{"field": "src_ip", "count": 2, "chain": True}]},
     "the first modifier (src_ip) cannot chain: there is no previous modifier in the stream"),
    ({"modifiers": [{"field": "src_ip", "count": 2}, {"field": "src_ip", "count": 3}]},
     "two modifiers on src_ip: one per field and stream"),
    ({"size": "64x"}, f"frame size '64x': {SYNTAX}"),
    ({"src_mac": "02:00:00:00:01"}, "src_mac: a MAC address like 02:00:00:00:00:01, not '02:00:00:00:01'"),
])
def test_stream_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        StreamSpec(**kwargs)
    assert error_text(info.value) == message


def test_stream_defaults_and_warnings():
    s = StreamSpec()
    assert (str(s.src_ip), str(s.dst_ip), s.ip_version, s.hdr_len, s.min_frame) == ("198.18.0.1", "198.19.0.1",
                                                                                     4, 42, 64)
    v6 = StreamSpec(ip_version=6, udp_checksum=False, vlan=1)
    assert (v6.src_ip, v6.dst_ip, v6.udp_checksum) == (ipv6_of_port(0), ipv6_of_port(1), True)
    assert (v6.hdr_len, v6.min_frame) == (66, 86)
    assert StreamSpec(src_ip="2001:2::5", dst_ip="2001:2::6").ip_version == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        StreamSpec(modifiers=[ModifierSpec(field="dst_ip", count=65535)])
        StreamSpec(ip_version=6)
    with pytest.warns(BenchmarkRangeWarning, match="10.0.0.1 is outside the benchmarking range 198.18.0.0/15"):
        StreamSpec(src_ip="10.0.0.1")
    with pytest.warns(BenchmarkRangeWarning, match="2001:db8::1 is outside the benchmarking range 2001:2::/48"):
        StreamSpec(dst_ip="2001:db8::1")
    with pytest.warns(BenchmarkRangeWarning, match="198.20.0.0 is outside"):     # the walk leaves the range
        StreamSpec(dst_ip="198.19.255.0", modifiers=[ModifierSpec(field="dst_ip", count=257)])


# Compiling --------------------------------------------------------------------------------------------------


def _scapy_header(stream, mods=()):
    """Header bytes of a scapy-built frame, zeroed where the contract wants zeros."""
    prog = PortProgram(streams=[stream], rate_pct=1)
    frame = next(expected_frames(prog, count=1))
    hdr = bytearray(frame.build(0)[:stream.hdr_len])
    l3, l4 = stream.l3, stream.l4
    zero = [(l4 + 4, 4)]
    zero += [(l3 + 2, 2), (l3 + 10, 2)] if stream.ip_version == 4 else [(l3 + 4, 2)]
    for off, n in zero:
        hdr[off:off + n] = bytes(n)
    return bytes(hdr)


@pytest.mark.parametrize("kwargs", [
    {},
    {"vlan": 100, "pcp": 5, "dscp": 46, "ttl": 64, "src_port": 1234, "dst_port": 5678, "size": 66},
    {"ip_version": 6, "dscp": 10, "ttl": 3, "size": 82},
    {"ip_version": 6, "vlan": 4095, "src_mac": "02:aa:bb:cc:dd:ee", "dst_mac": "ff:ff:ff:ff:ff:ff", "size": 90},
])
def test_template_matches_scapy(kwargs):
    stream = StreamSpec(**kwargs)
    compiled = PortProgram(streams=[stream], rate_pct=1).compile()
    assert compiled.streams[0].template == _scapy_header(stream)
    d = compiled.streams[0].descriptor
    assert d["hdr_len"] == stream.hdr_len and d["enable"] == 1


def test_descriptor_fields_ipv4_vlan():
    stream = StreamSpec(vlan=7, udp_checksum=True, size="66-1518/2",
                        modifiers=[ModifierSpec(field="src_port", count=10), ModifierSpec(field="dst_ip", count=5)])
    c = PortProgram(port=1, streams=[stream], rate_pct=10).compile()
    d = c.streams[0].descriptor
    assert {k: d[k] for k in ("size_mode", "hdr_len", "stream_id", "size_a", "size_b", "size_step")} == {
        "size_mode": sd.SIZE_INCREMENT, "hdr_len": 46, "stream_id": 16, "size_a": 66, "size_b": 1518,
        "size_step": 2}
    assert (d["len1_en"], d["len1_off"], d["len1_adj"]) == (1, 20, 22)
    assert (d["len2_en"], d["len2_off"], d["len2_adj"]) == (1, 42, 42)
    assert (d["ipcsum_en"], d["ipcsum_off"], d["udpcsum_en"], d["udpcsum_off"]) == (1, 28, 1, 44)
    t = c.streams[0].template
    assert t[34:38] == bytes(4) and t[38:40] == bytes(2)           # dst ip, src port under masks

    def words(b):
        return sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))

    assert d["ipcsum_base"] == _fold(words(t[18:38]))
    assert d["udpcsum_base"] == _fold(words(t[30:38]) + 17 + words(t[38:46]))
    m0, m1 = c.modifiers[:2]
    assert m0 == {"mode": 1, "stream": 0, "chain": 0, "offset": 38, "mask": 0xFFFF0000, "base": 0xC020 << 16,
                  "step": 1 << 16, "count": 10, "csum": sd.CSUM_UDP}
    assert m1 == {"mode": 1, "stream": 0, "chain": 0, "offset": 34, "mask": 0xFFFFFFFF,
                  "base": int(stream.dst_ip), "step": 1, "count": 5, "csum": sd.CSUM_IPV4 | sd.CSUM_UDP}
    assert all(m["mode"] == 0 for m in c.modifiers[2:]) and len(c.modifiers) == sd.N_MODIFIERS
    assert c.descriptors()[1:] == [0] * 15
    assert sd.unpack_descriptor(c.descriptors()[0]) == d


def test_modifier_placement():
    s = StreamSpec(ip_version=6, vlan=3, modifiers=[
        ModifierSpec(field=f, count=3) for f in ("src_mac", "dst_mac", "vlan", "src_ip", "dst_ip",
                                                   "src_port", "dst_port")], size=128)
    units = PortProgram(streams=[s]).compile().modifiers
    got = [(u["offset"], u["mask"], u["csum"]) for u in units[:7]]
    assert got == [(8, 0xFFFFFFFF, 0), (2, 0xFFFFFFFF, 0), (14, 0x0FFF0000, 0), (38, 0xFFFFFFFF, 2),
                   (54, 0xFFFFFFFF, 2), (58, 0xFFFF0000, 2), (60, 0xFFFF0000, 2)]
    assert units[2]["base"] == 3 << 16


def test_size_table_regions():
    streams = [StreamSpec(size="imix:aaaaaaag"), StreamSpec(size=128), StreamSpec(size="imix:64:7,576:4,1518:1")]
    c = PortProgram(streams=streams).compile()
    d0, d2 = c.streams[0].descriptor, c.streams[2].descriptor
    assert (d0["size_table_base"], d0["size_table_len"]) == (0, 8)
    assert (d2["size_table_base"], d2["size_table_len"]) == (8, 12)
    assert [c.size_table[i] for i in range(20)] == [64] * 7 + [1518] + list(streams[2].size.sequence)


# Rates and periods ----------------------------------------------------------------------------------------------


def test_periods():
    c = PortProgram(streams=[StreamSpec(size=64)]).compile()        # 100 % by default
    assert c.streams[0].descriptor["period"] == 84 << 32
    c = PortProgram(streams=[StreamSpec(size=1518)], rate_pct=50).compile()
    assert c.streams[0].descriptor["period"] == 2 * 1538 << 32
    c = PortProgram(streams=[StreamSpec(size=64, weight=3), StreamSpec(size=64)], rate_fps=1000).compile()
    assert [s.descriptor["period"] for s in c.streams] == [-(-125_000_000 * 2**32 * 4 // 3000),
                                                           125_000 * 4 << 32]
    assert c.total_fps == pytest.approx(1000)
    # 100 % of a mix: the frame-weighted mean size sets the line rate
    c = PortProgram(streams=[StreamSpec(size=64, fraction=0.5), StreamSpec(size=1518)]).compile()
    mean = (64 + 1518) / 2
    assert c.total_fps == pytest.approx(1e9 / 8 / (mean + 20), rel=1e-9)
    assert c.line_fraction == pytest.approx(1.0, rel=1e-9)
    assert c.streams[0].fps == pytest.approx(c.streams[1].fps)
    # an IMIX stream at 100 %
    c = PortProgram(streams=[StreamSpec(size="imix:64:7,576:4,1518:1")]).compile()
    assert c.total_fps == pytest.approx(1e9 / 8 / ((7 * 64 + 4 * 576 + 1518) / 12 + 20), rel=1e-9)
    # fractions that leave part of the rate unused
    c = PortProgram(streams=[StreamSpec(fraction=0.25)], rate_fps=1000).compile()
    assert c.total_fps == pytest.approx(250)


@pytest.mark.parametrize("kwargs, message", [
    ({"streams": [StreamSpec(size=64)], "rate_fps": 1_500_000},
     "port 0: the streams need 1008.0 Mb/s on the wire (100.80 % of line rate) at their mean frame sizes: "
     "lower the rate"),
    ({"streams": [StreamSpec(size=64), StreamSpec(size=1518)], "rate_fps": 155_000},
     "port 0: the streams need 1005.6 Mb/s on the wire (100.56 % of line rate) at their mean frame sizes: "
     "lower the rate"),
    ({"streams": [StreamSpec(fraction=0.7), StreamSpec(fraction=0.4)]},
     "port 0: the streams' fractions add up to 1.1, more than 1"),
    ({"streams": [StreamSpec(fraction=1), StreamSpec(name="rest")]},
     "port 0: the fractions take all of the rate, nothing is left for stream 1 (rest)"),
    ({"streams": [StreamSpec(), StreamSpec(name="v6", ip_version=6)]},
     "port 0 stream 1 (v6): frames of 64 bytes are shorter than its minimum of 82 (62 header bytes, "
     "16-byte signature, FCS)"),
    ({"streams": [StreamSpec(stream_id=5), StreamSpec(stream_id=5)]},
     "port 0: stream ids [5, 5] are not all different"),
    ({"streams": [StreamSpec()] * 17}, "streams: Tuple should have at most 16 items after validation, not 17"),
    ({"streams": [StreamSpec(modifiers=[ModifierSpec(field="src_ip", count=2)] + [
        ModifierSpec(field=f, count=2) for f in ("dst_ip", "src_port", "dst_port", "src_mac")])] * 2},
     "port 0: the streams have 10 modifiers, the generator has 8 modifier units per port"),
    ({"streams": [StreamSpec(size="seq:" + ",".join(["64"] * 1000)), StreamSpec(size="imix:" + "a" * 30)]},
     "port 0: the size sequences have 1030 entries in all, the size table holds 1024 (stream 1 does not fit)"),
    ({"streams": [StreamSpec()], "rate_fps": 1, "rate_pct": 1},
     "give the port's rate as rate_fps or rate_pct, not both"),
])
def test_program_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        PortProgram(**kwargs)
    assert error_text(info.value) == message


# The golden model against the contract ------------------------------------------------------------------------


def test_golden_order_several_periods():
    streams = [StreamSpec(size=64, weight=1), StreamSpec(size=128, weight=3), StreamSpec(size=256, weight=3),
               StreamSpec(size=512, weight=0.7)]
    c = PortProgram(streams=streams, rate_fps=100_000).compile()
    periods = [s.descriptor["period"] for s in c.streams]
    assert periods[1] == periods[2] and len(set(periods)) == 3
    frames = list(expected_frames(c, count=300))
    due = sorted((k * p, s, k) for s, p in enumerate(periods) for k in range(300))[:300]
    assert [(f.due, f.stream, f.seq) for f in frames] == due
    assert [f.length for f in frames[:4]] == [64, 128, 256, 512]          # all due at 0: lower stream first
    # duration mode: frames due strictly before the end
    end = 5 * periods[0] >> 32
    dur = list(expected_frames(c, duration_cycles=end))
    assert dur and all(f.due < end << 32 for f in dur)
    assert len(dur) == sum(len(range(0, end << 32, p)) for p in periods)
    assert [f.stream_id for f in frames[:4]] == [0, 1, 2, 3]


with warnings.catch_warnings():      # addresses walked out of the benchmarking range on purpose
    warnings.simplefilter("ignore", BenchmarkRangeWarning)
    GOLDEN_CASES = [
        ("ipv4", [StreamSpec(size="64-80", modifiers=[ModifierSpec(field="src_ip", count=7),
                                                      ModifierSpec(field="dst_port", count=3, step=5, chain=True)])]),
        ("ipv4-udp-vlan", [StreamSpec(vlan=10, pcp=3, udp_checksum=True, size="rand:66-200", dscp=12,
                                      modifiers=[ModifierSpec(field="dst_ip", mode="random", count=1000, step=4),
                                                 ModifierSpec(field="src_port", mode="decrement", count=9, chain=True),
                                                 ModifierSpec(field="vlan", mode="random", count=5, step=256),
                                                 ModifierSpec(field="src_mac", count=300, step=0x10001)])]),
        ("ipv6", [StreamSpec(ip_version=6, size="seq:82,83,100,101,1517,1518", src_port=0xFFFF,
                             modifiers=[ModifierSpec(field="src_ip", mode="decrement", count=4, step=2**31),
                                        ModifierSpec(field="dst_ip", mode="random", count=2**32 - 1),
                                        ModifierSpec(field="src_port", count=3, chain=True)])]),
        ("mixed", [StreamSpec(vlan=1, ip_version=6, size="rand:86-99", weight=2,
                              modifiers=[ModifierSpec(field="dst_port", mode="random", count=65536),
                                         ModifierSpec(field="dst_mac", mode="decrement", count=5, chain=True)]),
                   StreamSpec(udp_checksum=True, size="65-71/2", dst_port=0,
                              modifiers=[ModifierSpec(field="src_ip", count=3), ModifierSpec(field="dst_ip", count=2,
                                                                                           chain=True)]),
                   StreamSpec(size="imix:64:3,65:2,9018:1", udp_checksum=True),
                   StreamSpec(vlan=4000, udp_checksum=True, size="rand:66-9018", weight=0.5,
                              modifiers=[ModifierSpec(field="vlan", count=200, step=7),
                                         ModifierSpec(field="src_port", mode="random", count=100, chain=True)])]),
    ]


@pytest.mark.parametrize("name, streams", GOLDEN_CASES)
def test_golden_matches_contract(name, streams):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BenchmarkRangeWarning)
        program = PortProgram(streams=streams, rate_pct=90, seed=0xC0FFEE)
    frames = check_against_golden(program, 400)
    assert any(f.length % 2 for f in frames) and any(f.length % 2 == 0 for f in frames)


@pytest.mark.filterwarnings("ignore::wirespeed.traffic.BenchmarkRangeWarning")
def test_random_values_against_contract():
    rnd = random.Random(1)
    for _ in range(12):
        streams = []
        for _ in range(rnd.randint(1, 3)):
            v6, vlan = rnd.random() < 0.5, rnd.random() < 0.5
            fields = rnd.sample(["src_mac", "dst_mac", "src_ip", "dst_ip", "src_port", "dst_port"]
                                + (["vlan"] if vlan else []), 2)
            mods = []
            for i, fld in enumerate(fields):
                mode = rnd.choice(["increment", "decrement", "random"])
                bits = 12 if fld == "vlan" else 16 if fld.endswith("port") else 32
                step = 1 << rnd.randrange(bits) if mode == "random" else rnd.randrange(1, 1 << bits)
                mods.append(ModifierSpec(field=fld, mode=mode, count=rnd.randint(1, 50), step=step,
                                         chain=i > 0 and rnd.random() < 0.5))
            low = 86 if v6 and vlan else 82 if v6 else 66 if vlan else 64
            streams.append(StreamSpec(ip_version=6 if v6 else 4, vlan=rnd.randrange(4096) if vlan else None,
                                      udp_checksum=rnd.random() < 0.5, size=f"rand:{low}-{low + 300}",
                                      src_port=rnd.randrange(65536), dst_port=rnd.randrange(65536),
                                      weight=rnd.uniform(0.5, 2), modifiers=mods))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BenchmarkRangeWarning)
            program = PortProgram(streams=streams, rate_pct=rnd.uniform(1, 100), seed=rnd.randrange(2**32))
        check_against_golden(program, 60)


def test_two_thousand_pairs():
    stream = StreamSpec(size=64, modifiers=[ModifierSpec(field="src_ip", count=100),
                                            ModifierSpec(field="dst_ip", count=20, chain=True)])
    program = PortProgram(streams=[stream])
    frames = list(expected_frames(program, count=4000))
    pairs = [(str(f.fields["src_ip"]), str(f.fields["dst_ip"])) for f in frames]
    assert len(set(pairs[:2000])) == 2000 and pairs[2000:] == pairs[:2000]
    assert pairs[0] == ("198.18.0.1", "198.19.0.1") and pairs[99] == ("198.18.0.100", "198.19.0.1")
    assert pairs[100] == ("198.18.0.1", "198.19.0.2") and pairs[1999] == ("198.18.0.100", "198.19.0.20")
    contract = contract_frames(program.compile(), 2000)
    for f, (_, _, frame) in zip(frames[::97], contract[::97]):
        assert f.build(1000 * f.index + 7) == frame


def test_dissect_detects_bad_checksums():
    for kwargs in ({"udp_checksum": True}, {"ip_version": 6, "vlan": 3, "size": 100}):
        frame = bytearray(next(expected_frames(PortProgram(streams=[StreamSpec(**kwargs)]), count=1)).build(5))
        pkt, ok = dissect(bytes(frame))
        assert ok and pkt.haslayer("UDP")
        frame[-3] ^= 0x40                       # payload (signature) change: UDP checksum wrong
        assert not dissect(bytes(frame))[1]
    frame = bytearray(next(expected_frames(PortProgram(streams=[StreamSpec()]), count=1)).build(5))
    frame[-3] ^= 0x40
    assert dissect(bytes(frame))[1]             # UDP checksum 0: not checked
    frame[22] ^= 1                              # TTL: IPv4 header checksum wrong
    assert not dissect(bytes(frame))[1]


# Loading a port ---------------------------------------------------------------------------------------------------


class MemoryTransport:
    url = "memory://"

    def __init__(self):
        self.words, self.transactions = {}, 0

    def transact(self, writes=(), reads=()):
        self.transactions += 1
        for addr, word in writes:
            self.words[addr] = word
        return [self.words.get(a, 0) for a in reads]


def _regmap(ports=2):
    regs, at = [], 0

    def add(name, width, depth=1):
        nonlocal at
        reg = Register(name, at, width, "rw", depth=depth)
        regs.append(reg)
        at += 4 * reg.words * depth

    for p in range(ports):
        add(f"p{p}.gen.tmpl", 8, sd.N_STREAMS * sd.TEMPLATE_BYTES)
        add(f"p{p}.gen.desc", sd.DESC_BITS, sd.N_STREAMS)
        add(f"p{p}.gen.sizes", 14, sd.SIZE_TABLE)
        add(f"p{p}.gen.seed", 32)
        for j in range(sd.N_MODIFIERS):
            for name, bits, _ in sd.MOD_FIELDS:
                add(f"p{p}.mod{j}.{name}", bits)
    return RegisterMap("test", "0", 125_000_000, ports, regs)


def test_write_port_program():
    transport = MemoryTransport()
    device = Device(transport, _regmap())
    streams = [StreamSpec(size="imix:aaaaaaag", modifiers=[ModifierSpec(field="src_ip", count=100)]),
               StreamSpec(vlan=5, size="seq:100,200", udp_checksum=True,
                          modifiers=[ModifierSpec(field="vlan", count=4), ModifierSpec(field="dst_port", count=9,
                                                                                     chain=True)])]
    compiled = PortProgram(port=1, streams=streams, seed=1234).compile()
    # stale state from an earlier program on the same port
    device.write_memory("p1.gen.desc", {9: 12345})
    device.write_many({"p1.mod5.mode": 3})
    transport.transactions = 0
    write_port_program(device, 1, compiled)
    assert transport.transactions <= 6
    tmpl = device.read_memory("p1.gen.tmpl")
    for s in compiled.streams:
        assert bytes(tmpl[s.index * 128:s.index * 128 + len(s.template)]) == s.template
    desc = device.read_memory("p1.gen.desc")
    assert desc == compiled.descriptors() and desc[9] == 0
    assert [sd.unpack_descriptor(v)["enable"] for v in desc] == [1, 1] + [0] * 14
    assert device.read_memory("p1.gen.sizes")[:10] == [64] * 7 + [1518, 100, 200]
    assert device.read("p1.gen.seed") == 1234
    for j in range(sd.N_MODIFIERS):
        got = device.read_many([f"p1.mod{j}.{n}" for n, _, _ in sd.MOD_FIELDS])
        assert {k.split(".")[-1]: v for k, v in got.items()} == compiled.modifiers[j]
    assert device.read("p1.mod5.mode") == 0 and device.read("p1.mod2.chain") == 1
    assert all(v == 0 for v in device.read_memory("p0.gen.desc"))       # port 0 untouched
    with pytest.raises(ValueError, match="port must be 0..1, not 2"):
        write_port_program(device, 2, compiled)
