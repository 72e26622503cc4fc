"""cocotb tests of the traffic generator (wrappers.GenTop): programmed through its register
bank with wirespeed.host.program.port_program_writes, frames checked at the GMII pins with
cocotbext-eth's GmiiSink as the independent wire peer (preamble, FCS, gap), byte for byte
against the scapy golden model wirespeed.traffic.expected_frames, IPv4 header and UDP
checksums recomputed here with scapy. Run from tests/gateware/test_cocotb_blocks.py."""

import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time, get_time_from_sim_steps
from cocotbext.eth import GmiiSink
from csr import CLK_NS, Csr, pulse, start
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from wrappers import register_map

from wirespeed.gateware import frame as F
from wirespeed.gateware.port import TX_PIPELINE_NS
from wirespeed.host.program import port_program_writes
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec, expected_frames

RMAP = register_map("gen")
INPUTS = ("start", "stop", "clear", "snapshot", "tap", "tap_ready", "gmii_rx_dv", "gmii_rx_er", "gmii_rxd")


def scapy_checksums_ok(frame: bytes, udp_checksum: bool):
    """IPv4 header and UDP checksums recomputed by scapy from the frame's own fields."""
    pkt = Ether(frame)
    ip_ck, udp_ck = pkt[IP].chksum, pkt[UDP].chksum
    del pkt[IP].chksum
    del pkt[UDP].chksum
    again = Ether(bytes(pkt))
    assert ip_ck == again[IP].chksum, f"IPv4 checksum {ip_ck:#06x}, scapy {again[IP].chksum:#06x}"
    if udp_checksum:
        assert udp_ck == again[UDP].chksum, f"UDP checksum {udp_ck:#06x}, scapy {again[UDP].chksum:#06x}"
    else:
        assert udp_ck == 0, "UDP checksum must be 0 (off)"
    return pkt


class Wire:
    """GMII TX monitor: the cycle each frame starts (tx_en rises), idle cycles between frames
    and the first 8 bytes (preamble and SFD) of each."""

    def __init__(self, dut):
        self.dut = dut
        self.starts, self.gaps, self.preambles = [], [], []
        self.fresh = True
        cocotb.start_soon(self._run())

    def clear(self):
        """Forget the frames so far (the next frame's gap is not counted)."""
        self.starts.clear(), self.gaps.clear(), self.preambles.clear()
        self.fresh = True

    async def _run(self):
        dut, idle, was_en, cycle = self.dut, None, 0, 0
        while True:
            await RisingEdge(dut.clk)
            en = int(dut.gmii_tx_en.value)
            if en and not was_en:
                self.starts.append(cycle)
                self.preambles.append(bytearray())
                if idle is not None and not self.fresh:
                    self.gaps.append(idle)
                self.fresh = False
            if en and len(self.preambles[-1]) < 8:
                self.preambles[-1].append(int(dut.gmii_txd.value))
            idle = 0 if en else (idle + 1 if idle is not None else None)
            was_en, cycle = en, cycle + 1


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.csr = Csr(dut, RMAP)

    async def setup(self, with_sink=True):
        await start(self.dut, INPUTS)
        # `now` during the clock cycle after the edge at t0; an edge at T samples
        # now0 + (T - t0 - 8)
        await RisingEdge(self.dut.clk)
        await ReadOnly()
        self.t0, self.now0 = get_sim_time("ns"), int(self.dut.now.value)
        await RisingEdge(self.dut.clk)
        if with_sink:
            self.sink = GmiiSink(self.dut.gmii_txd, self.dut.gmii_tx_er, self.dut.gmii_tx_en,
                                 self.dut.clk, self.dut.rst)
            self.wire = Wire(self.dut)

    async def load(self, program: PortProgram, count: int):
        """Write the program, mode 1 (``count`` frames), CLEAR and START; the golden frames."""
        compiled = program.compile()
        memories, registers = port_program_writes(0, compiled)
        for name, entries in memories.items():
            for index, value in entries.items():
                await self.csr.write_entry(name, index, value)
        for name, value in registers.items():
            await self.csr.write(name, value)
        for name, value in (("mode", 1), ("count", count), ("enable", 1)):
            await self.csr.write(f"p0.gen.{name}", value)
        await pulse(self.dut, "clear")
        await ClockCycles(self.dut.clk, 4)
        await pulse(self.dut, "start")
        return list(expected_frames(compiled, count=count))

    async def wait_idle(self):
        await RisingEdge(self.dut.clk)
        while int(self.dut.running.value):
            await RisingEdge(self.dut.clk)
        await ClockCycles(self.dut.clk, 64)

    async def counters(self):
        await pulse(self.dut, "snapshot")
        await ClockCycles(self.dut.clk, 2)
        return {n: await self.csr.read(f"p0.gen.{n}") for n in ("tx_frames", "tx_bytes")}

    async def trial(self, program, count, *, line_rate=None):
        """Run ``count`` frames of ``program`` and check them at the wire; ``line_rate``: the
        frame length whose frames must follow each other exactly length + 20 cycles apart
        (100 % of line rate, 12-byte gaps)."""
        self.wire.clear()
        want = await self.load(program, count)
        frames = [await self.sink.recv() for _ in want]
        await self.wait_idle()
        assert self.sink.empty(), "more frames than programmed"
        udp_ck = {i: s.udp_checksum for i, s in enumerate(program.streams)}
        offsets = set()
        for fr, exp in zip(frames, want):
            assert fr.check_fcs(), f"frame {exp.index}: bad FCS"
            data = bytes(fr.get_payload())
            assert len(data) == exp.length - F.FCS, (exp.index, len(data), exp.length)
            sig = F.parse_signature(data)
            assert sig is not None, f"frame {exp.index}: no valid signature"
            assert sig[:2] == (exp.stream_id, exp.seq), (exp.index, sig, exp.stream_id, exp.seq)
            assert data == exp.build(sig[2]), f"frame {exp.index} (len {exp.length}) differs from the golden model"
            scapy_checksums_ok(data, udp_ck[exp.stream])
            # the timestamp: the launch edge, TX_PIPELINE_NS before the edge that samples the
            # first byte after the SFD on the wire
            launch = sig[2] - self.now0 + self.t0 + CLK_NS
            offsets.add(get_time_from_sim_steps(fr.sim_time_sfd, "ns") - launch)
        assert offsets == {TX_PIPELINE_NS}, \
            f"transmit timestamp to wire (ns): {sorted(offsets)}, documented {TX_PIPELINE_NS}"
        w = self.wire
        assert len(w.starts) == count, (len(w.starts), count)
        assert all(p == b"\x55" * 7 + b"\xd5" for p in w.preambles), "bad preamble/SFD"
        assert not w.gaps or min(w.gaps) >= 12, f"gap below 12 bytes: {min(w.gaps)}"
        if line_rate is not None:
            spacing = {b - a for a, b in zip(w.starts, w.starts[1:])}
            assert spacing == {line_rate + F.WIRE_OVERHEAD}, (line_rate, sorted(spacing))
            assert set(w.gaps) == {12}, sorted(set(w.gaps))
        c = await self.counters()
        assert c == {"tx_frames": count, "tx_bytes": sum(e.length for e in want)}, c
        return frames, want


@cocotb.test()
async def wire_all_sizes_64_to_127_line_rate(dut):
    """Every frame size 64..127 (all the odd ones among them), UDP checksum on, at 100 %:
    frames exactly L + 20 cycles apart, each equal to the golden model."""
    b = Bench(dut)
    await b.setup()
    for size in range(64, 128):
        program = PortProgram(streams=(StreamSpec(size=str(size), udp_checksum=bool(size & 1)),), rate_pct=100)
        await b.trial(program, 3, line_rate=size)
    # and the sizes in one trial, one after the other (size increment mode)
    program = PortProgram(streams=(StreamSpec(size="64-127", udp_checksum=True),), rate_pct=100)
    await b.trial(program, 64)


@cocotb.test()
async def wire_back_to_back_64(dut):
    """64-byte frames at 100 %: frame starts exactly 84 clocks apart, 12-byte gaps."""
    b = Bench(dut)
    await b.setup()
    await b.trial(PortProgram(streams=(StreamSpec(size="64"),), rate_pct=100), 50, line_rate=64)


@cocotb.test()
async def wire_1518_and_jumbo(dut):
    b = Bench(dut)
    await b.setup()
    await b.trial(PortProgram(streams=(StreamSpec(size="1518", udp_checksum=True),), rate_pct=100), 3, line_rate=1518)
    await b.trial(PortProgram(streams=(StreamSpec(size="9018", udp_checksum=True),), rate_pct=100), 2, line_rate=9018)


@cocotb.test()
async def wire_2000_flows_chained_modifiers(dut):
    """The seed lab's 100 sources x 20 destinations: src_ip walks 100 values, dst_ip (chained)
    20, at 100 % of line rate, 2000 frames: 2000 distinct (src, dst) pairs at the wire, every
    frame equal to the golden model, with scapy-verified IPv4 and UDP checksums."""
    b = Bench(dut)
    await b.setup()
    stream = StreamSpec(udp_checksum=True, modifiers=(ModifierSpec(field="src_ip", count=100),
                                                      ModifierSpec(field="dst_ip", count=20, chain=True)))
    frames, want = await b.trial(PortProgram(streams=(stream,), rate_pct=100), 2000, line_rate=64)
    pairs = set()
    for fr in frames:
        pkt = Ether(bytes(fr.get_payload()))
        pairs.add((pkt[IP].src, pkt[IP].dst))
    srcs, dsts = {s for s, _ in pairs}, {d for _, d in pairs}
    dut._log.info("%d distinct (src, dst) pairs, %d sources, %d destinations", len(pairs), len(srcs), len(dsts))
    assert len(pairs) == 2000 and len(srcs) == 100 and len(dsts) == 20


BACKPRESSURE = {
    "always": lambda rng, cycle: True,
    "random50": lambda rng, cycle: rng.random() < 0.5,
    "one_in_four": lambda rng, cycle: cycle % 4 == 0,
    "bursts": lambda rng, cycle: (cycle % 37) < 20,
    "random_bursts": None,   # runs of random length, on or off
}


@cocotb.test()
async def source_backpressure(dut):
    """The generator's output stream (cut from the MAC) under ready patterns: the frames equal
    the golden model, ``first``/``last`` mark exactly one byte each, and valid never drops
    inside a frame."""
    b = Bench(dut)
    await b.setup(with_sink=False)
    dut.tap.value = 1
    streams = (
        StreamSpec(size="64-127/9", udp_checksum=True, modifiers=(ModifierSpec(field="src_port", count=5),)),
        StreamSpec(size="seq:65,1518,67", udp_checksum=True, src_ip="198.18.0.7"),
        StreamSpec(src_ip="2001:2::1", dst_ip="2001:2:0:1::1", size="rand:82-300",
                   modifiers=(ModifierSpec(field="dst_ip", mode="random", count=1000),)),
    )
    program = PortProgram(streams=streams, rate_pct=100, seed=7)
    for pattern, ready in BACKPRESSURE.items():
        rng = random.Random(pattern)
        run = {"left": 0, "on": True}

        def random_bursts(cycle, run=run, rng=rng):
            if run["left"] == 0:
                run["left"], run["on"] = rng.randrange(1, 40), not run["on"]
            run["left"] -= 1
            return run["on"]
        decide = random_bursts if ready is None else (lambda cycle, f=ready, rng=rng: f(rng, cycle))
        want = await b.load(program, 12)
        frames, cur, bubbles, cycle = [], None, 0, 0
        while len(frames) < len(want) and cycle < 200_000:
            await RisingEdge(dut.clk)
            r = int(bool(decide(cycle)))
            dut.tap_ready.value = r
            await ReadOnly()
            valid = int(dut.gen_valid.value)
            assert int(dut.gen_ready.value) == r
            if cur is not None and not valid:
                bubbles += 1
            if valid and r:
                first, last = int(dut.gen_first.value), int(dut.gen_last.value)
                assert first == (cur is None), f"{pattern}: first flag wrong at byte {0 if cur is None else len(cur)}"
                if first:
                    cur = bytearray()
                cur.append(int(dut.gen_data.value))
                if last:
                    frames.append(bytes(cur))
                    cur = None
            cycle += 1
        await RisingEdge(dut.clk)
        dut.tap_ready.value = 1
        await b.wait_idle()
        assert bubbles == 0, f"{pattern}: valid dropped inside a frame {bubbles} times"
        assert len(frames) == len(want), (pattern, len(frames), len(want))
        for data, exp in zip(frames, want):
            sig = F.parse_signature(data)
            assert sig is not None and sig[:2] == (exp.stream_id, exp.seq), (pattern, exp.index, sig)
            assert data == exp.build(sig[2]), f"{pattern}: frame {exp.index} differs from the golden model"
        c = await b.counters()
        assert c == {"tx_frames": len(want), "tx_bytes": sum(e.length for e in want)}, (pattern, c)
        dut._log.info("%s: %d frames in %d cycles", pattern, len(frames), cycle)
