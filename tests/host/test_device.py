"""Device driver code paths over FakeTransport (a register file; no tester behaviour)."""

import warnings

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from wirespeed.errors import DeviceError, DeviceMismatch
from wirespeed.gateware.regmap import MAGIC
from wirespeed.gateware.streamdesc import unpack_descriptor
from wirespeed.host.device import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, CMD_STOP
from wirespeed.host.models import PortCounters
from wirespeed.host.streamstats import stream_refs
from wirespeed.traffic import BenchmarkRangeWarning, Flow, StreamSpec, flow_stream
from wirespeed.transport import FakeTransport


def test_wide_registers_by_name(device, fake):
    device.write("p0.gen.duration", (84 << 32) | 5)
    assert fake.get("p0.gen.duration") == (84 << 32) | 5
    fake.set("p1.ana.rx_frames", 2**40 + 3)
    assert device.read_many(["p1.ana.rx_frames", "p0.gen.duration"]) == {
        "p1.ana.rx_frames": 2**40 + 3, "p0.gen.duration": (84 << 32) | 5}


def test_read_many_is_one_transaction(device, fake):
    before = fake.transactions
    device.read_many([f"p{p}.ana.{c}" for p in (0, 1) for c in ("rx_frames", "lat_min", "lat_sum")])
    assert fake.transactions == before + 1


def test_read_only_registers_cannot_be_written(device):
    with pytest.raises(ValueError, match="read only"):
        device.write("p0.ana.rx_frames", 1)


def test_connect_reads_the_identity(device):
    ident = device.connect()
    assert (ident.magic, ident.n_ports, ident.clk_hz, ident.version_text) == (MAGIC, 2, 125_000_000, "0.1.0")
    assert device.ident == ident


@pytest.mark.parametrize("register, value, message", [
    ("id.magic", 0x12345678, "is not a wirespeed tester"),
    ("id.map_hash", 1, "register map mismatch"),
    ("id.n_ports", 4, "id.n_ports = 4"),
    ("id.clk_hz", 100_000_000, "id.clk_hz = 100000000"),
])
def test_connect_refuses_a_mismatch(device, fake, register, value, message):
    fake.set(register, value)
    with pytest.raises(DeviceMismatch, match=message) as info:
        device.connect()
    assert "\n" not in str(info.value)


def test_configure_generator_programs_one_stream(device, fake):
    spec = flow_stream(0, 1, 128)
    period = device.configure_generator(0, spec, 844_594.5945945946, duration_ns=10_000_000)
    assert period == 148 << 32
    assert {k: fake.get(f"p0.gen.{k}") for k in ("enable", "mode", "duration")} == \
        {"enable": 1, "mode": 0, "duration": 1_250_000}
    desc = unpack_descriptor(fake.get_entry("p0.gen.desc", 0))
    assert (desc["enable"], desc["size_mode"], desc["size_a"], desc["period"], desc["stream_id"], desc["hdr_len"]) == \
        (1, 0, 128, 148 << 32, 0, 42)
    assert not any(unpack_descriptor(fake.get_entry("p0.gen.desc", s))["enable"] for s in range(1, 16))
    template = bytes(fake.get_entry("p0.gen.tmpl", i) for i in range(42))
    frame = template + bytes(128 - 4 - 42)
    pkt = Ether(frame)
    assert (pkt.src, pkt.dst, pkt[IP].src, pkt[IP].dst, pkt[IP].ttl, pkt[UDP].sport, pkt[UDP].dport) == \
        ("02:00:00:00:00:01", "02:00:00:00:00:02", "198.18.0.1", "198.19.0.1", 10, 0xC020, 7)


def test_configure_generator_by_count(device, fake):
    device.configure_generator(1, flow_stream(1, 0, 64), 1000.0, count=5000)
    assert (fake.get("p1.gen.mode"), fake.get("p1.gen.count")) == (1, 5000)
    assert unpack_descriptor(fake.get_entry("p1.gen.desc", 0))["stream_id"] == 1
    assert bytes(fake.get_entry("p1.gen.tmpl", i) for i in range(26, 30)) == bytes([198, 19, 0, 1])


def test_configure_generator_needs_duration_or_count(device):
    with pytest.raises(ValueError, match="exactly one"):
        device.configure_generator(0, StreamSpec(), 1000.0)
    with pytest.raises(ValueError, match="port must be 0..1"):
        device.configure_generator(2, StreamSpec(), 1000.0, count=1)


def test_snapshot_is_one_transaction_after_the_strobe(device, fake):
    fake.set("p1.ana.rx_frames", 77)
    fake.set("p0.gen.tx_frames", 78)
    before = fake.transactions
    counters = device.snapshot_counters()
    assert fake.transactions == before + 1
    assert fake.strobes[-1] == ("ctrl.cmd", CMD_SNAPSHOT)
    assert counters[1].rx_frames == 77 and counters[0].tx_frames == 78
    assert set(counters) == {0, 1}


def test_wait_ns_polls_tester_time(device, fake):
    fake.ns_per_transaction = 100_000
    start = device.now_ns()
    end = device.wait_ns(1_000_000)
    assert end >= start + 1_000_000
    assert end < start + 1_300_000


def test_wait_ns_fails_when_tester_time_stands_still(device, fake):
    fake.ns_per_transaction = 0
    with pytest.raises(DeviceError, match="stopped at"):
        device.wait_ns(1000)


def script_trial(fake, tx, rx, running_for_ns=0, **sequence):
    """On START, put counters in place as a trial would leave them: ``rx`` frames received,
    by default in order (stream 0's entry of p1.ana.streams; ``sequence`` overrides its
    fields)."""
    from wirespeed.gateware.regmap import pack_fields
    from wirespeed.gateware.stream_stats import STATS_FIELDS, empty_entry

    entry = empty_entry() | {"rx_frames": rx, "in_order": rx, "next_seq": rx} | sequence

    def on_strobe(name, value):
        if value & CMD_START:
            fake.set("p0.gen.tx_frames", tx)
            fake.set("p1.ana.rx_frames", rx)
            fake.set_entry("p1.ana.streams", 0, pack_fields(STATS_FIELDS, entry, "entry"))
            fake.set("p1.ana.lat_min", 900)
            fake.set("p1.ana.lat_max", 1100)
            fake.set("p1.ana.lat_sum", 1000 * rx)
            # half at 900 ns, half at 1100 ns, alternating; default bins of 64 ns
            fake.set("p1.ana.lat_sq_sum", rx // 2 * (900**2 + 1100**2))
            fake.set("p1.ana.jitter_sum", max(0, rx - 1) * 200)
            fake.set("p1.ana.hist_used", 1)                    # stream 0 has samples
            fake.set_entry("p1.ana.hist", 900 // 64, rx // 2)
            fake.set_entry("p1.ana.hist", 1100 // 64, rx - rx // 2)
            fake.set("p1.ana.first_rx_ns", 5_000)
            fake.set("p1.ana.last_rx_ns", 5_000 + 8 * 84 * (rx - 1))   # 64 B at line rate
            fake.set("p0.gen.running", 1 if running_for_ns else 0)
    fake.on_strobe.append(on_strobe)


def test_loss_comes_from_the_sequence_tracking_never_negative(device, fake):
    """Duplicates do not hide lost frames: 1000 sent, 1002 received of which 5 duplicates,
    3 numbers never received, 2 reordered: 3 lost, and the trial fails saying why."""
    script_trial(fake, tx=1000, rx=1002, in_order=990, lost=3, duplicate=5, out_of_order=2, next_seq=1000)
    result = device.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    assert (result.tx_frames, result.rx_frames, result.lost_frames) == (1000, 1002, 3)
    assert (result.duplicate_frames, result.out_of_order_frames, result.late_frames) == (5, 2, 0)
    assert not result.passed and result.failure == "3 lost, 5 duplicated, 2 out of order"
    assert result.streams[0]["duplicate"] == 5 and result.loss_pct == pytest.approx(0.3)


def test_tail_loss_and_late_frames(device, fake):
    """Frames after the last number received are lost (1000 sent, next expected 990); late
    frames arrived: they are not lost."""
    script_trial(fake, tx=1000, rx=992, in_order=985, lost=7, late=2, next_seq=990)
    result = device.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    assert result.lost_frames == 7 - 2 + 10 and result.late_frames == 2
    assert result.failure == "15 lost, 2 late"


def test_without_sequence_tracking_loss_is_clamped_and_excess_fails():
    """A build without per-stream statistics: sent - received, never negative; receiving more
    than was sent fails the trial."""
    import dataclasses

    from wirespeed.gateware.config import SIM
    from wirespeed.gateware.top import build_register_map
    from wirespeed.host.device import Device
    rmap = build_register_map(dataclasses.replace(SIM, stream_stats=False))
    fake = FakeTransport(rmap)
    dev = Device(fake, rmap, stall_timeout_s=0.2, poll_interval_s=(0, 0))

    def on_strobe(name, value):
        if value & CMD_START:
            fake.set("p0.gen.tx_frames", 1000)
            fake.set("p1.ana.rx_frames", 1008)
    fake.on_strobe.append(on_strobe)
    result = dev.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    assert result.streams == {} and result.duplicate_frames is None
    assert result.lost_frames == 0 and result.loss_pct == 0.0 and not result.passed
    assert result.failure == "8 more received than sent (duplicates?)"


def flows(size=64):
    return [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size))]


def test_a_flow_without_a_stream_id_takes_its_ports_default(device, fake):
    """A spec without a stream id is sent as stream 0 of its port's program (id port * 16):
    the receiver follows that id's group, and the results and stream references name it."""
    flow = Flow(tx_port=1, rx_port=0, spec=StreamSpec())
    fake.set("p0.ana.stream_group", 0)
    result = device.run_trial([flow], 1000.0, duration_ns=10_000, wait_ns=0)
    assert flow.stream_id == 16 and fake.get("p0.ana.stream_group") == 1
    assert unpack_descriptor(fake.get_entry("p1.gen.desc", 0))["stream_id"] == 16
    assert list(result.streams) == [16]
    assert stream_refs(device, [flow])[0].stream_id == 16


def test_run_trial_sequence_and_result(device, fake):
    script_trial(fake, tx=1000, rx=1000)
    fake.set("p1.gen.enable", 1)
    result = device.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    # a snapshot half way through the wait, and one at its end that finds nothing more arrived
    assert [v for _, v in fake.strobes] == [CMD_STOP, CMD_CLEAR, CMD_START, CMD_SNAPSHOT, CMD_SNAPSHOT]
    assert fake.get("p1.gen.enable") == 0 and fake.get("p0.gen.enable") == 1
    assert result.passed and result.lost_frames == 0 and result.tx_frames == 1000
    assert result.measured_rx_fps == pytest.approx(1e9 / 8 / 84)   # from the receive timestamps
    assert result.latency.model_dump() == {
        "min_ns": 900, "avg_ns": 1000.0, "max_ns": 1100, "stddev_ns": 100.0, "jitter_ns": 200.0, "frames": 1000,
        "bin_ns": 64, "percentiles_ns": {"p50": 960, "p90": 1100, "p99": 1100, "p99.9": 1100}}
    assert fake.get("p1.ana.hist_shift") == 6 and fake.get("p1.ana.hist_offset") == 0
    assert result.period_q32 == pytest.approx(168 << 32, rel=1e-9)  # 50 % of line rate


def _arriving(device, monkeypatch, counter, values):
    """Each SNAPSHOT reads the next of ``values`` as port 1's ``counter``; returns what is left."""
    real = device.snapshot_counters
    arrivals = iter(values)

    def draining():
        counters = real()
        counters[1] = counters[1].model_copy(update={counter: next(arrivals)})
        return counters

    monkeypatch.setattr(device, "snapshot_counters", draining)
    return arrivals


def test_wait_stretches_while_a_dut_still_drains(device, fake, monkeypatch):
    """Frames still arriving at the end of the wait (a deep queue emptying): the wait goes on
    by halves until one passes without a frame, so none is left for the next trial."""
    script_trial(fake, tx=1000, rx=1000)
    arrivals = _arriving(device, monkeypatch, "rx_frames", [400, 700, 900, 1000, 1000, 1000])
    result = device.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    assert result.rx_frames == 1000 and result.passed
    assert result.drain_steps == 3 and result.wait_ns == 5_000    # three half waits more before a quiet one
    assert next(arrivals) == 1000                        # five snapshots: 400, 700, 900, 1000, 1000


def test_fragments_still_arriving_stretch_the_wait_and_are_not_received_frames(device, fake, monkeypatch):
    """A DUT fragmenting every frame: what arrives is fragments only (pN.ana.fragment_frames);
    the wait goes on while they do, and none is a frame received."""
    script_trial(fake, tx=1000, rx=0)
    _arriving(device, monkeypatch, "fragment_frames", [800, 1400, 2000, 2000, 2000])
    result = device.run_trial(flows(), 744_047.619, duration_ns=10_000, wait_ns=5_000)
    assert result.drain_steps == 2 and result.counters[1].fragment_frames == 2000
    assert result.rx_frames == 0 and result.lost_frames == 1000 and not result.passed


@pytest.mark.parametrize("tx, rx, seq, fcs", [(1000, 999, 0, 0), (1000, 1001, 0, 0), (1000, 1000, 1, 0),
                                              (1000, 1000, 0, 1), (0, 0, 0, 0)])
def test_trial_fails_on_any_loss_or_error(device, fake, tx, rx, seq, fcs):
    script_trial(fake, tx=tx, rx=rx)
    fake.set("p1.ana.seq_errors", seq)
    fake.set("p1.ana.fcs_errors", fcs)
    assert not device.run_trial(flows(), 1000.0, duration_ns=10_000, wait_ns=0).passed


def test_trial_that_never_stops_is_an_error(device, fake):
    fake.ns_per_transaction = 1_000_000
    script_trial(fake, tx=1, rx=1, running_for_ns=10**12)
    with pytest.raises(DeviceError, match="p0.gen.running still not done"):
        device.run_trial(flows(), 1000.0, duration_ns=10_000, wait_ns=0)


def test_result_round_trips_through_json(device, fake):
    script_trial(fake, tx=10, rx=10)
    result = device.run_trial(flows(), 1000.0, duration_ns=10_000, wait_ns=0)
    again = type(result).model_validate_json(result.model_dump_json())
    assert again == result and again.counters[1].rx_frames == 10


def test_no_latency_without_frames():
    assert PortCounters().lat_min == 0xFFFFFFFF


def test_flow_stream_defaults_follow_rfc2544_appendix_c():
    spec = flow_stream(0, 1, 64)
    assert (str(spec.src_ip), str(spec.dst_ip), spec.src_port, spec.dst_port, spec.ttl) == (
        "198.18.0.1", "198.19.0.1", 0xC020, 7, 10)


@pytest.mark.parametrize("field, value", [("size", "63"), ("size", "9019"), ("src_mac", "02:00:00:00:00"),
                                          ("dst_mac", "zz:00:00:00:00:01"), ("ttl", 0), ("src_ip", "300.1.1.1")])
def test_stream_spec_rejects(field, value):
    with pytest.raises(ValueError):
        StreamSpec(**{field: value})


def test_stream_spec_warns_outside_benchmark_range():
    with pytest.warns(BenchmarkRangeWarning, match="RFC 6815"):
        StreamSpec(dst_ip="10.0.0.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        StreamSpec(src_ip="198.19.255.254")


def _unidirectional_device():
    """A Device on a build whose port 0 only sends and port 1 only receives."""
    import dataclasses

    from wirespeed.gateware.config import SIM
    from wirespeed.gateware.top import build_register_map
    from wirespeed.host.device import Device
    from wirespeed.transport import FakeTransport
    rmap = build_register_map(dataclasses.replace(SIM, generators=0b01, analyzers=0b10))
    fake = FakeTransport(rmap)
    return Device(fake, rmap, stall_timeout_s=0.2, poll_interval_s=(0, 0)), fake


def test_roles_of_a_unidirectional_build():
    device, fake = _unidirectional_device()
    assert [device.has_generator(p) for p in (0, 1)] == [True, False]
    assert [device.has_analyzer(p) for p in (0, 1)] == [False, True]
    forward = Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64))
    reverse = Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, 64))
    device.check_flows([forward])
    with pytest.raises(ValueError, match="port 1 of this gateware has no generator .* sends on port.s. 0 and "
                                         "receives on port.s. 1.* port 1 -> port 0"):
        device.check_flows([forward, reverse])
    with pytest.raises(ValueError, match="port 0 of this gateware has no analyzer"):
        device.check_flows([Flow(tx_port=0, rx_port=0, spec=flow_stream(0, 0, 64))])
    with pytest.raises(ValueError, match="no generator"):
        device.run_trial([reverse], 1000.0, 1000, 1000)
    device.disable_generator(1)         # nothing to turn off: no write to a register it lacks
    device.disable_generator(0)
    assert fake.get("p0.gen.enable") == 0


def test_counters_of_a_port_without_a_block_stay_empty():
    """SNAPSHOT reads only the counters the build has; the others keep their empty values."""
    device, fake = _unidirectional_device()
    names = PortCounters.register_names(0, device.regmap) + PortCounters.register_names(1, device.regmap)
    assert "p0.gen.tx_frames" in names and "p1.ana.rx_frames" in names
    assert not any(n.startswith(("p0.ana.", "p1.gen.")) for n in names)
    assert len(PortCounters.register_names(0)) == len(PortCounters.model_fields)
    fake.set("p0.gen.tx_frames", 7)
    fake.set("p1.ana.rx_frames", 5)
    fake.set("p1.ana.lat_min", 300)
    counters = device.snapshot_counters()
    assert (counters[0].tx_frames, counters[0].rx_frames, counters[0].lat_min) == (7, 0, PortCounters().lat_min)
    assert (counters[1].tx_frames, counters[1].rx_frames, counters[1].lat_min) == (0, 5, 300)


def _board_device():
    from wirespeed.gateware.config import BOARD_25F
    from wirespeed.gateware.top import build_register_map
    from wirespeed.host.device import Device
    from wirespeed.transport import FakeTransport
    rmap = build_register_map(BOARD_25F)
    return Device(FakeTransport(rmap), rmap, stall_timeout_s=0.2, poll_interval_s=(0, 0))


def test_a_program_fits_a_board_build():
    """The 25F build has 8 streams and no modifier unit: a one-stream program loads (unused
    descriptors and modifier units left out), and the descriptor is the one compiled."""
    from wirespeed.traffic import PortProgram, StreamSpec
    device = _board_device()
    compiled = PortProgram(port=0, streams=(StreamSpec(stream_id=5, size="64"),), rate_pct=50.0).compile()
    device.load_program(0, compiled, count=10)
    window = device.regmap["p0.gen.desc"]
    assert window.depth == 8
    loaded = device.read_memory("p0.gen.desc")
    assert loaded[0] == compiled.descriptors()[0] and not any(loaded[1:])
    assert device.read("p0.gen.count") == 10 and device.read("p0.gen.enable") == 1


def test_a_program_that_needs_more_than_the_build_is_refused():
    from wirespeed.host.program import fit_to_build, port_program_writes
    from wirespeed.traffic import ModifierSpec, PortProgram, StreamSpec
    device = _board_device()
    rmap = device.regmap
    mod = PortProgram(port=0, streams=(StreamSpec(stream_id=1, size="64", modifiers=(
        ModifierSpec(field="src_port", mode="increment", count=4),)),), rate_pct=10.0).compile()
    with pytest.raises(ValueError, match="uses field modifier p0.mod0, and this gateware has 0 per port"):
        fit_to_build(rmap, *port_program_writes(0, mod))
    many = PortProgram(port=0, streams=tuple(StreamSpec(stream_id=i, size="64") for i in range(9)),
                       rate_pct=10.0).compile()
    with pytest.raises(ValueError, match="uses stream 8 of p0.gen.(desc|tmpl), and this gateware has 8"):
        fit_to_build(rmap, *port_program_writes(0, many))
    with pytest.raises(ValueError, match="this gateware has no p1.gen.tmpl"):
        fit_to_build(rmap, *port_program_writes(1, many))
