"""RegisterBank: word decode, read/write/strobe access, wide registers, and the map export."""

import gc
import json
import warnings

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator
from bankbus import BankBus

from wirespeed.gateware.registers import READ_LATENCY, WRITE_LATENCY, RegisterBank
from wirespeed.gateware.regmap import RegisterMap
from wirespeed.gateware.top import build_register_map


def make_bank():
    bank = RegisterBank(name="t", version="0.0.1", clk_hz=125_000_000, n_ports=1)
    regs = {
        "cfg": bank.add("a.cfg", 16, "rw", offset=0x00, reset=0x1234),
        "wide": bank.add("a.wide", 48, "rw", offset=0x04),
        "live": bank.add("a.live", 64, "r", offset=0x0C),
        "cmd": bank.add("a.cmd", 4, "w", offset=0x14),
    }
    return bank, regs


def test_access_semantics():
    bank, regs = make_bank()
    rmap = bank.register_map()
    m = Module()
    m.submodules.bank = bank
    counter = Signal(64, init=0xFFFF_FFC0)
    strobes = Signal(8)
    m.d.sync += counter.eq(counter + 1)
    m.d.comb += regs["live"].eq(counter)
    with m.If(regs["cmd"] != 0):
        m.d.sync += strobes.eq(strobes + 1)

    async def bench(ctx):
        async def write(off, value):
            ctx.set(bank.bus.addr, off >> 2)
            ctx.set(bank.bus.w_data, value)
            ctx.set(bank.bus.w_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.w_stb, 0)
            await ctx.tick().repeat(WRITE_LATENCY)                 # the write has landed

        async def read(off):
            ctx.set(bank.bus.addr, off >> 2)
            ctx.set(bank.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.r_stb, 0)
            await ctx.tick().repeat(READ_LATENCY)   # r_data holds until the next read
            return ctx.get(bank.bus.r_data)

        assert await read(rmap["a.cfg"].offset) == 0x1234
        await write(rmap["a.cfg"].offset, 0xFFFF_BEEF)
        assert ctx.get(regs["cfg"]) == 0xBEEF                      # truncated to 16 bits
        w = rmap["a.wide"]
        for off, word in zip(w.word_offsets, w.split(0xAAAA_1122_3344)):
            await write(off, word)
        assert ctx.get(regs["wide"]) == 0xAAAA_1122_3344
        assert [await read(o) for o in w.word_offsets] == [0x1122_3344, 0xAAAA]
        # the counter crosses 2^32 between the two reads: the high word read is the one
        # latched with the low word, not the live one
        live = rmap["a.live"]
        lo = await read(live.offset)
        await ctx.tick().repeat(40)
        assert ctx.get(counter) >> 32 == 1
        hi = await read(live.offset + 4)
        assert hi == 0 and lo >= 0xFFFF_FFC0
        before = ctx.get(strobes)
        await write(rmap["a.cmd"].offset, 1)
        await ctx.tick().repeat(3)
        assert ctx.get(strobes) == before + 1                      # a strobe lasts one cycle
        assert await read(rmap["a.cmd"].offset) == 0               # write-only reads 0
        assert await read(0xFFC) == 0                              # unmapped reads 0

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


def test_map_roundtrip_and_hash():
    rmap = build_register_map()
    again = RegisterMap.from_json(rmap.to_json())
    assert again.hash == rmap.hash and [r.name for r in again] == [r.name for r in rmap]
    for port in range(rmap.n_ports):
        assert f"p{port}.ana.rx_frames" in rmap and rmap[f"p{port}.gen.duration"].width == 64
    doc_only = json.loads(rmap.to_json())
    doc_only["registers"][0]["doc"] = "reworded"
    doc_only.pop("hash")
    assert RegisterMap.from_json(json.dumps(doc_only)).hash == rmap.hash   # docs do not count
    moved = json.loads(rmap.to_json())
    moved["registers"][1]["offset"] += 4 * 100
    moved.pop("hash")
    assert RegisterMap.from_json(json.dumps(moved)).hash != rmap.hash


def test_malformed_map_and_overlap_rejected():
    with pytest.raises(ValueError, match="malformed register map"):
        RegisterMap.from_json('{"name": "x"}')
    bad = json.loads(build_register_map().to_json())
    bad["hash"] = "0x00000000"
    with pytest.raises(ValueError, match="does not match"):
        RegisterMap.from_json(json.dumps(bad))
    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    bank._MustUse__silence = True
    bank.add("x", 8, "rw", offset=0)
    with pytest.raises(ValueError, match="declared twice"):
        bank.add("x", 8, "rw", offset=4)
        bank.register_map()


@pytest.mark.parametrize("width", [8, 64, 256])
def test_read_write_memory_window(width):
    """A host-written table: every word of every entry lands in the design's memory (32-bit
    write granularity) and reads back through the window."""
    from amaranth.lib.memory import Memory

    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    bank.add("a.before", 8, "rw", offset=0)
    win = bank.add_memory("a.table", width, 8, access="rw", offset=32 * ((width + 31) // 32))
    rmap = bank.register_map()
    m = Module()
    m.submodules.bank = bank
    m.submodules.mem = mem = Memory(shape=width, depth=8, init=[])
    granular = win.words > 1
    wp = mem.write_port(granularity=32) if granular else mem.write_port()
    rp = mem.read_port()
    m.d.comb += [wp.addr.eq(win.w_addr), rp.addr.eq(win.addr), win.data.eq(rp.data)]
    if granular:
        m.d.comb += [wp.data.eq(win.w_data.replicate(win.words)), wp.en.eq((win.w_en << win.w_word)[:win.words])]
    else:
        m.d.comb += [wp.data.eq(win.w_data), wp.en.eq(win.w_en)]
    reg = rmap["a.table"]
    values = [(0x0123456789ABCDEF * (i + 3) ** 7) % (1 << width) for i in range(8)]

    async def bench(ctx):
        for i, value in enumerate(values):
            for k, word in enumerate(reg.split(value)):
                ctx.set(bank.bus.addr, (reg.offset >> 2) + reg.words * i + k)
                ctx.set(bank.bus.w_data, word)
                ctx.set(bank.bus.w_stb, 1)
                await ctx.tick()
        ctx.set(bank.bus.w_stb, 0)
        words = []
        for off in reg.word_offsets:
            ctx.set(bank.bus.addr, off >> 2)
            ctx.set(bank.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.r_stb, 0)
            await ctx.tick().repeat(READ_LATENCY)
            words.append(ctx.get(bank.bus.r_data))
        assert reg.entries(words) == values

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("width", [32, 128, 1024])
def test_word_read_memory_window(width):
    """A read-only window with ``word_reads``: the design sees the word's index in the window
    and returns that 32-bit word two cycles later (a memory stored in narrow words, its output
    registered); the host reads the same entries as from a whole-entry window."""
    from amaranth.lib.memory import Memory

    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    bank.add("a.before", 8, "rw", offset=0)
    win = bank.add_memory("a.table", width, 4, word_reads=True, offset=16 * ((width + 31) // 32))
    rmap = bank.register_map()
    reg = rmap["a.table"]
    values = [(0x0123456789ABCDEF * (i + 3) ** 9) % (1 << width) for i in range(4)]
    words = [w for value in values for w in reg.split(value)]
    assert len(win.data) == 32 and len(win.addr) == (len(words) - 1).bit_length()
    m = Module()
    m.submodules.bank = bank
    m.submodules.mem = mem = Memory(shape=32, depth=len(words), init=words)
    rp = mem.read_port()
    m.d.comb += rp.addr.eq(win.addr)
    m.d.sync += win.data.eq(rp.data)            # WORD_READ_LATENCY: a register behind the RAM

    async def bench(ctx):
        assert await BankBus(bank.bus, rmap).read_entries(ctx, "a.table", 0, 4) == values

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # the bank is never elaborated
        rw_bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
        with pytest.raises(ValueError, match="word_reads windows are read-only"):
            rw_bank.add_memory("a.t", 64, 4, access="rw", word_reads=True, offset=0)
        del rw_bank
        gc.collect()


async def read_burst(ctx, bus, words):
    """Read ``words`` (word addresses) with a strobe on every cycle; their data in order."""
    got = []
    for cycle in range(len(words) + READ_LATENCY):
        ctx.set(bus.r_stb, cycle < len(words))
        if cycle < len(words):
            ctx.set(bus.addr, words[cycle])
        await ctx.tick()
        if cycle >= READ_LATENCY:
            got.append(ctx.get(bus.r_data))
    ctx.set(bus.r_stb, 0)
    return got


async def write_burst(ctx, bus, writes):
    """Write each (word address, value) of ``writes`` with a strobe on every cycle."""
    for word, value in writes:
        ctx.set(bus.addr, word)
        ctx.set(bus.w_data, value)
        ctx.set(bus.w_stb, 1)
        await ctx.tick()
    ctx.set(bus.w_stb, 0)


def test_pipelined_bus_serves_a_strobe_every_cycle():
    """Reads and writes on consecutive cycles are served in order: each read's data comes
    READ_LATENCY edges after its strobe's, a write lands WRITE_LATENCY edges after, and a
    read WRITE_TO_READ cycles after a write sees it. The registers sit in different groups
    and regions of the bus, and a memory window reads between them."""
    from amaranth.lib.memory import Memory

    from wirespeed.gateware.registers import GROUP_WORDS, WRITE_TO_READ

    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    regs = [bank.add(f"a.r{i}", 32, "rw", offset=4 * i, reset=0x1000 + i) for i in range(3)]
    regs += [bank.add(f"b.r{i}", 32, "rw", offset=4 * GROUP_WORDS + 4 * i, reset=0x2000 + i)   # the next group
             for i in range(2)]
    win = bank.add_memory("b.table", 32, 4, offset=0x20)
    regs += [bank.add(f"c.r{i}", 32, "rw", offset=0x10000 + 4 * i, reset=0x3000 + i)          # the next region
             for i in range(2)]
    rmap = bank.register_map()
    m = Module()
    m.submodules.bank = bank
    m.submodules.mem = mem = Memory(shape=32, depth=4, init=[0xAA00 + i for i in range(4)])
    rp = mem.read_port()
    m.d.comb += [rp.addr.eq(win.addr), win.data.eq(rp.data)]
    names = [r.name for r in rmap if r.depth == 1]
    table = rmap["b.table"]
    order = [names[0], names[3], "b.table:2", names[5], names[1], "b.table:0", names[6], names[4], names[2]]

    def word(name):
        if name.startswith("b.table:"):
            return (table.offset >> 2) + int(name.split(":")[1])
        return rmap[name].offset >> 2

    async def bench(ctx):
        expected = {n: rmap[n].reset for n in names} | {f"b.table:{i}": 0xAA00 + i for i in range(4)}
        for _round in range(2):
            got = await read_burst(ctx, bank.bus, [word(n) for n in order])
            assert got == [expected[n] for n in order]
            # a burst of writes, one per cycle, then a read WRITE_TO_READ cycles after the last
            expected |= {name: 0xB0B0_0000 + 17 * i for i, name in enumerate(names)}
            await write_burst(ctx, bank.bus, [(word(name), expected[name]) for name in names])
            await ctx.tick().repeat(WRITE_TO_READ - 1)
            ctx.set(bank.bus.addr, word(names[-1]))
            ctx.set(bank.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.r_stb, 0)
            await ctx.tick().repeat(READ_LATENCY)
            assert ctx.get(bank.bus.r_data) == expected[names[-1]]
            assert [ctx.get(sig) for sig in regs] == [expected[n] for n in names]

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("group_words", [8, 16])
def test_block_with_larger_read_groups(group_words):
    """A block whose registers form larger read groups, held in a memory (as a modifier
    unit's are), some narrower than a word, with registers of the default groups in the
    same aligned range after it and a register before it: bursts of writes and of reads,
    one strobe per cycle in a random order, read back what was written (a narrow register
    its low bits); addresses with no register read 0."""
    import random

    from wirespeed.gateware.registers import WRITE_TO_READ

    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    wide = bank.block(0x40, 4 * (group_words // 2 + 1), group_words=group_words)
    widths = [7, 32, 2] + [32] * (group_words // 2 - 2)        # narrow ones keep their low bits
    regs = [wide.add(f"m.r{i}", w, "rw", offset=4 * i, reset=i + 1) for i, w in enumerate(widths)]
    regs += [bank.add(f"n.r{i}", 32, "rw", offset=0x40 + 4 * (group_words // 2 + 1) + 4 * i, reset=0x2000 + i)
             for i in range(2)]
    regs += [bank.add("a.r", 32, "rw", offset=0x3C, reset=0x3000)]
    with pytest.raises(ValueError, match="group_words"):
        bank.block(0x1000, group_words=3).add("x.r", 32, "rw", offset=0)
    rmap = bank.register_map()
    m = Module()
    m.submodules.bank = bank
    names = [r.name for r in rmap]
    empty = (0x40 >> 2) + group_words - 1           # in the larger group's range, no register
    rng = random.Random(group_words)

    async def bench(ctx):
        expected = {n: rmap[n].reset for n in names}
        for _round in range(3):
            order = names + [None] * 2
            rng.shuffle(order)
            got = await read_burst(ctx, bank.bus, [empty if n is None else rmap[n].offset >> 2 for n in order])
            assert got == [0 if n is None else expected[n] for n in order]
            writes = [(name, rng.getrandbits(32)) for name in rng.sample(names, len(names))]
            expected |= {name: value & ((1 << rmap[name].width) - 1) for name, value in writes}
            await write_burst(ctx, bank.bus, [(rmap[name].offset >> 2, value) for name, value in writes])
            await ctx.tick().repeat(WRITE_TO_READ)
            assert [ctx.get(sig) for sig in regs] == [expected[r.name] for r in rmap]

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
