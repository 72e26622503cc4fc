"""Capture through the Verilated tester: frames sent by port 0 through a loopback DUT,
captured on port 1, written as a pcap and read back with scapy."""

from fractions import Fraction

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

from wirespeed.capture import arm_capture, capture_status, read_capture, write_pcap
from wirespeed.cli import main
from wirespeed.gateware.frame import parse_signature
from wirespeed.traffic import PortProgram, SizeSpec, StreamSpec, dissect
from wirespeed.traffic import tester_ip as port_ip
from wirespeed.traffic import tester_mac as port_mac

pytestmark = pytest.mark.slow

CLK_NS = 8
N = 12


def capture_frames(dev, *, size=64, rate_pct=10, udp_checksum=False, count=N, snaplen=128):
    stream = StreamSpec(src_mac=port_mac(0), dst_mac=port_mac(1), src_ip=port_ip(0), dst_ip=port_ip(1),
                        size=SizeSpec.parse(str(size)), udp_checksum=udp_checksum)
    compiled = PortProgram(port=0, streams=(stream,), rate_pct=rate_pct).compile()
    dev.stop()
    dev.disable_generator(1)
    dev.load_program(0, compiled, count=count)
    dev.clear()
    arm_capture(dev, 1, trigger="first", count=count, snaplen=snaplen)
    started = dev.start()
    end = started + int(count * 1e9 / compiled.total_fps) + 2_000_000
    while capture_status(dev, 1).state != "done":
        assert dev.now_ns() < end, capture_status(dev, 1)
    return compiled, read_capture(dev, 1)


def check_checksums(pkt, udp_checksum):
    assert Ether in pkt and IP in pkt and UDP in pkt, pkt.summary()
    raw = bytes(pkt)
    again = Ether(raw)
    del again[IP].chksum
    assert IP(bytes(again[IP]))[IP].chksum == pkt[IP].chksum      # scapy recomputes it
    _, ok = dissect(raw)
    assert ok
    if udp_checksum:
        assert pkt[UDP].chksum != 0
        del again[UDP].chksum
        assert Ether(bytes(again))[UDP].chksum == pkt[UDP].chksum
    else:
        assert pkt[UDP].chksum == 0


@pytest.mark.parametrize("udp_checksum", [False, True])
def test_captured_pcap_dissects_with_sequence_and_spacing(tester, tmp_path, udp_checksum):
    dev = tester("loopback:delay=40ns")
    compiled, frames = capture_frames(dev, udp_checksum=udp_checksum)
    assert len(frames) == N and not any(f.fcs_error for f in frames)
    path = write_pcap(tmp_path / "p1.pcap", frames)
    packets = rdpcap(str(path))
    assert len(packets) == N

    stream_id = compiled.streams[0].stream_id
    assert stream_id == 0        # port 0, stream 0: port * 16 + index
    latencies = []
    for seq, (pkt, frame) in enumerate(zip(packets, frames)):
        assert len(pkt) == 60 and pkt.wirelen == 60            # 64 bytes less the FCS
        check_checksums(pkt, udp_checksum)
        assert pkt[Ether].src == port_mac(0) and pkt[Ether].dst == port_mac(1)
        assert pkt[IP].src == str(port_ip(0)) and pkt[IP].dst == str(port_ip(1)) and pkt[IP].ttl == 10
        sig = parse_signature(bytes(pkt))
        assert sig is not None
        sid, s, tx_ts = sig
        assert (sid, s) == (stream_id, seq)
        # pcap times are the capture timestamps, in ns
        assert int(round(pkt.time * 10**9)) == frame.ts_ns
        latencies.append(frame.ts_ns - tx_ts)
    assert len(set(latencies)) == 1          # a loopback: constant latency

    # frame starts are the Q32.32 period apart, rounded to whole clock cycles; the first
    # frame after START leaves a little late (the generator's start-up: it is due at START),
    # so the spacing is checked from the second frame on and the first gap is at most a
    # few tens of cycles short
    period_cycles = Fraction(compiled.streams[0].descriptor["period"], 2**32)
    stamps = [f.ts_ns for f in frames]
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    low, high = int(period_cycles) * CLK_NS, -(-period_cycles // 1) * CLK_NS
    assert all(low <= g <= high for g in gaps[1:]), (gaps, float(period_cycles))
    assert abs(stamps[-1] - stamps[1] - (N - 2) * period_cycles * CLK_NS) <= CLK_NS
    assert high - 64 * CLK_NS <= gaps[0] <= high, gaps
    # 10 % of line rate for 64-byte frames: 840 cycles of 8 ns
    assert period_cycles == 840


def test_capture_command_writes_the_pcap(tmp_path, capsys):
    out = tmp_path / "cli.pcap"
    code = main(["capture", "--dut", "loopback:delay=40ns", "--count", "8", "--size", "128", "--rate", "20",
                 "--snaplen", "64", "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    assert stdout.strip() == f"captured 8 frames on port 1: {out}"
    packets = rdpcap(str(out))
    assert len(packets) == 8
    for pkt in packets:
        assert len(pkt) == 64 and pkt.wirelen == 124          # snaplen 64 of a 128-byte frame
        assert IP in pkt and UDP in pkt
        assert pkt[IP].src == str(port_ip(0)) and pkt[IP].dst == str(port_ip(1))
    # the signature is cut off by the snaplen: capture whole frames to check it (IMIX a = 64,
    # c = 256 bytes)
    out2 = tmp_path / "whole.pcap"
    code = main(["capture", "--dut", "loopback", "--count", "4", "--size", "imix:aaac", "--rate", "50",
                 "--out", str(out2), "--snaplen", "1024", "--udp-checksum"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    packets = rdpcap(str(out2))
    assert [len(p) for p in packets] == [60, 60, 60, 252]
    assert [parse_signature(bytes(p))[:2] for p in packets] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    for pkt in packets:
        check_checksums(pkt, udp_checksum=True)


def test_stream_results_after_a_loopback_trial(tester):
    from wirespeed.host.streamstats import stream_results
    from wirespeed.traffic import Flow, flow_stream

    dev = tester("loopback:delay=40ns")
    flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64))]
    trial = dev.run_trial(flows, 100_000.0, duration_ns=1_000_000, wait_ns=100_000)
    (r,) = stream_results(dev, flows)
    assert r.tx_frames == trial.tx_frames == r.rx_frames == r.in_order == trial.rx_frames > 0
    assert r.lost == r.duplicate == r.out_of_order == r.late == r.fcs_errors == 0
    assert r.rx_bytes == 64 * r.tx_frames
    assert r.latency_min_ns == r.latency_max_ns == trial.latency.min_ns and r.jitter_ns == 0
    assert r.tx_bytes == r.rx_bytes
