"""Etherbone over a serial line: the management port of a board (gateware/mgmt.py,
docs/management.md), or the simulated one over TCP.

Each request is one Etherbone record (:func:`~wirespeed.transport.base.encode_request`, the
record's base return address is the tag), followed by its CRC-32 (``zlib.crc32``, least
significant byte first) and framed with SLIP (END 0xC0 before and after, ESC 0xDB). A frame
with a bad CRC or escape is dropped; an answer that does not come within ``timeout`` makes
the request go out again with the **same tag**, ``retries`` tries in all. The gateware
executes a tag once: a repeat of the last tag is answered from its reply cache, a late copy
of an older tag is not executed and gets a *stale* answer (a record with one read whose
"address" is the last tag the gateware executed). A stale answer to the current request
means the gateware has executed newer tags than this transport's (a new session that
picked a lower random tag): the transport then moves its tags past that one
(:data:`RESYNC_STEP`) and sends the request again, which is safe since it was not executed.
Answers and stale answers to earlier tags are skipped.

URLs: ``serial:///dev/ttyUSB0?baud=1000000`` (pyserial device, 8N1, no flow control;
default baud :data:`DEFAULT_BAUD`) and ``socket://HOST:PORT`` (pyserial's raw TCP
transport: the simulation harness serves the UART that way).
"""

from __future__ import annotations

import struct
import time
import zlib
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import serial

from ..errors import TransportError
from .base import Record, RecordTransport, decode_answer, encode_request, next_tag

__all__ = ["SerialTransport", "SlipDecoder", "slip_frame", "decode_stale", "parse_serial_url",
           "DEFAULT_BAUD", "RESYNC_STEP"]

DEFAULT_BAUD = 1_000_000
#: how far past the gateware's last tag a resynchronised transport continues
RESYNC_STEP = 1 << 24
END, ESC, ESC_END, ESC_ESC = 0xC0, 0xDB, 0xDC, 0xDD
_WORD = 0xFFFFFFFF
_MAX_FRAME = 4096  # longer garbage between two ENDs is discarded
_POLL_S = 0.01


def slip_frame(packet: bytes) -> bytes:
    """``packet`` + its CRC-32 (little-endian), SLIP-escaped, between two END bytes."""
    body = packet + struct.pack("<I", zlib.crc32(packet))
    body = body.replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc")
    return b"\xc0" + body + b"\xc0"


# what the bus answered to a tag: its read words, or that the tag was stale (the gateware's last tag)
_Answer = tuple[Literal["words"], list[int]] | tuple[Literal["stale"], int]


class SlipDecoder:
    """Splits a byte stream into frames; yields the packets whose CRC and escapes are good
    and counts the others in ``bad_frames``."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.bad_frames = 0

    def feed(self, data: bytes) -> list[bytes]:
        packets: list[bytes] = []
        start = 0
        while True:
            end = data.find(b"\xc0", start)
            if end < 0:
                self._buf += data[start:]
                if len(self._buf) > _MAX_FRAME:
                    self._buf.clear()
                    self.bad_frames += 1
                return packets
            self._buf += data[start:end]
            start = end + 1
            if self._buf:
                packet = self._unframe(bytes(self._buf))
                self._buf.clear()
                if packet is None:
                    self.bad_frames += 1
                else:
                    packets.append(packet)

    @staticmethod
    def _unframe(body: bytes) -> bytes | None:
        out = bytearray()
        it = iter(body)
        for b in it:
            if b == ESC:
                escaped = next(it, None)
                if escaped == ESC_END:
                    out.append(END)
                elif escaped == ESC_ESC:
                    out.append(ESC)
                else:
                    return None
            else:
                out.append(b)
        if len(out) < 4 or zlib.crc32(out[:-4]) != struct.unpack("<I", out[-4:])[0]:
            return None
        return bytes(out[:-4])


def decode_stale(packet: bytes) -> tuple[int, int] | None:
    """``(tag, last_executed_tag)`` of a stale answer (one record, no writes, one read: the
    tag as base return address, the last tag as the read's address), or None. Decoded here:
    LiteX's ``EtherboneReads.decode`` drops the base return address."""
    if len(packet) != 20 or packet[:2] != b"\x4e\x6f" or packet[2] >> 4 != 1 or packet[3] != 0x44:
        return None
    if packet[10] != 0 or packet[11] != 1:
        return None
    return struct.unpack(">II", packet[12:20])


def parse_serial_url(url: str) -> tuple[str, int | None]:
    """``(pyserial URL, baud)`` of ``serial://DEVICE[?baud=N]`` or ``socket://HOST:PORT``
    (baud None); ValueError (one line) for anything else."""
    parts = urlsplit(url)
    if parts.scheme == "socket":
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None or parts.path or parts.query:
            raise ValueError(f"socket://HOST:PORT, not {url!r}")
        return url, None
    if parts.scheme != "serial" or parts.netloc or not parts.path:
        raise ValueError(f"serial://DEVICE[?baud=N] (e.g. serial:///dev/ttyUSB0?baud={DEFAULT_BAUD}), "
                         f"not {url!r}")
    query = parse_qs(parts.query, keep_blank_values=True)
    if set(query) - {"baud"} or len(query.get("baud", ["x"])) != 1:
        raise ValueError(f"serial:// takes only ?baud=N, not {url!r}")
    baud = DEFAULT_BAUD
    if "baud" in query:
        text = query["baud"][0]
        if not text.isdigit() or not 300 <= int(text) <= 100_000_000:
            raise ValueError(f"baud must be an integer 300..100000000, not {text!r} in {url!r}")
        baud = int(text)
    return parts.path, baud


class SerialTransport(RecordTransport):
    """Etherbone records over a SLIP/CRC-32 framed serial line (see the module docstring).

    ``stats`` counts ``requests`` (records sent, first tries), ``retries`` (tries after a
    timeout), ``timeouts`` (waits that ended without an answer), ``bad_frames`` (received
    frames with a bad CRC or escape), ``duplicates`` (answers to other tags: late or
    duplicated), ``resyncs`` (stale answers to the current request); the keys are
    :data:`~wirespeed.transport.base.CONTROL_COUNTERS`.
    """

    def __init__(self, url: str, timeout: float = 1.0, retries: int = 5):
        super().__init__(url, timeout, retries)
        target, baud = parse_serial_url(url)
        # reads wait at most _POLL_S; the answer deadline is kept here (changing a serial
        # port's timeout reconfigures the port)
        poll = min(timeout, _POLL_S)
        try:
            if baud is None:
                self._port = serial.serial_for_url(target, timeout=poll)
            else:
                self._port = serial.serial_for_url(target, baudrate=baud, bytesize=8, parity="N",
                                                   stopbits=1, timeout=poll)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise TransportError(f"cannot open {url}: {_one_line(exc)}") from None
        self._decoder = SlipDecoder()

    def close(self) -> None:
        self._port.close()

    def _exchange(self, record: Record) -> list[int]:
        self._tag = next_tag(self._tag)
        self.stats["requests"] += 1
        tries = resyncs = 0
        while tries < self.retries:
            if tries:
                self.stats["retries"] += 1
            tries += 1
            self._send(slip_frame(encode_request(record, self._tag)))
            answer = self._await_answer(self._tag)
            if answer is None:
                self.stats["timeouts"] += 1
                continue
            if answer[0] == "stale":
                # not executed: move past the gateware's last tag and send it again
                resyncs += 1
                if resyncs > 2:
                    raise TransportError(f"{self.url} keeps answering stale to tag {self._tag:#x}")
                self.stats["resyncs"] += 1
                self._tag = (answer[1] + RESYNC_STEP) & ~3 & _WORD
                tries -= 1
                continue
            return self._answer_words(record, answer[1])
        raise TransportError(f"no answer from {self.url} after {self.retries} tries")

    def _send(self, frame: bytes) -> None:
        try:
            self._port.write(frame)
            self._port.flush()
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"cannot send to {self.url}: {_one_line(exc)}") from None

    def _await_answer(self, tag: int) -> _Answer | None:
        """``("words", [...])`` or ``("stale", last_tag)`` for ``tag``, or None after
        ``timeout`` seconds. Answers to other tags are skipped."""
        deadline = time.monotonic() + self.timeout
        while deadline - time.monotonic() > 0:
            try:
                data = self._port.read(max(1, self._port.in_waiting))
            except (serial.SerialException, OSError) as exc:
                raise TransportError(f"cannot receive from {self.url}: {_one_line(exc)}") from None
            before = self._decoder.bad_frames
            packets = self._decoder.feed(data)
            self.stats["bad_frames"] += self._decoder.bad_frames - before
            for packet in packets:
                answer = decode_answer(packet)
                if answer is not None and answer[0] == tag:
                    return "words", answer[1]
                stale = decode_stale(packet)
                if stale is not None and stale[0] == tag:
                    return "stale", stale[1]
                self.stats["duplicates"] += 1
        return None


def _one_line(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())
