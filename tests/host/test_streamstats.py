"""Per-stream results (wirespeed.host.streamstats) over FakeTransport: the snapshot windows
filled with packed entries, read back and combined."""

import pytest

from wirespeed.gateware.regmap import CMD_SNAPSHOT, pack_fields
from wirespeed.gateware.stream_stats import STATS_FIELDS, empty_entry, unpack_entry
from wirespeed.gateware.streamdesc import DESC_FIELDS
from wirespeed.host.streamstats import StreamRef, StreamResult, stream_refs, stream_results, tail_loss
from wirespeed.traffic import Flow, PortProgram, StreamSpec, flow_stream


def pack_entry(**fields) -> int:
    return pack_fields(STATS_FIELDS, empty_entry() | fields, "stream entry")


def pack_tx(frames: int, nbytes: int) -> int:
    return frames | nbytes << 64


def test_pack_matches_unpack():
    fields = {"rx_frames": 5, "lat_sq_sum": 2**90 + 7, "next_seq": 2**32 - 1, "last_lat": 123}
    assert unpack_entry(pack_entry(**fields)) == empty_entry() | fields


def test_device_reads_both_windows(device, fake):
    fake.set_entry("p1.ana.streams", 3, pack_entry(rx_frames=10, rx_bytes=640, lat_min=5))
    fake.set_entry("p0.gen.stream_tx", 2, pack_tx(11, 704))
    stats = device.read_stream_stats(1)
    assert len(stats) == 16 and stats[3]["rx_frames"] == 10 and stats[3]["rx_bytes"] == 640
    assert stats[3]["lat_min"] == 5 and stats[0]["rx_frames"] == 0
    tx = device.read_stream_tx(0)
    assert len(tx) == 16 and tx[2] == (11, 704) and tx[0] == (0, 0)
    with pytest.raises(ValueError, match="port"):
        device.read_stream_stats(device.n_ports)


def test_one_stream_result_with_latency_and_tail_loss(device, fake):
    # stream id 17 (group 1, entry 1) sent by port 0 stream 0: 100 frames, 95 received;
    # 2 lost in the middle, 3 at the end (next_seq 97)
    fake.set("p1.ana.stream_group", 1)
    fake.set_entry("p0.gen.stream_tx", 0, pack_tx(100, 6400))
    lats = [1000, 1010] * 47 + [1000]
    fake.set_entry("p1.ana.streams", 1, pack_entry(
        rx_frames=95, rx_bytes=95 * 64, fcs_errors=1, in_order=93, lost=2, duplicate=1, out_of_order=1,
        late=0, first_rx_ns=5000, last_rx_ns=5000 + 96 * 672, lat_min=1000, lat_max=1010,
        lat_sum=sum(lats), lat_sq_sum=sum(v * v for v in lats), jitter_sum=10 * 94, next_seq=97,
        last_lat=1000))
    (r,) = stream_results(device, [StreamRef(tx_port=0, rx_port=1, tx_index=0, stream_id=17)])
    assert (r.tx_port, r.rx_port, r.stream_id) == (0, 1, 17)
    assert (r.tx_frames, r.tx_bytes, r.rx_frames, r.rx_bytes) == (100, 6400, 95, 95 * 64)
    assert (r.fcs_errors, r.in_order, r.duplicate, r.out_of_order, r.late) == (1, 93, 1, 1, 0)
    assert r.lost == 2 + 3 and r.loss_pct == 5.0
    assert r.latency_min_ns == 1000 and r.latency_max_ns == 1010
    assert r.latency_avg_ns == pytest.approx(sum(lats) / 95)
    mean = sum(lats) / 95
    assert r.latency_stddev_ns == pytest.approx((sum((v - mean) ** 2 for v in lats) / 95) ** 0.5)
    assert r.jitter_ns == pytest.approx(10.0)
    assert (r.first_rx_ns, r.last_rx_ns) == (5000, 5000 + 96 * 672)
    # a snapshot first, by default
    assert fake.strobes[-1] == ("ctrl.cmd", CMD_SNAPSHOT)


def test_nothing_received_is_all_lost_without_latency(device, fake):
    fake.set_entry("p1.gen.stream_tx", 0, pack_tx(40, 40 * 128))
    (r,) = stream_results(device, [StreamRef(tx_port=1, rx_port=0, stream_id=1)], snapshot=False)
    assert r.rx_frames == 0 and r.lost == 40 and r.loss_pct == 100.0
    assert r.latency_min_ns is None and r.latency_avg_ns is None and r.jitter_ns is None
    assert r.first_rx_ns is None
    assert CMD_SNAPSHOT not in [v for _, v in fake.strobes]


def test_tail_loss_across_the_sequence_wrap():
    entry = empty_entry() | {"rx_frames": 1, "next_seq": 5}
    assert tail_loss(2**32 + 8, entry) == 3          # next_seq 5 is 2**32 + 5
    assert tail_loss(5, entry) == 0
    # a duplicate of a frame sent before CLEAR can leave next_seq ahead of tx: no negative loss
    assert tail_loss(3, entry) == 0
    assert tail_loss(7, empty_entry()) == 7


def test_flows_use_stream_zero_of_the_sending_port(device, fake):
    flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64)),
             Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, 64))]
    fake.set_entry("p0.gen.stream_tx", 0, pack_tx(10, 640))
    fake.set_entry("p1.gen.stream_tx", 0, pack_tx(12, 768))
    # stream ids 0 and 1 (FrameSpec.for_flow): entries 0 of port 1 and 1 of port 0
    fake.set_entry("p1.ana.streams", 0, pack_entry(rx_frames=10, in_order=10, next_seq=10))
    fake.set_entry("p0.ana.streams", 1, pack_entry(rx_frames=11, in_order=11, next_seq=11))
    a, b = stream_results(device, flows)
    assert (a.stream_id, a.tx_frames, a.rx_frames, a.lost) == (0, 10, 10, 0)
    assert (b.stream_id, b.tx_frames, b.rx_frames, b.lost) == (1, 12, 11, 1)


def test_pairs_read_the_streams_of_the_loaded_program(device, fake):
    program = PortProgram(port=1, streams=(StreamSpec(), StreamSpec(), StreamSpec(stream_id=0x1A)), rate_pct=10)
    device.load_program(1, program.compile(), count=100)
    refs = stream_refs(device, [(1, 0)])
    assert [(r.tx_index, r.stream_id) for r in refs] == [(0, 16), (1, 17), (2, 0x1A)]
    fake.set("p0.ana.stream_group", 1)
    for i, sid in enumerate((16, 17, 0x1A)):
        fake.set_entry("p1.gen.stream_tx", i, pack_tx(30 + i, 64 * (30 + i)))
        fake.set_entry("p0.ana.streams", sid & 15, pack_entry(rx_frames=30, in_order=30, next_seq=30))
    results = stream_results(device, [(1, 0)])
    assert [(r.stream_id, r.tx_frames, r.rx_frames, r.lost) for r in results] == [
        (16, 30, 30, 0), (17, 31, 30, 1), (0x1A, 32, 30, 2)]
    assert all(isinstance(r, StreamResult) for r in results)


def test_a_stream_outside_the_receivers_group_is_refused(device, fake):
    fake.set("p1.ana.stream_group", 0)
    with pytest.raises(ValueError, match="stream_group"):
        stream_results(device, [StreamRef(tx_port=0, rx_port=1, stream_id=16)])


def test_bad_items(device):
    with pytest.raises(TypeError):
        stream_results(device, ["p0"])
    with pytest.raises(ValueError, match="port"):
        stream_results(device, [(0, 99)])
    assert stream_results(device, []) == []


def test_run_trial_sets_group_and_latency_definition(device, fake):
    flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64).model_copy(update={"stream_id": 0x35}))]
    fake.set("p1.ana.stream_group", 7)
    device.run_trial(flows, 1000.0, duration_ns=10_000, wait_ns=0, lat_def=1)
    assert fake.get("p1.ana.stream_group") == 3 and fake.get("p1.ana.lat_def") == 1
    device.run_trial(flows, 1000.0, duration_ns=10_000, wait_ns=0)
    assert fake.get("p1.ana.lat_def") == 0
    with pytest.raises(ValueError, match="lat_def"):
        device.run_trial(flows, 1000.0, duration_ns=10_000, wait_ns=0, lat_def=2)


def test_descriptor_layout_has_the_stream_id():
    assert ("stream_id", 16) in DESC_FIELDS and ("enable", 1) in DESC_FIELDS
