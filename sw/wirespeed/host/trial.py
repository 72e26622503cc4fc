"""The one trial engine (docs/architecture.md, "Timing of a trial"): arm the generators, START
them all on one clock, sample while they run, wait until the gateware's trial timer has stopped
them, drain (wait for frames in flight, longer while the DUT still empties a queue), SNAPSHOT
every counter at one instant and collect the receiving ports' histograms and statistics.

What the generators send is a schedule:

* :class:`Constant`: every flow at one rate for a duration (RFC 2544 26.1-26.3, 26.6);
* :class:`TwoPhase`: one flow whose rate steps down after a time, with no gap (26.5): the two
  phases are two streams of the port, the first with the flow's stream id, the second that id
  + 8 (same stream group), each with its own sequence numbers;
* :class:`Burst`: one flow's frames back to back from idle, a number of them (26.4).

Times are tester time (``time.ns``: simulated time in a simulation), never wall time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed import regs
from wirespeed.gateware.regmap import CMD_SNAPSHOT

from ..ethernet import LINK_BPS, WIRE_OVERHEAD, line_rate_fps
from ..traffic import Flow, PortProgram, ns_to_cycles, period_to_rate, rate_to_period
from . import sequence
from .models import HistogramConfig, PortCounters, TrialResult

__all__ = ["Constant", "TwoPhase", "Burst", "Schedule", "run_trial", "wait_generators_done", "DRAIN_STEPS"]

#: a trial's wait is stretched, by half waits, while frames still arrive, up to this many times
DRAIN_STEPS = 128


@dataclass(frozen=True)
class Constant:
    """Every flow at ``rate_fps`` (per flow) for ``duration_ns``."""

    rate_fps: float
    duration_ns: int


@dataclass(frozen=True)
class TwoPhase:
    """One flow at ``rates_fps[0]`` until ``phase_ns`` after its first frame, then at
    ``rates_fps[1]`` until ``duration_ns``."""

    rates_fps: tuple[float, float]
    phase_ns: int
    duration_ns: int


@dataclass(frozen=True)
class Burst:
    """One flow's ``frames`` frames at minimum inter-frame gap from idle (one burst of the
    generator's burst mode, also for a mix of sizes)."""

    frames: int


Schedule = Constant | TwoPhase | Burst


def run_trial(dev: Any, flows: Sequence[Flow], schedule: Schedule, wait_ns: int,
              histogram: HistogramConfig | None = None, *, lat_def: int = 0,
              event: tuple[int, Callable[[], None]] | None = None, timeline_points: int = 0) -> TrialResult:
    """One trial of ``flows`` on the tester ``dev`` (a :class:`~wirespeed.host.device.Device`)
    following ``schedule`` (see the module doc); after the generators stop, wait ``wait_ns`` for
    frames still in flight, then SNAPSHOT every counter and read the receiving ports' latency
    histograms (binned as ``histogram``, default :class:`HistogramConfig`).

    Each receiving port's per-stream statistics follow the stream group (stream id >> 4) of the
    first flow sent to it (``pN.ana.stream_group``), and its latency definition is ``lat_def``
    (``pN.ana.lat_def``: 0 first bit in to first bit out, 1 store and forward, RFC 1242 3.8).

    ``event``: ``(at_ns, action)``: ``action()`` is called once ``at_ns`` of tester time have
    passed since START (e.g. resetting the DUT, RFC 2544 26.6). ``timeline_points``: that many
    samples of the frame counters, evenly over the trial, for the rate over time."""
    if lat_def not in (0, 1):
        raise ValueError(f"lat_def must be 0 (first bit) or 1 (store and forward), not {lat_def!r}")
    histogram = histogram or HistogramConfig()
    points = {flow.spec.point for flow in flows}
    if len(points) != 1 or len({flow.tx_port for flow in flows}) != len(flows):
        raise ValueError("a trial needs one frame size and at most one flow per sending port")
    if not isinstance(schedule, Constant) and len(flows) != 1:
        raise ValueError("a rate-step or burst trial has one flow")
    if isinstance(schedule, TwoPhase) and not 0 < schedule.phase_ns < schedule.duration_ns:
        raise ValueError(f"the rate step must fall inside the trial: 0 < {schedule.phase_ns} < "
                         f"{schedule.duration_ns} ns")
    if isinstance(schedule, Burst) and schedule.frames < 1:
        raise ValueError(f"a burst needs at least one frame, not {schedule.frames}")
    dev.check_flows(flows)
    control = dev.transport.control_stats()
    dev.stop()
    tx_ports = [flow.tx_port for flow in flows]
    for port in set(range(dev.n_ports)) - set(tx_ports):
        dev.disable_generator(port)
    offered, period, duration, phase_periods = _arm(dev, flows, schedule)
    rx_ports = sorted({flow.rx_port for flow in flows})
    groups: dict[int, int] = {}
    for flow in flows:
        groups.setdefault(flow.rx_port, flow.stream_id >> 4)
    for port in rx_ports:
        dev.configure_histogram(port, histogram)
        dev.write_many({regs.port(port).ana.stream_group: groups[port], regs.port(port).ana.lat_def: lat_def})
    dev.clear()
    model = dev.dut_counters()
    try:
        started = dev.start()
        timeline = [] if isinstance(schedule, Burst) else \
            _timeline(dev, started, duration, timeline_points, tx_ports, rx_ports, event)
        wait_generators_done(dev, tx_ports, started + duration, duration)
        counters, drain = _settle(dev, wait_ns, rx_ports)
    finally:
        if isinstance(schedule, TwoPhase):
            dev.write_many({regs.port(flows[0].tx_port).gen.phase_at: 0, regs.port(flows[0].tx_port).gen.phase2: 0})
    streams, stray = (_phase_streams(dev, flows[0], phase_periods), {}) if phase_periods else \
        _flow_streams(dev, flows, counters)
    histograms = {p: dev.read_histogram(p, histogram, counters[p]) for p in rx_ports}
    responder = dev.read_responder(sorted({*tx_ports, *rx_ports}))
    return TrialResult(frame_size=points.pop(), offered_fps=offered, period_q32=period, duration_ns=duration,
                       wait_ns=wait_ns, flows=list(flows), started_ns=started, counters=counters, lat_def=lat_def,
                       histograms=histograms, drain_steps=drain, timeline=timeline, streams=streams,
                       stray_frames={p: n for p, n in stray.items() if n}, responder=responder,
                       **_trial_end(dev, control, model))


def _arm(dev: Any, flows: Sequence[Flow], schedule: Schedule) -> tuple[float, int, int, list[int]]:
    """Program and enable the generators of ``flows``: (offered rate, the period recorded, the
    trial's duration, each phase's period for a rate step)."""
    if isinstance(schedule, Constant):
        for flow in flows:
            dev.check_port(flow.rx_port)
            rate_to_period(schedule.rate_fps, flow.spec.point, dev.clk_hz)          # checks the rate
            compiled = PortProgram(port=flow.tx_port, streams=(flow.spec,), rate_fps=schedule.rate_fps,
                                   clk_hz=dev.clk_hz).compile()
            dev.load_program(flow.tx_port, compiled, duration_ns=schedule.duration_ns)
            period = compiled.streams[0].descriptor["period"]
        return schedule.rate_fps, period, schedule.duration_ns, []
    flow, = flows
    if isinstance(schedule, TwoPhase):
        periods = [rate_to_period(r, flow.spec.point, dev.clk_hz) for r in schedule.rates_fps]
        second = flow.spec.model_copy(update={"stream_id": flow.stream_id + 8})
        compiled = PortProgram(port=flow.tx_port, streams=(flow.spec, second), rate_fps=min(schedule.rates_fps),
                               clk_hz=dev.clk_hz).compile()
        compiled = dataclasses.replace(compiled, streams=tuple(
            dataclasses.replace(cs, descriptor=cs.descriptor | {"period": p}, fps=period_to_rate(p, dev.clk_hz))
            for cs, p in zip(compiled.streams, periods)))
        dev.load_program(flow.tx_port, compiled, duration_ns=schedule.duration_ns)
        dev.write_many({regs.port(flow.tx_port).gen.phase_at: ns_to_cycles(schedule.phase_ns, dev.clk_hz),
                        regs.port(flow.tx_port).gen.phase2: 0b10})
        return schedule.rates_fps[0], periods[1], schedule.duration_ns, periods
    # burst mode: the frames leave back to back whatever their sizes (a mix's frames would
    # otherwise keep their due times, a mean frame time apart, and short ones would not be at
    # minimum gap)
    line = line_rate_fps(flow.spec.point)
    compiled = PortProgram(port=flow.tx_port, streams=(flow.spec,), rate_fps=line, clk_hz=dev.clk_hz).compile()
    dev.load_program(flow.tx_port, compiled, count=schedule.frames, burst_len=min(schedule.frames, 2**32 - 1))
    cycle = flow.spec.sizes           # the burst's bytes: whole passes of the size sequence and a part
    whole, part = divmod(schedule.frames, len(cycle))
    wire_bytes = whole * sum(cycle) + sum(cycle[:part]) + schedule.frames * WIRE_OVERHEAD
    burst_ns = -(-wire_bytes * 8 * 1_000_000_000 // LINK_BPS)
    return line, compiled.streams[0].descriptor["period"], burst_ns, []


def _flow_streams(dev: Any, flows: Sequence[Flow], counters: dict[int, PortCounters]
                  ) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    """Each flow's stream after a trial (:data:`sequence.STREAM_FIELDS`), by stream id: the
    frames its port sent (its program's only stream) and the receiving port's entry; {} when a
    receiving port does not track sequence numbers (no per-stream statistics). And per
    receiving port, the stray frames: test frames of the trial's streams that port was not
    sent (an ICMP error quoting a test frame back to its sender ends with its signature)."""
    if not all(dev.counts_sequence_errors(f.rx_port) and regs.port(f.rx_port).ana.streams in dev.regmap for f in flows):
        return {}, {}
    wanted: dict[int, list[int]] = {}
    for flow in flows:
        wanted.setdefault(flow.rx_port, []).append(flow.stream_id & 15)
    groups = {flow.rx_port: flow.stream_id >> 4 for flow in reversed(flows)}     # as _run_flows sets them
    strays = {port: [f.stream_id & 15 for f in flows if f.rx_port != port and f.stream_id >> 4 == groups[port]]
              for port in wanted}
    entries = {port: dev.read_stream_entries(port, indices + strays[port]) for port, indices in wanted.items()}
    streams = {}
    for flow in flows:
        entry = entries[flow.rx_port][flow.stream_id & 15]
        streams[flow.stream_id] = {"tx_frames": counters[flow.tx_port].tx_frames,
                                   **{k: entry[k] for k in sequence.STREAM_FIELDS[1:]}}
    return streams, {port: sum(entries[port][i]["rx_frames"] for i in set(strays[port])) for port in wanted}


def _phase_streams(dev: Any, flow: Flow, periods: list[int]) -> dict[int, dict[str, int]]:
    """Each phase's stream of a rate-step trial (:data:`sequence.STREAM_FIELDS`) and its period."""
    sent, got = dev.read_stream_tx(flow.tx_port), dev.read_stream_stats(flow.rx_port)
    streams = {}
    for index, sid in enumerate((flow.stream_id, flow.stream_id + 8)):
        stats = got[sid & 15]
        streams[sid] = {"tx_frames": sent[index][0], **{k: stats[k] for k in sequence.STREAM_FIELDS[1:]},
                        "period_q32": periods[index]}
    return streams


def _trial_end(dev: Any, control: dict[str, int], model: dict[str, dict[str, int]] | None) -> dict[str, Any]:
    """The trial's control-path counters and DUT model counters (since ``control`` and
    ``model`` were taken), as TrialResult fields."""
    after = dev.transport.control_stats()
    fields: dict[str, Any] = {"control": {k: after[k] - control.get(k, 0) for k in after}}
    if model is not None:
        now = dev.dut_counters() or {}
        fields["dut_model"] = {d: {k: v - model.get(d, {}).get(k, 0) for k, v in values.items()}
                               for d, values in now.items()}
    return fields


def _settle(dev: Any, wait_ns: int, rx_ports: Sequence[int]) -> tuple[dict[int, PortCounters], int]:
    """After the generators stopped: wait ``wait_ns`` (RFC 2544 section 23's wait for frames in
    flight) and SNAPSHOT; if the receiving ports counted frames in its second half, the DUT is
    still emptying a deep queue: wait another half and SNAPSHOT again, until a half passes
    without a frame (at most :data:`DRAIN_STEPS` times). So no frame of this trial is left to
    arrive in the next one. Returns the counters and the half waits added."""
    def received(counters: dict[int, PortCounters]) -> int:
        return sum(counters[p].rx_frames + counters[p].other_frames + counters[p].fragment_frames
                   + counters[p].fcs_errors for p in rx_ports)

    half = max(wait_ns // 2, 1)
    dev.wait_ns(wait_ns - half)
    counters = dev.snapshot_counters()
    for added in range(DRAIN_STEPS + 1):
        before = received(counters)
        dev.wait_ns(half)
        counters = dev.snapshot_counters()
        if received(counters) == before:
            return counters, added
    return counters, DRAIN_STEPS


def _timeline(dev: Any, started: int, duration_ns: int, points: int, tx_ports: Sequence[int],
              rx_ports: Sequence[int], event: tuple[int, Callable[[], None]] | None = None) -> list[list[int]]:
    """While a trial runs: ``points`` samples ``[t_ns, tx_frames, rx_frames, errors]`` (t from
    START; frames sent by ``tx_ports`` and received by ``rx_ports`` so far; errors = sequence +
    FCS errors), each taken by a SNAPSHOT at about ``started + i * duration_ns / points``; and
    ``event``'s action at its time. The final SNAPSHOT of the trial replaces these."""
    todo = sorted([(started + i * duration_ns // points, None) for i in range(1, points + 1)]
                  + ([(started + event[0], event[1])] if event else []), key=lambda x: x[0])
    errors = [name for p in rx_ports for name in (regs.port(p).ana.seq_errors, regs.port(p).ana.fcs_errors)
              if name in dev.regmap]      # (no seq_errors without per-stream statistics)
    names = [regs.port(p).gen.tx_frames for p in tx_ports] + [regs.port(p).ana.rx_frames for p in rx_ports] + errors
    samples = []
    for at, action in todo:
        dev.wait_until([], lambda v, at=at: v[regs.TIME.ns] >= at, expected_ns=at)
        if action is not None:
            action()
            continue
        v = dev.transact({regs.CTRL.cmd: CMD_SNAPSHOT}, [*names, regs.TIME.ns])
        samples.append([v[regs.TIME.ns] - started, sum(v[regs.port(p).gen.tx_frames] for p in tx_ports),
                        sum(v[regs.port(p).ana.rx_frames] for p in rx_ports), sum(v[name] for name in errors)])
    return samples


def wait_generators_done(dev: Any, ports: Sequence[int], end_ns: int, duration_ns: int) -> None:
    """Poll ``pN.gen.running`` until every port has stopped; the trial timer must stop it by
    ``end_ns`` (plus the last frame and a margin)."""
    names = [regs.port(port).gen.running for port in ports]
    margin = 1_000_000 + duration_ns // 10
    dev.wait_until(names, lambda v: not any(v[n] for n in names), expected_ns=end_ns, deadline_ns=end_ns + margin)
