"""A tiny Etherbone server for host tests: an independent implementation of the answering
side of Etherbone, built from LiteX's packet classes. A register file of 32-bit words in a
thread, answering on UDP; it can drop answers, send a stale answer first, answer to a fixed
port (as LiteEth does), and serve live words (``time.ns`` as wall-clock nanoseconds).
"""

import socket
import threading
import time

from litex.tools.remote.etherbone import EtherbonePacket, EtherboneRecord, EtherboneWrites

from wirespeed.gateware.config import SIM
from wirespeed.gateware.regmap import MAGIC


def encode_answer(tag: int, words: list[int]) -> bytes:
    record = EtherboneRecord()
    record.writes = EtherboneWrites(base_addr=tag, datas=words)
    packet = EtherbonePacket()
    packet.records = [record]
    packet.encode()
    return bytes(packet.bytes)


def _base_return_address(data: bytes, record) -> int:
    """The base return address of a one-record request. (LiteX 2024.12's
    ``EtherboneReads.decode`` computes it into a local variable and leaves the attribute 0.)"""
    offset = 8 + 4 + (4 + 4 * record.wcount if record.wcount else 0)
    return int.from_bytes(data[offset:offset + 4], "big")


class EtherboneServer:
    def __init__(self, reply_port: int | None = None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.02)
        self.host, self.port = self.sock.getsockname()
        self.url = f"udp://{self.host}:{self.port}"
        self.reply_port = reply_port
        self.words: dict[int, int] = {}
        self.live: dict[int, callable] = {}
        self.records: list[EtherboneRecord] = []  # every request, decoded
        self.drop_answers = 0  # answers still to drop
        self.stale_answers = False  # send an answer with the previous tag before each answer
        self.silent = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sock.close()

    def set_register(self, reg, value: int) -> None:
        self.words.update(zip(reg.word_offsets, reg.split(value)))

    def get_register(self, reg) -> int:
        return reg.join([self.words.get(off, 0) for off in reg.word_offsets])

    def _serve(self):
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            self._handle(data, peer)

    def _handle(self, data: bytes, peer) -> None:
        packet = EtherbonePacket(init=data)
        packet.decode()
        assert len(packet.records) == 1, "LiteEth takes one record per packet"
        record = packet.records[0]
        self.records.append(record)
        if record.writes is not None:  # (LiteX records are empty lists: test against None)
            for i, word in enumerate(record.writes.get_datas()):
                self.words[record.writes.base_addr + 4 * i] = word
        if record.reads is None or self.silent:
            return
        words = [self.live[a]() if a in self.live else self.words.get(a, 0) for a in record.reads.get_addrs()]
        if self.drop_answers:
            self.drop_answers -= 1
            return
        dest = (peer[0], self.reply_port or peer[1])
        tag = _base_return_address(data, record)
        if self.stale_answers:
            self.sock.sendto(encode_answer((tag - 4) & 0xFFFFFFFF, [0xDEAD] * len(words)), dest)
        self.sock.sendto(encode_answer(tag, words), dest)


def serve_identity(server: EtherboneServer, rmap, **overrides) -> None:
    """Make ``server`` answer the identification block of ``rmap`` and a live ``time.ns``."""
    ident = {"id.magic": MAGIC, "id.version": 0x000100, "id.map_hash": rmap.hash, "id.clk_hz": rmap.clk_hz,
             "id.n_ports": rmap.n_ports, "id.config": SIM.word()} | overrides
    for name, value in ident.items():
        server.set_register(rmap[name], value)
    low, high = rmap["time.ns"].word_offsets
    latched = {}
    t0 = time.monotonic_ns()

    def read_low():
        now = time.monotonic_ns() - t0 + 1_000_000
        latched["high"] = now >> 32
        return now & 0xFFFFFFFF

    server.live[low] = read_low
    server.live[high] = lambda: latched.get("high", 0)
