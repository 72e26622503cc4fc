"""TesterConfig: validation, the id.config word, and the register maps the presets build."""

import dataclasses
import random

import pytest
from amaranth import Module
from amaranth.sim import Simulator

from wirespeed.gateware import config as C
from wirespeed.gateware.config import BOARD_25F, BOARD_45F, ID_CONFIG_OFFSET, PRESETS, SIM, WORD_FIELDS
from wirespeed.gateware.registers import READ_LATENCY, WRITE_TO_READ, RegisterBank, align_up
from wirespeed.gateware.regmap import pack_fields
from wirespeed.gateware.top import SimTop, build_register_map


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_word_roundtrip(name):
    config = PRESETS[name]
    word = config.word()
    assert 0 < word < 1 << 32
    assert C.TesterConfig.from_word(word) == config


def test_words_tell_configs_apart():
    rng = random.Random(5)
    seen = {}
    for _ in range(300):
        config = C.TesterConfig(n_streams=rng.choice([2, 4, 8, 16]), n_modifiers=rng.randrange(9),
                              hist_streams=rng.choice([1, 2, 4, 8, 16]), stream_stats=rng.random() < 0.5,
                              responder=rng.random() < 0.5, capture=rng.random() < 0.5,
                              capture_words=1 << rng.randrange(8, 17), capture_frames=1 << rng.randrange(17),
                              generators=rng.randrange(1, 4), analyzers=rng.randrange(1, 4))
        word = config.word()
        assert C.TesterConfig.from_word(word) == config
        assert seen.setdefault(word, config) == config


@pytest.mark.parametrize("kwargs, message", [
    ({"n_streams": 32}, "n_streams must be a power of two from 2 to 16"),
    ({"n_streams": 6}, "n_streams must be a power of two"),
    ({"n_streams": 1}, "n_streams must be a power of two"),
    ({"n_modifiers": 9}, "n_modifiers must be 0 to 8"),
    ({"n_modifiers": -1}, "n_modifiers must be 0 to 8"),
    ({"hist_streams": 0}, "hist_streams must be a power of two from 1 to 16"),
    ({"hist_streams": 32}, "hist_streams must be a power of two"),
    ({"stream_stats": 1}, "stream_stats must be True or False"),
    ({"capture_words": 128}, "capture_words must be a power of two from 256"),
    ({"capture_words": 1000}, "capture_words must be a power of two"),
    ({"capture_frames": 0}, "capture_frames must be a power of two from 1"),
    ({"generators": 0}, "generators must be a mask of ports 1 to 3"),
    ({"generators": 4}, "generators must be a mask of ports 1 to 3"),
    ({"analyzers": 0}, "analyzers must be a mask of ports 1 to 3"),
    ({"analyzers": True}, "analyzers must be a mask of ports"),
])
def test_invalid_configs_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        C.TesterConfig(**kwargs)
    assert "\n" not in str(info.value)


def test_from_word_refuses_what_is_not_a_config():
    with pytest.raises(ValueError, match="predates id.config"):
        C.TesterConfig.from_word(0)
    with pytest.raises(ValueError, match="unknown layout 2"):
        C.TesterConfig.from_word((SIM.word() & ~0xF) | 2)
    with pytest.raises(ValueError, match="reserved bits"):
        C.TesterConfig.from_word(SIM.word() | 1 << 31)
    fields = {name: 0 for name, _ in WORD_FIELDS} | {"layout": 1, "log2_streams": 4, "n_modifiers": 12,
                                                    "log2_capture_words": 10}
    with pytest.raises(ValueError, match="n_modifiers must be 0 to 8"):
        C.TesterConfig.from_word(pack_fields(WORD_FIELDS, fields, "w"))
    with pytest.raises(ValueError, match="not a 32-bit word"):
        C.TesterConfig.from_word(1 << 32)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_id_block_is_where_it_always_was(name):
    rmap = build_register_map(PRESETS[name])
    where = {r.name: r.offset for r in rmap if r.name.startswith(("id.", "time.", "ctrl."))}
    assert where == {"id.magic": 0x0, "id.version": 0x4, "id.map_hash": 0x8, "id.clk_hz": 0xC, "id.n_ports": 0x10,
                     "time.ns": 0x14, "ctrl.cmd": 0x1C, "id.config": ID_CONFIG_OFFSET}
    assert rmap["id.config"].access == "r" and rmap["id.config"].width == 32


def test_the_full_testers_word_has_no_role_bits():
    """Every port of the full tester has a generator and an analyzer: the role fields (the
    ports *without* one) are 0, so its word and map are what they were before the roles."""
    fields = C.unpack_fields(WORD_FIELDS, SIM.word())
    assert fields["no_generator"] == fields["no_analyzer"] == 0
    assert SIM.generators == SIM.analyzers == 0b11
    assert all(SIM.has_generator(p) and SIM.has_analyzer(p) for p in range(4))


@pytest.mark.parametrize("board", [BOARD_25F, BOARD_45F])
def test_board_builds_are_unidirectional(board):
    """The board builds send on port 0 and receive on port 1 (A -> DUT -> B)."""
    assert [board.has_generator(p) for p in (0, 1)] == [True, False]
    assert [board.has_analyzer(p) for p in (0, 1)] == [False, True]


def test_the_board_builds_carry_every_rfc2544_test():
    """What the host refuses without (learning: the responder; system recovery: the per-stream
    statistics) is in the Versa's build, with the capture; the Colorlight's has the statistics
    but no responder (its runs go without the learning phase)."""
    assert BOARD_45F.responder and BOARD_45F.stream_stats and BOARD_45F.capture
    assert BOARD_25F.stream_stats and not BOARD_25F.responder


def test_default_map_is_the_sim_map():
    assert build_register_map().hash == build_register_map(SIM).hash
    assert SimTop.__init__.__kwdefaults__["config"] is SIM
    hashes = {build_register_map(config).hash for config in PRESETS.values()}
    assert len(hashes) == len(PRESETS)


@pytest.mark.parametrize("name", ["board_25f", "board_45f"])
def test_board_maps_follow_the_config(name):
    config = PRESETS[name]
    rmap = build_register_map(config)
    for p in range(rmap.n_ports):
        gen_regs = {r.name for r in rmap if r.name.startswith((f"p{p}.gen.", f"p{p}.mod"))}
        ana_regs = {r.name for r in rmap if r.name.startswith(f"p{p}.ana.")}
        assert bool(gen_regs) == config.has_generator(p) and bool(ana_regs) == config.has_analyzer(p)
        if config.has_generator(p):
            _check_generator_map(rmap, p, config)
        if config.has_analyzer(p):
            _check_analyzer_map(rmap, p, config)
        assert (f"p{p}.arp.mac" in rmap) == (config.responder and config.has_analyzer(p))
        assert (f"p{p}.cap.arm" in rmap) == config.capture
        if config.capture:
            assert rmap[f"p{p}.cap.data"].depth == config.capture_words
            assert rmap[f"p{p}.cap.index"].depth == config.capture_frames


@pytest.mark.parametrize("generators, analyzers", [(0b01, 0b10), (0b10, 0b01), (0b01, 0b11), (0b11, 0b01)])
def test_roles_leave_out_the_blocks_of_a_port(generators, analyzers):
    """A port without a generator has no pN.gen.* / pN.modJ.*, one without an analyzer no
    pN.ana.* and no pN.arp.*; every register left is one of the full tester's (name, width, access, depth)."""
    config = dataclasses.replace(SIM, generators=generators, analyzers=analyzers)
    rmap, full = build_register_map(config), build_register_map(SIM)
    for p in (0, 1):
        assert (f"p{p}.gen.desc" in rmap) == bool(generators >> p & 1)
        assert (f"p{p}.mod0.mode" in rmap) == bool(generators >> p & 1)
        assert (f"p{p}.ana.rx_frames" in rmap) == bool(analyzers >> p & 1)
        assert (f"p{p}.ana.hist" in rmap) == bool(analyzers >> p & 1)
        assert (f"p{p}.arp.mac" in rmap) == bool(analyzers >> p & 1)     # the responder: receiving ports
        assert f"p{p}.cap.arm" in rmap
    for reg in rmap:
        other = full[reg.name]
        assert (reg.width, reg.access, reg.depth) == (other.width, other.access, other.depth), reg.name
    assert rmap.size < full.size and rmap.hash != full.hash


def _check_generator_map(rmap, p, config):
    assert rmap[f"p{p}.gen.desc"].depth == config.n_streams
    assert rmap[f"p{p}.gen.tmpl"].depth == config.n_streams * 128
    assert rmap[f"p{p}.gen.stream_tx"].depth == config.n_streams
    assert rmap[f"p{p}.gen.phase2"].width == config.n_streams
    mods = {r.name.split(".")[1] for r in rmap if r.name.startswith(f"p{p}.mod")}
    assert mods == {f"mod{j}" for j in range(config.n_modifiers)}


def _check_analyzer_map(rmap, p, config):
    assert rmap[f"p{p}.ana.hist_uo"].depth == 2 * config.hist_streams
    assert rmap[f"p{p}.ana.hist_used"].width == config.hist_streams
    for reg in (f"p{p}.ana.streams", f"p{p}.ana.seq_errors", f"p{p}.ana.foreign_frames",
                f"p{p}.ana.loss_events"):
        assert (reg in rmap) == config.stream_stats
    assert f"p{p}.ana.gap_max" in rmap


def test_board_presets_are_smaller_than_sim():
    for board in (BOARD_25F, BOARD_45F):
        assert board.n_modifiers < SIM.n_modifiers and board.hist_streams < SIM.hist_streams
    assert BOARD_25F.hist_streams <= BOARD_45F.hist_streams and BOARD_25F.n_modifiers <= BOARD_45F.n_modifiers
    assert build_register_map(BOARD_25F).size < build_register_map(BOARD_45F).size < build_register_map(SIM).size


def test_every_preset_elaborates():
    from amaranth.back import rtlil
    for config in (BOARD_25F, dataclasses.replace(BOARD_25F, responder=False, capture=False, n_modifiers=0,
                                                  n_streams=2)):
        assert "id_config" in rtlil.convert(SimTop(config=config))


def _spread_bank():
    """A bank with registers of every access in several decode groups, wide live ones, and
    windows between them."""
    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    regs = {}
    rng = random.Random(11)
    offset = 0
    for i in range(150):
        access = rng.choice(["rw", "rw", "r", "w"])
        width = rng.choice([1, 5, 16, 32, 48, 64, 96])
        if access == "w":
            width = min(width, 32)
        regs[f"b.r{i}"] = (bank.add(f"b.r{i}", width, access, offset=offset,
                                    reset=rng.getrandbits(width) if access == "rw" else 0),
                           access, width)
        offset += 4 * ((width + 31) // 32)
        if i % 40 == 7:
            offset = align_up(offset, 0x400)             # a gap: the next decode groups
        if i == 60:
            offset = align_up(offset, 0x80)
            bank.add_memory("b.win", 40, 16, offset=offset)
            offset += 0x80
    return bank, regs


def test_every_register_reads_back_through_the_staged_decode():
    """Reads and writes of ~150 registers spread over several 32-word decode groups, with gaps,
    wide read-only registers and a window: each word reads what it holds, unmapped words 0."""
    from amaranth.lib.memory import Memory

    bank, regs = _spread_bank()
    rmap = bank.register_map()
    m = Module()
    m.submodules.bank = bank
    win = bank._windows[0][1]
    m.submodules.mem = mem = Memory(shape=40, depth=16, init=[(i * 0x1234567 + 99) % (1 << 40) for i in range(16)])
    rp = mem.read_port()
    m.d.comb += [rp.addr.eq(win.addr), win.data.eq(rp.data)]
    rng = random.Random(3)
    live = {}
    for name, (sig, access, width) in regs.items():
        if access == "r":
            live[name] = rng.getrandbits(width)
            m.d.comb += sig.eq(live[name])

    async def bench(ctx):
        async def read(word):
            ctx.set(bank.bus.addr, word)
            ctx.set(bank.bus.r_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.r_stb, 0)
            await ctx.tick().repeat(READ_LATENCY)
            return ctx.get(bank.bus.r_data)

        async def write(word, value):
            ctx.set(bank.bus.addr, word)
            ctx.set(bank.bus.w_data, value)
            ctx.set(bank.bus.w_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.w_stb, 0)
            await ctx.tick().repeat(WRITE_TO_READ - 1)

        expect = {}
        for name, (sig, access, width) in regs.items():
            reg = rmap[name]
            if access == "rw":
                value = rng.getrandbits(width)
                for off, word in zip(reg.word_offsets, reg.split(value)):
                    await write(off >> 2, word | (rng.getrandbits(32) << width if width < 32 else 0) & 0xFFFFFFFF)
                assert ctx.get(sig) == value, name
                expect[name] = value
            elif access == "r":
                expect[name] = live[name]
            else:
                expect[name] = 0
        mapped = set()
        for name in regs:
            reg = rmap[name]
            words = [await read(off >> 2) for off in reg.word_offsets]
            assert reg.join(words) == expect[name], name
            mapped |= {off >> 2 for off in reg.word_offsets}
        w = rmap["b.win"]
        words = [await read(off >> 2) for off in w.word_offsets]
        assert w.entries(words) == [(i * 0x1234567 + 99) % (1 << 40) for i in range(16)]
        mapped |= {off >> 2 for off in w.word_offsets}
        for word in range(0, (rmap.size >> 2) + 64):
            if word not in mapped:
                assert await read(word) == 0, hex(word)

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
