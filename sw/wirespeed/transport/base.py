"""What every register transport is (:class:`Transport`: 32-bit words to and from byte
addresses, one transaction of writes then reads), and the Etherbone records they all carry
(LiteEth's liteeth/frontend/etherbone.py, mirrored by the simulation's sim/harness/etherbone.h):
32-bit addresses and data, one record per packet; a record's writes go to consecutive addresses
from a base address and are done before its reads (at most 255 of each); the answer to a record
with reads is one record whose writes carry the read values to "base address" = the request's
base return address, used as a tag to match answers to requests. A record without reads is not
answered, so every request here carries at least one read: when a transaction has no reads of
its own, it reads back the first address it wrote, and that answer confirms the write arrived.

Every transport counts its control-path recovery in ``stats`` (:data:`CONTROL_COUNTERS`):
records sent (``requests``), tries after the first (``retries``), waits that ended without an
answer (``timeouts``), answers to an earlier try or tag that were skipped (``duplicates``),
received frames that were not answers (``bad_frames``) and tag resynchronisations
(``resyncs``, serial only); runs record them per trial and in total.
"""

from __future__ import annotations

import abc
import random
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self

from litex.tools.remote.etherbone import (
    EtherbonePacket,
    EtherboneReads,
    EtherboneRecord,
    EtherboneWrites,
    etherbone_magic,
)

from ..errors import TransportError

__all__ = ["Transport", "RecordTransport", "Record", "plan_records", "encode_request", "decode_answer",
           "initial_tag", "next_tag", "MAX_BURST", "WORD_MASK", "CONTROL_COUNTERS"]

MAX_BURST = 255  # reads or writes per Etherbone record
WORD_MASK = 0xFFFFFFFF
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

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the transport holds (a socket, a serial port). Abstract: every
        transport says what it releases, so one that holds a resource cannot forget it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordTransport(Transport):
    """A transport that sends one Etherbone record at a time and waits for its answer,
    ``timeout`` seconds a try and ``retries`` tries in all (UDP, serial): each subclass is
    its framing and its retry rules (:meth:`_exchange`), ``stats`` its
    :data:`CONTROL_COUNTERS`."""

    def __init__(self, url: str, timeout: float, retries: int):
        if timeout <= 0 or retries < 1:
            raise ValueError("timeout must be > 0 and retries >= 1")
        self.url = url
        self.timeout, self.retries = timeout, retries
        self._tag = initial_tag()
        self.stats = dict.fromkeys(CONTROL_COUNTERS, 0)

    def transact(self, writes: Sequence[tuple[int, int]] = (), reads: Sequence[int] = ()) -> list[int]:
        words: list[int] = []
        for record in plan_records(writes, reads):
            answer = self._exchange(record)
            if not record.ack:
                words += answer
        return words

    @abc.abstractmethod
    def _exchange(self, record: Record) -> list[int]:
        """The words read by ``record`` (sent under a new tag); TransportError when no
        answer comes."""

    def _answer_words(self, record: Record, words: list[int]) -> list[int]:
        """``words``, which must be one per read of ``record``: another count is an answer to
        some other request, which no retry can mend."""
        if len(words) != len(record.reads):
            raise TransportError(f"{self.url} answered {len(words)} words to {len(record.reads)} reads")
        return words


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
            last.data.append(word & WORD_MASK)
        else:
            records.append(Record(base=addr, data=[word & WORD_MASK]))
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
    return (tag + 4) & WORD_MASK


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
