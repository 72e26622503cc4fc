"""Profile-guided optimisation of a Verilated model (gcc's ``-fprofile-generate`` and
``-fprofile-use``).

A build that trains compiles the model's per-cycle code (Verilator's "fast" files) twice:
first instrumented, then, after a training run of that binary, with the profile the run
wrote, which tells the compiler which branches are taken and which code is hot. The flags
reach the fast model files only (through the make variable that includes their precompiled
header), so the harness and Verilator's runtime compile exactly as in any build and their
shared objects (:mod:`.objcache`) stay shared.

The training run is the simulation idle, without a host, for :data:`TRAINING_CYCLES` clock
cycles: the model evaluates every block on every clock whether it carries traffic or not, so
idle cycles run the code that trials run; what they miss is compiled as without a profile
(``-fprofile-partial-training``). Both compiles happen in the same object folder, so the
profile's file names (gcc derives them from each object's path) match.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal

from .objcache import make_list

__all__ = ["TRAINING_CYCLES", "PROFILE_DIR", "SETTINGS", "training_run", "make_vars", "forget_instrumented", "train"]

#: clock cycles of the training run (about a second instrumented)
TRAINING_CYCLES = 200_000
#: a training run that takes longer than this has hung
TRAINING_TIMEOUT_S = 600
PROFILE_DIR = "profile"
_GENERATE = ("-fprofile-generate", "-fprofile-update=single")
_USE = ("-fprofile-use", "-fprofile-partial-training")
#: what a trained build depends on beyond its sources (part of the cache keys)
SETTINGS = (TRAINING_CYCLES, _GENERATE, _USE)


def training_run(dut_args: Sequence[str] = ("--dut", "loopback")) -> tuple[str, ...]:
    """The harness's arguments for the training run: ``dut_args`` (the DUT models' idle
    wires) and the cycle limit."""
    return (*dut_args, "--max-cycles", str(TRAINING_CYCLES))


def make_vars(prefix: str, out_dir: Path, phase: Literal["generate", "use"]) -> list[str]:
    """make's variables for a compile of the fast model files that writes (``phase``
    ``"generate"``) or reads (``"use"``) the profile in ``out_dir/profile``."""
    flags = _GENERATE if phase == "generate" else _USE
    profile = (Path(out_dir) / PROFILE_DIR).resolve()
    # verilated.mk puts this variable on the fast model files' command lines only
    args = [f"VK_PCH_I_FAST=-include {prefix}__pch.h.fast {' '.join(flags)} -fprofile-dir={profile}"]
    if phase == "generate":
        args.append("USER_LDFLAGS=-fprofile-generate")
    return args


def forget_instrumented(obj_dir: Path, prefix: str, binary: str) -> None:
    """Remove what the instrumented compile made and the profiled one must redo: the fast
    model objects, the archive holding them and the binary."""
    classes = (Path(obj_dir) / f"{prefix}_classes.mk").read_text()
    for name in make_list(classes, "VM_CLASSES_FAST") + make_list(classes, "VM_SUPPORT_FAST"):
        (Path(obj_dir) / f"{name}.o").unlink(missing_ok=True)
    for name in (f"{prefix}__ALL.a", binary):
        (Path(obj_dir) / name).unlink(missing_ok=True)


def train(binary: Path, args: Sequence[str], log: IO[str]) -> int:
    """Run the instrumented ``binary`` with ``args``, its output to ``log``; its exit code."""
    command = [str(binary), *args]
    log.write("$ " + " ".join(command) + "\n")
    log.flush()
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                              timeout=TRAINING_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log.write(f"# the training run did not end within {TRAINING_TIMEOUT_S} s\n")
        return -1
    except OSError as exc:
        log.write(f"# the training run did not start: {exc}\n")
        return -1
    return done.returncode
