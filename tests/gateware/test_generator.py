"""TrafficGenerator against the golden model (wirespeed.traffic.expected_frames, frames built
by scapy from the streams' logical fields): every byte of every frame, across frame sizes,
backpressure patterns, header kinds, size modes, modifiers and trial modes; and the launch
times against the streams' due times. The check, and the longest cases, which run in Verilator,
are in cocotb/gencheck.py."""

import random
import sys
from pathlib import Path

import pytest
from genbench import GenBench

from wirespeed.gateware import frame as F
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec, expected_frames

sys.path.insert(0, str(Path(__file__).parent / "cocotb"))
from gencheck import BACKPRESSURE, MAX_CYCLES, PHASE_STREAMS, check_frames, expected, ipv4_program, trial_writes


def run_program(program, *, ready="none", seed=1, max_cycles=MAX_CYCLES, **trial):
    compiled, memories, registers = trial_writes(program, **trial)
    bench = GenBench()
    regs = {name.split(".", 1)[1]: value for name, value in registers.items()}
    tables = {name.split(".")[-1]: entries for name, entries in memories.items()}
    bench.load(tables | {"regs": regs})
    frames, info = bench.run(ready=BACKPRESSURE[ready](random.Random(seed)), max_cycles=max_cycles)
    return frames, info, expected(compiled, **trial)


# 1518 bytes, jumbo frames, the VLAN/IPv6 mix and the count-mode phase switch run in Verilator
# (gencheck.CASES, tests/gateware/test_cocotb_blocks.py::test_gen_golden)
@pytest.mark.parametrize("ready", sorted(BACKPRESSURE))
@pytest.mark.parametrize("size", [64, 65, 66, 67, 71, 99, 127, 128])
def test_ipv4_sizes_and_backpressure(size, ready):
    check_frames(*run_program(ipv4_program(size), count=3, ready=ready))


def test_chained_flows_at_line_rate():
    """Nested walks (the seed lab's 100 sources x 20 destinations, scaled to 10 x 4 here; the
    full 2000 run in the Verilator system tests): every pair, back to back at 64 bytes."""
    stream = StreamSpec(modifiers=(ModifierSpec(field="src_ip", count=10),
                                   ModifierSpec(field="dst_ip", count=4, chain=True)))
    program = PortProgram(streams=(stream,), rate_pct=100)
    frames, info, want = run_program(program, count=40)
    check_frames(frames, info, want)
    pairs = {(e.fields["src_ip"], e.fields["dst_ip"]) for e in want}
    assert len(pairs) == 40
    launches = [f[2] for f in frames]
    assert {b - a for a, b in zip(launches, launches[1:])} == {84}, "not back to back at 64 bytes"


def test_duration_mode_ignores_the_count_register():
    """A duration trial sends every frame due before its end whatever ``count`` holds (a
    count left by an earlier count-mode trial must not cut it short)."""
    program = PortProgram(streams=(StreamSpec(size="64"),), rate_pct=50)
    frames, info, want = run_program(program, duration_cycles=3000, extra={"gen.count": 3})
    assert len(want) > 3
    check_frames(frames, info, want)


@pytest.mark.slow
def test_sixteen_streams_order_and_due_times():
    """16 streams at different rates: frames leave in due-time order, each at its due time
    when the line is free (the launch cycle of each frame is checked)."""
    streams = tuple(StreamSpec(size=str(64 + 8 * i), weight=1 + i % 3) for i in range(16))
    program = PortProgram(streams=streams, rate_pct=40)
    frames, info, want = run_program(program, duration_cycles=6000)
    check_frames(frames, info, want)
    launches = [cycle - 1 for _, _, cycle in frames]          # the sink is always ready
    dues = [e.due >> 32 for e in want]                         # floor: the cycle it is due
    assert launches[0] <= 24, "first frame: scan and prepare after START"
    offset = min(la - d for la, d in zip(launches[1:], dues[1:]))  # START to the scheduler's cycle 0
    line_free = launches[0] + want[0].length + F.WIRE_OVERHEAD
    for launch, due, exp in list(zip(launches, dues, want))[1:]:
        assert launch == max(due + offset, line_free), (exp.index, launch, due + offset, line_free)
        line_free = launch + exp.length + F.WIRE_OVERHEAD


def test_bursts():
    """Bursts of 5 frames back to back, 300 idle cycles between bursts."""
    program = PortProgram(streams=(StreamSpec(size="64"), StreamSpec(size="100")), rate_pct=10)
    frames, info, want = run_program(program, count=15, burst=(5, 300))
    check_frames(frames, info, want)
    launches = [f[2] for f in frames]
    gaps = [b - a for a, b in zip(launches, launches[1:])]
    sizes = [e.length for e in want]
    for i, gap in enumerate(gaps):
        if (i + 1) % 5:
            assert gap == sizes[i] + F.WIRE_OVERHEAD, (i, gaps)
        else:
            assert gap > 300, (i, gaps)


# --- rate phase switch (pN.gen.phase_at, pN.gen.phase2) ---------------------------------


def run_phase(program, *, phase_at, phase2, count=None, duration_cycles=None, ready="none"):
    compiled = program.compile()
    frames, info, want = run_program(program, count=count, duration_cycles=duration_cycles, ready=ready,
                                     phase_at=phase_at, phase2=phase2)
    return frames, info, want, compiled


def check_launch_times(frames, want):
    """Every frame leaves at its due time (trial cycle 0 = the first frame's launch) or when
    the line frees up; the transmit timestamp is ``now`` at launch (8 ns a cycle here)."""
    launches = [cycle - 1 for _, _, cycle in frames]          # the sink is always ready
    assert want[0].due == 0
    zero = launches[0]
    line_free = 0
    ts0 = F.parse_signature(frames[0][0])[2] - 8 * launches[0]
    for (data, _, _), launch, exp in zip(frames, launches, want):
        due = exp.due >> 32                                    # floor: the cycle it is due
        assert launch == max(zero + due, line_free), (exp.index, exp.stream, launch, zero + due, line_free)
        assert F.parse_signature(data)[2] - 8 * launch == ts0, "transmit timestamp offset"
        line_free = launch + exp.length + F.WIRE_OVERHEAD
    return zero, launches


@pytest.mark.parametrize("phase_at", [2501, 3000])
def test_phase_switch_duration(phase_at):
    """Streams 0 and 1 until phase_at, stream 2 from phase_at: the phase 1 frames are all due
    before phase_at, the first phase 2 frame leaves exactly phase_at cycles after the trial's
    cycle 0 when the line is idle then (2501), or as soon as the last phase 1 frame has left
    (3000), exact counts, every frame at its due time."""
    program = PortProgram(streams=PHASE_STREAMS, rate_pct=45)
    duration = 6000
    frames, info, want, compiled = run_phase(program, phase_at=phase_at, phase2=0b100,
                                             duration_cycles=duration)
    check_frames(frames, info, want)
    zero, launches = check_launch_times(frames, want)
    periods = [cs.descriptor["period"] for cs in compiled.streams]
    per_stream = [sum(1 for e in want if e.stream == i) for i in range(3)]
    assert per_stream[0] == -(-(phase_at << 32) // periods[0])       # k * period < phase_at
    assert per_stream[1] == -(-(phase_at << 32) // periods[1])
    assert per_stream[2] == -(-((duration - phase_at) << 32) // periods[2])
    firsts = [n for n, e in enumerate(want) if e.stream == 2]
    assert all(e.due < phase_at << 32 for e in want if e.stream != 2)
    assert all(n < firsts[0] for n, e in enumerate(want) if e.stream != 2)
    prev = firsts[0] - 1
    free = launches[prev] + want[prev].length + F.WIRE_OVERHEAD - zero    # the line frees up
    if phase_at == 2501:
        assert free < phase_at, "the test wants the line idle at phase_at"
        assert launches[firsts[0]] - zero == phase_at, "first phase 2 frame not at phase_at"
    else:
        assert free > phase_at, "the test wants a phase 1 frame on the line at phase_at"
        assert launches[firsts[0]] - zero == free
    assert info["tx_frames"] == sum(per_stream)


def test_phase_off_is_the_plain_schedule():
    """phase_at = 0: phase2 is ignored, the frames and launch times are those of the plain
    schedule (expected_frames)."""
    program = PortProgram(streams=PHASE_STREAMS, rate_pct=45)
    frames, info, want, compiled = run_phase(program, phase_at=0, phase2=0b110, duration_cycles=3000)
    plain = list(expected_frames(compiled, duration_cycles=3000))
    assert [(e.stream, e.seq, e.due) for e in want] == [(e.stream, e.seq, e.due) for e in plain]
    check_frames(frames, info, plain)
    check_launch_times(frames, plain)
