"""The learning phase before the first trial (RFC 2544 section 23, step 2): the tester's ports
take their addresses and answer ARP/ND, announce themselves, and send learning frames so that
the DUT knows where each address is, then the DUT is left to settle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wirespeed import regs

from ..ethernet import line_rate_fps
from ..traffic import Flow, PortAddress, StreamSpec, flow_stream
from .models import LearningResult
from .trial import wait_generators_done

__all__ = ["learn"]


def learn(dev: Any, flows: Sequence[Flow], addresses: Mapping[int, PortAddress] | None = None, *,
          frames: int = 4, settle_ns: int = 2_000_000_000, rate_fps: float = 10_000.0,
          answer_arp: bool = True, answer_nd: bool = True) -> LearningResult:
    """Configure the addresses of every port the flows use (``addresses``, else the defaults)
    and ARP/ND answering on the tester ``dev``, send a gratuitous ARP (RFC 5227 announcement)
    and an unsolicited neighbour advertisement from each port that has a responder (a build's
    receiving ports; a port that only sends is no destination), then ``frames`` learning frames
    from each port to its peer (a flow's frames from its sender, the reverse from its receiver,
    so a switch learns both MAC addresses; a receiver without a generator sends only its
    gratuitous ARP and NA) at ``rate_fps``, then wait ``settle_ns`` of tester time for the DUT
    to settle (RFC 2544 section 23 waits 2 s). Counters are cleared first; the trial that
    follows clears them again."""
    ports = sorted({p for flow in flows for p in (flow.tx_port, flow.rx_port)})
    addresses = {p: (addresses or {}).get(p) or PortAddress.default(p) for p in ports}
    specs: dict[int, StreamSpec] = {}
    for flow in flows:
        specs.setdefault(flow.tx_port, flow.spec)
    for flow in flows:
        if dev.has_generator(flow.rx_port):
            specs.setdefault(flow.rx_port, flow_stream(flow.rx_port, flow.tx_port, flow.spec.point, addresses))
    dev.stop()
    for port in range(dev.n_ports):
        dev.disable_generator(port)
    dev.configure_addresses(addresses, answer_arp=answer_arp, answer_nd=answer_nd)
    dev.clear()
    responders = [p for p in ports if dev.has_responder(p)]
    started = dev.transact({regs.port(p).arp.cmd: 3 for p in responders}, [regs.TIME.ns])[regs.TIME.ns]
    if frames:
        for port, spec in specs.items():
            dev.configure_generator(port, spec, min(rate_fps, line_rate_fps(spec.point)), count=frames)
        begun = dev.start()
        expected = int(frames * 1e9 / rate_fps) + 1
        wait_generators_done(dev, sorted(specs), begun + expected, expected)
    ended = dev.wait_ns(settle_ns)
    counters = dev.snapshot_counters()
    arp = dev.read_responder(responders)
    for port in specs:
        dev.disable_generator(port)
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
