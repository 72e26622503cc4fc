"""The generator's golden-model sweeps (gencheck.CASES) in Verilator: the wrapper's generator
output cut from the MAC (``tap``), the case's backpressure on its ready, every frame checked
against the model as the Amaranth-simulator bench checks it (gencheck.check_frames). The case is
named by ``WS_GEN_CASE``; run from tests/gateware/test_cocotb_blocks.py."""

import os
import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from csr import pulse
from gen_blocks import Bench
from gencheck import BACKPRESSURE, CASES, MAX_CYCLES, check_frames, expected, trial_writes


@cocotb.test()
async def golden_case(dut):
    program, trial, pattern, check_model = CASES[os.environ["WS_GEN_CASE"]]
    ready = BACKPRESSURE[pattern](random.Random(1))
    b = Bench(dut)
    await b.setup(with_sink=False)
    dut.tap.value = 1
    compiled, memories, registers = trial_writes(program, **trial)
    for name, entries in memories.items():
        for index, value in entries.items():
            await b.csr.write_entry(name, index, value)
    for name, value in registers.items():
        await b.csr.write(name, value)
    await pulse(dut, "clear")
    await ClockCycles(dut.clk, 3)
    await pulse(dut, "start")
    frames, data, firsts, bubbles, first_cycle, cycle = [], None, None, 0, 0, 0
    while cycle < MAX_CYCLES:
        r = int(bool(ready(cycle)))
        dut.tap_ready.value = r
        await ReadOnly()
        valid = int(dut.gen_valid.value)
        if data is not None and not valid:
            bubbles += 1
        if valid and r:
            if int(dut.gen_first.value):
                data, firsts, first_cycle = bytearray(), [], cycle
            data.append(int(dut.gen_data.value))
            firsts.append(int(dut.gen_first.value))
            if int(dut.gen_last.value):
                frames.append((bytes(data), firsts, first_cycle))
                data = None
        if not int(dut.running.value) and cycle > 2:
            break
        await RisingEdge(dut.clk)
        cycle += 1
    await RisingEdge(dut.clk)
    dut.tap_ready.value = 1
    info = {"bubbles": bubbles, **await b.counters()}
    want = expected(compiled, **trial)
    if check_model:
        check_model(want)
    check_frames(frames, info, want)
    dut._log.info("%d frames in %d cycles", len(frames), cycle)
