"""Shared helpers for the simulation tests: compiling the C++ test drivers with g++."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wirespeed.sim.build import HARNESS_DIR, gateware_defines, write_generated_headers

TESTS_DIR = Path(__file__).resolve().parent
SANITIZE = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer"]


def compile_cxx(out: Path, sources: list[Path], flags: list[str] = SANITIZE) -> Path:
    """Compile a C++ test driver against the harness sources; fail the test on errors."""
    cxx = shutil.which("g++")
    assert cxx, "g++ is needed to build the C++ test drivers"
    generated = write_generated_headers(out.parent / "generated")
    cmd = [cxx, "-std=gnu++17", "-Wall", "-Wextra", "-Werror", *flags, *gateware_defines().split(), f"-I{HARNESS_DIR}",
           f"-I{generated}",
           *map(str, sources), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"compile failed: {' '.join(cmd)}\n{r.stderr[-4000:]}"
    return out


@pytest.fixture(scope="session")
def model_driver(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("model_driver") / "model_driver"
    """The driver linked with every DUT model of the harness (sim/harness/dut_*.cpp)."""
    return compile_cxx(out, [TESTS_DIR / "model_driver.cpp", *sorted(HARNESS_DIR.glob("dut_*.cpp"))])


@pytest.fixture(scope="session")
def eb_driver(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("eb_driver") / "eb_driver"
    return compile_cxx(out, [TESTS_DIR / "eb_driver.cpp", HARNESS_DIR / "etherbone.cpp"])
