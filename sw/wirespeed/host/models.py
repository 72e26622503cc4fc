"""What a tester reports: the counters of a port, latency and its histograms, a trial with every
counter of every port, the learning phase, the identification block. Plain data (pydantic):
results files hold them, events carry them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, computed_field

from wirespeed import regs

from ..traffic import Flow, PortAddress
from . import sequence

if TYPE_CHECKING:
    from wirespeed.gateware.regmap import RegisterMap

__all__ = ["PortCounters", "HistogramConfig", "LatencyHistogram", "PERCENTILES", "Latency", "TrialResult",
           "LearningResult", "GatewareId", "LAT_MIN_EMPTY", "HIST_BINS"]

#: bins of a latency histogram (pN.ana.hist entries)
HIST_BINS = 1024
_GEN_COUNTERS = frozenset({"tx_frames", "tx_bytes", "first_tx_ns", "last_tx_ns"})
LAT_MIN_EMPTY = 0xFFFFFFFF  # pN.ana.lat_min before the first frame


class PortCounters(BaseModel):
    """The snapshot counters of one tester port (``pN.gen.*`` and ``pN.ana.*``), raw."""

    tx_frames: int = 0
    tx_bytes: int = 0
    first_tx_ns: int = 0
    last_tx_ns: int = 0
    rx_frames: int = 0
    rx_bytes: int = 0
    seq_errors: int = 0
    fcs_errors: int = 0
    other_frames: int = 0
    lat_min: int = LAT_MIN_EMPTY
    lat_max: int = 0
    lat_sum: int = 0
    first_rx_ns: int = 0
    last_rx_ns: int = 0
    lat_sq_sum: int = 0
    jitter_sum: int = 0
    hist_underflow: int = 0
    hist_overflow: int = 0
    # gap and loss tracker (docs/analyzer.md): RFC 2544 26.5 / 26.6, RFC 6201
    gap_max: int = 0
    gap_end_rx: int = 0
    gap_end_tx: int = 0
    loss_events: int = 0
    loss_last_tx: int = 0
    loss_last_rx: int = 0
    loss_last_stream: int = 0
    loss_last_seq: int = 0
    loss_last_gap: int = 0
    # test frames of streams this port does not track (pN.ana.foreign_frames; 0 without
    # per-stream statistics): a DUT's ICMP error quoting a frame the port sent ends with that
    # frame's signature, so the analyzer counted it in rx_frames
    foreign_frames: int = 0
    # IP fragments (pN.ana.fragment_frames): never test frames, though a test packet's last
    # fragment ends with its signature, and not other frames
    fragment_frames: int = 0

    @staticmethod
    def register(port: int, counter: str) -> str:
        p = regs.port(port)
        name: str = getattr(p.gen if counter in _GEN_COUNTERS else p.ana, counter)
        return name

    @classmethod
    def register_names(cls, port: int, regmap: RegisterMap | None = None) -> list[str]:
        """The counters' registers of port ``port``; with ``regmap``, only those it has (a
        port without a generator or an analyzer, a build without per-stream statistics)."""
        names = [cls.register(port, counter) for counter in cls.model_fields]
        return names if regmap is None else [name for name in names if name in regmap]

    @classmethod
    def from_registers(cls, port: int, values: Mapping[str, int]) -> "PortCounters":
        """The counters from register ``values``; a counter whose register was not read (the
        build has none) keeps its empty value."""
        return cls(**{counter: values[cls.register(port, counter)] for counter in cls.model_fields
                      if cls.register(port, counter) in values})


HIST_MIN_SHIFT, HIST_MAX_SHIFT = 0, 24


class HistogramConfig(BaseModel):
    """Bins of the analyzers' latency histograms: bin i counts latencies in
    [offset + i * 2**shift, offset + (i + 1) * 2**shift) ns."""

    offset_ns: int = Field(0, ge=0, lt=2**32)
    shift: int = Field(6, ge=HIST_MIN_SHIFT, le=HIST_MAX_SHIFT)

    @property
    def bin_ns(self) -> int:
        return 1 << self.shift

    @classmethod
    def fitting(cls, min_ns: int, max_ns: int, bins: int = HIST_BINS) -> HistogramConfig:
        """The finest bins that hold [min_ns, max_ns] with a quarter of the range to spare on
        each side (the next trial's latencies differ a little)."""
        spare = max(8, (max_ns - min_ns) // 4)
        low, high = max(0, min_ns - spare), max_ns + spare
        shift = HIST_MIN_SHIFT
        while (high - low) >> shift >= bins and shift < HIST_MAX_SHIFT:
            shift += 1
        return cls(offset_ns=low >> shift << shift, shift=shift)


class LatencyHistogram(BaseModel):
    """One analyzer's latency histogram after a trial: non-empty bins only."""

    offset_ns: int
    bin_ns: int
    counts: dict[int, int] = Field(description="bin index -> frames")
    underflow: int
    overflow: int

    @property
    def total(self) -> int:
        return sum(self.counts.values()) + self.underflow + self.overflow

    def percentile(self, q: float) -> int | None:
        """Upper edge (ns) of the bin holding the q-th percentile frame; None when it falls
        below or beyond the histogram's range."""
        total = self.total
        if not total:
            return None
        rank = q / 100 * total
        seen = self.underflow
        if seen >= rank:
            return None
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                return self.offset_ns + (index + 1) * self.bin_ns
        return None

    def percentiles(self, min_ns: int | None, max_ns: int | None) -> dict[str, int | None]:
        """:data:`PERCENTILES` of the frames binned here, whose latencies measured ``min_ns`` ..
        ``max_ns`` (None: no frame): each its bin's upper edge (:meth:`percentile`) brought
        within that range, since a bin's edge can lie beyond every latency in it."""
        out: dict[str, int | None] = {}
        for q in PERCENTILES:
            edge = self.percentile(q)
            if edge is not None and min_ns is not None and max_ns is not None:
                edge = min(max(edge, min_ns), max_ns)
            out[f"p{q:g}"] = edge
        return out


PERCENTILES = (50, 90, 99, 99.9)


class Latency(BaseModel):
    """Raw tester latency in the trial's definition (``TrialResult.lat_def``; 0: first byte
    out of the generator to first byte into the analyzer), tester pipeline delay included
    (not calibrated: :mod:`wirespeed.latency` gives both definitions, calibrated). Jitter is
    the mean absolute difference between consecutive frames' latencies (RFC 4689 3.2.5); percentiles come from the
    histogram, at its bin resolution (``bin_ns``), within ``min_ns`` .. ``max_ns``."""

    min_ns: int
    avg_ns: float
    max_ns: int
    stddev_ns: float
    jitter_ns: float
    frames: int
    bin_ns: int | None = None
    percentiles_ns: dict[str, int | None] = Field(default_factory=dict)


class TrialResult(BaseModel):
    """One trial: what was offered, and every counter of every port afterwards.

    Loss comes from the sequence tracking of each flow's stream when the build has it
    (``streams``; :mod:`wirespeed.host.sequence`), else it is frames sent - frames received;
    never negative. Pass criterion (RFC 2544 26.1, zero loss): frames were sent, none lost,
    none duplicated, reordered or late, no sequence or FCS errors, and (without sequence
    tracking) no more received than sent; ``failure`` says which failed."""

    frame_size: int | str = Field(description="bytes, FCS included, or a mix's label (wirespeed.sizes)")
    offered_fps: float
    period_q32: int
    duration_ns: int
    wait_ns: int
    flows: list[Flow]
    started_ns: int
    counters: dict[int, PortCounters]
    lat_def: int = Field(0, ge=0, le=1, description="pN.ana.lat_def of the trial: 0 first bit in to first bit "
                                                    "out (bit forwarding), 1 last bit in to first bit out "
                                                    "(store and forward), RFC 1242 3.8")
    histograms: dict[int, LatencyHistogram] = Field(default_factory=dict)
    drain_steps: int = Field(0, ge=0, description="half waits (wait_ns / 2 each) added after wait_ns because "
                                                  "frames were still arriving (a DUT emptying its queue)")
    timeline: list[list[int]] = Field(
        default_factory=list, description="samples while the trial ran: [ns since START, frames sent, frames "
                                          "received, sequence + FCS errors] so far (rate over time)")
    streams: dict[int, dict[str, int]] = Field(
        default_factory=dict, description="per stream id of the flows, when the build tracks sequence numbers: "
                                          "frames sent and received, the receiving port's sequence counters "
                                          "(in_order, lost: gaps before next_seq, duplicate, out_of_order, late; "
                                          "docs/analyzer.md), FCS errors, next expected sequence (rate-step "
                                          "trials: and each phase's period)")
    control: dict[str, int] | None = Field(
        None, description="the control path during the trial (register transactions with the tester): requests, "
                          "retries, timeouts, duplicate answers, bad frames, resynchronisations")
    dut_model: dict[str, dict[str, int]] | None = Field(
        None, description="simulation only: the simulated DUT model's own counters over the trial (from CLEAR to "
                          "the final snapshot), per direction 'A->B' of tester ports")
    stray_frames: dict[int, int] = Field(
        default_factory=dict, description="per receiving port (ports with none left out), test frames of the "
                                          "trial's streams that port was not sent: a DUT's ICMP error quoting a "
                                          "test frame back to its sender ends with that frame's signature. Not "
                                          "in rx_frames: other frames")
    responder: dict[int, dict[str, int]] = Field(
        default_factory=dict, description="per port, ARP/ND frames the responder saw and sent during the trial "
                                          "(pN.arp.arp_requests, arp_replies, ns_received, na_sent; from CLEAR "
                                          "to the snapshot)")

    def _sum(self, ports: Sequence[int], counter: str) -> int:
        return sum(getattr(self.counters[p], counter) for p in ports)

    @property
    def _tx_ports(self) -> list[int]:
        return [f.tx_port for f in self.flows]

    @property
    def _rx_ports(self) -> list[int]:
        return [f.rx_port for f in self.flows]

    @computed_field
    @property
    def tx_frames(self) -> int:
        return self._sum(self._tx_ports, "tx_frames")

    @computed_field
    @property
    def rx_frames(self) -> int:
        """Test frames of the trial's streams received where they were sent: stray and foreign
        ones (an ICMP error quoting a frame back to its sender) are not."""
        return (self._sum(self._rx_ports, "rx_frames") - self._sum(self._rx_ports, "foreign_frames")
                - sum(self.stray_frames.get(p, 0) for p in self._rx_ports))

    @property
    def _tracked(self) -> list[dict[str, int]]:
        """The flows' streams with sequence counters ([] when the build has none)."""
        streams = list(self.streams.values())
        return streams if streams and all(sequence.tracked(s) for s in streams) else []

    @computed_field
    @property
    def lost_frames(self) -> int:
        """Frames that never arrived: from the sequence tracking, else sent - received; >= 0."""
        tracked = self._tracked
        if tracked:
            return sequence.lost_frames(tracked)
        return max(0, self.tx_frames - self.rx_frames)

    def _sequence_count(self, field: str) -> int | None:
        tracked = self._tracked
        return sequence.count(tracked, field) if tracked else None

    @computed_field
    @property
    def duplicate_frames(self) -> int | None:
        """Frames received again (None: the build tracks no sequence numbers)."""
        return self._sequence_count("duplicate")

    @computed_field
    @property
    def out_of_order_frames(self) -> int | None:
        """Frames that arrived after a later one of their stream (None: not tracked)."""
        return self._sequence_count("out_of_order")

    @computed_field
    @property
    def late_frames(self) -> int | None:
        """Frames older than the history window (32 numbers) when they arrived (None: not tracked)."""
        return self._sequence_count("late")

    @computed_field
    @property
    def seq_errors(self) -> int:
        return self._sum(self._rx_ports, "seq_errors")

    @computed_field
    @property
    def fcs_errors(self) -> int:
        return self._sum(self._rx_ports, "fcs_errors")

    @computed_field
    @property
    def loss_pct(self) -> float:
        return 100.0 * self.lost_frames / self.tx_frames if self.tx_frames else 0.0

    @property
    def unsent_received(self) -> int:
        """Frames received that were not sent as such: duplicates (with sequence tracking),
        else received beyond sent."""
        duplicate = self.duplicate_frames
        return duplicate if duplicate is not None else max(0, self.rx_frames - self.tx_frames)

    @computed_field
    @property
    def failure(self) -> str | None:
        """Why the trial is not loss free (None: it is), e.g. '19 lost, 27 duplicated'."""
        reasons = sequence.failure_reasons(
            tx_frames=self.tx_frames, rx_frames=self.rx_frames, lost=self.lost_frames, fcs_errors=self.fcs_errors,
            seq_errors=self.seq_errors, duplicate=self.duplicate_frames, out_of_order=self.out_of_order_frames,
            late=self.late_frames)
        return ", ".join(reasons) or None

    @computed_field
    @property
    def passed(self) -> bool:
        return self.failure is None

    @computed_field
    @property
    def measured_rx_fps(self) -> float:
        """Receive rate per receiving port (per direction) from the analyzers' hardware
        timestamps: (frames - 1) over the time from the port's first to its last test frame,
        averaged over the receiving ports; with fewer than two frames, frames per second of
        trial duration."""
        rates = []
        for p in self._rx_ports:
            c = self.counters[p]
            if c.rx_frames < 2 or c.last_rx_ns <= c.first_rx_ns:
                rates.append(c.rx_frames * 1e9 / self.duration_ns)
            else:
                rates.append((c.rx_frames - 1) * 1e9 / (c.last_rx_ns - c.first_rx_ns))
        return sum(rates) / len(rates) if rates else 0.0

    @computed_field
    @property
    def latency(self) -> Latency | None:
        ports = [self.counters[p] for p in self._rx_ports]
        frames = sum(c.rx_frames for c in ports)
        if not frames:
            return None
        mean = sum(c.lat_sum for c in ports) / frames
        variance = max(0.0, sum(c.lat_sq_sum for c in ports) / frames - mean * mean)
        pairs = sum(c.rx_frames - 1 for c in ports if c.rx_frames)
        hists = [self.histograms[p] for p in self._rx_ports if p in self.histograms]
        if len(hists) > 1 and len({(h.offset_ns, h.bin_ns) for h in hists}) == 1:   # binned alike: add up
            counts: dict[int, int] = {}
            for h in hists:
                for index, n in h.counts.items():
                    counts[index] = counts.get(index, 0) + n
            hists = [LatencyHistogram(offset_ns=hists[0].offset_ns, bin_ns=hists[0].bin_ns, counts=counts,
                                      underflow=sum(h.underflow for h in hists),
                                      overflow=sum(h.overflow for h in hists))]
        low, high = min(c.lat_min for c in ports if c.rx_frames), max(c.lat_max for c in ports)
        pct = {}
        if len(hists) == 1:      # the distribution over every receiving port
            pct = hists[0].percentiles(low, high)
        return Latency(min_ns=low, avg_ns=mean, max_ns=high, stddev_ns=variance ** 0.5,
                       jitter_ns=sum(c.jitter_sum for c in ports) / pairs if pairs else 0.0,
                       frames=frames, bin_ns=hists[0].bin_ns if len(hists) == 1 else None,
                       percentiles_ns=pct)


class LearningResult(BaseModel):
    """The learning phase before the trials (RFC 2544 section 23, step 2): what was configured
    and sent, per port, and the settle wait."""

    addresses: dict[int, PortAddress]
    answer_arp: bool
    answer_nd: bool
    gratuitous_arp: dict[int, int] = Field(description="ARP frames sent during the phase: the announcement "
                                                       "(gratuitous ARP) and any replies (pN.arp.arp_replies); "
                                                       "ports with a responder only, as the three below")
    unsolicited_na: dict[int, int] = Field(description="neighbour advertisements sent during the phase: the "
                                                       "unsolicited one and any solicited (pN.arp.na_sent)")
    learning_frames: dict[int, int] = Field(description="learning (test) frames sent per port")
    learning_frames_received: dict[int, int] = Field(description="learning frames received per port")
    other_frames_received: dict[int, int] = Field(description="frames that are not test frames received per "
                                                              "port (ARP, ND) during the phase")
    arp_requests: dict[int, int] = Field(description="ARP requests for the port's IPv4 received")
    ns_received: dict[int, int] = Field(description="neighbour solicitations for the port's IPv6 received")
    settle_ns: int
    started_ns: int
    ended_ns: int


class GatewareId(BaseModel):
    """The identification block (``id.*``) of the tester."""

    magic: int
    version: int
    map_hash: int
    clk_hz: int
    n_ports: int

    @computed_field
    @property
    def version_text(self) -> str:
        return f"{self.version >> 16}.{(self.version >> 8) & 0xFF}.{self.version & 0xFF}"
