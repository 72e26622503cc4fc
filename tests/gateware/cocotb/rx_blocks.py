"""cocotb tests of the receive path (wrappers.RxTop): LiteEth MAC receiver, analyzer,
per-stream statistics, capture and ARP/ND responder, with cocotbext-eth's GmiiSource (and
GmiiSink for the responder's replies) as the independent wire peer. Counters are compared
with Python golden models of docs/analyzer.md and docs/capture.md. Run from
tests/gateware/test_cocotb_blocks.py."""

import random
import socket

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.eth import GmiiFrame, GmiiSink, GmiiSource
from csr import Csr, pulse, start
from scapy.layers.inet6 import (
    ICMPv6ND_NA,
    ICMPv6ND_NS,
    ICMPv6NDOptDstLLAddr,
    ICMPv6NDOptSrcLLAddr,
    IPv6,
    in6_getnsma,
    in6_getnsmac,
)
from scapy.layers.l2 import ARP, Ether
from scapy.utils6 import inet_pton
from wrappers import ANA_COUNTERS, register_map

from wirespeed.gateware import frame as F
from wirespeed.gateware.capture import STATE_DONE, TRIGGER_ANY, TRIGGER_FCS, TRIGGER_NOT_TEST, capture_model
from wirespeed.gateware.port import RX_PIPELINE_NS
from wirespeed.gateware.stream_stats import ENTRY_WORDS, STATS_FIELDS, empty_entry, unpack_entry
from wirespeed.traffic import PortProgram, StreamSpec, expected_frames

RMAP = register_map("rx")
INPUTS = ("clear", "snapshot", "gmii_rx_dv", "gmii_rx_er", "gmii_rxd")
M32, WINDOW = (1 << 32) - 1, 32
CFG = dict(dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001, dst_ip=0xC6130001)


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.csr = Csr(dut, RMAP)
        self.rx_ts = []          # `now` at the first byte of every frame out of the MAC
        self.sfd_ts = []         # `now` at the first byte after the SFD on GMII RX

    async def setup(self):
        await start(self.dut, INPUTS)
        d = self.dut
        self.src = GmiiSource(d.gmii_rxd, d.gmii_rx_er, d.gmii_rx_dv, d.clk, d.rst)
        self.sink = GmiiSink(d.gmii_txd, d.gmii_tx_er, d.gmii_tx_en, d.clk, d.rst)
        cocotb.start_soon(self._mac_monitor())
        await self.clear()

    async def _mac_monitor(self):
        """`now` at the first byte of each frame the MAC delivers (what the analyzer's edge
        samples), and at the first byte after the SFD of each frame on GMII RX."""
        d, state = self.dut, "idle"
        while True:
            await RisingEdge(d.clk)
            await ReadOnly()
            now = int(d.now.value)
            if int(d.mac_valid.value) and int(d.mac_first.value):
                self.rx_ts.append(now)
            if int(d.gmii_rx_dv.value):
                if state == "idle":
                    state = "preamble"
                elif state == "sfd":
                    self.sfd_ts.append(now)
                    state = "data"
                if state == "preamble" and int(d.gmii_rxd.value) == 0xD5:
                    state = "sfd"
            else:
                state = "idle"

    async def clear(self):
        await pulse(self.dut, "clear")
        await ClockCycles(self.dut.clk, 16 * ENTRY_WORDS + 40)      # the statistics' clear sweep
        self.rx_ts.clear()

    async def send(self, frames):
        """frames: (bytes without FCS, bad_fcs). Sends them back to back (12-byte gaps) and
        waits until the receive pipeline is empty. Returns the GmiiFrames sent."""
        sent = []
        for data, bad in frames:
            g = GmiiFrame.from_payload(data)
            if bad:
                g.data[-1] ^= 0x5A
            await self.src.send(g)
            sent.append(g)
        await self.src.wait()
        await ClockCycles(self.dut.clk, 100)
        return sent

    async def port_counters(self):
        return {name: await self.csr.read(f"ana.{name}") for name, _ in ANA_COUNTERS}

    async def stream_entries(self, indices=range(16)):
        await pulse(self.dut, "snapshot")
        await ClockCycles(self.dut.clk, 16 * ENTRY_WORDS + 40)      # the snapshot sweep
        entries = {i: unpack_entry(await self.csr.read_entry("ana.streams", i)) for i in indices}
        return entries, await self.csr.read("ana.foreign_frames"), await self.csr.read("ana.stats_seq_errors")


def test_frame(length, sid, seq, ts, **over):
    return F.build_frame(frame_len=length, seq=seq, ts=ts, stream_id=sid, **(CFG | over))


class Golden:
    """Analyzer port counters and per-stream entries (docs/analyzer.md), fed the frames the
    MAC delivered: (data without FCS, bad FCS, rx_ts)."""

    def __init__(self, group=0, lat_def=0):
        self.group, self.lat_def = group, lat_def
        self.port = {name: 0 for name, _ in ANA_COUNTERS} | {"lat_min": M32}
        self.prev_lat = None
        self.entries, self.history = {}, {}
        self.foreign = self.stats_seq_errors = 0

    def latency(self, rx, ts, length):
        raw = (rx - ts) & M32
        if self.lat_def:
            serial = 8 * length
            return raw - serial if raw >= serial else 0
        return raw

    def frame(self, data, bad, rx):
        p = self.port
        sig = F.parse_signature(data)
        length = len(data) + F.FCS
        if bad:
            p["fcs_errors"] += 1
        elif sig is None:
            p["other_frames"] += 1
        if sig is None:
            return
        sid, seq, ts = sig
        lat = self.latency(rx, ts, length)
        if not bad:
            p["rx_frames"] += 1
            p["rx_bytes"] += length
            p["lat_sum"] += lat
            p["lat_sq_sum"] += lat * lat
            p["lat_min"], p["lat_max"] = min(p["lat_min"], lat), max(p["lat_max"], lat)
            if p["rx_frames"] == 1:
                p["first_rx_ns"] = rx
            p["last_rx_ns"] = rx
            if self.prev_lat is not None:
                p["jitter_sum"] += abs(lat - self.prev_lat)
            self.prev_lat = lat
        if sid >> 4 != self.group:
            self.foreign += 1
            return
        e = self.entries.setdefault(sid & 15, empty_entry())
        if bad:
            e["fcs_errors"] += 1
            return
        hist = self.history.get(sid & 15, (1 << WINDOW) - 1)   # bit i: number next_seq - 1 - i received
        diff = (seq - e["next_seq"]) & M32
        diff = diff - (1 << 32) if diff >> 31 else diff
        self.stats_seq_errors += diff != 0
        if diff >= 0:
            e["in_order"] += diff == 0
            e["lost"] += diff
            hist = ((hist << (diff + 1)) | 1) & ((1 << WINDOW) - 1) if diff + 1 < WINDOW else 1
            e["next_seq"] = (seq + 1) & M32
        elif diff >= -WINDOW:
            bit = 1 << (-diff - 1)
            if hist & bit:
                e["duplicate"] += 1
            else:
                e["out_of_order"] += 1
                e["lost"] -= 1
                hist |= bit
        else:
            e["late"] += 1
        self.history[sid & 15] = hist
        if e["rx_frames"]:
            e["jitter_sum"] += abs(lat - e["last_lat"])
        else:
            e["first_rx_ns"] = rx
        e["rx_frames"] += 1
        e["rx_bytes"] += length
        e["last_rx_ns"] = rx
        e["lat_min"], e["lat_max"] = min(e["lat_min"], lat), max(e["lat_max"], lat)
        e["lat_sum"] += lat
        e["lat_sq_sum"] += lat * lat
        e["last_lat"] = lat


async def run_and_check(b, frames, golden):
    """Send frames (data, bad_fcs), then compare port counters, every stream entry,
    foreign_frames and the statistics' sequence errors with the golden model."""
    b.rx_ts.clear()
    await b.send(frames)
    assert len(b.rx_ts) == len(frames), (len(b.rx_ts), len(frames))
    for (data, bad), rx in zip(frames, b.rx_ts):
        golden.frame(data, bad, rx)
    got = await b.port_counters()
    assert got == golden.port, "\n".join(f"{k}: {got[k]} != {golden.port[k]}" for k in got if got[k] != golden.port[k])
    entries, foreign, seq_errors = await b.stream_entries()
    for i in range(16):
        want = golden.entries.get(i, empty_entry())
        diffs = [f"{k}: {entries[i][k]} != {want[k]}" for k, _ in STATS_FIELDS if entries[i][k] != want[k]]
        assert not diffs, f"stream entry {i}: " + ", ".join(diffs)
    assert foreign == golden.foreign, (foreign, golden.foreign)
    assert seq_errors == golden.stats_seq_errors, (seq_errors, golden.stats_seq_errors)
    return got, entries


@cocotb.test()
async def rx_odd_sizes_and_back_to_back(dut):
    """Every size 64..127 (odd ones included) of streams 0..3 from the generator's golden
    model (scapy, UDP checksums on), then 100 back-to-back minimum frames: every frame counted
    with its bytes, latency from chosen timestamps, and the RX pipeline delay (GMII SFD to
    the analyzer's timestamp) constant."""
    b = Bench(dut)
    await b.setup()
    golden = Golden()
    rng = random.Random(1)
    program = PortProgram(streams=tuple(StreamSpec(size="64-127", udp_checksum=bool(i & 1), stream_id=i)
                                        for i in range(4)), rate_pct=100)
    want = list(expected_frames(program.compile(), count=256))
    frames = [(e.build(ts=rng.randrange(1 << 20)), False) for e in want]
    frames += [(test_frame(64, 5, k, rng.randrange(1 << 20)), False) for k in range(100)]
    b.sfd_ts.clear()
    await b.send(frames)
    assert len(b.rx_ts) == len(frames) == len(b.sfd_ts)
    for (data, bad), rx in zip(frames, b.rx_ts):
        golden.frame(data, bad, rx)
    got = await b.port_counters()
    assert got == golden.port, (got, golden.port)
    assert got["rx_frames"] == 356
    entries, foreign, _ = await b.stream_entries()
    for i in (0, 1, 2, 3, 5):
        assert entries[i] == golden.entries[i], (i, entries[i], golden.entries[i])
    assert entries[5]["rx_frames"] == entries[5]["in_order"] == 100 and entries[5]["lost"] == 0
    assert entries[0]["rx_bytes"] == sum(range(64, 128))
    assert foreign == 0
    # the receive pipeline delay is fixed: the MAC's first byte a constant time after the SFD
    delays = {rx - sfd for sfd, rx in zip(b.sfd_ts, b.rx_ts)}
    dut._log.info("GMII RX first byte after the SFD to the analyzer's timestamp: %s ns", delays)
    assert delays == {RX_PIPELINE_NS}, f"{sorted(delays)}, documented {RX_PIPELINE_NS}"


@cocotb.test()
async def rx_sequence_errors_and_latency(dut):
    """Streams 0..2 with loss, duplicates, reordering inside and outside the 32-frame window,
    and a stream across the 2**32 sequence wrap; latencies with timestamps ahead of `now`
    (wrapping modulo 2**32) too: everything against the golden model."""
    b = Bench(dut)
    await b.setup()
    golden = Golden()
    rng = random.Random(2)
    plan = {
        # loss, duplicates, reordering, late; 80/81/69 inside the 32-number window only far
        # back (101 - 32 = 69 is its oldest number), 68 just outside it
        0: [0, 1, 2, 4, 5, 5, 3, 9, 8, 7, 6, 10, 50, 11, 49, 12, 100, 100, 60, 80, 81, 80, 69, 68, 69, 101],
        1: [0, 1, 2, 3, 4, 5, 6, 7],                                             # clean
        2: [M32 - 2, M32 - 1, M32, 0, 1, 3, 2],                                 # across the wrap
    }
    order = [(sid, s) for k in range(max(map(len, plan.values()))) for sid, seqs in plan.items()
             if k < len(seqs) for s in [seqs[k]]]
    frames = []
    for sid, seq in order:
        ts = rng.choice([rng.randrange(1 << 16), (1 << 32) - rng.randrange(1, 1 << 16), rng.randrange(1 << 48)])
        frames.append((test_frame(rng.choice([64, 65, 67, 99, 127, 128, 301]), sid, seq, ts), False))
    got, entries = await run_and_check(b, frames, golden)
    e0 = entries[0]
    dut._log.info("stream 0: %s", {k: e0[k] for k in ("in_order", "lost", "duplicate", "out_of_order", "late")})
    assert e0["duplicate"] >= 4 and e0["out_of_order"] >= 7 and e0["late"] >= 3 and e0["lost"] > 0
    assert entries[1]["lost"] == entries[1]["duplicate"] == entries[1]["out_of_order"] == 0
    # after CLEAR the counters start again
    await b.clear()
    golden = Golden()
    await run_and_check(b, frames[:10], golden)


@cocotb.test()
async def rx_fcs_foreign_and_other_frames(dut):
    """Bad-FCS frames (test and not), non-test frames (short, ARP-like, signature with a bad
    check), and test frames of another stream group (foreign), mixed with good ones, back to
    back; then the same with stream_group 1."""
    b = Bench(dut)
    await b.setup()
    rng = random.Random(3)
    for group in (0, 1):
        await b.csr.write("ana.stream_group", group)
        await b.clear()
        golden = Golden(group=group)
        frames, seqs = [], {}
        for _ in range(60):
            kind = rng.randrange(6)
            if kind < 3:
                sid = rng.choice([0, 3, 15, 16, 17, 31, 0x123])
                seq = seqs.get(sid, 0)
                seqs[sid] = seq + 1 + (rng.random() < 0.2)
                data = test_frame(rng.choice([64, 65, 127, 200, 1518]), sid, seq, rng.randrange(1 << 32))
                frames.append((data, rng.random() < 0.25))
            elif kind == 3:
                frames.append((bytes(rng.randrange(256) for _ in range(rng.choice([60, 61, 63, 100]))),
                               rng.random() < 0.3))
            elif kind == 4:
                frames.append((b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(46), False))
            else:
                bad_check = bytearray(test_frame(64, 1, 0, 5))
                bad_check[-1] ^= 1                      # signature check wrong: not a test frame
                frames.append((bytes(bad_check), False))
        got, _ = await run_and_check(b, frames, golden)
        assert got["fcs_errors"] > 0 and got["other_frames"] > 0 and golden.foreign > 0
        assert int(dut.crc_errors.value) >= got["fcs_errors"]


@cocotb.test()
async def rx_store_and_forward_latency(dut):
    """lat_def 1 (RFC 1242 last bit in to first bit out): latency - 8 ns per byte, 0 when
    negative."""
    b = Bench(dut)
    await b.setup()
    await b.csr.write("ana.lat_def", 1)
    await b.clear()
    golden = Golden(lat_def=1)
    await run_and_check(b, [(test_frame(size, 2, k, 0), False) for k, size in enumerate((64, 65, 127, 1518))], golden)
    now = b.rx_ts[-1]
    frames = [(test_frame(size, 2, 4 + k, now - lat), False)
              for k, (size, lat) in enumerate([(64, 100), (64, 10_000), (1518, 5_000), (1518, 20_000), (127, 0)])]
    got, entries = await run_and_check(b, frames, golden)
    assert got["lat_min"] == 0, "store and forward latency below the frame's serialization time reads 0"
    assert entries[2]["rx_frames"] == 9


# --- capture ----------------------------------------------------------------------------------


@cocotb.test()
async def capture_returns_frames_and_timestamps(dut):
    """Capture with each trigger: the frames sent by the wire peer come back (index entries:
    receive timestamp, wire and stored length, bad-FCS flag, offset; data words), odd sizes,
    back to back, snaplen and count limits."""
    b = Bench(dut)
    await b.setup()
    rng = random.Random(4)
    frames = []
    for k in range(24):
        if rng.random() < 0.6:
            frames.append((test_frame(rng.choice([64, 65, 66, 67, 99, 127, 200]), 1, k, rng.randrange(1 << 40)),
                           rng.random() < 0.2))
        else:
            frames.append((bytes(rng.randrange(256) for _ in range(rng.choice([60, 61, 62, 63, 75]))),
                           rng.random() < 0.2))
    for trigger, snaplen, count in ((TRIGGER_ANY, 128, 32), (TRIGGER_FCS, 64, 5), (TRIGGER_NOT_TEST, 17, 32),
                                    (TRIGGER_ANY, 1024, 32)):
        for name, value in (("trigger", trigger), ("snaplen", snaplen), ("count", count)):
            await b.csr.write(f"p0.cap.{name}", value)
        await b.csr.write("p0.cap.arm", 1)
        b.rx_ts.clear()
        await b.send(frames)
        want, words, used = capture_model([(data, bad, ts) for (data, bad), ts in zip(frames, b.rx_ts)],
                                          trigger, snaplen, count, 1024)
        n = await b.csr.read("p0.cap.frames")
        state = await b.csr.read("p0.cap.state")
        assert n == len(want), (trigger, n, len(want))
        assert state == STATE_DONE or n < count
        for i, exp in enumerate(want):
            v = await b.csr.read_entry("p0.cap.index", i)
            got = (v & (2**64 - 1), (v >> 64) & 0xFFFF, (v >> 80) & 0xFFFF, (v >> 96) & 1, (v >> 112) & 0xFFFF)
            assert got == exp, (trigger, i, got, exp)
        for addr in range(used):
            got = await b.csr.read_entry("p0.cap.data", addr)
            assert got == words[addr], (trigger, addr, hex(got), hex(words[addr]))
        dut._log.info("trigger %d snaplen %d count %d: %d frames, %d words", trigger, snaplen, count, n, used)


# --- responder --------------------------------------------------------------------------------

MAC, IP4, IP6 = "02:00:00:00:00:01", "198.18.0.1", "2001:2::1"
PEER_MAC, PEER_IP4, PEER_IP6 = "02:aa:bb:cc:dd:ee", "198.18.0.254", "2001:2::fe"


def _int(text, family=None):
    if family is None:
        return int(text.replace(":", ""), 16)
    return int.from_bytes(inet_pton(family, text), "big")


async def responder_setup(dut):
    b = Bench(dut)
    await b.setup()
    await b.csr.write("p0.arp.mac", _int(MAC))
    await b.csr.write("p0.arp.ipv4", _int(IP4, socket.AF_INET))
    await b.csr.write("p0.arp.ipv6", _int(IP6, socket.AF_INET6))
    await b.csr.write("p0.arp.enable", 3)
    return b


async def replies(b, cycles=3000):
    await ClockCycles(b.dut.clk, cycles)
    out = []
    while not b.sink.empty():
        fr = b.sink.recv_nowait()
        assert fr.check_fcs(), "reply with a bad FCS"
        out.append(bytes(fr.get_payload()))
    return out


@cocotb.test()
async def responder_arp(dut):
    """ARP requests for the port's address get an RFC 826 reply (checked with scapy); requests
    for other addresses, replies and gratuitous requests from others get none."""
    b = await responder_setup(dut)

    def req(target, op=1, **kw):
        arp = ARP(op=op, hwsrc=PEER_MAC, psrc=PEER_IP4, pdst=target, **kw)
        return bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC) / arp).ljust(60, b"\0")

    await b.send([(req("198.18.0.99"), False), (req(IP4, op=2), False), (req(IP4), True)])
    assert await replies(b) == [], "answered a request for another address, a reply or a bad-FCS frame"
    await b.send([(req(IP4), False)])
    got = await replies(b)
    assert len(got) == 1
    pkt = Ether(got[0])
    assert len(got[0]) == 60 and pkt.dst == PEER_MAC and pkt.src == MAC and pkt.type == 0x0806
    a = pkt[ARP]
    assert (a.hwtype, a.ptype, a.hwlen, a.plen, a.op) == (1, 0x0800, 6, 4, 2)
    assert (a.hwsrc, a.psrc, a.hwdst, a.pdst) == (MAC, IP4, PEER_MAC, PEER_IP4)
    counts = {n: await b.csr.read(f"p0.arp.{n}") for n in ("arp_requests", "arp_replies", "ns_received", "na_sent")}
    assert counts == {"arp_requests": 1, "arp_replies": 1, "ns_received": 0, "na_sent": 0}, counts


def ns_frame(target, src=PEER_IP6, hlim=255, corrupt=False):
    snm = socket.inet_ntop(socket.AF_INET6, in6_getnsma(inet_pton(socket.AF_INET6, target)))
    pkt = (Ether(dst=in6_getnsmac(inet_pton(socket.AF_INET6, snm)), src=PEER_MAC)
           / IPv6(src=src, dst=snm, hlim=hlim) / ICMPv6ND_NS(tgt=target) / ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC))
    data = bytearray(bytes(pkt).ljust(60, b"\0"))
    if corrupt:
        data[14 + 40 + 2] ^= 0x01          # ICMPv6 checksum
    return bytes(data)


@cocotb.test()
async def responder_neighbour_solicitation(dut):
    """A neighbour solicitation for the port's IPv6 address gets a solicited advertisement
    (S and O, target link-layer address option, ICMPv6 checksum recomputed by scapy); one
    from :: (DAD) gets an advertisement to ff02::1 with S clear; solicitations for another
    target, with a bad checksum or a hop limit other than 255 get none."""
    b = await responder_setup(dut)
    await b.send([(ns_frame("2001:2::99"), False), (ns_frame(IP6, corrupt=True), False),
                  (ns_frame(IP6, hlim=64), False), (ns_frame(IP6), True)])
    assert await replies(b) == [], "answered an invalid solicitation or one for another target"
    for src, dst_ip, dst_mac, s_flag in ((PEER_IP6, PEER_IP6, PEER_MAC, 1), ("::", "ff02::1", "33:33:00:00:00:01", 0)):
        await b.send([(ns_frame(IP6, src=src), False)])
        got = await replies(b)
        assert len(got) == 1, len(got)
        pkt = Ether(got[0])
        assert pkt.dst == dst_mac and pkt.src == MAC and pkt[IPv6].src == IP6 and pkt[IPv6].dst == dst_ip
        assert pkt[IPv6].hlim == 255 and pkt[IPv6].nh == 58
        na = pkt[ICMPv6ND_NA]
        assert (na.R, na.S, na.O, na.tgt) == (0, s_flag, 1, IP6)
        assert pkt[ICMPv6NDOptDstLLAddr].lladdr == MAC
        ck = na.cksum
        del na.cksum
        assert Ether(bytes(pkt))[ICMPv6ND_NA].cksum == ck, "ICMPv6 checksum"
    counts = {n: await b.csr.read(f"p0.arp.{n}") for n in ("arp_requests", "arp_replies", "ns_received", "na_sent")}
    assert counts == {"arp_requests": 0, "arp_replies": 0, "ns_received": 2, "na_sent": 2}, counts
