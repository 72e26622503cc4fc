"""The harness's Etherbone codec (sim/harness/etherbone.cpp) against LiteX's host-side
encoder/decoder, through tests/sim/eb_driver.cpp (built with ASan and UBSan)."""

from __future__ import annotations

import random
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from litex.tools.remote.etherbone import (
    EtherbonePacket,
    EtherboneReads,
    EtherboneRecord,
    EtherboneWrites,
)

WORDS = 4096


def initial(word: int) -> int:
    return ((word * 2654435761) ^ 0x5A5A5A5A) & 0xFFFFFFFF


@dataclass
class Result:
    kind: str  # MALFORMED, NOREPLY, REPLY
    accesses: list[tuple[str, int, int]] = field(default_factory=list)
    reply: bytes = b""


def run_driver(driver: Path, packets: list[bytes]) -> tuple[list[Result], dict[str, int]]:
    stdin = "".join(p.hex() + "\n" for p in packets)
    r = subprocess.run([str(driver)], input=stdin, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-4000:]
    results, cur, stats = [], [], None
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] in ("R", "W"):
            cur.append((w[0], int(w[1], 16), int(w[2], 16)))
        elif w[0] in ("MALFORMED", "NOREPLY", "REPLY"):
            results.append(Result(w[0], cur, bytes.fromhex(w[1]) if len(w) > 1 else b""))
            cur = []
        elif w[0] == "STATS":
            stats = {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
    assert len(results) == len(packets) and stats is not None
    return results, stats


def record(writes: tuple[int, list[int]] | None = None,
           reads: tuple[int, list[int]] | None = None, **flags) -> EtherboneRecord:
    rec = EtherboneRecord()
    if writes is not None:
        rec.writes = EtherboneWrites(base_addr=writes[0], datas=list(writes[1]))
    if reads is not None:
        rec.reads = EtherboneReads(base_ret_addr=reads[0], addrs=list(reads[1]))
    for k, v in flags.items():
        setattr(rec, k, v)
    return rec


def packet(*records: EtherboneRecord) -> bytes:
    p = EtherbonePacket()
    p.records = list(records)
    p.encode()
    return bytes(p.bytes)


def decode(data: bytes) -> EtherbonePacket:
    p = EtherbonePacket(init=bytearray(data))
    p.decode()
    return p


def test_writes_only_have_no_reply(eb_driver):
    (res,), stats = run_driver(eb_driver, [packet(record(writes=(0x100, [1, 2, 0xFFFFFFFF])))])
    assert res.kind == "NOREPLY"
    assert res.accesses == [("W", 0x40, 1), ("W", 0x41, 2), ("W", 0x42, 0xFFFFFFFF)]
    assert stats["writes"] == 3 and stats["packets"] == 1


def test_reads_reply_as_writes_to_base_ret_addr(eb_driver):
    addrs = [0x0, 0x10, 0x3FFC, 0x8]
    (res,), _ = run_driver(eb_driver, [packet(record(reads=(0xCAFE0001, addrs)))])
    assert res.kind == "REPLY"
    assert res.accesses == [("R", a >> 2, initial(a >> 2)) for a in addrs]
    p = decode(res.reply)
    assert (p.magic, p.version, p.pf, p.pr, p.addr_size, p.port_size) == (0x4E6F, 1, 0, 0, 4, 4)
    (rec,) = p.records
    assert rec.rcount == 0 and rec.wcount == 4 and rec.byte_enable == 0xF
    assert rec.writes.base_addr == 0xCAFE0001
    assert rec.writes.get_datas() == [initial(a >> 2) for a in addrs]


def test_records_in_order_writes_before_reads(eb_driver):
    pkt = packet(
        record(writes=(0x20, [0x11111111, 0x22222222]), reads=(7, [0x24, 0x20, 0x28])),
        record(writes=(0x28, [0x33333333])),
        record(reads=(8, [0x28])),
    )
    (res,), _ = run_driver(eb_driver, [pkt])
    assert res.accesses == [
        ("W", 8, 0x11111111), ("W", 9, 0x22222222),
        ("R", 9, 0x22222222), ("R", 8, 0x11111111), ("R", 10, initial(10)),
        ("W", 10, 0x33333333),
        ("R", 10, 0x33333333),
    ]
    p = decode(res.reply)
    assert [r.writes.base_addr for r in p.records] == [7, 8]
    assert [r.writes.get_datas() for r in p.records] == [
        [0x22222222, 0x11111111, initial(10)], [0x33333333]]


def test_probe_is_answered(eb_driver):
    probe = EtherbonePacket()
    probe.pf = 1
    probe.encode()
    data = bytes(probe.bytes) + bytes(4)  # LiteX's CommUDP pads the probe like this
    (res,), stats = run_driver(eb_driver, [data])
    assert res.kind == "REPLY" and res.accesses == []
    p = decode(res.reply)
    assert p.pr == 1 and p.pf == 0 and len(res.reply) == len(data)
    assert stats["probes"] == 1


def test_write_fifo_and_out_of_range(eb_driver):
    pkts = [
        packet(record(writes=(0x30, [5, 6, 7]), wff=1)),
        packet(record(writes=(0x3FFC, [9, 10]), reads=(1, [0x4000, 0xFFFFFFFC, 0x3FFC]))),
    ]
    (fifo, oor), stats = run_driver(eb_driver, pkts)
    assert fifo.accesses == [("W", 12, 5), ("W", 12, 6), ("W", 12, 7)]
    assert oor.accesses == [("W", 0xFFF, 9), ("R", 0xFFF, 9)]
    assert decode(oor.reply).records[0].writes.get_datas() == [0, 0, 9]
    assert stats["out_of_range"] == 3


def _valid_packets() -> list[bytes]:
    return [
        packet(record(reads=(1, [0, 4]))),
        packet(record(writes=(0x40, [1, 2, 3]), reads=(2, [0x40]))),
        packet(record(writes=(0, [9])), record(reads=(3, [8, 12, 16]))),
    ]


def test_malformed_packets_are_dropped_whole(eb_driver):
    good = _valid_packets()
    bad = [
        b"",
        b"\x4e\x6f\x10",
        b"\x4e\x6f\x10\x44\x00\x00\x00",
        b"\x6f\x4e" + good[0][2:],            # magic byte-swapped
        good[0][:2] + b"\x20" + good[0][3:],  # version 2
        good[0][:3] + b"\x88" + good[0][4:],  # 64-bit addresses
        good[0][:3] + b"\x44" + good[0][4:] + b"\x00",  # trailing partial record header
        good[2] + b"\x00\x00\x00\x01",        # record announcing a read without its words
    ]
    for g in good:  # every cut that is not a record boundary
        bounds = {8}
        off = 8
        while off < len(g):
            w, r = g[off + 2], g[off + 3]
            off += 4 + (4 + 4 * w if w else 0) + (4 + 4 * r if r else 0)
            bounds.add(off)
        bad += [g[:n] for n in range(9, len(g)) if n not in bounds]
    results, stats = run_driver(eb_driver, bad)
    for data, res in zip(bad, results):
        assert res.kind == "MALFORMED" and res.accesses == [], data.hex()
    assert stats["malformed"] == len(bad) and stats["reads"] == stats["writes"] == 0


def reference(data: bytes, mem: list[int]) -> Result:
    """Independent model of the codec's contract (see sim/harness/etherbone.h)."""
    if len(data) < 8 or data[:2] != b"\x4e\x6f" or data[2] >> 4 != 1:
        return Result("MALFORMED")
    if data[2] & 1:
        return Result("REPLY", [], data[:2] + bytes([(data[2] & ~3) | 2]) + data[3:])
    if data[3] != 0x44:
        return Result("MALFORMED")
    recs, off = [], 8
    while off < len(data):
        if len(data) - off < 4:
            return Result("MALFORMED")
        flags, be, w, r = data[off:off + 4]
        size = 4 + (4 + 4 * w if w else 0) + (4 + 4 * r if r else 0)
        if off + size > len(data):
            return Result("MALFORMED")
        recs.append(data[off:off + size])
        off += size
    acc, reply, any_reads = [], bytearray(), False
    for rec in recs:
        flags, be, w, r = rec[:4]
        p = 4
        if w:
            (addr,) = struct.unpack(">I", rec[p:p + 4])
            p += 4
            for _ in range(w):
                (v,) = struct.unpack(">I", rec[p:p + 4])
                p += 4
                if addr < 4 * WORDS:
                    mem[addr >> 2] = v
                    acc.append(("W", addr >> 2, v))
                if not flags & 0x40:
                    addr = (addr + 4) & 0xFFFFFFFF
        if r:
            any_reads = True
            reply += bytes([0, be, r, 0]) + rec[p:p + 4]
            p += 4
            for _ in range(r):
                (addr,) = struct.unpack(">I", rec[p:p + 4])
                p += 4
                v = 0
                if addr < 4 * WORDS:
                    v = mem[addr >> 2]
                    acc.append(("R", addr >> 2, v))
                reply += struct.pack(">I", v)
    if not any_reads:
        return Result("NOREPLY", acc)
    return Result("REPLY", acc, bytes.fromhex("4e6f104400000000") + bytes(reply))


def test_fuzz_against_reference(eb_driver):
    rng = random.Random(2544)
    packets = []
    for _ in range(3000):
        kind = rng.random()
        if kind < 0.3:  # random valid packet
            recs = []
            for _ in range(rng.randint(0, 4)):
                w = [rng.getrandbits(32) for _ in range(rng.choice([0, 1, 2, 255]))]
                r = [rng.choice([rng.randrange(0, 4 * WORDS), rng.getrandbits(32)])
                     for _ in range(rng.choice([0, 1, 3, 255]))]
                recs.append(record(
                    writes=(rng.choice([rng.randrange(0, 4 * WORDS), rng.getrandbits(32)]), w)
                    if w else None,
                    reads=(rng.getrandbits(32), r) if r else None,
                    byte_enable=rng.getrandbits(8), wff=rng.getrandbits(1)))
            packets.append(packet(*recs))
        elif kind < 0.7:  # mutated valid packet
            data = bytearray(rng.choice(_valid_packets()))
            for _ in range(rng.randint(1, 4)):
                op = rng.random()
                if op < 0.5 and data:
                    data[rng.randrange(len(data))] = rng.getrandbits(8)
                elif op < 0.75:
                    del data[rng.randrange(len(data) + 1):]
                else:
                    data += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 9)))
            packets.append(bytes(data))
        else:  # noise, sometimes with a valid header
            head = bytes.fromhex("4e6f1044") if rng.random() < 0.5 else b""
            packets.append(head + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 80))))
    results, stats = run_driver(eb_driver, packets)
    mem = [initial(i) for i in range(WORDS)]
    for data, res in zip(packets, results):
        exp = reference(data, mem)
        assert (res.kind, res.accesses, res.reply) == (exp.kind, exp.accesses, exp.reply), data.hex()
    kinds = {r.kind for r in results}
    assert kinds == {"MALFORMED", "NOREPLY", "REPLY"}  # the fuzzer reached every outcome
