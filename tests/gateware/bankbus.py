"""Host side of a RegisterBank's CSR bus in the Amaranth simulator (protocol in
wirespeed.gateware.registers: a write takes one clock, a read two), for module tests."""


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

    async def read_words(self, ctx, offsets):
        out = []
        for off in offsets:
            ctx.set(self.bus.addr, off >> 2)
            ctx.set(self.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(self.bus.r_stb, 0)
            await ctx.tick().repeat(2)
            out.append(ctx.get(self.bus.r_data))
        return out

    async def read(self, ctx, name):
        reg = self.rmap[name]
        return reg.join(await self.read_words(ctx, reg.word_offsets))

    async def read_entries(self, ctx, name, first, n):
        """Entries ``first`` .. ``first + n - 1`` of a memory window."""
        reg = self.rmap[name]
        return reg.entries(await self.read_words(ctx, reg.word_offsets[first * reg.words:(first + n) * reg.words]))
