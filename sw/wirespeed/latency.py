"""Latency figures in both RFC 1242 3.8 definitions, calibrated or raw.

The analyzer measures one definition per trial (``pN.ana.lat_def``, docs/analyzer.md):

* ``bit_forwarding`` (``lat_def`` 0): first bit in to first bit out, ``rx_ts - tx_ts``;
* ``store_and_forward`` (``lat_def`` 1): last bit in to first bit out,
  ``rx_ts - tx_ts - 8 * L`` ns (L frame bytes with FCS; the hardware clamps a negative value
  to 0).

For a trial of one frame size the other definition is exact arithmetic: every frame's
latency shifts by the same ``8 * L`` ns, so min, max, mean and percentiles shift by it and
the standard deviation and jitter do not change. That holds only when every frame of the
trial has the same length, and only when no measured store-and-forward value was clamped at
0 (a frame left the DUT before its last bit went in: a cut-through DUT); otherwise the other
definition is not reported (``available`` False, with the reason), never guessed.

Calibration (:mod:`wirespeed.calibration`) subtracts the tester's own fixed pipeline delay
(transmit timestamp to wire, wire to receive timestamp; 200 ns in this gateware), measured on
a loopback cable, from every figure of both definitions: a constant shift again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from .host.models import PERCENTILES, Latency, LatencyHistogram, TrialResult

__all__ = ["BIT_FORWARDING", "STORE_AND_FORWARD", "DEFINITION_KEYS", "DEFINITION_NAMES", "LAT_DEF",
           "definition_of", "LatencyFigures", "latency_figures", "NS_PER_BYTE"]

BIT_FORWARDING, STORE_AND_FORWARD = "bit_forwarding", "store_and_forward"
DEFINITION_KEYS = (BIT_FORWARDING, STORE_AND_FORWARD)
LAT_DEF = {BIT_FORWARDING: 0, STORE_AND_FORWARD: 1}       # pN.ana.lat_def
DEFINITION_NAMES = {
    BIT_FORWARDING: "first bit in to first bit out (bit forwarding, RFC 1242 3.8)",
    STORE_AND_FORWARD: "last bit in to first bit out (store and forward, RFC 1242 3.8)",
}
NS_PER_BYTE = 8   # 1 Gb/s


def definition_of(lat_def: int) -> str:
    """The definition key of a ``pN.ana.lat_def`` value."""
    for key, value in LAT_DEF.items():
        if value == lat_def:
            return key
    raise ValueError(f"lat_def must be 0 or 1, not {lat_def!r}")


class LatencyFigures(BaseModel):
    """One definition's latency statistics of one trial, over every frame received."""

    definition: Literal["bit_forwarding", "store_and_forward"]
    name: str
    source: Literal["measured", "derived"]
    how: str = Field(description="how the figures were obtained")
    available: bool = True
    calibrated: bool = False
    pipeline_delay_ns: int | None = Field(None, description="tester pipeline delay subtracted (calibration)")
    min_ns: int | None = None
    avg_ns: float | None = None
    max_ns: int | None = None
    stddev_ns: float | None = None
    jitter_ns: float | None = None
    frames: int = 0
    bin_ns: int | None = None
    percentiles_ns: dict[str, int | None] = Field(default_factory=dict)


Pipeline = Callable[[int, int, int], int]     # (tx_port, rx_port, frame_size) -> ns


def _frame_sizes(trial: TrialResult) -> set[int]:
    """Every frame size the trial sent (a mix: each of its sizes)."""
    return {size for flow in trial.flows for size in flow.spec.sizes}


def latency_figures(trial: TrialResult, pipeline: Pipeline | None = None) -> list[LatencyFigures]:
    """Both definitions of ``trial``'s latency, the measured one first; empty when no frame
    was received. ``pipeline(tx_port, rx_port, frame_size)`` gives the calibrated tester
    pipeline delay to subtract (None: raw figures, ``calibrated`` False)."""
    raw = trial.latency
    if raw is None:
        return []
    measured = definition_of(trial.lat_def)
    other = STORE_AND_FORWARD if measured == BIT_FORWARDING else BIT_FORWARDING
    sizes = _frame_sizes(trial)

    # per receiving port: the pipeline delay of the flows into it
    offsets: dict[int, int] | None = None
    calibration_note = "raw: includes the tester pipeline delay (not calibrated)"
    if pipeline is not None:
        offsets = {}
        for port in sorted({f.rx_port for f in trial.flows}):
            values = {pipeline(f.tx_port, f.rx_port, size) for f in trial.flows if f.rx_port == port
                      for size in set(f.spec.sizes)}
            if len(values) != 1:
                offsets = None
                calibration_note = (f"not calibrated: the frames into port {port} (flows and sizes) have "
                                    f"different pipeline delays ({sorted(values)} ns)")
                break
            offsets[port] = values.pop()
        if offsets is not None:
            calibration_note = "calibrated: tester pipeline delay subtracted"
    delays = set(offsets.values()) if offsets else set()
    pipeline_ns = delays.pop() if len(delays) == 1 else None

    def figures(definition: str, source: str, how: str, shift: int) -> LatencyFigures:
        port_shift = {p: shift + (offsets[p] if offsets else 0) for p in {f.rx_port for f in trial.flows}}
        return LatencyFigures(definition=definition, name=DEFINITION_NAMES[definition], source=source,
                              how=f"{how}; {calibration_note}", calibrated=offsets is not None,
                              pipeline_delay_ns=pipeline_ns, **_shifted(trial, raw, port_shift))

    result = [figures(measured, "measured", f"measured by the analyzers (lat_def {trial.lat_def})", 0)]
    if len(sizes) != 1:
        result.append(LatencyFigures(definition=other, name=DEFINITION_NAMES[other], source="derived",
                                     available=False, how="not derived: the trial mixes frame sizes "
                                     f"({sorted(sizes)} B), so the 8 * L ns shift differs per frame"))
        return result
    size = sizes.pop()
    if measured == STORE_AND_FORWARD and raw.min_ns == 0:
        result.append(LatencyFigures(definition=other, name=DEFINITION_NAMES[other], source="derived",
                                     available=False, how="not derived: measured store-and-forward latencies "
                                     "reached 0, where the analyzer clamps negative values (a frame left the DUT "
                                     "before its last bit went in: cut-through); measure bit forwarding instead"))
        return result
    sign = -1 if measured == BIT_FORWARDING else 1       # store and forward = bit forwarding - 8 L
    how = (f"derived from the measured {measured.replace('_', ' ')} latency: "
           f"{'minus' if sign < 0 else 'plus'} 8 ns x {size} B = {NS_PER_BYTE * size} ns per frame "
           "(one frame size, exact)")
    result.append(figures(other, "derived", how, -sign * NS_PER_BYTE * size))
    return result


def _shifted(trial: TrialResult, raw: Latency, port_shift: Mapping[int, int]) -> dict[str, Any]:
    """Latency statistics of ``trial`` (whose raw latency is ``raw``) with ``port_shift[p]`` ns
    subtracted from every frame received on port p (exact from the counters: sums and sums of
    squares)."""
    ports = sorted(port_shift)
    counters = {p: trial.counters[p] for p in ports}
    frames = sum(c.rx_frames for c in counters.values())
    total = sum(c.lat_sum - c.rx_frames * port_shift[p] for p, c in counters.items())
    sq = sum(c.lat_sq_sum - 2 * port_shift[p] * c.lat_sum + c.rx_frames * port_shift[p] ** 2
             for p, c in counters.items())
    if len(set(port_shift.values())) == 1:     # one shift: the spread is the raw one, exactly
        mean, stddev = raw.avg_ns - next(iter(port_shift.values())), raw.stddev_ns
    else:
        mean = total / frames
        stddev = max(0.0, sq / frames - mean * mean) ** 0.5
    low = min(c.lat_min - port_shift[p] for p, c in counters.items() if c.rx_frames)
    high = max(c.lat_max - port_shift[p] for p, c in counters.items() if c.rx_frames)
    pct = dict(raw.percentiles_ns)
    shifts = {port_shift[p] for p in ports if p in trial.histograms}
    if raw.percentiles_ns and len(shifts) == 1:
        (only,) = shifts
        pct = {k: None if v is None else v - only for k, v in raw.percentiles_ns.items()}
    elif raw.percentiles_ns:
        pct = _merged_percentiles([(trial.histograms[p], port_shift[p]) for p in ports if p in trial.histograms],
                                  low, high)
    return dict(min_ns=low, max_ns=high, avg_ns=mean, stddev_ns=stddev, jitter_ns=raw.jitter_ns,
                frames=frames, bin_ns=raw.bin_ns, percentiles_ns=pct)


def _merged_percentiles(hists: list[tuple[LatencyHistogram, int]], low: int, high: int) -> dict[str, int | None]:
    """:data:`PERCENTILES` over several ports' histograms whose frames take different shifts
    (each (histogram, ns subtracted)): every bin at its shifted upper edge, merged in edge order,
    as :meth:`LatencyHistogram.percentiles` does for one; within ``low`` .. ``high``."""
    edges = sorted((h.offset_ns + (i + 1) * h.bin_ns - shift, n) for h, shift in hists for i, n in h.counts.items())
    total = sum(h.total for h, _ in hists)
    under = sum(h.underflow for h, _ in hists)
    out: dict[str, int | None] = {}
    for q in PERCENTILES:
        rank, seen, value = q / 100 * total, under, None
        if seen < rank:
            for edge, n in edges:
                seen += n
                if seen >= rank:
                    value = min(max(edge, low), high)
                    break
        out[f"p{q:g}"] = value
    return out
