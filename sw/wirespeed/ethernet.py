"""Gigabit Ethernet facts every figure is held against (IEEE 802.3 clause 3 framing,
RFC 2544 Appendix B frame rates), for the host.

A frame of L bytes (L counts destination MAC .. FCS) costs L + 20 bytes on the wire:
7 preamble + 1 SFD + 12 inter-frame gap. The constants live with the frame format in
:mod:`wirespeed.gateware.frame`, shared with the gateware.
"""

from fractions import Fraction

from wirespeed.gateware.frame import MAX_FRAME, MIN_FRAME, WIRE_OVERHEAD

from . import sizes

__all__ = ["LINK_BPS", "WIRE_OVERHEAD", "MIN_FRAME", "MAX_FRAME", "line_rate_fps", "throughput_mbps", "wire_mbps"]

LINK_BPS = 1_000_000_000


def line_rate_fps(size: "sizes.SizePoint", bit_rate: int = LINK_BPS) -> float:
    """Maximum frames/s of ``size``-byte frames on a link of ``bit_rate`` b/s; ``size`` may also
    be a mix's label (:mod:`wirespeed.sizes`): ``bit_rate / 8 / (mean(L) + 20)``, exact."""
    if isinstance(size, str):
        return float(Fraction(bit_rate, 8) / (sizes.mean_len(size) + WIRE_OVERHEAD))
    return bit_rate / 8 / (size + WIRE_OVERHEAD)


def throughput_mbps(size: "sizes.SizePoint", fps: float) -> float:
    """Frame bits per second in Mb/s (L * 8 * fps, L the mean size of a mix; preamble and gap
    not counted)."""
    return float(sizes.mean_len(size)) * 8 * fps / 1e6 if isinstance(size, str) else size * 8 * fps / 1e6


def wire_mbps(size: "sizes.SizePoint", fps: float) -> float:
    """Bits per second on the wire (layer 1) in Mb/s: each frame with its preamble, SFD and
    minimum gap, ``(L + 20) * 8 * fps`` (100 % of line rate is 1000 Mb/s at every size)."""
    return float(sizes.mean_len(size) + WIRE_OVERHEAD) * 8 * fps / 1e6
