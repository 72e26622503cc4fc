"""The generator's tables (GeneratorTables) against a dictionary model: random host writes
and reads through the three windows, one a cycle, and the stages' reads on every cycle at
random addresses: the descriptors (prepare's synchronous port, the size table bases read with
the pick, the enable bits), the size table (its read lost while the host writes, size_busy),
the templates (the emitter's port with its read enable, tmpl_written)."""

import random

from amaranth.sim import Simulator

from wirespeed.gateware import streamdesc as SD
from wirespeed.gateware.gen_layouts import DESC_LAYOUT
from wirespeed.gateware.gen_tables import GeneratorTables

N = 4
WORDS = SD.DESC_BITS // 32


def test_tables_against_model():
    rng = random.Random(4)
    dut = GeneratorTables(N)
    tb = DESC_LAYOUT["size_table_base"]
    model = {"tmpl": [0] * (N * SD.TEMPLATE_BYTES), "desc": [0] * N, "sizes": [0] * SD.SIZE_TABLE}
    enables = [0] * N
    windows = {"tmpl": dut.tmpl_win, "desc": dut.desc_win, "sizes": dut.sizes_win}
    counts = {"host reads": 0, "size reads": 0, "tmpl reads": 0}

    async def bench(ctx):
        expect = []                 # (signal, value) to check after the next edge
        tmpl_data = 0               # the emitter's port holds its data while not enabled
        for cycle in range(3000):
            for win in windows.values():
                ctx.set(win.w_en, 0)
            op, table = rng.choice(["w", "w", "r"]), rng.choice(["tmpl", "desc", "desc", "sizes"])
            win, depth = windows[table], len(model[table])
            index = rng.randrange(depth) if table != "sizes" else rng.choice([rng.randrange(depth), 0, 1, 2])
            writing = None
            if op == "w":
                word = rng.randrange(WORDS) if table == "desc" else 0
                value = rng.randrange(1 << 32)
                ctx.set(win.w_en, 1)
                ctx.set(win.w_addr, index)
                ctx.set(win.w_word, word)
                ctx.set(win.w_data, value)
                writing = (table, index, word, value)
            else:
                ctx.set(win.addr, index)
                expect.append((win.data, model[table][index], f"host read {table}[{index}]"))
                counts["host reads"] += 1
            # the stages' reads
            d_addr, t_addr, s_addr = rng.randrange(N), rng.randrange(N), rng.randrange(4)
            ctx.set(dut.desc_rd.addr, d_addr)
            ctx.set(dut.tbase_rd.addr, t_addr)
            ctx.set(dut.size_rd.addr, s_addr)
            expect.append((dut.desc_rd.data, model["desc"][d_addr], f"desc_rd[{d_addr}]"))
            assert ctx.get(dut.tbase_rd.data) == (model["desc"][t_addr] >> tb.offset) & ((1 << tb.width) - 1)
            busy = writing is not None and writing[0] == "sizes"
            assert ctx.get(dut.size_busy) == busy
            if not busy:
                expect.append((dut.size_rd.data, model["sizes"][s_addr], f"size_rd[{s_addr}]"))
                counts["size reads"] += 1
            en = rng.random() < 0.7
            m_addr = rng.randrange(N * SD.TEMPLATE_BYTES)
            ctx.set(dut.tmpl_rd.addr, m_addr)
            ctx.set(dut.tmpl_rd.en, en)
            if en:
                tmpl_data = model["tmpl"][m_addr]
                counts["tmpl reads"] += 1
            expect.append((dut.tmpl_rd.data, tmpl_data, f"tmpl_rd[{m_addr}] (en {int(en)})"))
            assert ctx.get(dut.tmpl_written) == (writing is not None and writing[0] == "tmpl")
            assert ctx.get(dut.stream_en) == sum(e << s for s, e in enumerate(enables))
            # the writes land at this edge
            if writing is not None:
                table, index, word, value = writing
                if table == "desc":
                    mask = 0xFFFFFFFF << (32 * word)
                    model["desc"][index] = (model["desc"][index] & ~mask) | (value << (32 * word))
                    if word == 0:
                        enables[index] = value & 1
                else:
                    model[table][index] = value & (0xFF if table == "tmpl" else 0x3FFF)
            await ctx.tick()
            for sig, value, what in expect:
                assert ctx.get(sig) == value, (cycle, what)
            expect = []

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert min(counts.values()) > 200, counts
