"""The simulated tester's Verilog, generated once per gateware and configuration.

Generating the netlist (Amaranth elaboration, then Yosys: :mod:`.netlist`) is about a third of
a cold build, and two builds need the same one: the default simulation and the simulation
with a user's RTL device under test (:mod:`.dut_rtl`), where the tester is a submodule under
another name. Each netlist is kept in ``<cache>/sim/verilog/<key>/`` as module
``wirespeed_sim_top``; a build copies it, renaming the module when it asks for another name
(the name occurs once in Yosys' flattened output: the module line; a file where it does
not is generated afresh). The key is the caller's: it must cover the gateware, the netlist
script, the tool versions and the configuration.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["tester_verilog"]

_DONE = "complete"


def _generate(outdir: Path, name: str, config) -> list[Path]:
    from .netlist import write_sim_verilog

    return write_sim_verilog(outdir, name=name, config=config)


def tester_verilog(outdir, name: str, config, key: str, root: Path) -> list[Path]:
    """The files of :func:`~.netlist.write_sim_verilog` for ``config`` as module ``name``,
    written into ``outdir`` from the entry ``key`` under ``root`` (made first if missing)."""
    from wirespeed.gateware.build import SIM_TOP

    outdir = Path(outdir)
    entry = Path(root) / key
    if not (entry / _DONE).is_file():
        entry.parent.mkdir(parents=True, exist_ok=True)
        with open(entry.parent / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (entry / _DONE).is_file():
                tmp = Path(tempfile.mkdtemp(prefix=f".build-{key[:12]}-", dir=entry.parent))
                try:
                    for f in _generate(tmp, SIM_TOP, config):
                        f.chmod(0o644)
                    (tmp / _DONE).write_text("")
                    tmp.chmod(0o755)
                    shutil.rmtree(entry, ignore_errors=True)
                    os.rename(tmp, entry)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
    outdir.mkdir(parents=True, exist_ok=True)
    files = []
    for f in sorted(entry.glob("*.v")):
        text = f.read_text()
        if f.stem == SIM_TOP:
            if name != SIM_TOP:
                pattern = re.compile(rf"^module {SIM_TOP}\(", re.M)
                if len(re.findall(rf"\b{SIM_TOP}\b", text)) != 1 or not pattern.search(text):
                    return _generate(outdir, name, config)
                text = pattern.sub(f"module {name}(", text, count=1)
            target = outdir / f"{name}.v"
        else:
            target = outdir / f.name
        target.write_text(text)
        files.append(target)
    top = outdir / f"{name}.v"
    return [top, *(f for f in files if f != top)]
