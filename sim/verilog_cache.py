"""The simulated tester's RTLIL and Verilog, generated once per gateware and configuration.

Generating the netlist (Amaranth elaboration, then Yosys: :mod:`.netlist`) is about a third of
a cold build, and several builds start from the same design:

* the default simulation and the simulation with a user's RTL device under test
  (:mod:`.dut_rtl`), where the tester is a submodule under another name, use the same
  netlist. Each netlist is kept in ``<cache>/sim/verilog/<key>/`` as module
  ``wirespeed_sim_top``; a build copies it, renaming the module when it asks for another name
  (the name occurs once in Yosys' flattened output: the module line; a file where it does
  not is generated afresh);
* the simulation and the cocotb bench of the same configuration (Amaranth's own Verilog)
  use the same elaboration: the RTLIL is kept in ``<cache>/sim/rtlil/<key>.il``.

Every key covers the gateware package's files, the tool versions, the configuration word
and (for RTLIL) the module name; the netlist's also the netlist script (:func:`~.build.harness_key`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from .build import TOP_MODULE, cache_root, harness_key, hash_gateware
from .partition import Parts

__all__ = ["amaranth_tester_verilog", "tester_rtlil_text", "write_tester_parts", "write_tester_verilog"]

def _locked_entry(entry: Path, make) -> None:
    """Make ``entry`` (a file or folder) with ``make(tmp)`` unless it exists: in a temporary
    path beside it, renamed into place, under a lock so that concurrent builds make it once."""
    if entry.exists():
        return
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / f"{entry.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if entry.exists():
            return
        tmp = Path(tempfile.mkdtemp(prefix=f".build-{entry.name[:12]}-", dir=entry.parent))
        try:
            result = make(tmp)
            os.rename(result, entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def tester_rtlil(config, name: str, key: str, root: Path) -> str:
    """The tester built with ``config`` in RTLIL as module ``name``, without source locations
    (``amaranth.back.rtlil.convert(SimTop(config), name=name, emit_src=False)``), from the
    entry ``key`` under ``root``: the elaboration both forms of the Verilog start from."""

    def make(tmp: Path) -> Path:
        from amaranth.back import rtlil

        from wirespeed.gateware.top import SimTop

        il = tmp / "top.il"
        il.write_text(rtlil.convert(SimTop(config=config), name=name, emit_src=False))
        il.chmod(0o644)
        return il

    entry = Path(root) / f"{key}.il"
    _locked_entry(entry, make)
    return entry.read_text()


def amaranth_verilog(rtlil_text: str) -> str:
    """Amaranth's own Verilog (``amaranth.back.verilog.convert``, which the cocotb benches
    use) from the tester's RTLIL: the step that function takes after the elaboration."""
    from amaranth.back import verilog

    return verilog._convert_rtlil_text(rtlil_text)


def _generate(outdir: Path, name: str, config, rtlil_text: str | None = None) -> list[Path]:
    from .netlist import write_sim_verilog

    return write_sim_verilog(outdir, name=name, config=config, rtlil_text=rtlil_text)


def _netlist_entry(config, key: str, root: Path, rtlil=None) -> Path:
    """The folder of :func:`~.netlist.write_sim_verilog`'s files for ``config`` (as module
    ``wirespeed_sim_top``): the entry ``key`` under ``root``, made first if missing
    (``rtlil()``, if given, returns the tester's RTLIL for it)."""
    from wirespeed.gateware.build import SIM_TOP

    entry = Path(root) / key

    def make(tmp: Path) -> Path:
        folder = tmp / "v"
        _generate(folder, SIM_TOP, config, None if rtlil is None else rtlil())
        for f in folder.iterdir():
            f.chmod(0o644)
        folder.chmod(0o755)
        return folder

    _locked_entry(entry, make)
    return entry


def tester_verilog(outdir, name: str, config, key: str, root: Path, rtlil=None) -> list[Path]:
    """The files of :func:`~.netlist.write_sim_verilog` for ``config`` as module ``name``,
    written into ``outdir`` from the entry ``key`` under ``root`` (made first if missing;
    ``rtlil()``, if given, returns the tester's RTLIL as module ``wirespeed_sim_top`` for it)."""
    from wirespeed.gateware.build import SIM_TOP

    outdir = Path(outdir)
    entry = _netlist_entry(config, key, root, rtlil)
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


def _netlist_key(config) -> str:
    return hashlib.sha256(f"verilog\0{harness_key()}\0config\0{config.word():#010x}".encode()).hexdigest()[:32]


def write_tester_verilog(outdir: Path, name: str, config=None) -> list[Path]:
    """The simulated tester built with ``config`` (default the full simulated tester) as
    Verilog module ``name`` and the LiteEth MAC in ``outdir``, from the netlist cache
    (keyed by :func:`~.build.harness_key` and the configuration word)."""
    from wirespeed.gateware.config import SIM

    config = SIM if config is None else config
    return tester_verilog(outdir, name, config, _netlist_key(config), cache_root() / "verilog",
                          rtlil=lambda: tester_rtlil_text(config, TOP_MODULE))


def write_tester_parts(outdir: Path, config=None) -> Parts:
    """The simulated tester built with ``config`` in two parts (:mod:`.partition`: module
    ``wirespeed_sim_top`` and its part B) in ``outdir``, cut from the netlist cache's entry,
    and that netlist whole (``wirespeed_sim_top.v``, which no build compiles)."""
    from wirespeed.gateware.build import SIM_TOP
    from wirespeed.gateware.config import SIM

    from .partition import write_parts

    config = SIM if config is None else config
    entry = _netlist_entry(config, _netlist_key(config), cache_root() / "verilog",
                           rtlil=lambda: tester_rtlil_text(config, TOP_MODULE))
    macs = [f for f in entry.glob("*.v") if f.stem != SIM_TOP]
    if len(macs) != 1 or not (entry / f"{SIM_TOP}.json").is_file():
        raise RuntimeError(f"netlist cache entry {entry} is incomplete: remove it to rebuild it")
    parts = write_parts(entry / f"{SIM_TOP}.json", macs[0], SIM_TOP, outdir)
    # the netlist the parts are cut from, beside them (what the netlist's tests read)
    shutil.copyfile(entry / f"{SIM_TOP}.v", Path(outdir) / f"{SIM_TOP}.v")
    return parts


def tester_rtlil_text(config=None, name: str = TOP_MODULE) -> str:
    """The tester built with ``config`` (default the full simulated tester) in RTLIL as
    module ``name``, elaborated once per gateware, tool versions, configuration word and name
    (``<cache>/sim/rtlil/``): the simulation's netlist and the cocotb benches' Verilog of
    the same configuration start from it."""
    from wirespeed.gateware.config import SIM

    config = SIM if config is None else config
    h = hashlib.sha256(b"wirespeed-rtlil\0")
    hash_gateware(h)
    h.update(f"name\0{name}\0config\0{config.word():#010x}\0".encode())
    return tester_rtlil(config, name, h.hexdigest()[:32], cache_root() / "rtlil")


def amaranth_tester_verilog(config=None, name: str = TOP_MODULE) -> str:
    """Amaranth's own Verilog of the tester (``amaranth.back.verilog.convert(SimTop(config),
    name=name, emit_src=False)``, one module per component: the cocotb benches' form) from
    :func:`tester_rtlil_text`."""
    return amaranth_verilog(tester_rtlil_text(config, name))
