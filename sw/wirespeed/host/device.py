"""The tester seen from the host: registers by name, generator set-up, trials.

The contract is docs/architecture.md ("Register map", "Timing of a trial"): the host
configures the generators, writes CLEAR, then START; the gateware's trial timer starts and
stops transmission; the host polls ``pN.gen.running``, waits the settle time measured on
``time.ns`` (simulated time in a simulation, never wall time), then writes SNAPSHOT and
reads every counter in one transaction.

Test frames follow RFC 2544 Appendix C (Ethernet II / IPv4 / UDP to the echo port, TTL 10,
addresses from the benchmarking range 198.18.0.0/15); RFC 6815 restricts such tests to
isolated networks, so addresses outside that range draw a warning.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field, model_validator

from wirespeed.gateware.regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, CMD_STOP, MAGIC

from ..errors import DeviceError, DeviceMismatch
from ..ethernet import LINK_BPS, MAX_FRAME, MIN_FRAME, WIRE_OVERHEAD, line_rate_fps
from .. import sizes
from . import sequence
from .transport import Transport

__all__ = [
    "Device", "FrameSpec", "Flow", "PortAddress", "check_distinct", "LearningResult", "tester_ipv6", "PortCounters", "TrialResult",
    "Latency", "GatewareId",
    "HistogramConfig", "LatencyHistogram", "PERCENTILES",
    "BenchmarkRangeWarning", "rate_to_period", "period_to_rate", "ns_to_cycles",
    "CMD_START", "CMD_STOP", "CMD_CLEAR", "CMD_SNAPSHOT",
]

ID_REGISTERS = ("id.magic", "id.version", "id.map_hash", "id.clk_hz", "id.n_ports")
BENCHMARK_NET = IPv4Network("198.18.0.0/15")  # RFC 2544 C.2.2, RFC 6815
BENCHMARK_NET6 = IPv6Network("2001:2::/48")  # RFC 5180 5
RESPONDER_COUNTERS = ("arp_requests", "arp_replies", "ns_received", "na_sent")   # pN.arp.*


# Rates and durations --------------------------------------------------------------------------------


def _cycles_per_frame_at_line_rate(frame_len, clk_hz: int) -> Fraction:
    return Fraction(clk_hz * 8 * (sizes.mean_len(frame_len) + WIRE_OVERHEAD)) / LINK_BPS


def rate_to_period(rate_fps: float, frame_len: "sizes.SizePoint", clk_hz: int) -> int:
    """``pN.gen.period`` (Q32.32 clock cycles between frame starts) for ``rate_fps``.

    100 % of line rate is exactly ``frame_len + 20`` cycles at 125 MHz (a mix: its mean
    size + 20); the result is never below that. Raises ValueError for a rate that is not
    positive or above line rate."""
    if not rate_fps > 0:
        raise ValueError(f"rate must be > 0 frames/s, not {rate_fps}")
    minimum = _cycles_per_frame_at_line_rate(frame_len, clk_hz)
    period = Fraction(clk_hz) / Fraction(rate_fps)
    if period < minimum * (1 - Fraction(1, 10**9)):
        raise ValueError(f"{rate_fps} frames/s is above the line rate of {sizes.text(frame_len)} frames "
                         f"({line_rate_fps(frame_len):.2f} frames/s)")
    return max(round(period * 2**32), -(-minimum.numerator * 2**32 // minimum.denominator))


def period_to_rate(period_q32: int, clk_hz: int) -> float:
    """Frames per second that a programmed Q32.32 period gives."""
    return clk_hz * 2**32 / period_q32


def ns_to_cycles(ns: int, clk_hz: int) -> int:
    """Clock cycles that last at least ``ns`` nanoseconds (8 ns per cycle at 125 MHz)."""
    return -(-ns * clk_hz // 1_000_000_000)


# Frames and flows ---------------------------------------------------------------------------------------


def _mac(text: str) -> str:
    parts = text.replace("-", ":").lower().split(":")
    if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise ValueError(f"a MAC address like 02:00:00:00:00:01, not {text!r}")
    return ":".join(parts)


MacAddress = Annotated[str, AfterValidator(_mac)]


class BenchmarkRangeWarning(UserWarning):
    """An address outside 198.18.0.0/15: RFC 6815 keeps benchmarking on isolated networks."""


def tester_mac(port: int) -> str:
    """Default MAC of tester port ``port``: locally administered 02:00:00:00:00:<port+1>."""
    return _mac(f"02:00:00:00:{(port + 1) >> 8:02x}:{(port + 1) & 0xFF:02x}")


def tester_ip(port: int) -> IPv4Address:
    """Default IPv4 address of tester port ``port``: RFC 2544 C.2.2 puts one side of the DUT
    in 198.18.0.0/16 and the other in 198.19.0.0/16 (port 0: 198.18.0.1, port 1: 198.19.0.1)."""
    return BENCHMARK_NET.network_address + (port % 2) * 65536 + (port // 2) * 256 + 1


def tester_ipv6(port: int) -> IPv6Address:
    """Default IPv6 address of tester port ``port``, in the benchmarking range 2001:2::/48 of
    RFC 5180, one /64 per port: port 0 2001:2::1, port 1 2001:2:0:1::1."""
    return BENCHMARK_NET6.network_address + (port << 64) + 1


class PortAddress(BaseModel):
    """A tester port's own addresses (``pN.arp.mac/ipv4/ipv6``): the port answers ARP requests
    for ``ipv4`` and neighbour solicitations for ``ipv6`` with ``mac``, and its test frames
    come from ``mac``/``ipv4``."""

    model_config = ConfigDict(frozen=True)

    mac: MacAddress
    ipv4: IPv4Address
    ipv6: IPv6Address

    @model_validator(mode="after")
    def _unicast(self):
        # a port's own address is a source and a neighbour's answer: one host, never a group
        if int(self.mac[:2], 16) & 1 or self.mac == "00:00:00:00:00:00":
            raise ValueError(f"mac: a unicast address (the first octet even, not all zero), not {self.mac}")
        if self.ipv4.is_multicast or self.ipv4.is_unspecified or self.ipv4 == IPv4Address("255.255.255.255"):
            raise ValueError(f"ipv4: a unicast address (not multicast, broadcast or 0.0.0.0), not {self.ipv4}")
        if self.ipv6.is_multicast or self.ipv6.is_unspecified:
            raise ValueError(f"ipv6: a unicast address (not multicast or ::), not {self.ipv6}")
        return self

    @classmethod
    def default(cls, port: int) -> "PortAddress":
        return cls(mac=tester_mac(port), ipv4=tester_ip(port), ipv6=tester_ipv6(port))

    def registers(self, port: int) -> dict[str, int]:
        return {f"p{port}.arp.mac": int(self.mac.replace(":", ""), 16), f"p{port}.arp.ipv4": int(self.ipv4),
                f"p{port}.arp.ipv6": int(self.ipv6)}


def check_distinct(addresses: Mapping[int, PortAddress]) -> None:
    """ValueError (one line) when two ports share a MAC, IPv4 or IPv6 address (a DUT could not
    tell them apart)."""
    ports = sorted(addresses)
    for field in ("mac", "ipv4", "ipv6"):
        seen: dict[str, int] = {}
        for port in ports:
            value = str(getattr(addresses[port], field))
            if value in seen:
                raise ValueError(f"ports {seen[value]} and {port} have the same {field} {value}: each port needs "
                                 "its own")
            seen[value] = port


class FrameSpec(BaseModel):
    """One stream of test frames (RFC 2544 Appendix C): what a generator puts in its frames."""

    model_config = ConfigDict(frozen=True)

    frame_len: int = Field(MIN_FRAME, ge=MIN_FRAME, le=MAX_FRAME, description="bytes, FCS included (a mix: its "
                                                                         "first size)")
    imix: str | None = Field(None, description="a mix of sizes instead of frame_len: its label, imix:GENOME or "
                                              "imix:SIZE:WEIGHT,... (wirespeed.sizes)")
    src_mac: MacAddress = tester_mac(0)
    dst_mac: MacAddress = tester_mac(1)
    src_ip: IPv4Address = tester_ip(0)
    dst_ip: IPv4Address = tester_ip(1)
    src_port: int = Field(0xC020, ge=0, le=0xFFFF)
    dst_port: int = Field(7, ge=0, le=0xFFFF, description="UDP echo")
    ttl: int = Field(10, ge=1, le=255)
    stream_id: int = Field(0, ge=0, le=0xFFFF)
    sources: int = Field(1, ge=1, le=65536, description="source IPv4 addresses src_ip, src_ip + 1, ... (flows)")
    destinations: int = Field(1, ge=1, le=65536, description="destination IPv4 addresses dst_ip, dst_ip + 1, ...; "
                                                             "every source sends to every destination in turn")

    @model_validator(mode="after")
    def _warn_outside_benchmark_range(self):
        if self.imix is not None:
            label = sizes.parse_point(self.imix)
            if not isinstance(label, str):
                raise ValueError(f"imix must be a mix (imix:...), not {self.imix!r}")
            object.__setattr__(self, "imix", label)
            object.__setattr__(self, "frame_len", sizes.sizes_of(label)[0])
        for ip in (self.src_ip, self.dst_ip):
            if ip not in BENCHMARK_NET:
                warnings.warn(f"{ip} is outside the benchmarking range {BENCHMARK_NET}: RFC 6815 "
                              "allows these tests on isolated test networks only",
                              BenchmarkRangeWarning, stacklevel=2)
        return self

    @property
    def point(self) -> "sizes.SizePoint":
        """The size point of these frames: ``frame_len``, or the mix's label."""
        return self.imix if self.imix is not None else self.frame_len

    @property
    def sizes(self) -> tuple[int, ...]:
        """The repeating sequence of frame sizes sent."""
        return sizes.sizes_of(self.point)

    @property
    def mean_len(self) -> Fraction:
        return sizes.mean_len(self.point)

    @classmethod
    def for_flow(cls, tx_port: int, rx_port: int, frame_len: "sizes.SizePoint",
                 addresses: Mapping[int, PortAddress] | None = None, *, sources: int = 1,
                 destinations: int = 1) -> "FrameSpec":
        """Frames from tester port ``tx_port`` to tester port ``rx_port`` with the addresses of
        both (``addresses[port]``, else the defaults) and the sending port's number as stream id;
        ``sources`` x ``destinations`` IPv4 flows counting up from them. ``frame_len`` is a size
        point: bytes, or a mix's label (:mod:`wirespeed.sizes`)."""
        addresses = addresses or {}
        src = addresses.get(tx_port) or PortAddress.default(tx_port)
        dst = addresses.get(rx_port) or PortAddress.default(rx_port)
        mix = {"imix": frame_len} if isinstance(frame_len, str) else {"frame_len": frame_len}
        return cls(**mix, src_mac=src.mac, dst_mac=dst.mac, src_ip=src.ipv4, dst_ip=dst.ipv4,
                   stream_id=tx_port, sources=sources, destinations=destinations)

    def to_stream(self):
        """The same frames as a generator stream (:class:`wirespeed.streams.StreamSpec`)."""
        from ..streams import ModifierSpec, SizeSpec, StreamSpec
        # the seed lab's "100 sources x 20 destinations": sources walk, destinations walk once
        # per full pass of the sources (chained), so every pair comes once per sources x destinations frames
        walks = []
        if self.sources > 1:
            walks.append(ModifierSpec(field="src_ip", count=self.sources))
        if self.destinations > 1:
            walks.append(ModifierSpec(field="dst_ip", count=self.destinations, chain=bool(walks)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BenchmarkRangeWarning)   # warned once, here
            return StreamSpec(stream_id=self.stream_id, dst_mac=self.dst_mac, src_mac=self.src_mac,
                              src_ip=self.src_ip, dst_ip=self.dst_ip, src_port=self.src_port,
                              dst_port=self.dst_port, ttl=self.ttl,
                              size=(SizeSpec.fixed(self.frame_len) if self.imix is None
                                    else SizeSpec.of_sequence(self.sizes, label=self.imix)),
                              modifiers=tuple(walks))


class Flow(BaseModel):
    """Test frames sent by one tester port and counted by another."""

    model_config = ConfigDict(frozen=True)

    tx_port: int = Field(ge=0)
    rx_port: int = Field(ge=0)
    spec: FrameSpec


# Counters and results -----------------------------------------------------------------------------------

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

    @staticmethod
    def register(port: int, counter: str) -> str:
        block = "gen" if counter in _GEN_COUNTERS else "ana"
        return f"p{port}.{block}.{counter}"

    @classmethod
    def register_names(cls, port: int, regmap=None) -> list[str]:
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
    def fitting(cls, min_ns: int, max_ns: int, bins: int = 1024) -> "HistogramConfig":
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


PERCENTILES = (50, 90, 99, 99.9)


class Latency(BaseModel):
    """Raw tester latency in the trial's definition (``TrialResult.lat_def``; 0: first byte
    out of the generator to first byte into the analyzer), tester pipeline delay included
    (not calibrated: :mod:`wirespeed.latency` gives both definitions, calibrated). Jitter is
    the mean absolute difference between consecutive frames' latencies (RFC 4689 3.2.5); percentiles come from the
    histogram, at its bin resolution (``bin_ns``)."""

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
        return self._sum(self._rx_ports, "rx_frames")

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
        pct = {}
        if len(hists) == 1:      # the distribution over every receiving port
            pct = {f"p{q:g}": hists[0].percentile(q) for q in PERCENTILES}
        return Latency(min_ns=min(c.lat_min for c in ports if c.rx_frames), avg_ns=mean,
                       max_ns=max(c.lat_max for c in ports), stddev_ns=variance ** 0.5,
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


# The device -----------------------------------------------------------------------------------------------


class Device:
    """A tester reached through ``transport``, addressed by the register names of ``regmap``.

    ``stall_timeout_s``: wall-clock seconds that ``time.ns`` may stay still while the host
    waits on it before the tester is declared stuck (a stopped simulation, a hung board).
    """

    def __init__(self, transport: Transport, regmap, *, stall_timeout_s: float = 10.0,
                 poll_interval_s: tuple[float, float] = (0.0005, 0.05)):
        self.transport = transport
        self.regmap = regmap
        self.stall_timeout_s = stall_timeout_s
        self.poll_interval_s = poll_interval_s
        self.ident: GatewareId | None = None

    @property
    def clk_hz(self) -> int:
        return self.regmap.clk_hz

    @property
    def n_ports(self) -> int:
        return self.regmap.n_ports

    # registers

    def read(self, name: str) -> int:
        return self.read_many([name])[name]

    def write(self, name: str, value: int) -> None:
        self.write_many({name: value})

    def read_many(self, names: Sequence[str]) -> dict[str, int]:
        """Read ``names`` in one transaction (wide registers low word first)."""
        return self.transact({}, names)

    def write_many(self, values: Mapping[str, int]) -> None:
        """Write ``values`` in order, in one transaction."""
        self.transact(values, ())

    def transact(self, writes: Mapping[str, int], reads: Sequence[str]) -> dict[str, int]:
        """Write ``writes`` in order, then read ``reads``, in one transaction."""
        pairs = []
        for name, value in writes.items():
            reg = self.regmap[name]
            if reg.access == "r":
                raise ValueError(f"register {name} is read only")
            pairs += zip(reg.word_offsets, reg.split(value))
        regs = [self.regmap[name] for name in reads]
        words = self.transport.transact(pairs, [off for reg in regs for off in reg.word_offsets])
        values, at = {}, 0
        for reg in regs:
            values[reg.name], at = reg.join(words[at:at + reg.words]), at + reg.words
        return values

    # identification

    def connect(self) -> GatewareId:
        """Read the identification block and refuse a tester whose gateware does not match
        ``regmap`` (raises :class:`DeviceMismatch`, one line)."""
        values = self.read_many(ID_REGISTERS)
        ident = GatewareId(**{name.split(".")[1]: value for name, value in values.items()})
        where = self.transport.url
        if ident.magic != MAGIC:
            raise DeviceMismatch(f"{where} is not a wirespeed tester (id.magic {ident.magic:#010x}, "
                                 f"expected {MAGIC:#010x})")
        if ident.map_hash != self.regmap.hash:
            raise DeviceMismatch(f"register map mismatch: {where} has map hash {ident.map_hash:#010x}, this "
                                 f"host expects {self.regmap.hash:#010x}; rebuild the gateware or update the host")
        for what, have, want in (("id.n_ports", ident.n_ports, self.n_ports),
                                 ("id.clk_hz", ident.clk_hz, self.clk_hz)):
            if have != want:
                raise DeviceMismatch(f"{where} reports {what} = {have}, the register map says {want}")
        self.ident = ident
        return ident

    # time

    def now_ns(self) -> int:
        """The tester's ``time.ns`` (simulated time in a simulation)."""
        return self.read("time.ns")

    def wait_ns(self, ns: int) -> int:
        """Wait until ``ns`` nanoseconds of tester time have passed; returns ``time.ns``."""
        end = self.now_ns() + ns
        return self.wait_until([], lambda v: v["time.ns"] >= end, expected_ns=end)["time.ns"]

    def wait_until(self, names: Sequence[str], done, *, expected_ns: int,
                   deadline_ns: int | None = None) -> dict[str, int]:
        """Read registers ``names`` and ``time.ns`` until ``done(values)`` (a function of the
        name -> value mapping); returns the last values. Raises DeviceError when tester time
        passes ``deadline_ns`` first, or stands still for ``stall_timeout_s`` of wall time.
        Sleeps about the tester time still expected (until ``expected_ns``), within
        ``poll_interval_s``."""
        last_ns, last_change = -1, time.monotonic()
        while True:
            values = self.read_many([*names, "time.ns"])
            now = values["time.ns"]
            if done(values):
                return values
            if deadline_ns is not None and now >= deadline_ns:
                raise DeviceError(f"{', '.join(names)} still not done at time.ns {now} "
                                  f"(deadline {deadline_ns} ns)")
            if now != last_ns:
                last_ns, last_change = now, time.monotonic()
            elif time.monotonic() - last_change > self.stall_timeout_s:
                raise DeviceError(f"time.ns of {self.transport.url} stopped at {now} ns for "
                                  f"{self.stall_timeout_s:g} s: is the tester (simulation) running?")
            low, high = self.poll_interval_s
            time.sleep(min(max((expected_ns - now) / 1e9, low), high))

    # commands

    def _command(self, bits: int) -> int:
        """Strobe ``ctrl.cmd``; returns ``time.ns`` read just after, in the same transaction."""
        return self.transact({"ctrl.cmd": bits}, ["time.ns"])["time.ns"]

    def start(self) -> int:
        """START every enabled generator on the same clock; returns ``time.ns`` just after."""
        return self._command(CMD_START)

    def stop(self) -> None:
        self._command(CMD_STOP)

    def clear(self) -> None:
        """Zero every counter and the sequence state of every port."""
        self._command(CMD_CLEAR)

    def read_memory(self, name: str) -> list[int]:
        """Every entry of a memory window (e.g. ``p1.ana.hist``)."""
        reg = self.regmap[name]
        return reg.entries(self.transport.transact([], reg.word_offsets))

    def write_memory(self, name: str, entries: Mapping[int, int] | Sequence[int], *, start: int = 0) -> None:
        """Write entries of a read/write memory window (e.g. ``p0.gen.tmpl``) in one
        transaction: a mapping index -> value, or a sequence written from entry ``start``."""
        reg = self.regmap[name]
        if reg.depth < 2 or reg.access != "rw":
            raise ValueError(f"{name} is not a writable memory window")
        items = entries.items() if isinstance(entries, Mapping) else enumerate(entries, start)
        pairs = []
        for index, value in items:
            if not 0 <= index < reg.depth:
                raise ValueError(f"{name}: entry {index} is outside 0..{reg.depth - 1}")
            base = reg.offset + 4 * reg.words * index
            pairs += [(base + 4 * i, word) for i, word in enumerate(reg.split(value))]
        if pairs:
            self.transport.transact(pairs, [])

    def configure_histogram(self, port: int, config: HistogramConfig) -> None:
        self._check_port(port)
        self.write_many({f"p{port}.ana.hist_offset": config.offset_ns, f"p{port}.ana.hist_shift": config.shift})

    def read_stream_histograms(self, port: int, config: HistogramConfig) -> dict[int, LatencyHistogram]:
        """The latency histograms of port ``port``'s streams that had latency samples, by index
        in its stream group (``pN.ana.hist_used``, as of the last SNAPSHOT), binned as
        ``config`` (what :meth:`configure_histogram` set). Read when traffic has stopped."""
        self._check_port(port)
        used = self.read(f"p{port}.ana.hist_used")
        uo = self.read_memory(f"p{port}.ana.hist_uo")
        window = self.regmap[f"p{port}.ana.hist"]
        result = {}
        for stream in range(len(uo) // 2):
            if not used >> stream & 1:
                continue
            select = self.regmap[f"p{port}.ana.hist_stream"]
            words = self.transport.transact([(select.offset, stream)], window.word_offsets)
            bins = window.entries(words)
            result[stream] = LatencyHistogram(offset_ns=config.offset_ns, bin_ns=config.bin_ns,
                                              counts={i: n for i, n in enumerate(bins) if n},
                                              underflow=uo[2 * stream], overflow=uo[2 * stream + 1])
        return result

    def read_histogram(self, port: int, config: HistogramConfig, counters: PortCounters) -> LatencyHistogram:
        """Port ``port``'s latency distribution: the sum of its streams' histograms."""
        counts: dict[int, int] = {}
        for hist in self.read_stream_histograms(port, config).values():
            for index, n in hist.counts.items():
                counts[index] = counts.get(index, 0) + n
        return LatencyHistogram(offset_ns=config.offset_ns, bin_ns=config.bin_ns, counts=dict(sorted(counts.items())),
                                underflow=counters.hist_underflow, overflow=counters.hist_overflow)

    def snapshot_counters(self) -> dict[int, PortCounters]:
        """SNAPSHOT every counter of every port at one instant and read them all, in one
        transaction."""
        names = [name for port in range(self.n_ports) for name in PortCounters.register_names(port, self.regmap)]
        values = self.transact({"ctrl.cmd": CMD_SNAPSHOT}, names)
        return {port: PortCounters.from_registers(port, values) for port in range(self.n_ports)}

    def read_stream_stats(self, port: int) -> list[dict[str, int]]:
        """The per-stream receive statistics of port ``port`` as of the last SNAPSHOT
        (``pN.ana.streams``): 16 entries, entry i for stream id ``stream_group * 16 + i``,
        fields per :data:`wirespeed.gateware.stream_stats.STATS_FIELDS` (docs/analyzer.md)."""
        from wirespeed.gateware.stream_stats import unpack_entry
        self._check_port(port)
        # the gateware copies the snapshot into the window after the command (a few us)
        copying = f"p{port}.ana.streams_copying"
        if copying in self.regmap:
            now = self.read_many([copying, "time.ns"])
            if now[copying]:
                self.wait_until([copying], lambda v: not v[copying], expected_ns=now["time.ns"],
                                deadline_ns=now["time.ns"] + 10_000_000)
        return [unpack_entry(value) for value in self.read_memory(f"p{port}.ana.streams")]

    def read_stream_tx(self, port: int) -> list[tuple[int, int]]:
        """(frames, bytes) sent by each of port ``port``'s generator streams (by stream index,
        not id) as of the last SNAPSHOT (``pN.gen.stream_tx``)."""
        self._check_port(port)
        return [(value & (2**64 - 1), value >> 64) for value in self.read_memory(f"p{port}.gen.stream_tx")]

    def read_stream_entries(self, port: int, indices: Sequence[int]) -> dict[int, dict[str, int]]:
        """Entries ``indices`` of port ``port``'s per-stream statistics as of the last SNAPSHOT
        (as :meth:`read_stream_stats`, reading only those entries: one transaction)."""
        from wirespeed.gateware.stream_stats import unpack_entry
        self._check_port(port)
        copying = f"p{port}.ana.streams_copying"
        if copying in self.regmap:
            now = self.read_many([copying, "time.ns"])
            if now[copying]:
                self.wait_until([copying], lambda v: not v[copying], expected_ns=now["time.ns"],
                                deadline_ns=now["time.ns"] + 10_000_000)
        reg = self.regmap[f"p{port}.ana.streams"]
        wanted = sorted(set(indices))
        offsets = [reg.offset + 4 * (reg.words * i + w) for i in wanted for w in range(reg.words)]
        words = self.transport.transact([], offsets)
        return {i: unpack_entry(reg.join(words[k * reg.words:(k + 1) * reg.words])) for k, i in enumerate(wanted)}

    def _flow_streams(self, flows: Sequence[Flow], counters: Mapping[int, PortCounters]) -> dict[int, dict[str, int]]:
        """Each flow's stream after a trial (:data:`sequence.STREAM_FIELDS`), by stream id: the
        frames its port sent (its program's only stream) and the receiving port's entry; {} when
        a receiving port does not track sequence numbers (no per-stream statistics)."""
        if not all(self.counts_sequence_errors(f.rx_port) and f"p{f.rx_port}.ana.streams" in self.regmap
                   for f in flows):
            return {}
        wanted: dict[int, list[int]] = {}
        for flow in flows:
            wanted.setdefault(flow.rx_port, []).append(flow.spec.stream_id & 15)
        entries = {port: self.read_stream_entries(port, indices) for port, indices in wanted.items()}
        streams = {}
        for flow in flows:
            entry = entries[flow.rx_port][flow.spec.stream_id & 15]
            streams[flow.spec.stream_id] = {"tx_frames": counters[flow.tx_port].tx_frames,
                                            **{k: entry[k] for k in sequence.STREAM_FIELDS[1:]}}
        return streams

    #: simulation only: a callable returning the simulated DUT model's own counters, by
    #: direction then name (``{"0->1": {"lost": ...}}``); trials record their difference
    dut_probe: Callable[[], dict[str, dict[str, int]]] | None = None

    def _dut_counters(self) -> dict[str, dict[str, int]] | None:
        return self.dut_probe() if self.dut_probe is not None else None

    def _trial_end(self, control: dict[str, int], model: dict[str, dict[str, int]] | None) -> dict:
        """The trial's control-path counters and DUT model counters (since ``control`` and
        ``model`` were taken), as TrialResult fields."""
        after = self.transport.control_stats()
        fields: dict = {"control": {k: after[k] - control.get(k, 0) for k in after}}
        if model is not None:
            now = self._dut_counters() or {}
            fields["dut_model"] = {d: {k: v - model.get(d, {}).get(k, 0) for k, v in values.items()}
                                   for d, values in now.items()}
        return fields

    # generators

    def _check_port(self, port: int) -> None:
        if not 0 <= port < self.n_ports:
            raise ValueError(f"port must be 0..{self.n_ports - 1}, not {port}")

    def configure_generator(self, port: int, spec: FrameSpec, rate_fps: float, *,
                            duration_ns: int | None = None, count: int | None = None) -> int:
        """Enable port ``port``'s generator for ``spec`` frames at ``rate_fps``, for
        ``duration_ns`` of tester time or ``count`` frames (exactly one of them). Returns the
        programmed period (Q32.32 cycles)."""
        self._check_port(port)
        if (duration_ns is None) == (count is None):
            raise ValueError("give exactly one of duration_ns or count")
        from ..streams import PortProgram
        rate_to_period(rate_fps, spec.point, self.clk_hz)          # checks the rate
        program = PortProgram(port=port, streams=(spec.to_stream(),), rate_fps=rate_fps, clk_hz=self.clk_hz)
        compiled = program.compile()
        self.load_program(port, compiled, duration_ns=duration_ns, count=count)
        return compiled.streams[0].descriptor["period"]

    def load_program(self, port: int, compiled, *, duration_ns: int | None = None, count: int | None = None,
                     burst_len: int = 0, burst_gap_ns: int = 0) -> None:
        """Load a compiled port program (:meth:`wirespeed.streams.PortProgram.compile`) into
        port ``port``'s generator and enable it for ``duration_ns`` of tester time or ``count``
        frames of all streams together (exactly one of them), optionally in bursts of
        ``burst_len`` frames back to back separated by ``burst_gap_ns``."""
        from .program import write_port_program
        self._check_port(port)
        if (duration_ns is None) == (count is None):
            raise ValueError("give exactly one of duration_ns or count")
        self.write(f"p{port}.gen.enable", 0)
        write_port_program(self, port, compiled)
        values = {"burst_len": burst_len, "burst_gap": ns_to_cycles(burst_gap_ns, self.clk_hz)}
        if count is None:
            values |= {"mode": 0, "duration": ns_to_cycles(duration_ns, self.clk_hz)}
        else:
            values |= {"mode": 1, "count": count}
        self.write_many({f"p{port}.gen.{k}": v for k, v in values.items()} | {f"p{port}.gen.enable": 1})

    def disable_generator(self, port: int) -> None:
        """Turn port ``port``'s generator off (a port without one sends nothing anyway)."""
        self._check_port(port)
        if self.has_generator(port):
            self.write(f"p{port}.gen.enable", 0)

    def has_generator(self, port: int) -> bool:
        """Whether port ``port`` of this build has a traffic generator (``pN.gen.*``)."""
        return f"p{port}.gen.enable" in self.regmap

    def has_analyzer(self, port: int) -> bool:
        """Whether port ``port`` of this build has an analyzer (``pN.ana.*``)."""
        return f"p{port}.ana.rx_frames" in self.regmap

    def has_responder(self, port: int) -> bool:
        """Whether port ``port`` of this build has the ARP/ND responder (``pN.arp.*``: a build
        with the responder, on the ports that receive)."""
        return f"p{port}.arp.mac" in self.regmap

    def counts_sequence_errors(self, port: int) -> bool:
        """Whether port ``port``'s analyzer counts sequence errors (``pN.ana.seq_errors``: a build
        with per-stream receive statistics)."""
        return f"p{port}.ana.seq_errors" in self.regmap

    def check_flows(self, flows: Sequence[Flow]) -> None:
        """ValueError (one line) for a flow this build cannot carry: its sending port has no
        generator or its receiving port no analyzer (a unidirectional board build)."""
        for flow in flows:
            for port, has, what in ((flow.tx_port, self.has_generator, "generator"),
                                    (flow.rx_port, self.has_analyzer, "analyzer")):
                self._check_port(port)
                if not has(port):
                    raise ValueError(f"port {port} of this gateware has no {what} (it sends on port(s) "
                                     f"{self._ports_with(self.has_generator)} and receives on port(s) "
                                     f"{self._ports_with(self.has_analyzer)}), so it cannot carry "
                                     f"port {flow.tx_port} -> port {flow.rx_port}")

    def _ports_with(self, has) -> str:
        return ", ".join(str(p) for p in range(self.n_ports) if has(p)) or "none"

    # trials

    def run_trial(self, flows: Sequence[Flow], rate_fps: float, duration_ns: int, wait_ns: int,
                  histogram: HistogramConfig | None = None, *, lat_def: int = 0,
                  event: tuple[int, Callable[[], None]] | None = None, timeline_points: int = 0) -> TrialResult:
        """One trial (docs/architecture.md, "Timing of a trial"): every flow's generator sends
        at ``rate_fps`` for ``duration_ns``; after the generators stop, wait ``wait_ns`` of
        tester time for frames still in flight, then snapshot every counter and read the
        receiving ports' latency histograms (binned as ``histogram``, default
        :class:`HistogramConfig`).

        Each receiving port's per-stream statistics follow the stream group (stream id >> 4)
        of the first flow sent to it (``pN.ana.stream_group``), and its latency definition is
        ``lat_def`` (``pN.ana.lat_def``: 0 first bit in to first bit out, 1 store and forward,
        RFC 1242 3.8).

        ``event``: ``(at_ns, action)``: ``action()`` is called once ``at_ns`` of tester time have
        passed since START (e.g. resetting the DUT, RFC 2544 26.6). ``timeline_points``: that many
        samples of the frame counters, evenly over the trial (:meth:`_timeline`), for the rate
        over time."""
        if lat_def not in (0, 1):
            raise ValueError(f"lat_def must be 0 (first bit) or 1 (store and forward), not {lat_def!r}")
        control = self.transport.control_stats()
        histogram = histogram or HistogramConfig()
        points = {flow.spec.point for flow in flows}
        if len(points) != 1 or len({flow.tx_port for flow in flows}) != len(flows):
            raise ValueError("a trial needs one frame size and at most one flow per sending port")
        self.check_flows(flows)
        self.stop()
        tx_ports = [flow.tx_port for flow in flows]
        for port in set(range(self.n_ports)) - set(tx_ports):
            self.disable_generator(port)
        for flow in flows:
            self._check_port(flow.rx_port)
            period = self.configure_generator(flow.tx_port, flow.spec, rate_fps, duration_ns=duration_ns)
        rx_ports = sorted({flow.rx_port for flow in flows})
        groups: dict[int, int] = {}
        for flow in flows:
            groups.setdefault(flow.rx_port, flow.spec.stream_id >> 4)
        for port in rx_ports:
            self.configure_histogram(port, histogram)
            self.write_many({f"p{port}.ana.stream_group": groups[port], f"p{port}.ana.lat_def": lat_def})
        self.clear()
        model = self._dut_counters()
        started = self.start()
        timeline = self._timeline(started, duration_ns, timeline_points, tx_ports, rx_ports, event)
        self._wait_generators_done(tx_ports, started + duration_ns, duration_ns)
        counters, drain = self._settle(wait_ns, rx_ports)
        streams = self._flow_streams(flows, counters)
        histograms = {p: self.read_histogram(p, histogram, counters[p]) for p in rx_ports}
        responder = self.read_responder(sorted({*tx_ports, *rx_ports}))
        return TrialResult(frame_size=points.pop(), timeline=timeline, drain_steps=drain, offered_fps=rate_fps,
                           period_q32=period,
                           duration_ns=duration_ns, wait_ns=wait_ns, flows=list(flows), started_ns=started,
                           counters=counters, lat_def=lat_def, streams=streams, histograms=histograms,
                           responder=responder, **self._trial_end(control, model))

    #: a trial's wait is stretched, by half waits, while frames still arrive, up to this many times
    DRAIN_STEPS = 128

    def _settle(self, wait_ns: int, rx_ports: Sequence[int]) -> tuple[dict[int, PortCounters], int]:
        """After the generators stopped: wait ``wait_ns`` (RFC 2544 section 23's wait for
        frames in flight) and SNAPSHOT; if the receiving ports counted frames in its second
        half, the DUT is still emptying a deep queue: wait another half and SNAPSHOT again, until
        a half passes without a frame (at most :attr:`DRAIN_STEPS` times). So no frame of this
        trial is left to arrive in the next one. Returns the counters and the half waits added."""
        def received(counters):
            return sum(counters[p].rx_frames + counters[p].other_frames + counters[p].fcs_errors for p in rx_ports)

        half = max(wait_ns // 2, 1)
        self.wait_ns(wait_ns - half)
        counters = self.snapshot_counters()
        for added in range(self.DRAIN_STEPS + 1):
            before = received(counters)
            self.wait_ns(half)
            counters = self.snapshot_counters()
            if received(counters) == before:
                return counters, added
        return counters, self.DRAIN_STEPS

    def _timeline(self, started: int, duration_ns: int, points: int, tx_ports: Sequence[int],
                  rx_ports: Sequence[int], event: tuple[int, Callable[[], None]] | None = None) -> list[list[int]]:
        """While a trial runs: ``points`` samples ``[t_ns, tx_frames, rx_frames, errors]`` (t from
        START; frames sent by ``tx_ports`` and received by ``rx_ports`` so far; errors = sequence +
        FCS errors), each taken by a SNAPSHOT at about ``started + i * duration_ns / points``;
        and ``event``'s action at its time. The final SNAPSHOT of the trial replaces these."""
        todo = sorted([(started + i * duration_ns // points, None) for i in range(1, points + 1)]
                      + ([(started + event[0], event[1])] if event else []), key=lambda x: x[0])
        errors = [f"p{p}.ana.{c}" for p in rx_ports for c in ("seq_errors", "fcs_errors")
                  if f"p{p}.ana.{c}" in self.regmap]      # (no seq_errors without per-stream statistics)
        names = [f"p{p}.gen.tx_frames" for p in tx_ports] + [f"p{p}.ana.rx_frames" for p in rx_ports] + errors
        samples = []
        for at, action in todo:
            self.wait_until([], lambda v, at=at: v["time.ns"] >= at, expected_ns=at)
            if action is not None:
                action()
                continue
            v = self.transact({"ctrl.cmd": CMD_SNAPSHOT}, [*names, "time.ns"])
            samples.append([v["time.ns"] - started, sum(v[f"p{p}.gen.tx_frames"] for p in tx_ports),
                            sum(v[f"p{p}.ana.rx_frames"] for p in rx_ports),
                            sum(v[name] for name in errors)])
        return samples

    def run_phase_trial(self, flow: Flow, rates_fps: tuple[float, float], phase_ns: int, duration_ns: int,
                        wait_ns: int, histogram: HistogramConfig | None = None, *,
                        lat_def: int = 0, timeline_points: int = 0) -> TrialResult:
        """One trial whose offered rate steps down (RFC 2544 26.5): ``flow``'s port sends at
        ``rates_fps[0]`` until ``phase_ns`` after the trial's first frame, then at
        ``rates_fps[1]`` until ``duration_ns``, with no gap (``pN.gen.phase_at``). The two
        phases are two streams: the first has ``flow``'s stream id, the second that id + 8
        (same stream group), each with its own sequence numbers. The result's ``offered_fps``
        is the first rate, ``period_q32`` the second phase's period."""
        import dataclasses

        from ..streams import PortProgram
        if lat_def not in (0, 1):
            raise ValueError(f"lat_def must be 0 (first bit) or 1 (store and forward), not {lat_def!r}")
        if not 0 < phase_ns < duration_ns:
            raise ValueError(f"the rate step must fall inside the trial: 0 < {phase_ns} < {duration_ns} ns")
        control = self.transport.control_stats()
        histogram = histogram or HistogramConfig()
        size = flow.spec.point
        self.check_flows([flow])
        self.stop()
        for port in set(range(self.n_ports)) - {flow.tx_port}:
            self.disable_generator(port)
        periods = [rate_to_period(r, size, self.clk_hz) for r in rates_fps]
        first = flow.spec.to_stream()
        second = first.model_copy(update={"stream_id": flow.spec.stream_id + 8})
        program = PortProgram(port=flow.tx_port, streams=(first, second), rate_fps=min(rates_fps), clk_hz=self.clk_hz)
        compiled = program.compile()
        compiled = dataclasses.replace(compiled, streams=tuple(
            dataclasses.replace(cs, descriptor=cs.descriptor | {"period": p}, fps=period_to_rate(p, self.clk_hz))
            for cs, p in zip(compiled.streams, periods)))
        self.load_program(flow.tx_port, compiled, duration_ns=duration_ns)
        self.write_many({f"p{flow.tx_port}.gen.phase_at": ns_to_cycles(phase_ns, self.clk_hz),
                         f"p{flow.tx_port}.gen.phase2": 0b10})
        self.configure_histogram(flow.rx_port, histogram)
        self.write_many({f"p{flow.rx_port}.ana.stream_group": flow.spec.stream_id >> 4,
                         f"p{flow.rx_port}.ana.lat_def": lat_def})
        self.clear()
        model = self._dut_counters()
        try:
            started = self.start()
            timeline = self._timeline(started, duration_ns, timeline_points, [flow.tx_port], [flow.rx_port])
            self._wait_generators_done([flow.tx_port], started + duration_ns, duration_ns)
            counters, drain = self._settle(wait_ns, [flow.rx_port])
        finally:
            self.write_many({f"p{flow.tx_port}.gen.phase_at": 0, f"p{flow.tx_port}.gen.phase2": 0})
        sent, got = self.read_stream_tx(flow.tx_port), self.read_stream_stats(flow.rx_port)
        streams = {}
        for index, sid in enumerate((flow.spec.stream_id, flow.spec.stream_id + 8)):
            stats = got[sid & 15]
            streams[sid] = {"tx_frames": sent[index][0], **{k: stats[k] for k in sequence.STREAM_FIELDS[1:]},
                            "period_q32": periods[index]}
        histograms = {flow.rx_port: self.read_histogram(flow.rx_port, histogram, counters[flow.rx_port])}
        responder = self.read_responder(sorted({flow.tx_port, flow.rx_port}))
        return TrialResult(frame_size=size, offered_fps=rates_fps[0], period_q32=periods[1], duration_ns=duration_ns,
                           wait_ns=wait_ns, flows=[flow], started_ns=started, counters=counters, lat_def=lat_def,
                           streams=streams, timeline=timeline, drain_steps=drain, histograms=histograms,
                           responder=responder, **self._trial_end(control, model))

    def run_burst_trial(self, flow: Flow, burst_frames: int, wait_ns: int,
                        histogram: HistogramConfig | None = None, *, lat_def: int = 0) -> TrialResult:
        """One back-to-back trial (RFC 2544 26.4): from idle, ``flow``'s generator sends a burst
        of ``burst_frames`` frames at minimum inter-frame gap (one burst of the generator's burst
        mode, also for a mix of sizes); after it stops, wait ``wait_ns`` of tester time for the DUT to drain, then
        snapshot every counter and read the receiving port's latency histogram. The result's
        ``duration_ns`` is the burst's time on the wire; its ``offered_fps`` the line rate."""
        if lat_def not in (0, 1):
            raise ValueError(f"lat_def must be 0 (first bit) or 1 (store and forward), not {lat_def!r}")
        if burst_frames < 1:
            raise ValueError(f"a burst needs at least one frame, not {burst_frames}")
        control = self.transport.control_stats()
        histogram = histogram or HistogramConfig()
        size = flow.spec.point
        line = line_rate_fps(size)
        self.check_flows([flow])
        self.stop()
        for port in set(range(self.n_ports)) - {flow.tx_port}:
            self.disable_generator(port)
        # burst mode: the frames leave back to back whatever their sizes (a mix's frames would
        # otherwise keep their due times, a mean frame time apart, and short ones would not be
        # at minimum gap)
        from ..streams import PortProgram
        compiled = PortProgram(port=flow.tx_port, streams=(flow.spec.to_stream(),), rate_fps=line,
                               clk_hz=self.clk_hz).compile()
        self.load_program(flow.tx_port, compiled, count=burst_frames, burst_len=min(burst_frames, 2**32 - 1))
        period = compiled.streams[0].descriptor["period"]
        self.configure_histogram(flow.rx_port, histogram)
        self.write_many({f"p{flow.rx_port}.ana.stream_group": flow.spec.stream_id >> 4,
                         f"p{flow.rx_port}.ana.lat_def": lat_def})
        self.clear()
        cycle = flow.spec.sizes           # the burst's bytes: whole passes of the size sequence and a part
        whole, part = divmod(burst_frames, len(cycle))
        wire_bytes = whole * sum(cycle) + sum(cycle[:part]) + burst_frames * WIRE_OVERHEAD
        burst_ns = -(-wire_bytes * 8 * 1_000_000_000 // LINK_BPS)
        model = self._dut_counters()
        started = self.start()
        self._wait_generators_done([flow.tx_port], started + burst_ns, burst_ns)
        counters, drain = self._settle(wait_ns, [flow.rx_port])
        streams = self._flow_streams([flow], counters)
        histograms = {flow.rx_port: self.read_histogram(flow.rx_port, histogram, counters[flow.rx_port])}
        responder = self.read_responder(sorted({flow.tx_port, flow.rx_port}))
        return TrialResult(frame_size=size, offered_fps=line, drain_steps=drain, period_q32=period,
                           duration_ns=burst_ns,
                           wait_ns=wait_ns, flows=[flow], started_ns=started, counters=counters, lat_def=lat_def,
                           streams=streams, histograms=histograms, responder=responder,
                           **self._trial_end(control, model))

    # learning (RFC 2544 section 23)

    def configure_addresses(self, addresses: Mapping[int, PortAddress], *, answer_arp: bool = True,
                            answer_nd: bool = True) -> None:
        """Set each port's own addresses (``pN.arp.mac/ipv4/ipv6``) and whether it answers ARP
        requests and IPv6 neighbour solicitations for them (``pN.arp.enable``); a port without
        a responder in this gateware has no such registers (its addresses are only in the
        frames it sends)."""
        enable = (1 if answer_arp else 0) | (2 if answer_nd else 0)
        values: dict[str, int] = {}
        for port, address in sorted(addresses.items()):
            self._check_port(port)
            if self.has_responder(port):
                values |= address.registers(port) | {f"p{port}.arp.enable": enable}
        if values:
            self.write_many(values)

    def read_responder(self, ports: Sequence[int]) -> dict[int, dict[str, int]]:
        """The ARP/ND responder counters of ``ports`` (live, zeroed by CLEAR), in one transaction;
        ports without a responder in this gateware are left out."""
        names = [f"p{p}.arp.{c}" for p in ports for c in RESPONDER_COUNTERS if f"p{p}.arp.{c}" in self.regmap]
        values = self.read_many(names) if names else {}
        result: dict[int, dict[str, int]] = {}
        for name, value in values.items():
            port, _, counter = name.split(".")
            result.setdefault(int(port[1:]), {})[counter] = value
        return result

    def learn(self, flows: Sequence[Flow], addresses: Mapping[int, PortAddress] | None = None, *,
              frames: int = 4, settle_ns: int = 2_000_000_000, rate_fps: float = 10_000.0,
              answer_arp: bool = True, answer_nd: bool = True) -> LearningResult:
        """The learning phase before the first trial: configure the addresses of every port the
        flows use (``addresses``, else the defaults) and ARP/ND answering, send a gratuitous ARP
        (RFC 5227 announcement) and an unsolicited neighbour advertisement from each that has a
        responder (a build's receiving ports; a port that only sends is no destination), then
        ``frames`` learning frames from each port to its peer (a flow's frames from its sender,
        the reverse from its receiver, so a switch learns both MAC addresses; a receiver without
        a generator sends only its gratuitous ARP and NA) at ``rate_fps``, then wait ``settle_ns`` of tester time for the DUT to settle (RFC 2544 section 23 waits
        2 s). Counters are cleared first; the trial that follows clears them again."""
        ports = sorted({p for flow in flows for p in (flow.tx_port, flow.rx_port)})
        addresses = {p: (addresses or {}).get(p) or PortAddress.default(p) for p in ports}
        specs: dict[int, FrameSpec] = {}
        for flow in flows:
            specs.setdefault(flow.tx_port, flow.spec)
        for flow in flows:
            if self.has_generator(flow.rx_port):
                specs.setdefault(flow.rx_port, FrameSpec.for_flow(flow.rx_port, flow.tx_port, flow.spec.point,
                                                                  addresses))
        self.stop()
        for port in range(self.n_ports):
            self.disable_generator(port)
        self.configure_addresses(addresses, answer_arp=answer_arp, answer_nd=answer_nd)
        self.clear()
        responders = [p for p in ports if self.has_responder(p)]
        started = self.transact({f"p{p}.arp.cmd": 3 for p in responders}, ["time.ns"])["time.ns"]
        if frames:
            for port, spec in specs.items():
                self.configure_generator(port, spec, min(rate_fps, line_rate_fps(spec.point)), count=frames)
            begun = self.start()
            expected = int(frames * 1e9 / rate_fps) + 1
            self._wait_generators_done(sorted(specs), begun + expected, expected)
        ended = self.wait_ns(settle_ns)
        counters = self.snapshot_counters()
        arp = self.read_responder(responders)
        for port in specs:
            self.disable_generator(port)
        return LearningResult(
            addresses=addresses, answer_arp=answer_arp, answer_nd=answer_nd,
            gratuitous_arp={p: arp[p]["arp_replies"] for p in responders},
            unsolicited_na={p: arp[p]["na_sent"] for p in responders},
            learning_frames={p: counters[p].tx_frames for p in ports},
            learning_frames_received={p: counters[p].rx_frames for p in ports},
            other_frames_received={p: counters[p].other_frames for p in ports},
            arp_requests={p: arp[p]["arp_requests"] for p in responders},
            ns_received={p: arp[p]["ns_received"] for p in responders},
            settle_ns=settle_ns, started_ns=started, ended_ns=ended)

    def _wait_generators_done(self, ports: Sequence[int], end_ns: int, duration_ns: int) -> None:
        """Poll ``pN.gen.running`` until every port has stopped; the trial timer must stop it
        by ``end_ns`` (plus the last frame and a margin)."""
        names = [f"p{port}.gen.running" for port in ports]
        margin = 1_000_000 + duration_ns // 10
        self.wait_until(names, lambda v: not any(v[n] for n in names), expected_ns=end_ns,
                        deadline_ns=end_ns + margin)
