"""TrafficGenerator against the golden model (wirespeed.traffic.expected_frames, frames built
by scapy from the streams' logical fields): every byte of every frame, across frame sizes,
backpressure patterns, header kinds, size modes, modifiers and trial modes; and the launch
times against the streams' due times."""

import random

import pytest
from genbench import GenBench

from wirespeed.gateware import frame as F
from wirespeed.host.program import port_program_writes
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec, dissect, expected_frames

BACKPRESSURE = {
    "none": lambda rng: (lambda cycle: True),
    "random50": lambda rng: (lambda cycle: rng.random() < 0.5),
    "one_in_four": lambda rng: (lambda cycle: cycle % 4 == 0),
}


def run_program(program, *, count=None, duration_cycles=None, ready="none", seed=1, burst=None,
                max_cycles=200_000, phase_at=0, phase2=0, extra=None):
    compiled = program.compile()
    bench = GenBench()
    memories, registers = port_program_writes(0, compiled)
    regs = {name.split(".", 1)[1]: value for name, value in registers.items()}
    if count is not None:
        regs |= {"gen.mode": 1, "gen.count": count}
    else:
        regs |= {"gen.mode": 0, "gen.duration": duration_cycles}
    if burst:
        regs |= {"gen.burst_len": burst[0], "gen.burst_gap": burst[1]}
    if phase_at or phase2:
        regs |= {"gen.phase_at": phase_at, "gen.phase2": phase2}
    regs |= extra or {}
    regs["gen.enable"] = 1
    tables = {name.split(".")[-1]: entries for name, entries in memories.items()}
    bench.load(tables | {"regs": regs})
    frames, info = bench.run(ready=BACKPRESSURE[ready](random.Random(seed)), max_cycles=max_cycles)
    want = list(expected_frames(compiled, count=count, duration_cycles=duration_cycles, phase_at=phase_at,
                                phase2=phase2))
    return frames, info, want


def check_frames(frames, info, want):
    assert info["bubbles"] == 0, "valid dropped inside a frame"
    assert len(frames) == len(want), (len(frames), len(want))
    for got, exp in zip(frames, want):
        data, firsts, _ = got
        sig = F.parse_signature(data)
        assert sig is not None, f"frame {exp.index}: no signature"
        assert sig[:2] == (exp.stream_id, exp.seq), (sig, exp)
        assert data == exp.build(sig[2]), f"frame {exp.index} (stream {exp.stream}, seq {exp.seq}) differs"
        assert firsts[0] == 1 and sum(firsts) == 1
        assert dissect(data)[1], f"frame {exp.index}: checksum"
    assert info["tx_frames"] == len(want)
    assert info["tx_bytes"] == sum(e.length for e in want)


@pytest.mark.parametrize("ready", sorted(BACKPRESSURE))
@pytest.mark.parametrize("size", [64, 65, 66, 67, 71, 99, 127, 128, 1518])
def test_ipv4_sizes_and_backpressure(size, ready):
    program = PortProgram(streams=(StreamSpec(size=str(size), udp_checksum=True),), rate_pct=100)
    check_frames(*run_program(program, count=3, ready=ready))


@pytest.mark.slow
def test_jumbo():
    program = PortProgram(streams=(StreamSpec(size="9018"),), rate_pct=100)
    check_frames(*run_program(program, count=2, ready="random50"))


@pytest.mark.slow
@pytest.mark.parametrize("ready", ["none", "random50"])
def test_vlan_ipv6_and_size_modes(ready):
    streams = (
        StreamSpec(vlan=100, pcp=5, size="66-200/33", udp_checksum=True, src_port=1000,
                   modifiers=(ModifierSpec(field="vlan", count=5, step=3),
                              ModifierSpec(field="src_port", mode="decrement", count=7))),
        StreamSpec(src_ip="2001:2::1", dst_ip="2001:2:0:1::1", size="rand:82-300",
                   modifiers=(ModifierSpec(field="dst_ip", mode="random", count=1000),
                              ModifierSpec(field="src_mac", count=4))),
        StreamSpec(vlan=7, src_ip="2001:2::5", dst_ip="2001:2:0:1::9", size="imix:bcg"),
        StreamSpec(size="seq:65,67,1001", modifiers=(ModifierSpec(field="src_ip", count=3),
                                                      ModifierSpec(field="dst_ip", count=2, chain=True))),
    )
    program = PortProgram(streams=streams, rate_pct=60, seed=99)
    check_frames(*run_program(program, count=40, ready=ready))


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


PHASE_STREAMS = (StreamSpec(size="64", weight=3), StreamSpec(size="100", weight=1),
                 StreamSpec(size="80", weight=2, src_port=2000,
                            modifiers=(ModifierSpec(field="src_port", count=5),)))


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


@pytest.mark.slow
def test_phase_switch_count_mode_and_backpressure():
    """Count mode: the phase 1 stream stops at phase_at, the phase 2 stream sends the rest
    of the count; the frames are the model's under backpressure."""
    program = PortProgram(streams=PHASE_STREAMS[:2], rate_pct=30)
    frames, info, want, _ = run_phase(program, phase_at=1200, phase2=0b10, count=25, ready="random50")
    check_frames(frames, info, want)
    assert len(want) == 25 and want[-1].stream == 1
    assert {e.stream for e in want if e.due < 1200 << 32} == {0}


def test_phase_off_is_the_plain_schedule():
    """phase_at = 0: phase2 is ignored, the frames and launch times are those of the plain
    schedule (expected_frames)."""
    program = PortProgram(streams=PHASE_STREAMS, rate_pct=45)
    frames, info, want, compiled = run_phase(program, phase_at=0, phase2=0b110, duration_cycles=3000)
    plain = list(expected_frames(compiled, duration_cycles=3000))
    assert [(e.stream, e.seq, e.due) for e in want] == [(e.stream, e.seq, e.due) for e in plain]
    check_frames(frames, info, plain)
    check_launch_times(frames, plain)
