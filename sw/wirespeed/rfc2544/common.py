"""What every RFC 2544 test shares: the RFC's trial and wait durations, the port pair with its
addresses and frame sizes, the learning phase of section 23 and the device the tests drive."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, Self

from pydantic import BaseModel, Field, field_validator, model_validator

from .. import sizes as size_points
from ..host.models import HistogramConfig, LearningResult, TrialResult
from ..traffic import Flow, IpVersion, PortAddress, check_distinct, flow_stream

__all__ = ["RFC_TRIAL_NS", "RFC_WAIT_NS", "LearningConfig", "PortPairConfig", "TrialRunner", "run_learning",
           "csv_text", "sequence_cells"]

RFC_TRIAL_NS = 60_000_000_000  # RFC 2544 section 24: trials SHOULD last 60 s
RFC_WAIT_NS = 2_000_000_000  # RFC 2544 section 23: wait 2 s for stragglers


class LearningConfig(BaseModel):
    """The learning phase before the first trial (RFC 2544 section 23, step 2)."""

    frames: int = Field(4, ge=0, le=1_000_000, description="learning frames from each port to its peer")
    rate_fps: float = Field(10_000.0, gt=0, description="rate of the learning frames")
    settle_ns: int = Field(RFC_WAIT_NS, ge=0, description="wait after the learning frames (RFC 2544: 2 s)")
    answer_arp: bool = Field(True, description="answer ARP requests for the ports' IPv4 addresses")
    answer_nd: bool = Field(True, description="answer neighbour solicitations for the ports' IPv6 addresses")


class PortPairConfig(BaseModel):
    """Frame sizes, the sending and receiving port, the tester addresses and the learning
    phase: the parameters every RFC 2544 test has."""

    frame_sizes: list[int | str] = Field(min_length=1, description="bytes, FCS included, or IMIX mixes "
                                                                  "(imix:GENOME, wirespeed.sizes)")
    tx_port: int = Field(0, ge=0)
    rx_port: int = Field(1, ge=0)
    addresses: dict[int, PortAddress] = Field(default_factory=dict,
                                              description="tester addresses by port (others: the defaults)")
    learning: LearningConfig | None = Field(None, description="learning phase before the first trial; None: none")
    bidirectional: bool = Field(False, description="both ports send, each to the other, at the offered rate "
                                                   "(rates are per direction)")
    sources: int = Field(1, ge=1, le=65536, description="source IP addresses per direction (flows)")
    destinations: int = Field(1, ge=1, le=65536, description="destination IP addresses per direction; "
                                                             "sources x destinations flows")
    ip_version: IpVersion = Field(4, description="IP version of the test frames: 4 (RFC 2544 Appendix C) or 6 "
                                                 "(RFC 5180), from and to the ports' addresses of that version")

    @field_validator("frame_sizes")
    @classmethod
    def _sizes(cls, sizes: list[int | str]) -> list[int | str]:
        return size_points.parse_list(sizes)

    def port_addresses(self) -> dict[int, PortAddress]:
        """The addresses of the test's two ports: given, else the defaults."""
        return {p: self.addresses.get(p) or PortAddress.default(p) for p in (self.tx_port, self.rx_port)}

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        if self.tx_port == self.rx_port:
            raise ValueError(f"tx_port and rx_port must differ, not both {self.tx_port}")
        check_distinct(self.port_addresses())
        return self

    def flows(self, frame_len: int | str) -> list[Flow]:
        """The test's traffic of ``frame_len`` byte frames (or of a mix, its label):
        tx_port -> rx_port, and rx_port -> tx_port too when bidirectional; each with sources x
        destinations flows of ``ip_version``."""
        pairs = [(self.tx_port, self.rx_port)] + ([(self.rx_port, self.tx_port)] if self.bidirectional else [])
        return [Flow(tx_port=tx, rx_port=rx, spec=flow_stream(tx, rx, frame_len, self.addresses, sources=self.sources,
                                                               destinations=self.destinations,
                                                               ip_version=self.ip_version))
                for tx, rx in pairs]

    def traffic_notes(self) -> list[str]:
        notes = []
        if self.bidirectional:
            notes.append(f"bidirectional: ports {self.tx_port} and {self.rx_port} each send to the other; rates "
                         "and frame rates are per direction, the aggregate is twice")
        if self.ip_version == 6:
            notes.append("IPv6 test frames (RFC 5180) between the ports' IPv6 addresses")
        if self.sources * self.destinations > 1:
            notes.append(f"{self.sources} sources x {self.destinations} destinations = "
                         f"{self.sources * self.destinations} IPv{self.ip_version} flows per direction, walked in turn")
        return notes


class TrialRunner(Protocol):
    """What the tests need of a :class:`wirespeed.host.device.Device`."""

    def run_trial(self, flows: Sequence[Flow], rate_fps: float, duration_ns: int,
                  wait_ns: int, histogram: HistogramConfig | None = None, *, lat_def: int = 0) -> TrialResult: ...

    def learn(self, flows: Sequence[Flow], addresses: Mapping[int, PortAddress] | None = None,
              **kwargs: Any) -> LearningResult: ...


def run_learning(device: TrialRunner, config: PortPairConfig) -> LearningResult:
    """RFC 2544 section 23 step 2: addresses, ARP/ND answering, gratuitous ARP and unsolicited
    neighbour advertisement, learning frames (of the first frame size), settle wait."""
    learning = config.learning or LearningConfig()
    return device.learn(config.flows(config.frame_sizes[0]), config.addresses, frames=learning.frames,
                        settle_ns=learning.settle_ns, rate_fps=learning.rate_fps,
                        answer_arp=learning.answer_arp, answer_nd=learning.answer_nd)


def csv_text(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A CSV table (header row, then ``rows``) as text, ``\n`` line ends."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def sequence_cells(trial: TrialResult) -> list[int | str]:
    """Duplicated, out-of-order and late frames, as CSV cells (empty: the build tracks no
    sequence numbers)."""
    return ["" if n is None else n for n in (trial.duplicate_frames, trial.out_of_order_frames, trial.late_frames)]
