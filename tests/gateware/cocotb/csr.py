"""Host side of a wrapper's CSR bus (wirespeed.gateware.registers protocol) from cocotb, and
the clock/reset every block test starts with."""

from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

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

    async def _word_write(self, addr, word):
        self.dut.csr_addr.value = addr
        self.dut.csr_w_data.value = word
        self.dut.csr_w_stb.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr_w_stb.value = 0

    async def _word_read(self, addr):
        self.dut.csr_addr.value = addr
        self.dut.csr_r_stb.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr_r_stb.value = 0
        await RisingEdge(self.dut.clk)
        await RisingEdge(self.dut.clk)
        await ReadOnly()               # r_data lands on this edge (the second after the strobe)
        value = int(self.dut.csr_r_data.value)
        await RisingEdge(self.dut.clk)
        return value

    async def write(self, name, value):
        reg = self.rmap[name]
        for off, word in zip(reg.word_offsets, reg.split(value)):
            await self._word_write(off >> 2, word)

    async def read(self, name):
        reg = self.rmap[name]
        return reg.join([await self._word_read(off >> 2) for off in reg.word_offsets])

    async def write_entry(self, name, index, value):
        reg = self.rmap[name]
        for i, word in enumerate(reg.split(value)):
            await self._word_write((reg.offset >> 2) + reg.words * index + i, word)

    async def read_entry(self, name, index):
        reg = self.rmap[name]
        base = (reg.offset >> 2) + reg.words * index
        return reg.join([await self._word_read(base + i) for i in range(reg.words)])
