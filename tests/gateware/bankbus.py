"""Host side of a RegisterBank's CSR bus in the Amaranth simulator (protocol in
wirespeed.gateware.registers: a write lands WRITE_LATENCY edges after its strobe's, a read's
data comes READ_LATENCY edges after), for module tests."""

from wirespeed.gateware.registers import READ_LATENCY, WRITE_TO_READ


class BankBus:
    """Reads and writes registers of ``rmap`` by name through ``bus`` (a bank's ``bus``)."""

    def __init__(self, bus, rmap):
        self.bus, self.rmap = bus, rmap

    async def write(self, ctx, name, value):
        reg = self.rmap[name]
        for off, word in zip(reg.word_offsets, reg.split(value)):
            ctx.set(self.bus.addr, off >> 2)
            ctx.set(self.bus.w_data, word)
            ctx.set(self.bus.w_stb, 1)
            await ctx.tick()
            ctx.set(self.bus.w_stb, 0)
            # the write, and what a command strobe starts, has happened when this returns
            await ctx.tick().repeat(WRITE_TO_READ)

    async def read_words(self, ctx, offsets):
        out = []
        for off in offsets:
            ctx.set(self.bus.addr, off >> 2)
            ctx.set(self.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(self.bus.r_stb, 0)
            await ctx.tick().repeat(READ_LATENCY)
            out.append(ctx.get(self.bus.r_data))
        return out

    async def read(self, ctx, name):
        reg = self.rmap[name]
        return reg.join(await self.read_words(ctx, reg.word_offsets))

    async def read_entries(self, ctx, name, first, n):
        """Entries ``first`` .. ``first + n - 1`` of a memory window."""
        reg = self.rmap[name]
        return reg.entries(await self.read_words(ctx, reg.word_offsets[first * reg.words:(first + n) * reg.words]))
