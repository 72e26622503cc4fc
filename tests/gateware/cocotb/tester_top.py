"""cocotb tests of the whole tester (Amaranth gateware + LiteEth MAC) at its GMII pins,
with cocotbext-eth as the independent Ethernet peer. Run from test_tester_top.py."""

import collections
import os

import cocotb
from arp_peer import check_arp_reply
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_time_from_sim_steps
from cocotbext.eth import GmiiFrame, GmiiSink, GmiiSource
from csr import Csr

from wirespeed.gateware import frame as F
from wirespeed.gateware.regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START
from wirespeed.gateware.top import build_register_map
from wirespeed.host.program import port_program_writes
from wirespeed.traffic import PortProgram, StreamSpec

RMAP = build_register_map()
CLK_NS = 8
#: the tester's fixed pipeline delays, documented in docs/performance.md; measured here at the wire
TX_PIPELINE_NS = int(os.environ["WS_TX_PIPELINE_NS"])
RX_PIPELINE_NS = int(os.environ["WS_RX_PIPELINE_NS"])


class Tester(Csr):
    def __init__(self, dut):
        super().__init__(dut, RMAP)

    async def reset(self):
        dut = self.dut
        cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
        for name in ("csr_r_stb", "csr_w_stb", "csr_addr", "csr_w_data"):
            getattr(dut, name).value = 0
        for p in (0, 1):
            getattr(dut, f"p{p}_gmii_rx_dv").value = 0
            getattr(dut, f"p{p}_gmii_rx_er").value = 0
            getattr(dut, f"p{p}_gmii_rxd").value = 0
        dut.rst.value = 1
        for _ in range(8):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)

    async def send(self, port, frame_len, count, pct=100.0):
        """One Appendix C stream (stream id 7), ``count`` frames at ``pct`` of line rate."""
        program = PortProgram(port=port, streams=(StreamSpec(stream_id=7, size=str(frame_len)),), rate_pct=pct)
        memories, registers = port_program_writes(port, program.compile())
        for name, entries in memories.items():
            for index, value in entries.items():
                await self.write_entry(name, index, value)
        for name, value in registers.items():
            await self.write(name, value)
        for name, value in (("mode", 1), ("count", count), ("enable", 1)):
            await self.write(f"p{port}.gen.{name}", value)
        await self.write("ctrl.cmd", CMD_CLEAR)
        await self.write("ctrl.cmd", CMD_START)

    async def counters(self, port):
        await self.write("ctrl.cmd", CMD_SNAPSHOT)
        names = [r.name for r in RMAP if r.depth == 1 and r.access == "r"
                 and (r.name.startswith(f"p{port}.ana.") or r.name.startswith(f"p{port}.gen.tx")
                      or r.name.startswith(f"p{port}.arp."))]
        return {n.split(".", 2)[2]: await self.read(n) for n in names}


def wire_monitor(dut, port, gaps, starts, preambles):
    """Record, on port's GMII TX, idle cycles between frames, the cycle each frame starts and
    its first 8 bytes. (cocotbext-eth 0.1.28's GmiiSink drops the first byte of every frame,
    so the preamble is checked here.)"""
    async def run():
        idle, was_en, cycle = None, 0, 0
        tx_en, txd = getattr(dut, f"p{port}_gmii_tx_en"), getattr(dut, f"p{port}_gmii_txd")
        while True:
            await RisingEdge(dut.clk)
            en = int(tx_en.value)
            if en and not was_en:
                starts.append(cycle)
                preambles.append(bytearray())
                if idle is not None:
                    gaps.append(idle)
            if en and len(preambles[-1]) < 8:
                preambles[-1].append(int(txd.value))
            idle = 0 if en else (idle + 1 if idle is not None else None)
            was_en, cycle = en, cycle + 1
    return cocotb.start_soon(run())


def cable(dut, src, dst, delay_cycles):
    """A cable from port src's GMII TX to port dst's GMII RX, delay_cycles long."""
    async def run():
        line = collections.deque([(0, 0)] * delay_cycles)
        tx_en, txd = getattr(dut, f"p{src}_gmii_tx_en"), getattr(dut, f"p{src}_gmii_txd")
        rx_dv, rxd = getattr(dut, f"p{dst}_gmii_rx_dv"), getattr(dut, f"p{dst}_gmii_rxd")
        while True:
            await RisingEdge(dut.clk)
            line.append((int(tx_en.value), int(txd.value)))
            dv, d = line.popleft()
            rx_dv.value, rxd.value = dv, d
    return cocotb.start_soon(run())


async def check_wire(dut, frame_len, count, pct):
    t = Tester(dut)
    await t.reset()
    sink = GmiiSink(dut.p0_gmii_txd, dut.p0_gmii_tx_er, dut.p0_gmii_tx_en, dut.clk, dut.rst)
    gaps, starts, preambles = [], [], []
    wire_monitor(dut, 0, gaps, starts, preambles)
    await t.send(0, frame_len, count, pct)
    frames = [await sink.recv() for _ in range(count)]
    await Timer(2 * (frame_len + 20) * CLK_NS, unit="ns")
    assert sink.empty(), "more frames than asked for"
    assert len(preambles) == count
    assert all(p == b"\x55" * 7 + b"\xd5" for p in preambles), "bad preamble/SFD"
    for seq, fr in enumerate(frames):
        assert fr.check_fcs(), f"frame {seq}: bad FCS"
        payload = bytes(fr.get_payload())
        stream, got_seq, ts = F.parse_signature(payload)
        assert (stream, got_seq) == (7, seq)
        assert payload == F.build_frame(frame_len=frame_len, seq=seq, ts=ts, stream_id=7,
                                        dst_mac=0x020000000002, src_mac=0x020000000001,
                                        src_ip=0xC6120001, dst_ip=0xC6130001)
    assert min(gaps) >= 12, f"inter-frame gap below 12 bytes: {min(gaps)}"
    spacing = [b - a for a, b in zip(starts, starts[1:])]
    period = (frame_len + 20) * 100.0 / pct
    assert all(abs(s - period) < 1 for s in spacing), (spacing, period)
    if pct == 100.0:
        assert set(gaps) == {12}, gaps
    # a command for port 1 only leaves port 0's snapshot (none yet) alone
    await t.write("ctrl.cmd", CMD_SNAPSHOT | 1 << (4 + 1))
    assert await t.read("p0.gen.tx_frames") == 0
    c = await t.counters(0)
    assert c["tx_frames"] == count and c["tx_bytes"] == count * frame_len


@cocotb.test()
async def wire_64_line_rate(dut):
    await check_wire(dut, 64, 12, 100.0)


@cocotb.test()
async def wire_odd_sizes_line_rate(dut):
    for size in (65, 66, 67, 127):
        await check_wire(dut, size, 4, 100.0)


@cocotb.test()
async def wire_1518_half_rate(dut):
    await check_wire(dut, 1518, 3, 50.0)


@cocotb.test()
async def loopback_latency_and_pipeline_delay(dut):
    """Port 0 -> cable of N cycles -> port 1: every frame counted, latency constant and equal
    to the documented TX + RX pipeline delays plus the cable; TX delay measured at the wire."""
    results = {}
    for delay_cycles in (1, 25):
        t = Tester(dut)
        await t.reset()
        sink = GmiiSink(dut.p0_gmii_txd, dut.p0_gmii_tx_er, dut.p0_gmii_tx_en, dut.clk, dut.rst)
        wire = cable(dut, 0, 1, delay_cycles)
        now, t_edge = await t.read("time.ns", with_time=True)
        await t.send(0, 64, 20, 100.0)
        frames = [await sink.recv() for _ in range(20)]
        await Timer(2000, unit="ns")
        c = await t.counters(1)
        wire.cancel()
        assert c["rx_frames"] == 20 and c["seq_errors"] == 0 and c["fcs_errors"] == 0
        assert c["other_frames"] == 0 and c["rx_bytes"] == 20 * 64
        assert c["lat_min"] == c["lat_max"], "latency must be constant through a cable"
        # TX delay: from the frame's timestamp to the clock edge that samples its first byte
        # after the SFD on the GMII pins (cocotbext-eth's sim_time_sfd; the timebase read
        # `now` at t_edge).
        sid, _, ts = F.parse_signature(bytes(frames[0].get_payload()))
        ts_edge = t_edge + (ts - now)
        tx_delay = get_time_from_sim_steps(frames[0].sim_time_sfd, "ns") - ts_edge
        # the cable samples TX at edge k and drives RX after edge k + delay_cycles, so the
        # receiving MAC samples the byte at edge k + delay_cycles + 1
        cable_ns = (delay_cycles + 1) * CLK_NS
        results[delay_cycles] = (c["lat_min"], tx_delay)
        dut._log.info("cable %d ns: latency %d ns, tx delay %d ns, rx delay %d ns",
                      cable_ns, c["lat_min"], tx_delay, c["lat_min"] - tx_delay - cable_ns)
        assert tx_delay == TX_PIPELINE_NS
        assert c["lat_min"] == TX_PIPELINE_NS + cable_ns + RX_PIPELINE_NS
        # statistics of a constant latency: no variation, every frame in one 8 ns bin
        lat = c["lat_min"]
        assert c["jitter_sum"] == 0 and c["lat_sq_sum"] == 20 * lat * lat
        # the stream's own histogram (stream group 0: index = stream id)
        assert await t.read("p1.ana.hist_used") == 1 << sid
        await t.write("p1.ana.hist_stream", sid)
        assert await t.read_entry("p1.ana.hist", lat >> 3) == 20
        assert await t.read_entry("p1.ana.hist", (lat >> 3) + 1) == 0
        assert c["hist_underflow"] == c["hist_overflow"] == 0
    assert results[25][0] - results[1][0] == 24 * CLK_NS


@cocotb.test()
async def rx_counts_fcs_errors_and_foreign_frames(dut):
    t = Tester(dut)
    await t.reset()
    src = GmiiSource(dut.p0_gmii_rxd, dut.p0_gmii_rx_er, dut.p0_gmii_rx_dv, dut.clk, dut.rst)
    await t.write("ctrl.cmd", CMD_CLEAR)
    cfg = dict(dst_mac=2, src_mac=1, src_ip=0xC6120001, dst_ip=0xC6130001, stream_id=1)
    good = F.build_frame(frame_len=64, seq=0, ts=0, **cfg)
    await src.send(GmiiFrame.from_payload(good))
    bad = GmiiFrame.from_payload(F.build_frame(frame_len=128, seq=1, ts=0, **cfg))
    bad.data[-1] ^= 0xFF                                    # corrupt the FCS
    await src.send(bad)
    await src.send(GmiiFrame.from_payload(b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(46)))  # ARP-like
    await src.send(GmiiFrame.from_payload(F.build_frame(frame_len=1518, seq=2, ts=0, **cfg)))
    await src.wait()
    await Timer(1000, unit="ns")
    c = await t.counters(0)
    assert c["fcs_errors"] == 1, c
    assert c["other_frames"] == 1, c
    assert c["rx_frames"] == 2 and c["rx_bytes"] == 64 + 1518, c
    assert c["seq_errors"] == 1, c          # sequence 1 was lost (it had the bad FCS)


@cocotb.test()
async def arp_request_gets_a_reply(dut):
    """An ARP request for the port's address, from a cocotbext-eth source on the wire, gets
    an RFC 826 reply on the port's transmit pins; one for another address gets none."""
    t = Tester(dut)
    await t.reset()
    await check_arp_reply(dut, t, 0, "02:00:00:00:00:01", "198.18.0.1")
    c = await t.counters(0)
    assert c["arp_requests"] == 1 and c["arp_replies"] == 1
