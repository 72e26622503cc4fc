"""Frame capture from the host: arm a port's capture block, read what it recorded, and
write it as a nanosecond pcap file (the gateware side is
:mod:`wirespeed.gateware.capture`; registers and semantics in docs/capture.md).

Timestamps are the tester's ``time.ns`` at the first byte of each frame (nanoseconds since
the tester's clock started, not wall time); :func:`write_pcap` writes them as is unless an
``epoch_ns`` offset is given. The MAC strips the FCS, so a record's original length is the
wire length minus 4 and its captured bytes are what was stored (at most ``snaplen``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from wirespeed import regs

from .errors import DeviceError
from .safeio import atomic_file

__all__ = ["CapturedFrame", "CaptureStatus", "TRIGGERS", "STATES", "SNAPLEN_MIN", "SNAPLEN_MAX",
           "arm_capture", "capture_status", "read_capture", "write_pcap"]

#: ``pN.cap.trigger`` values by name
TRIGGERS = {"first": 0, "fcs": 1, "not_test": 2}
#: ``pN.cap.state`` values
STATES = ("idle", "armed", "capturing", "done")
SNAPLEN_MIN, SNAPLEN_MAX = 16, 1024
FCS_LEN = 4
LINKTYPE_ETHERNET = 1  # DLT_EN10MB


class CapturedFrame(BaseModel):
    """One captured frame: ``data`` is its first bytes (at most snaplen, FCS never
    included); ``wire_len`` counts the whole frame with its FCS."""

    model_config = ConfigDict(frozen=True)

    ts_ns: int = Field(ge=0, description="tester time.ns at the first byte")
    wire_len: int = Field(ge=FCS_LEN, description="bytes on the wire, FCS included, preamble excluded")
    data: bytes
    fcs_error: bool = False

    @property
    def truncated(self) -> bool:
        return len(self.data) < self.wire_len - FCS_LEN


class CaptureStatus(BaseModel):
    state: str
    frames: int


def _check_port(device, port: int) -> regs.Cap:
    if not isinstance(port, int) or not 0 <= port < device.n_ports:
        raise ValueError(f"port must be 0..{device.n_ports - 1}, not {port!r}")
    cap = regs.port(port).cap
    if cap.arm not in device.regmap:
        raise ValueError(f"port {port} has no capture block in this register map (p{port}.cap.* missing)")
    return cap


def arm_capture(device, port: int, *, trigger: str | int = "first", count: int | None = None,
                snaplen: int = 128) -> None:
    """Program and arm port ``port``'s capture, forgetting the previous one. ``trigger``:
    ``"first"`` (0, the first frame after arming), ``"fcs"`` (1, the first frame with a bad
    FCS) or ``"not_test"`` (2, the first frame that is not a wirespeed test frame). ``count``:
    frames to record from the trigger frame on, 1 to the block's index depth (default: all
    it can hold); ``snaplen``: bytes kept per frame, 16..1024."""
    cap = _check_port(device, port)
    max_frames = device.regmap[cap.index].depth
    if isinstance(trigger, str):
        if trigger not in TRIGGERS:
            raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)} (or 0..2), not {trigger!r}")
        trigger = TRIGGERS[trigger]
    elif isinstance(trigger, bool) or not isinstance(trigger, int) or not 0 <= trigger <= 2:
        raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)} (or 0..2), not {trigger!r}")
    if count is None:
        count = max_frames
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= max_frames:
        raise ValueError(f"count must be 1..{max_frames} frames, not {count!r}")
    if isinstance(snaplen, bool) or not isinstance(snaplen, int) or not SNAPLEN_MIN <= snaplen <= SNAPLEN_MAX:
        raise ValueError(f"snaplen must be {SNAPLEN_MIN}..{SNAPLEN_MAX} bytes, not {snaplen!r}")
    # one transaction, in order: the configuration is latched by the arm strobe
    device.write_many({cap.trigger: trigger, cap.snaplen: snaplen,
                       cap.count: count, cap.arm: 1})


def capture_status(device, port: int) -> CaptureStatus:
    cap = _check_port(device, port)
    values = device.read_many([cap.state, cap.frames])
    return CaptureStatus(state=STATES[values[cap.state]], frames=values[cap.frames])


def read_capture(device, port: int) -> list[CapturedFrame]:
    """The frames port ``port`` has captured so far (all of them once its state is done)."""
    cap = _check_port(device, port)
    frames = device.read_many([cap.frames])[cap.frames]
    index_reg, data_reg = device.regmap[cap.index], device.regmap[cap.data]
    if frames > index_reg.depth:
        raise DeviceError(f"{cap.frames} reads {frames}, more than the {index_reg.depth} index entries")
    if not frames:
        return []
    index = device.read_memory(cap.index)[:frames]
    words = device.read_memory(cap.data)
    out = []
    for i, entry in enumerate(index):
        ts = entry & (2**64 - 1)
        wire_len, stored, flags, offset = ((entry >> shift) & 0xFFFF for shift in (64, 80, 96, 112))
        nwords = -(-stored // 4)
        if stored > max(0, wire_len - FCS_LEN) or offset + nwords > data_reg.depth:
            raise DeviceError(f"{cap.index} entry {i} is inconsistent (wire length {wire_len}, stored "
                              f"{stored}, offset {offset} of {data_reg.depth} words)")
        data = b"".join(w.to_bytes(4, "big") for w in words[offset:offset + nwords])[:stored]
        out.append(CapturedFrame(ts_ns=ts, wire_len=wire_len, data=data, fcs_error=bool(flags & 1)))
    return out


def write_pcap(path: str | os.PathLike, frames: Iterable[CapturedFrame], *, epoch_ns: int = 0) -> Path:
    """Write ``frames`` to ``path`` as a nanosecond-resolution pcap (link type Ethernet),
    atomically (a temporary file in the same directory, renamed over ``path``). Record
    times are ``epoch_ns + ts_ns``; original length is ``wire_len - 4`` (no FCS)."""
    from scapy.utils import PcapWriter  # scapy is slow to import: only when writing

    if isinstance(epoch_ns, bool) or not isinstance(epoch_ns, int) or epoch_ns < 0:
        raise ValueError(f"epoch_ns must be an integer >= 0, not {epoch_ns!r}")
    frames = list(frames)
    path = Path(path)
    with atomic_file(path, binary=True) as f:
        writer = PcapWriter(f, linktype=LINKTYPE_ETHERNET, nano=True, snaplen=65535)
        writer.write_header(None)
        for frame in frames:
            t = epoch_ns + frame.ts_ns
            writer.write_packet(frame.data, sec=t // 1_000_000_000, usec=t % 1_000_000_000,
                                caplen=len(frame.data), wirelen=max(len(frame.data), frame.wire_len - FCS_LEN))
        writer.flush()
    return path
