"""Register transports: Etherbone over UDP (board and simulation) and an in-memory fake for
unit tests of the driver.

A transport moves 32-bit words to and from byte addresses; it knows nothing of register
names (that is :class:`wirespeed.host.device.Device`). One call, :meth:`Transport.transact`,
does some writes and then some reads, in order.

Etherbone as LiteEth implements it (liteeth/frontend/etherbone.py) and as the simulation
harness mirrors it (sim/harness/etherbone.h): 32-bit addresses and data, **one record per
packet**; a record's writes go to consecutive addresses from a base address and are done
before its reads (at most 255 of each); the answer to a record with reads is one record whose
writes carry the read values to "base address" = the request's base return address, which
this module uses as a tag to match answers to requests. A record without reads is not
answered, so every packet sent here carries at least one read: when a transaction has no
reads of its own, the packet reads back the first address it wrote, and that answer confirms
the write arrived. LiteEth answers to the UDP port it listens on, not to the request's source
port, so a transport to a board binds that port locally (as LiteX's ``CommUDP`` does); a
server on this machine (the simulation) answers to the source address, so a transport to a
loopback address binds an ephemeral port.

Retries: a packet that gets no answer within ``timeout`` is sent again, ``retries`` tries in
all. A lost *answer* therefore repeats the packet's writes; on a quiet point-to-point link or
on the loopback interface this does not happen in practice.

Every transport counts its control-path recovery in ``stats`` (:data:`CONTROL_COUNTERS`):
records sent (``requests``), tries after the first (``retries``), waits that ended without
an answer (``timeouts``), answers to an earlier try or tag that were skipped
(``duplicates``), received frames that were not answers (``bad_frames``) and tag
resynchronisations (``resyncs``, serial only); runs record them per trial and in total.
"""

from __future__ import annotations

import abc
import ipaddress
import random
import socket
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from litex.tools.remote.etherbone import (
    EtherbonePacket,
    EtherboneReads,
    EtherboneRecord,
    EtherboneWrites,
    etherbone_magic,
)

from ..errors import TransportError

__all__ = [
    "CONTROL_COUNTERS", "Transport", "EtherboneTransport", "FakeTransport", "open_target", "parse_udp_url", "DEFAULT_PORT",
    "MAX_BURST", "Record", "plan_records", "encode_request", "decode_answer", "initial_tag", "next_tag",
]

DEFAULT_PORT = 1234
MAX_BURST = 255  # reads or writes per Etherbone record
_WORD = 0xFFFFFFFF
CONTROL_COUNTERS = ("requests", "retries", "timeouts", "duplicates", "bad_frames", "resyncs")


class Transport(abc.ABC):
    """Moves 32-bit words to and from byte addresses of a tester's register bus."""

    url: str = ""

    @abc.abstractmethod
    def transact(self, writes: Sequence[tuple[int, int]] = (), reads: Sequence[int] = ()) -> list[int]:
        """Write ``(address, word)`` pairs in order, then read ``reads`` in order; return the
        words read."""

    def read(self, addrs: Sequence[int]) -> list[int]:
        return self.transact((), addrs)

    def control_stats(self) -> dict[str, int]:
        """A copy of the control-path counters (:data:`CONTROL_COUNTERS`; 0 where a
        transport has no such event)."""
        stats = getattr(self, "stats", None) or {}
        return {k: int(stats.get(k, 0)) for k in CONTROL_COUNTERS}

    def write(self, pairs: Sequence[tuple[int, int]]) -> None:
        self.transact(pairs, ())

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# Etherbone over UDP ------------------------------------------------------------------------------


@dataclass
class Record:
    """One Etherbone record: writes to consecutive words from ``base``, then ``reads``.
    ``ack`` marks a read added only to get an answer (its value is not returned)."""

    base: int = 0
    data: list[int] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    ack: bool = False


def _write_runs(pairs: Sequence[tuple[int, int]]) -> list[Record]:
    """The writes, in order, grouped into records of consecutive addresses (<= 255 words)."""
    records: list[Record] = []
    for addr, word in pairs:
        last = records[-1] if records else None
        if last and addr == last.base + 4 * len(last.data) and len(last.data) < MAX_BURST:
            last.data.append(word & _WORD)
        else:
            records.append(Record(base=addr, data=[word & _WORD]))
    return records


def plan_records(writes: Sequence[tuple[int, int]], reads: Sequence[int]) -> list[Record]:
    """Split a transaction into records that each fit one packet. The first batch of reads
    rides with the last writes (so it is read after them); a record left without reads
    gets an acknowledgement read of its base address."""
    records = _write_runs(writes)
    batches = [list(reads[i:i + MAX_BURST]) for i in range(0, len(reads), MAX_BURST)]
    if records and batches:
        records[-1].reads = batches.pop(0)
    records += [Record(reads=batch) for batch in batches]
    for record in records:
        if not record.reads:
            record.reads, record.ack = [record.base], True
    return records


def encode_request(record: Record, tag: int) -> bytes:
    """The Etherbone packet for ``record``; its answer will carry ``tag`` as base address."""
    eb_record = EtherboneRecord()
    if record.data:
        eb_record.writes = EtherboneWrites(base_addr=record.base, datas=record.data)
    eb_record.reads = EtherboneReads(base_ret_addr=tag, addrs=record.reads)
    packet = EtherbonePacket()
    packet.records = [eb_record]
    packet.encode()
    return bytes(packet.bytes)


def initial_tag() -> int:
    """A random first tag for a new transport (word aligned, well below 2^32)."""
    return random.getrandbits(28) << 2


def next_tag(tag: int) -> int:
    """The tag of the next record (+4, modulo 2^32)."""
    return (tag + 4) & _WORD


def decode_answer(datagram: bytes) -> tuple[int, list[int]] | None:
    """``(tag, words)`` of an Etherbone answer, or None for anything else."""
    try:
        packet = EtherbonePacket(init=datagram)
        packet.decode()
    except (ValueError, IndexError, struct.error):
        return None
    if packet.magic != etherbone_magic or len(packet.records) != 1:
        return None
    writes = packet.records[0].writes
    if writes is None:
        return None
    return writes.base_addr, writes.get_datas()


class EtherboneTransport(Transport):
    """Etherbone over UDP to ``host:port``.

    ``local_port``: the UDP port to receive answers on; None picks it from the host (an
    ephemeral port for a loopback host, else ``port``, where LiteEth sends its answers).
    """

    def __init__(self, host: str, port: int = DEFAULT_PORT, timeout: float = 1.0, retries: int = 3,
                 local_port: int | None = None):
        if not 0 < port < 65536:
            raise ValueError(f"UDP port must be 1..65535, not {port}")
        if timeout <= 0 or retries < 1:
            raise ValueError("timeout must be > 0 and retries >= 1")
        self.url = f"udp://{host}:{port}"
        self.timeout, self.retries = timeout, retries
        self._remote = (_resolve(host, self.url), port)
        if local_port is None:
            local_port = 0 if ipaddress.ip_address(self._remote[0]).is_loopback else port
        self._sock = _bind_udp(local_port, self.url)
        self._tag = initial_tag()
        self.stats = dict.fromkeys(CONTROL_COUNTERS, 0)

    def close(self) -> None:
        self._sock.close()

    def transact(self, writes: Sequence[tuple[int, int]] = (), reads: Sequence[int] = ()) -> list[int]:
        words: list[int] = []
        for record in plan_records(writes, reads):
            answer = self._exchange(record)
            if not record.ack:
                words += answer
        return words

    def _exchange(self, record: Record) -> list[int]:
        self._tag = next_tag(self._tag)
        request = encode_request(record, self._tag)
        self.stats["requests"] += 1
        for attempt in range(self.retries):
            if attempt:
                self.stats["retries"] += 1
            self._send(request)
            words = self._await_answer(self._tag)
            if words is not None:
                if len(words) != len(record.reads):
                    raise TransportError(f"{self.url} answered {len(words)} words to {len(record.reads)} reads")
                return words
            self.stats["timeouts"] += 1
        raise TransportError(f"no answer from {self.url} after {self.retries} tries")

    def _send(self, request: bytes) -> None:
        try:
            self._sock.sendto(request, self._remote)
        except OSError as exc:
            raise TransportError(f"cannot send to {self.url}: {exc.strerror or exc}") from None

    def _await_answer(self, tag: int) -> list[int] | None:
        """The words of the answer tagged ``tag``, or None after ``timeout`` seconds. Stray
        datagrams and late answers to earlier requests are skipped."""
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            self._sock.settimeout(left)
            try:
                datagram = self._sock.recv(65536)
            except (TimeoutError, ConnectionRefusedError):
                return None
            answer = decode_answer(datagram)
            if answer is not None and answer[0] == tag:
                return answer[1]
            self.stats["duplicates" if answer is not None else "bad_frames"] += 1
        return None


def _resolve(host: str, url: str) -> str:
    try:
        return socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0]
    except (socket.gaierror, UnicodeError):
        raise TransportError(f"cannot resolve the host of {url}") from None


def _bind_udp(local_port: int, url: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind(("", local_port))
    except OSError as exc:
        sock.close()
        raise TransportError(
            f"cannot listen on local UDP port {local_port} for answers from {url} "
            f"(LiteEth answers to the port it listens on): {exc.strerror or exc}") from None
    return sock


def parse_udp_url(url: str) -> tuple[str, int]:
    """``(host, port)`` of ``udp://HOST[:PORT]`` (default port 1234); ValueError (one line)
    for anything else."""
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        port = None
    if parts.scheme != "udp" or not parts.hostname or port is None or parts.path or parts.query:
        raise ValueError(f"udp://HOST[:PORT] (default port {DEFAULT_PORT}), not {url!r}")
    return parts.hostname, port


def open_target(url: str, timeout: float = 1.0, retries: int = 3) -> Transport:
    """The transport for ``udp://HOST[:PORT]`` (a board's or the simulation's Etherbone
    server), or for ``serial://DEVICE?baud=N`` / ``socket://HOST:PORT`` (Etherbone over a
    UART, :mod:`wirespeed.host.serial_transport`; at least 5 tries there)."""
    if url.startswith(("serial://", "socket://")):
        from .serial_transport import SerialTransport

        return SerialTransport(url, timeout=timeout, retries=max(retries, 5))
    host, port = parse_udp_url(url)
    return EtherboneTransport(host, port, timeout=timeout, retries=retries)


# In-memory fake -----------------------------------------------------------------------------------


class FakeTransport(Transport):
    """A register file in memory, for unit tests of driver code paths only (it models no
    tester behaviour). It follows the bus conventions of :mod:`wirespeed.gateware.regmap`:
    ``rw`` registers store what is written, ``r`` registers hold what a test puts there with
    :meth:`set`, ``w`` registers read 0 and every write to one is logged in ``strobes`` and
    passed to the ``on_strobe`` callbacks. ``time.ns`` advances by ``ns_per_transaction`` at
    the start of every transaction. Writes to unknown addresses or ``r`` registers are
    ignored and unknown addresses read 0, as on the real bus."""

    url = "fake://"

    def __init__(self, regmap, ns_per_transaction: int = 1_000):
        self.regmap = regmap
        self.ns_per_transaction = ns_per_transaction
        self.transactions = 0
        self.strobes: list[tuple[str, int]] = []
        self.on_strobe: list[Callable[[str, int], None]] = []
        self._words: dict[int, int] = {}
        self._where = {off: (reg, i) for reg in regmap for i, off in enumerate(reg.word_offsets)}
        for reg in regmap:
            self.set(reg.name, reg.reset)

    def set(self, name: str, value: int) -> None:
        reg = self.regmap[name]
        self._words.update(zip(reg.word_offsets, reg.split(value)))

    def set_entry(self, name: str, index: int, value: int) -> None:
        """Entry ``index`` of a memory window."""
        reg = self.regmap[name]
        offsets = reg.word_offsets[index * reg.words:(index + 1) * reg.words]
        self._words.update(zip(offsets, reg.split(value)))

    def get(self, name: str) -> int:
        reg = self.regmap[name]
        return reg.join([self._words[off] for off in reg.word_offsets])

    def get_entry(self, name: str, index: int) -> int:
        """Entry ``index`` of a memory window (0 where never written)."""
        reg = self.regmap[name]
        offsets = reg.word_offsets[index * reg.words:(index + 1) * reg.words]
        return reg.join([self._words.get(off, 0) for off in offsets])

    def transact(self, writes: Sequence[tuple[int, int]] = (), reads: Sequence[int] = ()) -> list[int]:
        self.transactions += 1
        if "time.ns" in self.regmap:
            self.set("time.ns", self.get("time.ns") + self.ns_per_transaction)
        for addr, word in writes:
            self._write(addr, word & _WORD)
        return [self._read(addr) for addr in reads]

    def _write(self, addr: int, word: int) -> None:
        reg, _ = self._where.get(addr, (None, 0))
        if reg is None or reg.access == "r":
            return
        if reg.access == "w":
            self.strobes.append((reg.name, word))
            for callback in self.on_strobe:
                callback(reg.name, word)
            return
        self._words[addr] = word

    def _read(self, addr: int) -> int:
        reg, _ = self._where.get(addr, (None, 0))
        if reg is None or reg.access == "w":
            return 0
        return self._words.get(addr, 0)
