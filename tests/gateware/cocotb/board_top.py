"""cocotb tests of the tester built with a board configuration (wirespeed.gateware.config,
preset named by WS_CONFIG): it reports its configuration and map, carries traffic from port
0 to port 1 through a cable, and its receiving port answers ARP (a build with the
responder). Run from test_board_top.py."""

import collections
import os

import cocotb
from arp_peer import check_arp_reply
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from csr import Csr

from wirespeed.gateware.config import PRESETS, TesterConfig
from wirespeed.gateware.regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, MAGIC
from wirespeed.gateware.top import build_register_map
from wirespeed.host.program import fit_to_build, port_program_writes
from wirespeed.traffic import PortProgram, StreamSpec

_NAME = os.environ["WS_CONFIG"]
CONFIG = PRESETS[_NAME]
RMAP = build_register_map(CONFIG)
CLK_NS = 8


class Bus(Csr):
    def __init__(self, dut):
        super().__init__(dut, RMAP)

    async def reset(self):
        dut = self.dut
        cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
        for name in ("csr_r_stb", "csr_w_stb", "csr_addr", "csr_w_data"):
            getattr(dut, name).value = 0
        for p in (0, 1):
            for pin in ("rx_dv", "rx_er", "rxd"):
                getattr(dut, f"p{p}_gmii_{pin}").value = 0
        dut.rst.value = 1
        for _ in range(8):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)


def cable(dut, src, dst):
    async def run():
        line = collections.deque([(0, 0)] * 3)
        tx_en, txd = getattr(dut, f"p{src}_gmii_tx_en"), getattr(dut, f"p{src}_gmii_txd")
        rx_dv, rxd = getattr(dut, f"p{dst}_gmii_rx_dv"), getattr(dut, f"p{dst}_gmii_rxd")
        while True:
            await RisingEdge(dut.clk)
            line.append((int(tx_en.value), int(txd.value)))
            rx_dv.value, rxd.value = line.popleft()
    return cocotb.start_soon(run())


@cocotb.test()
async def reports_its_configuration(dut):
    """id.config, read at its fixed address without the map, gives back the configuration,
    and the map built from it has the hash the gateware reports."""
    bus = Bus(dut)
    await bus.reset()
    word = await bus.read_word(0x20 >> 2)
    assert word == CONFIG.word()
    config = TesterConfig.from_word(word)
    assert config == CONFIG
    rmap = build_register_map(config)
    assert await bus.read("id.magic") == MAGIC
    assert await bus.read("id.map_hash") == rmap.hash
    assert await bus.read("id.n_ports") == 2


@cocotb.test()
async def carries_a_stream_from_port_0_to_port_1(dut):
    """One 64-byte stream at line rate, 50 frames, port 0 -> port 1: all counted, none lost,
    every latency in port 1's histogram: port 0's START waited for port 1's histogram sweep,
    also when port 0 has no histogram of its own (a unidirectional build)."""
    bus = Bus(dut)
    await bus.reset()
    assert ("p0.ana.rx_frames" in RMAP) == CONFIG.has_analyzer(0)
    assert ("p1.gen.tx_frames" in RMAP) == CONFIG.has_generator(1)
    wire = cable(dut, 0, 1)
    program = PortProgram(port=0, streams=(StreamSpec(stream_id=0, size="64"),), rate_pct=100.0)
    # what the host writes (Device.load_program): the program fitted to this build's streams
    # and modifier units
    memories, registers = fit_to_build(RMAP, *port_program_writes(0, program.compile()))
    for name, entries in memories.items():
        for index, value in entries.items():
            await bus.write_entry(name, index, value)
    for name, value in registers.items():
        await bus.write(name, value)
    for name, value in (("mode", 1), ("count", 50), ("enable", 1)):
        await bus.write(f"p0.gen.{name}", value)
    # every latency below the first bin: the underflow count is the histogram's sample count
    await bus.write("p1.ana.hist_offset", 0xFFFF_FFFF)
    await bus.write("ctrl.cmd", CMD_CLEAR)
    await bus.write("ctrl.cmd", CMD_START)
    # START waits for CLEAR's histogram sweep (hist_streams * 1024 clocks), then 50 frames
    # of 84 byte times leave
    deadline = (CONFIG.hist_streams * 1024 + 50 * 84) * CLK_NS + 5000
    waited = 0
    while await bus.read("p0.gen.running"):
        assert waited < deadline, "the generator is still running"
        await Timer(1000, unit="ns")
        waited += 1000
    await Timer(1000, unit="ns")
    await bus.write("ctrl.cmd", CMD_SNAPSHOT)
    await Timer(200, unit="ns")
    wire.cancel()
    assert await bus.read("p0.gen.tx_frames") == 50
    assert await bus.read("p1.ana.rx_frames") == 50
    assert await bus.read("p1.ana.rx_bytes") == 50 * 64
    assert await bus.read("p1.ana.fcs_errors") == 0
    if CONFIG.stream_stats:
        assert await bus.read("p1.ana.seq_errors") == 0
    assert await bus.read("p1.ana.hist_used") == 1
    assert await bus.read("p1.ana.hist_underflow") == 50
    stream_tx = RMAP["p0.gen.stream_tx"]
    words = [await bus.read_word((stream_tx.offset >> 2) + i) for i in range(stream_tx.words)]
    assert stream_tx.join(words) == 50 | (50 * 64) << 64


@cocotb.test()
async def receiving_port_answers_arp(dut):
    """Port 1 (it receives in every build) answers an ARP request for its address with an
    RFC 826 reply on its own transmit pins, also when it has no generator (a one-way build:
    the responder then has the port's transmit path to itself), and ignores one for another
    address; port 0 has a responder only if it has an analyzer."""
    bus = Bus(dut)
    await bus.reset()
    assert ("p0.arp.mac" in RMAP) == CONFIG.has_responder(0)
    await check_arp_reply(dut, bus, 1, "02:00:00:00:00:02", "198.19.0.1")
