"""EtherboneTransport against an in-test Etherbone server; record planning; URLs."""

import socket

import pytest
from ebserver import EtherboneServer

from wirespeed.errors import TransportError
from wirespeed.transport import EtherboneTransport, open_target, parse_udp_url
from wirespeed.transport.base import MAX_BURST, encode_request, plan_records


def transport_to(server, **kw):
    return EtherboneTransport(server.host, server.port, **kw)


def test_write_then_read_back(eb_server):
    with transport_to(eb_server) as t:
        t.write([(0x400, 1), (0x404, 0xDEADBEEF), (0x800, 7)])
        assert t.read([0x800, 0x404, 0x400]) == [7, 0xDEADBEEF, 1]
    assert eb_server.words[0x404] == 0xDEADBEEF


def test_many_reads_are_batched_255_per_packet(eb_server):
    eb_server.words.update({4 * i: i for i in range(600)})
    with transport_to(eb_server) as t:
        assert t.read([4 * i for i in range(600)]) == list(range(600))
    assert [len(r.reads.get_addrs()) for r in eb_server.records] == [255, 255, 90]


def test_writes_then_reads_in_one_record(eb_server):
    """A transaction of contiguous writes and a few reads is one packet, writes first."""
    with transport_to(eb_server) as t:
        assert t.transact([(0x10, 5), (0x14, 6)], [0x14, 0x10]) == [6, 5]
    assert len(eb_server.records) == 1
    record = eb_server.records[0]
    assert (record.writes.base_addr, record.writes.get_datas()) == (0x10, [5, 6])


def test_write_only_packets_are_acknowledged(eb_server):
    """Etherbone does not answer pure writes: each write packet carries a read so its
    arrival is confirmed (and retried if not)."""
    with transport_to(eb_server) as t:
        t.write([(0x100, 1), (0x200, 2)])
    assert len(eb_server.records) == 2
    assert all(r.reads is not None and r.reads.get_addrs() == [r.writes.base_addr] for r in eb_server.records)


def test_retries_after_a_dropped_answer(eb_server):
    eb_server.words[0x20] = 42
    eb_server.drop_answers = 2
    with transport_to(eb_server, timeout=0.1, retries=3) as t:
        assert t.read([0x20]) == [42]
    assert len(eb_server.records) == 3


def test_stale_answers_are_skipped(eb_server):
    eb_server.words[0x20] = 42
    eb_server.stale_answers = True
    with transport_to(eb_server) as t:
        assert t.read([0x20]) == [42]
        assert t.read([0x20]) == [42]


def test_no_answer_raises_after_the_given_tries(eb_server):
    eb_server.silent = True
    with transport_to(eb_server, timeout=0.05, retries=3) as t:
        with pytest.raises(TransportError) as info:
            t.read([0])
    assert str(info.value) == f"no answer from udp://127.0.0.1:{eb_server.port} after 3 tries"
    assert len(eb_server.records) == 3


def test_answers_to_a_fixed_port_like_liteeth():
    """LiteEth answers to its own UDP port, not the request's source port: a board
    transport listens on a fixed local port."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("", 0))
    local_port = probe.getsockname()[1]
    probe.close()
    with EtherboneServer(reply_port=local_port) as server:
        server.words[0] = 99
        with EtherboneTransport(server.host, server.port, local_port=local_port) as t:
            assert t.read([0]) == [99]


def test_plan_records_splits_runs_and_orders_reads_after_writes():
    records = plan_records([(0, 1), (4, 2), (12, 3)], [0, 4])
    assert [(r.base, r.data, r.reads, r.ack) for r in records] == [
        (0, [1, 2], [0], True),
        (12, [3], [0, 4], False),
    ]


def test_plan_records_limits_writes_per_record():
    records = plan_records([(4 * i, i) for i in range(MAX_BURST + 1)], [])
    assert [len(r.data) for r in records] == [MAX_BURST, 1]


def test_encoded_request_is_one_record_with_the_tag():
    record = plan_records([(8, 1)], [16])[0]
    data = encode_request(record, 0x1234)
    assert data[:2] == b"\x4e\x6f" and data[8:12] == bytes([0, 0x0F, 1, 1])
    assert data[-8:] == (0x1234).to_bytes(4, "big") + (16).to_bytes(4, "big")


@pytest.mark.parametrize("url, expected", [
    ("udp://192.168.1.50", ("192.168.1.50", 1234)),
    ("udp://board.lan:4321", ("board.lan", 4321)),
])
def test_parse_udp_url(url, expected):
    assert parse_udp_url(url) == expected


@pytest.mark.parametrize("url", ["tcp://x", "udp://", "udp://h:0x10", "udp://h:70000", "udp://h/path", "sim"])
def test_parse_udp_url_rejects(url):
    with pytest.raises(ValueError, match=r"udp://HOST\[:PORT\]"):
        parse_udp_url(url)


def test_open_target_to_loopback_uses_an_ephemeral_port(eb_server):
    eb_server.words[0] = 5
    with open_target(eb_server.url) as t:
        assert t.url == eb_server.url
        assert t.read([0]) == [5]


def test_unresolvable_host():
    with pytest.raises(TransportError, match="cannot resolve"):
        EtherboneTransport("no-such-host.invalid", 1234)
