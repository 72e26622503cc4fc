"""Register addresses: each block declares its own, the bank checks them, and one block's
registers never move another's."""

import pytest

from wirespeed.gateware import generator
from wirespeed.gateware.config import PRESETS, SIM
from wirespeed.gateware.registers import RegisterBank
from wirespeed.gateware.top import build_register_map


def _bank():
    bank = RegisterBank(name="t", version="0", clk_hz=1, n_ports=1)
    bank._MustUse__silence = True         # declared for its map, never elaborated
    return bank


def _two_blocks(extra):
    """A bank of two blocks, block a (at 0x000) with ``extra`` more registers than block b
    (at 0x100)."""
    bank = _bank()
    a, b = bank.block(0x000, 0x100), bank.block(0x100, 0x100)
    a.add("a.cfg", 32, "rw", offset=0x00)
    for i in range(extra):
        a.add(f"a.extra{i}", 64, "r", offset=0x08 + 8 * i)
    b.add("b.cfg", 16, "rw", offset=0x00)
    b.add("b.count", 64, "r", offset=0x04)
    b.add_memory("b.table", 32, 16, offset=0x40)
    return bank.register_map()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_maps_have_no_overlap_and_aligned_windows(name):
    rmap = build_register_map(PRESETS[name])
    spans = sorted((r.offset, r.offset + 4 * r.words * r.depth, r.name) for r in rmap)
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        assert end <= start, f"{first} overlaps {second}"
    for r in rmap:
        if r.depth > 1:
            assert r.offset % (4 * r.words * r.depth) == 0, r.name


def test_a_register_added_to_one_block_moves_no_other():
    before, after = _two_blocks(0), _two_blocks(3)
    assert [r.name for r in after if r.name.startswith("a.")] == ["a.cfg", "a.extra0", "a.extra1", "a.extra2"]
    b_regs = [(r.name, r.offset) for r in before if r.name.startswith("b.")]
    assert b_regs == [(r.name, r.offset) for r in after if r.name.startswith("b.")]
    assert b_regs == [("b.cfg", 0x100), ("b.count", 0x104), ("b.table", 0x140)]


def test_a_generator_register_moves_nothing_in_the_tester(monkeypatch):
    """A register in the generator's free space leaves every other register of the full
    tester where it was."""
    before = {r.name: r.offset for r in build_register_map(SIM)}
    monkeypatch.setattr(generator, "_CONFIG", [*generator._CONFIG, ("extra", 32, 0, "a new register")])
    monkeypatch.setitem(generator.OFFSETS, "extra", 0x54)
    after = {r.name: r.offset for r in build_register_map(SIM)}
    assert after.pop("p0.gen.extra") == 0x10054 and after.pop("p1.gen.extra") == 0x20054
    assert after == before


def test_overlap_is_refused_naming_both_registers():
    bank = _bank()
    bank.add("a.wide", 64, "rw", offset=0x10)
    with pytest.raises(ValueError, match=r"register b\.cfg at 0x14\.\.0x18 overlaps a\.wide at 0x10\.\.0x18"):
        bank.add("b.cfg", 32, "rw", offset=0x14)
    with pytest.raises(ValueError, match=r"register b\.table .*overlaps a\.wide"):
        bank.add_memory("b.table", 32, 8, offset=0x00)


def test_misaligned_window_is_refused_naming_it():
    bank = _bank()
    with pytest.raises(ValueError, match=r"memory b\.table: offset 0x10 is not a multiple of its size \(0x40 bytes\)"):
        bank.add_memory("b.table", 64, 8, offset=0x10)
    with pytest.raises(ValueError, match=r"register b\.cfg: .* not word aligned"):
        bank.add("b.cfg", 8, "rw", offset=0x02)


def test_a_register_outside_its_block_is_refused():
    block = _bank().block(0x100, 0x10)
    block.add("a.cfg", 64, "rw", offset=0x08)
    with pytest.raises(ValueError, match=r"register a\.more: offset 0x10\.\.0x14 is outside its block "
                                         r"\(0x10 bytes at 0x100\)"):
        block.add("a.more", 32, "r", offset=0x10)


def test_a_register_beyond_the_bank_is_refused():
    with pytest.raises(ValueError, match=r"register a\.cfg: 0x40000\.\.0x40004 is beyond the bank's 0x40000 bytes"):
        _bank().add("a.cfg", 32, "rw", offset=0x40000)
