"""Per-stream results: what each generator stream sent (``pN.gen.stream_tx``) beside what the
receiving port counted for it (``pN.ana.streams``), after a SNAPSHOT.

Field meanings, sequence definitions (RFC 4689 3.3) and ``stream_group`` are in
docs/analyzer.md. Entry i of port N's table counts stream id ``stream_group * 16 + i``; the
generator counts by stream *index* in the port's program, so a stream is named here by both
(:class:`StreamRef`). Loss includes the tail: frames sent after the last sequence number
received (``tx_frames - next_seq`` when positive), which the receive table cannot see.

Latencies are raw tester latencies in ns (pipeline delay included), by the definition the
receiving port's ``pN.ana.lat_def`` selects (RFC 1242 3.8).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, computed_field

from wirespeed import regs
from wirespeed.gateware import streamdesc as sd
from wirespeed.gateware.regmap import CMD_SNAPSHOT

from ..traffic import Flow
from .models import HistogramConfig, LatencyHistogram
from .sequence import tail_loss

if TYPE_CHECKING:
    from .device import Device

__all__ = ["StreamRef", "StreamResult", "stream_results", "stream_refs", "tail_loss"]

N_TABLE = 16     # entries of pN.ana.streams (and streams of a generator)


class StreamRef(BaseModel):
    """One generator stream and the port that receives it: ``tx_index`` is the stream's index
    in port ``tx_port``'s program (its ``pN.gen.stream_tx`` entry), ``stream_id`` the id in its
    frames' signatures."""

    model_config = ConfigDict(frozen=True)

    tx_port: int = Field(ge=0)
    rx_port: int = Field(ge=0)
    tx_index: int = Field(0, ge=0, lt=N_TABLE)
    stream_id: int = Field(ge=0, le=0xFFFF)


class StreamResult(BaseModel):
    """One stream after a trial: sent, received, sequence counters and latency."""

    tx_port: int
    rx_port: int
    stream_id: int
    tx_frames: int
    tx_bytes: int
    rx_frames: int
    rx_bytes: int
    fcs_errors: int
    in_order: int
    lost: int = Field(description="sequence numbers never received, tail loss included")
    duplicate: int
    out_of_order: int
    late: int
    latency_min_ns: int | None = None
    latency_avg_ns: float | None = None
    latency_max_ns: int | None = None
    latency_stddev_ns: float | None = None
    jitter_ns: float | None = Field(None, description="mean |latency - previous latency| (RFC 4689 3.2.5)")
    first_rx_ns: int | None = None
    last_rx_ns: int | None = None
    histogram: LatencyHistogram | None = Field(None, description="this stream's latency histogram, when read")
    percentiles_ns: dict[str, int | None] = Field(
        default_factory=dict, description="p50, p90, p99, p99.9 from the histogram, at its bin resolution "
                                          "(upper bin edge, within the stream's latency min and max; None "
                                          "outside its range)")

    @computed_field
    @property
    def loss_pct(self) -> float:
        return 100.0 * self.lost / self.tx_frames if self.tx_frames else 0.0

    @classmethod
    def from_entries(cls, ref: StreamRef, tx: tuple[int, int], entry: dict[str, int]) -> "StreamResult":
        """A result from the stream's transmit counts ``(frames, bytes)`` and its unpacked
        receive entry (:func:`wirespeed.gateware.stream_stats.unpack_entry`)."""
        tx_frames, tx_bytes = tx
        rx = entry["rx_frames"]
        lat = {}
        if rx:
            mean = entry["lat_sum"] / rx
            lat = dict(latency_min_ns=entry["lat_min"], latency_avg_ns=mean, latency_max_ns=entry["lat_max"],
                       latency_stddev_ns=max(0.0, entry["lat_sq_sum"] / rx - mean * mean) ** 0.5,
                       jitter_ns=entry["jitter_sum"] / (rx - 1) if rx > 1 else 0.0,
                       first_rx_ns=entry["first_rx_ns"], last_rx_ns=entry["last_rx_ns"])
        return cls(tx_port=ref.tx_port, rx_port=ref.rx_port, stream_id=ref.stream_id,
                   tx_frames=tx_frames, tx_bytes=tx_bytes, rx_frames=rx, rx_bytes=entry["rx_bytes"],
                   fcs_errors=entry["fcs_errors"], in_order=entry["in_order"],
                   lost=entry["lost"] + tail_loss(tx_frames, entry), duplicate=entry["duplicate"],
                   out_of_order=entry["out_of_order"], late=entry["late"], **lat)


def stream_refs(device: Device, items: Iterable[StreamRef | Flow | tuple[int, int]]) -> list[StreamRef]:
    """The streams named by ``items``, in order: a :class:`StreamRef` as is; a
    :class:`wirespeed.traffic.Flow` as stream 0 of its sending port (the one-stream
    program ``run_trial`` loads); a pair ``(tx_port, rx_port)`` as every enabled stream of
    ``tx_port``'s program, read from ``pN.gen.desc``."""
    refs: list[StreamRef] = []
    for item in items:
        if isinstance(item, StreamRef):
            refs.append(item)
        elif isinstance(item, Flow):
            refs.append(StreamRef(tx_port=item.tx_port, rx_port=item.rx_port, tx_index=0,
                                  stream_id=item.stream_id))
        elif isinstance(item, Sequence) and len(item) == 2 and all(isinstance(p, int) for p in item):
            tx_port, rx_port = item
            _check_port(device, tx_port)
            _check_port(device, rx_port)
            descs = device.read_memory(regs.port(tx_port).gen.desc)
            for index, value in enumerate(descs):
                desc = sd.unpack_descriptor(value)
                if desc["enable"]:
                    refs.append(StreamRef(tx_port=tx_port, rx_port=rx_port, tx_index=index,
                                          stream_id=desc["stream_id"]))
        else:
            raise TypeError(f"a StreamRef, a Flow or a (tx_port, rx_port) pair, not {item!r}")
    for ref in refs:
        _check_port(device, ref.tx_port)
        _check_port(device, ref.rx_port)
    return refs


def _check_port(device: Device, port: int) -> None:
    if not 0 <= port < device.n_ports:
        raise ValueError(f"port must be 0..{device.n_ports - 1}, not {port}")


def stream_results(device: Device, flows_or_pairs: Iterable[StreamRef | Flow | tuple[int, int]], *,
                   snapshot: bool = True, histogram: HistogramConfig | None = None) -> list[StreamResult]:
    """Per-stream results of the streams named by ``flows_or_pairs`` (each a
    :class:`wirespeed.traffic.Flow`, a ``(tx_port, rx_port)`` pair or a
    :class:`StreamRef`), from ``pN.gen.stream_tx`` of the sending ports and ``pN.ana.streams``
    of the receiving ports.

    ``snapshot``: first write SNAPSHOT (every counter at one instant; harmless after a trial,
    whose counters no longer move), then read; False reads the windows of the last snapshot
    (e.g. right after :meth:`Device.run_trial`). Raises ValueError for a stream whose id is
    outside the receiving port's ``stream_group`` (its frames count as foreign there).

    ``histogram``: the binning the receiving ports' histograms were configured with (e.g. the
    one given to ``run_trial``); then each stream's latency histogram is read too (traffic must
    have stopped) and its percentiles filled in."""
    refs = stream_refs(device, flows_or_pairs)
    if not refs:
        return []
    rx_ports = sorted({r.rx_port for r in refs})
    groups = device.read_many([regs.port(p).ana.stream_group for p in rx_ports])
    for ref in refs:
        group = groups[regs.port(ref.rx_port).ana.stream_group]
        if ref.stream_id >> 4 != group:
            raise ValueError(f"stream id {ref.stream_id} (port {ref.tx_port} stream {ref.tx_index}) is not "
                             f"followed by port {ref.rx_port}: its stream_group is {group} (ids "
                             f"{group * 16}..{group * 16 + 15}); set p{ref.rx_port}.ana.stream_group to "
                             f"{ref.stream_id >> 4} before the trial")
    if snapshot:
        device.write(regs.CTRL.cmd, CMD_SNAPSHOT)
    tx = {p: device.read_stream_tx(p) for p in sorted({r.tx_port for r in refs})}
    rx = {p: device.read_stream_stats(p) for p in rx_ports}
    results = [StreamResult.from_entries(ref, tx[ref.tx_port][ref.tx_index], rx[ref.rx_port][ref.stream_id & 15])
               for ref in refs]
    if histogram is not None:
        hists = {p: device.read_stream_histograms(p, histogram) for p in rx_ports}
        for ref, result in zip(refs, results):
            hist = hists[ref.rx_port].get(ref.stream_id & 15)
            if hist is not None:
                result.histogram = hist
                result.percentiles_ns = hist.percentiles(result.latency_min_ns, result.latency_max_ns)
    return results
