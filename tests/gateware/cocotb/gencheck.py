"""The traffic generator against its golden model (wirespeed.traffic.expected_frames), shared by
the Amaranth-simulator bench (tests/gateware/test_generator.py, genbench.py) and the Verilator
one (cocotb/gen_golden.py): a trial's register writes, the frames the model expects, the
backpressure patterns and the byte-for-byte check. Plain Python: no simulator imported here.

``CASES`` are the sweeps run in Verilator (test_cocotb_blocks.py, one pytest parameter each):
long trials (jumbo and 1518-byte frames, many frames under backpressure) at the Verilated
model's speed; the Amaranth simulator runs the others."""

from wirespeed.gateware import frame as F
from wirespeed.host.program import port_program_writes
from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec, dissect, expected_frames

BACKPRESSURE = {
    "none": lambda rng: (lambda cycle: True),
    "random50": lambda rng: (lambda cycle: rng.random() < 0.5),
    "one_in_four": lambda rng: (lambda cycle: cycle % 4 == 0),
}
#: a trial that runs this long has not ended (its frames are then short of the model's)
MAX_CYCLES = 200_000


def trial_writes(program, *, count=None, duration_cycles=None, burst=None, phase_at=0, phase2=0, extra=None):
    """``(compiled, memories, registers)``: the program compiled, its memory windows
    (full name -> {entry: value}) and the port's registers (full name -> value, ``enable``
    last) for a trial of ``count`` frames or ``duration_cycles`` clocks."""
    compiled = program.compile()
    memories, registers = port_program_writes(0, compiled)
    trial = {"mode": 1, "count": count} if count is not None else {"mode": 0, "duration": duration_cycles}
    if burst:
        trial |= {"burst_len": burst[0], "burst_gap": burst[1]}
    if phase_at or phase2:
        trial |= {"phase_at": phase_at, "phase2": phase2}
    registers |= {f"p0.gen.{name}": value for name, value in trial.items()}
    registers |= {f"p0.{name}": value for name, value in (extra or {}).items()}
    registers["p0.gen.enable"] = 1
    return compiled, memories, registers


def expected(compiled, *, count=None, duration_cycles=None, phase_at=0, phase2=0, **_):
    return list(expected_frames(compiled, count=count, duration_cycles=duration_cycles, phase_at=phase_at,
                                phase2=phase2))


def check_frames(frames, info, want):
    """``frames``: (bytes, first flags, first cycle) each, as the sink took them; ``info``:
    the bubbles inside frames and the generator's tx_frames and tx_bytes."""
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


PHASE_STREAMS = (StreamSpec(size="64", weight=3), StreamSpec(size="100", weight=1),
                 StreamSpec(size="80", weight=2, src_port=2000,
                            modifiers=(ModifierSpec(field="src_port", count=5),)))

VLAN_IPV6_STREAMS = (
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


def ipv4_program(size):
    return PortProgram(streams=(StreamSpec(size=str(size), udp_checksum=True),), rate_pct=100)


def _phase_count_mode(want):
    """The phase 1 stream stops at phase_at, the phase 2 stream sends the rest of the count."""
    assert len(want) == 25 and want[-1].stream == 1
    assert {e.stream for e in want if e.due < 1200 << 32} == {0}


#: name -> (program, trial keywords, backpressure, a check of the model's frames or None)
CASES = {
    **{f"ipv4_1518_{ready}": (ipv4_program(1518), {"count": 3}, ready, None) for ready in sorted(BACKPRESSURE)},
    "jumbo": (PortProgram(streams=(StreamSpec(size="9018"),), rate_pct=100), {"count": 2}, "random50", None),
    **{f"vlan_ipv6_and_size_modes_{ready}": (PortProgram(streams=VLAN_IPV6_STREAMS, rate_pct=60, seed=99),
                                             {"count": 40}, ready, None) for ready in ("none", "random50")},
    "phase_switch_count_mode_and_backpressure": (PortProgram(streams=PHASE_STREAMS[:2], rate_pct=30),
                                                 {"phase_at": 1200, "phase2": 0b10, "count": 25}, "random50",
                                                 _phase_count_mode),
}
