"""wirespeed.regs names every register of every build, and is what the gateware declares
now: regenerate it with ``wirespeed regmap --python --out sw/wirespeed/regs.py``."""

from pathlib import Path

from wirespeed import regs
from wirespeed.cli import main
from wirespeed.gateware.config import PRESETS
from wirespeed.gateware.regnames import declared_module
from wirespeed.gateware.top import build_register_map

MODULE = Path(regs.__file__)


def test_the_committed_module_is_current():
    assert MODULE.read_text() == declared_module(), \
        "run: wirespeed regmap --python --out sw/wirespeed/regs.py"


def test_every_register_of_every_build_has_its_attribute():
    names = set()
    for n in range(2):
        p = regs.port(n)
        for block in (p.gen, *p.mod, p.ana, p.arp, p.cap):
            names |= {getattr(block, f) for f in block.__slots__}
    names |= {getattr(b, f) for b in (regs.ID, regs.TIME, regs.CTRL) for f in b.__slots__}
    for config in PRESETS.values():
        declared = {r.name for r in build_register_map(config)}
        assert declared <= names, sorted(declared - names)
    assert regs.port(1).gen.tx_frames == "p1.gen.tx_frames" and regs.port(0).mod[3].mask == "p0.mod3.mask"
    assert regs.TIME.ns == "time.ns" and regs.port(0) is regs.port(0)


def test_regmap_python_writes_the_module(tmp_path, capsys):
    out = tmp_path / "regs.py"
    assert main(["regmap", "--python", "--out", str(out)]) == 0
    assert out.read_text() == MODULE.read_text()
    capsys.readouterr()
    assert main(["regmap", "--python", "--markdown"]) == 2
    assert capsys.readouterr().err.strip().endswith("choose one of --json, --markdown or --python")
