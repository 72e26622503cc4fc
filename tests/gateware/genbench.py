"""Amaranth-simulator bench for the traffic generator: a register bank, the generator, the
host writes on the bank bus, and a sink that collects frames under a backpressure pattern."""

from amaranth import Module, Signal
from amaranth.sim import Simulator

from wirespeed.gateware.generator import TrafficGenerator
from wirespeed.gateware.registers import RegisterBank


class GenBench:
    def __init__(self, n_modifiers=8):
        self.bank = RegisterBank(name="t", version="0.0.0", clk_hz=125_000_000, n_ports=1)
        self.gen = TrafficGenerator(self.bank, "p0", n_modifiers=n_modifiers)
        self.rmap = self.bank.register_map()
        self.m = m = Module()
        m.submodules.bank = self.bank
        m.submodules.gen = self.gen
        self.now = Signal(64)
        m.d.sync += self.now.eq(self.now + 8)
        m.d.comb += self.gen.now.eq(self.now)
        self.writes = []   # (word address, value) queued before the run

    # host side, queued and replayed on the bus at the start of the simulation
    def set(self, name, value):
        reg = self.rmap[name]
        self.writes += [(off >> 2, w) for off, w in zip(reg.word_offsets, reg.split(value))]

    def set_entry(self, name, index, value):
        reg = self.rmap[name]
        base = reg.offset + 4 * reg.words * index
        self.writes += [((base >> 2) + i, w) for i, w in enumerate(reg.split(value))]

    def load(self, compiled_tables):
        """Queue a program: {'tmpl': {index: byte}, 'desc': {s: int}, 'sizes': {i: n},
        'regs': {name: value}} (names without the ``p0.`` prefix)."""
        for name, value in compiled_tables.get("regs", {}).items():
            self.set(f"p0.{name}", value)
        for table in ("tmpl", "desc", "sizes"):
            for index, value in compiled_tables.get(table, {}).items():
                self.set_entry(f"p0.gen.{table}", index, value)

    def run(self, *, ready=lambda cycle: True, max_cycles=20000, stop_when=None, snapshot_at=None):
        """Write the queued registers, CLEAR, START, and collect frames until the trial
        ends (``p0.gen.running`` low). Returns (frames, info): frames are
        (bytes, first_flags, cycle of the first byte: the launch cycle + 1 when the sink is
        always ready) and info has the counters."""
        gen, bus = self.gen, self.bank.bus
        frames, info = [], {}

        async def bench(ctx):
            for addr, value in self.writes:
                ctx.set(bus.addr, addr)
                ctx.set(bus.w_data, value)
                ctx.set(bus.w_stb, 1)
                await ctx.tick()
            ctx.set(bus.w_stb, 0)
            ctx.set(gen.clear, 1)
            await ctx.tick()
            ctx.set(gen.clear, 0)
            await ctx.tick().repeat(3)
            ctx.set(gen.start, 1)
            await ctx.tick()
            ctx.set(gen.start, 0)
            cycle, data, firsts, bubbles, first_cycle = 0, None, None, 0, 0
            while cycle < max_cycles:
                r = int(bool(ready(cycle)))
                ctx.set(gen.source.ready, r)
                valid = ctx.get(gen.source.valid)
                if data is not None and not valid:
                    bubbles += 1
                if valid and r:
                    if ctx.get(gen.source.p.first):
                        data, firsts, first_cycle = bytearray(), [], cycle
                    data.append(ctx.get(gen.source.p.data))
                    firsts.append(ctx.get(gen.source.p.first))
                    if ctx.get(gen.source.p.last):
                        frames.append((bytes(data), firsts, first_cycle))
                        data = None
                if snapshot_at is not None and cycle == snapshot_at:
                    ctx.set(gen.snapshot, 1)
                    info["snapshot_frames"] = len(frames)
                else:
                    ctx.set(gen.snapshot, 0)
                if not ctx.get(gen.running) and cycle > 2:
                    break
                if stop_when is not None and stop_when(frames):
                    break
                await ctx.tick()
                cycle += 1
            info["cycles"], info["bubbles"] = cycle, bubbles
            ctx.set(gen.snapshot, 1)
            await ctx.tick()
            ctx.set(gen.snapshot, 0)
            await ctx.tick().repeat(20)
            for name in ("tx_frames", "tx_bytes", "first_tx_ns", "last_tx_ns"):
                info[name] = ctx.get(gen._snap[name])

        sim = Simulator(self.m)
        sim.add_clock(8e-9)
        sim.add_testbench(bench)
        sim.run()
        return frames, info
