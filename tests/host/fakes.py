"""Trial results without a tester, for tests of the search loop and the results files."""

import math

from wirespeed import sizes
from wirespeed.ethernet import line_rate_fps
from wirespeed.host.models import LatencyHistogram, PortCounters, TrialResult
from wirespeed.traffic import Flow, flow_stream


def make_trial(size: int | str, rate_fps: float, sent: int, received: int, duration_ns: int = 10_000_000,
               latency_ns: tuple[int, int, int] = (900, 1000, 1100), lat_def: int = 0,
               sequence: dict[str, int] | None = None) -> TrialResult:
    """A one-flow trial (port 0 -> port 1) that sent ``sent`` and received ``received``
    frames, half at latency min and half at max (mean given), alternating, binned by 64 ns.
    ``size``: bytes or an IMIX label (bytes counted at its mean size). ``sequence``: the
    stream's sequence counters (lost, duplicate, ...; the others 0, next_seq = sent) as a
    build with per-stream statistics reports them; None: a build without."""
    lat_min, lat_avg, lat_max = latency_ns
    mean = sizes.mean_len(size)
    half = received // 2
    rx = PortCounters(rx_frames=received, rx_bytes=round(received * mean), lat_min=lat_min, lat_max=lat_max,
                      lat_sum=lat_avg * received, lat_sq_sum=half * lat_min**2 + (received - half) * lat_max**2,
                      jitter_sum=(received - 1) * (lat_max - lat_min))
    hist = LatencyHistogram(offset_ns=0, bin_ns=64, counts={lat_min // 64: half, lat_max // 64: received - half},
                            underflow=0, overflow=0)
    return TrialResult(frame_size=size, offered_fps=rate_fps, period_q32=0, duration_ns=duration_ns, wait_ns=0,
                       flows=[Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size))], started_ns=0,
                       counters={0: PortCounters(tx_frames=sent, tx_bytes=round(sent * mean)), 1: rx},
                       histograms={1: hist} if received else {}, lat_def=lat_def,
                       streams={} if sequence is None else {0: {
                           "tx_frames": sent, "rx_frames": received, "in_order": 0, "lost": 0, "duplicate": 0,
                           "out_of_order": 0, "late": 0, "fcs_errors": 0, "next_seq": sent} | sequence})


class FakeTester:
    """Answers run_trial like a DUT forwarding at most ``limit_pct`` of line rate, with a
    queue of ``queue`` frames that drains after the trial: frames beyond are lost."""

    def __init__(self, limit_pct: float, queue: int = 0):
        self.limit_pct, self.queue, self.calls = limit_pct, queue, []

    def run_trial(self, flows, rate_fps, duration_ns, wait_ns, histogram=None, *, lat_def=0):
        self.calls.append((flows, rate_fps, duration_ns, wait_ns))
        self.lat_defs = [*getattr(self, "lat_defs", []), lat_def]
        size = flows[0].spec.point
        sent = math.ceil(rate_fps * duration_ns / 1e9)
        limit = line_rate_fps(size) * self.limit_pct / 100
        received = min(sent, math.floor(limit * duration_ns / 1e9) + self.queue)
        return make_trial(size, rate_fps, sent, received, duration_ns, lat_def=lat_def)
