"""SerialTransport (Etherbone over SLIP/CRC-32 on a serial line) against an in-test peer that
behaves as the gateware's reply cache says (docs/management.md), over pyserial's socket://;
SLIP framing, stale answers, URLs and errors."""

import random
import socket
import struct
import threading
import time
import zlib

import pytest

from wirespeed.errors import TransportError
from wirespeed.transport import open_target
from wirespeed.transport.uart import (
    RESYNC_STEP,
    SerialTransport,
    SlipDecoder,
    decode_stale,
    parse_serial_url,
    slip_frame,
)


def parse_request(packet: bytes):
    """(base, write data, tag, read addresses, wff) of a one-record request."""
    assert packet[:4] == b"\x4e\x6f\x10\x44"
    flags, _, w, r = packet[8:12]
    words = struct.unpack(f">{(len(packet) - 12) // 4}I", packet[12:])
    base, data = (words[0], list(words[1:1 + w])) if w else (0, [])
    rest = words[1 + w:] if w else words
    return base, data, rest[0], list(rest[1:1 + r]), bool(flags & 0x40)


def answer(tag, words):
    return (b"\x4e\x6f\x10\x44" + bytes(4) + bytes([0, 0x0F, len(words), 0])
            + struct.pack(f">{1 + len(words)}I", tag, *words))


def stale(tag, last):
    return b"\x4e\x6f\x10\x44" + bytes(4) + bytes([0, 0x0F, 0, 1]) + struct.pack(">II", tag, last)


class Peer:
    """A TCP peer with the gateware's semantics: words, a write log, the last tag and its
    answer; ``drop_answers`` answers are lost, ``late`` sends an old answer first."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.url = f"socket://127.0.0.1:{self.srv.getsockname()[1]}"
        self.words, self.writes, self.tags = {}, [], []
        self.cache = None
        self.drop_answers = 0
        self.late = None
        self.noise = b""
        self.wrong_count = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        conn, _ = self.srv.accept()
        decoder = SlipDecoder()
        while data := conn.recv(65536):
            for packet in decoder.feed(data):
                base, wdata, tag, reads, wff = parse_request(packet)
                self.tags.append(tag)
                if self.cache and tag == self.cache[0]:
                    reply = self.cache[1]
                elif self.cache and (tag - self.cache[0]) % (1 << 32) >= 1 << 31:
                    reply = stale(tag, self.cache[0])
                else:
                    for i, w in enumerate(wdata):
                        addr = base if wff else base + 4 * i
                        self.words[addr] = w
                        self.writes.append((addr, w))
                    values = [self.words.get(a, 0) for a in reads]
                    if self.wrong_count:
                        values.append(0)
                    reply = answer(tag, values)
                    self.cache = (tag, reply)
                if self.drop_answers:
                    self.drop_answers -= 1
                    continue
                out = self.noise
                if self.late is not None:
                    out += slip_frame(self.late)
                conn.sendall(out + slip_frame(reply))
        conn.close()

    def close(self):
        self.srv.close()


@pytest.fixture
def peer():
    p = Peer()
    yield p
    p.close()


def test_slip_frame_and_decoder_round_trip():
    rng = random.Random(1)
    payloads = [bytes([0xC0, 0xDB, 0xDC, 0xDD]), b"\xc0" * 10, bytes(range(256))]
    payloads += [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))) for _ in range(20)]
    stream = b"".join(slip_frame(p) for p in payloads)
    assert stream.count(b"\xc0") == 2 * len(payloads)
    dec = SlipDecoder()
    got = []
    for i in range(0, len(stream), 7):          # any chunking
        got += dec.feed(stream[i:i + 7])
    assert got == payloads and dec.bad_frames == 0
    body = b"hello"
    assert slip_frame(body) == b"\xc0" + body + struct.pack("<I", zlib.crc32(body)) + b"\xc0"


def test_decoder_drops_bad_frames():
    good = slip_frame(b"good")
    flipped = bytearray(slip_frame(b"corrupt"))
    flipped[3] ^= 1
    bad_escape = b"\xc0ab\xdb\x01cdefgh\xc0"
    short = b"\xc0abc\xc0"
    dec = SlipDecoder()
    assert dec.feed(bytes(flipped) + bad_escape + short + b"\xc0\xc0" + good) == [b"good"]
    assert dec.bad_frames == 3
    assert dec.feed(b"x" * 5000) == [] and dec.bad_frames == 4       # endless garbage
    assert dec.feed(good) == [b"good"]


def test_decode_stale():
    assert decode_stale(stale(0x104, 0x2000)) == (0x104, 0x2000)
    assert decode_stale(answer(0x104, [0x2000])) is None
    assert decode_stale(stale(1, 2)[:-1]) is None


@pytest.mark.parametrize("url, expected", [
    ("serial:///dev/ttyUSB0?baud=3000000", ("/dev/ttyUSB0", 3_000_000)),
    ("serial:///dev/ttyUSB1", ("/dev/ttyUSB1", 1_000_000)),
    ("socket://127.0.0.1:5000", ("socket://127.0.0.1:5000", None)),
])
def test_parse_serial_url(url, expected):
    assert parse_serial_url(url) == expected


@pytest.mark.parametrize("url", [
    "serial://dev/ttyUSB0", "serial:///dev/ttyUSB0?baud=fast", "serial:///dev/ttyUSB0?baud=100",
    "serial:///dev/ttyUSB0?parity=E", "socket://127.0.0.1", "socket://host:1/x", "tcp://h:1",
])
def test_parse_serial_url_rejects(url):
    with pytest.raises(ValueError) as err:
        parse_serial_url(url)
    assert "\n" not in str(err.value)


def test_write_then_read_and_open_target(peer):
    with open_target(peer.url, timeout=1.0) as t:
        assert isinstance(t, SerialTransport)
        t.write([(0x10, 0xC0C0DBDB), (0x14, 2)])
        assert t.read([0x14, 0x10]) == [2, 0xC0C0DBDB]
        assert t.transact([(0x20, 9)], [0x20, 0x10]) == [9, 0xC0C0DBDB]
    assert peer.writes == [(0x10, 0xC0C0DBDB), (0x14, 2), (0x20, 9)]


def test_lost_answer_is_retried_with_the_same_tag_and_not_executed_twice(peer):
    with SerialTransport(peer.url, timeout=0.1, retries=3) as t:
        t.read([0])
        peer.drop_answers = 2
        t.write([(0x40, 1)])
        assert t.stats["retries"] == 2
    assert peer.tags[-3:] == [peer.tags[-1]] * 3
    assert peer.writes == [(0x40, 1)]


def test_late_answers_and_noise_are_skipped(peer):
    with SerialTransport(peer.url, timeout=0.5) as t:
        t.read([0])
        peer.late = answer(0x12345678, [0xBAD])
        peer.noise = b"\xc0garbage\xdb\xc0"
        t.write([(0x8, 3)])
        assert t.read([0x8]) == [3]
        assert t.stats["duplicates"] >= 2 and t.stats["bad_frames"] >= 2 and t.stats["retries"] == 0


def test_stale_answer_moves_the_tags_past_the_gateware(peer):
    with SerialTransport(peer.url, timeout=0.5) as t:
        t._tag = 0x8000_0000
        t.write([(0x0, 1)])
        t._tag = 0x1000_0000                    # as if a new session had picked a lower tag
        t.write([(0x0, 2)])
        assert t.stats["resyncs"] == 1
        assert t._tag == (0x8000_0004 + RESYNC_STEP)
    assert peer.writes == [(0x0, 1), (0x0, 2)]   # the stale request was not executed


def test_wrong_answer_length_is_an_error(peer):
    peer.wrong_count = True
    with (SerialTransport(peer.url, timeout=0.5) as t,
          pytest.raises(TransportError, match="answered 2 words to 1 reads")):
        t.read([0])


def test_no_answer_gives_one_line_error_after_the_tries(peer):
    peer.drop_answers = 100
    with SerialTransport(peer.url, timeout=0.05, retries=3) as t:
        t0 = time.monotonic()
        with pytest.raises(TransportError) as err:
            t.read([0])
        assert time.monotonic() - t0 < 1.0
    assert str(err.value) == f"no answer from {peer.url} after 3 tries"


def test_open_errors_are_one_line():
    with pytest.raises(TransportError) as err:
        open_target("serial:///dev/does-not-exist-ws?baud=115200")
    assert str(err.value).startswith("cannot open serial:///dev/does-not-exist-ws") and "\n" not in str(err.value)
    with pytest.raises(ValueError):
        SerialTransport("serial:///dev/x", timeout=0)
