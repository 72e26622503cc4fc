"""Host side of a wrapper's CSR bus (wirespeed.gateware.registers protocol) from cocotb, and
the clock/reset every block test starts with."""

from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from wirespeed.gateware.registers import READ_LATENCY, READ_SAMPLE, WRITE_TO_READ

CLK_NS = 8


async def start(dut, inputs=()):
    """Start the 125 MHz clock, zero ``inputs`` and the CSR strobes, reset for 8 clocks."""
    Clock(dut.clk, CLK_NS, unit="ns").start()
    for name in inputs:
        getattr(dut, name).value = 0
    dut.rst.value = 1
    for _ in range(8):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


async def pulse(dut, name, cycles=1):
    getattr(dut, name).value = 1
    for _ in range(cycles):
        await RisingEdge(dut.clk)
    getattr(dut, name).value = 0


class Csr:
    def __init__(self, dut, rmap):
        self.dut, self.rmap = dut, rmap
        for name in ("csr_r_stb", "csr_w_stb", "csr_addr", "csr_w_data"):
            getattr(dut, name).value = 0

    async def write_word(self, addr, word):
        self.dut.csr_addr.value = addr
        self.dut.csr_w_data.value = word
        self.dut.csr_w_stb.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr_w_stb.value = 0
        for _ in range(WRITE_TO_READ - 1):     # a read after this sees what the write did
            await RisingEdge(self.dut.clk)

    async def read_word(self, addr):
        self.dut.csr_addr.value = addr
        self.dut.csr_r_stb.value = 1
        await RisingEdge(self.dut.clk)
        # the sim time (ns) of the edge that samples the register's value
        self.sampled_ns = get_sim_time("ns") + READ_SAMPLE * CLK_NS
        self.dut.csr_r_stb.value = 0
        for _ in range(READ_LATENCY):
            await RisingEdge(self.dut.clk)
        await ReadOnly()               # r_data lands on this edge (READ_LATENCY after the strobe's)
        value = int(self.dut.csr_r_data.value)
        await RisingEdge(self.dut.clk)
        return value

    async def write(self, name, value):
        reg = self.rmap[name]
        for off, word in zip(reg.word_offsets, reg.split(value)):
            await self.write_word(off >> 2, word)

    async def read(self, name, with_time=False):
        """Value of a register; ``with_time`` also returns the sim time (ns) of the clock edge
        that sampled its first word."""
        reg = self.rmap[name]
        words = [await self.read_word(off >> 2) for off in reg.word_offsets[:1]]
        sampled = self.sampled_ns
        words += [await self.read_word(off >> 2) for off in reg.word_offsets[1:]]
        value = reg.join(words)
        return (value, sampled) if with_time else value

    async def write_entry(self, name, index, value):
        reg = self.rmap[name]
        for i, word in enumerate(reg.split(value)):
            await self.write_word((reg.offset >> 2) + reg.words * index + i, word)

    async def read_entry(self, name, index):
        reg = self.rmap[name]
        base = (reg.offset >> 2) + reg.words * index
        return reg.join([await self.read_word(base + i) for i in range(reg.words)])
