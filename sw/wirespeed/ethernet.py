"""Gigabit Ethernet facts every figure is held against (IEEE 802.3 clause 3 framing,
RFC 2544 Appendix B frame rates), for the host.

A frame of L bytes (L counts destination MAC .. FCS) costs L + 20 bytes on the wire:
7 preamble + 1 SFD + 12 inter-frame gap. The constants live with the frame format in
:mod:`wirespeed.gateware.frame`, shared with the gateware.
"""

from wirespeed.gateware.frame import MAX_FRAME, MIN_FRAME, WIRE_OVERHEAD, line_rate_fps

__all__ = ["LINK_BPS", "WIRE_OVERHEAD", "MIN_FRAME", "MAX_FRAME", "line_rate_fps", "throughput_mbps"]

LINK_BPS = 1_000_000_000


def throughput_mbps(frame_len: int, fps: float) -> float:
    """Frame bits per second in Mb/s (L * 8 * fps; preamble and gap not counted)."""
    return frame_len * 8 * fps / 1e6
