"""Calibration, both latency definitions and the learning phase through the Verilated tester
and the C++ DUT models: a calibrated latency must equal the delay the DUT model is given."""

import csv
import json

import pytest

from wirespeed.calibration import run_calibration
from wirespeed.cli import main
from wirespeed.gateware.port import PIPELINE_NS
from wirespeed.latency import BIT_FORWARDING, STORE_AND_FORWARD, latency_figures
from wirespeed.traffic import Flow, PortAddress, flow_stream

pytestmark = pytest.mark.slow

CLK_NS = 8


def calibration(dev, sizes):
    return run_calibration(dev, dev.ident, "sim", sizes, duration_ns=200_000, wait_ns=20_000)


def one_flow(size):
    return [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size))]


def test_calibration_on_a_zero_delay_loopback_is_the_pipeline_delay(tester):
    cal = calibration(tester("loopback:delay=0ns"), [64, 1518])
    for point in cal.points:
        print(f"{point.tx_port}->{point.rx_port} {point.frame_size} B: pipeline {point.pipeline_delay_ns} ns "
              f"(min {point.bit_forwarding.min_ns}, max {point.bit_forwarding.max_ns}, {point.frames} frames)")
        assert point.bit_forwarding.max_ns - point.bit_forwarding.min_ns <= CLK_NS
        assert point.pipeline_delay_ns == PIPELINE_NS      # docs/performance.md: 128 + 72 ns
    assert {(p.tx_port, p.rx_port) for p in cal.points} == {(0, 1), (1, 0)}


@pytest.mark.parametrize("delay_ns, size", [(40, 64), (40, 1518), (10_000, 512)])
def test_calibrated_latency_is_the_dut_delay(tester, delay_ns, size):
    """Calibrate on a zero-delay cable, then measure a cable of ``delay_ns``, both definitions
    measured by the hardware: the calibrated bit-forwarding latency is the model's delay and
    the store-and-forward one is that minus 8 ns per byte (derived and, where the hardware
    can measure it without clamping at 0, measured)."""
    cal = calibration(tester("loopback:delay=0ns"), [size])
    dev = tester(f"loopback:delay={delay_ns}ns")
    figs = {}
    for lat_def in (0, 1):
        trial = dev.run_trial(one_flow(size), 20_000.0, 1_000_000, 50_000, lat_def=lat_def)
        assert trial.passed
        figs[lat_def] = {f.definition: f for f in latency_figures(trial, cal.pipeline_ns)}
    bf, sf = figs[0][BIT_FORWARDING], figs[0][STORE_AND_FORWARD]
    print(f"loopback {delay_ns} ns, {size} B: calibrated bit forwarding min/avg/max {bf.min_ns}/{bf.avg_ns}/"
          f"{bf.max_ns} ns, store and forward (derived) {sf.min_ns}/{sf.avg_ns}/{sf.max_ns} ns")
    assert bf.source == "measured" and bf.calibrated and bf.pipeline_delay_ns == PIPELINE_NS
    assert abs(bf.min_ns - delay_ns) <= CLK_NS and abs(bf.max_ns - delay_ns) <= CLK_NS
    assert sf.source == "derived" and sf.min_ns == bf.min_ns - 8 * size and sf.max_ns == bf.max_ns - 8 * size
    raw_store_and_forward = delay_ns + PIPELINE_NS - 8 * size
    if raw_store_and_forward > 0:     # the hardware measures it: it must agree with the derivation
        measured_sf, derived_bf = figs[1][STORE_AND_FORWARD], figs[1][BIT_FORWARDING]
        assert measured_sf.source == "measured" and derived_bf.source == "derived"
        assert (measured_sf.min_ns, measured_sf.max_ns) == (sf.min_ns, sf.max_ns)
        assert (derived_bf.min_ns, derived_bf.max_ns) == (bf.min_ns, bf.max_ns)
    else:                             # clamped at 0 by the analyzer: nothing derived from it
        assert not figs[1][BIT_FORWARDING].available


def test_learning_phase_sends_announcements_and_learning_frames(tester):
    dev = tester("loopback:delay=40ns")
    custom = {1: PortAddress(mac="02:00:00:00:0a:02", ipv4="198.19.0.9", ipv6="2001:2:0:9::1")}
    result = dev.learn([Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64, custom))], custom,
                       frames=5, settle_ns=100_000, rate_fps=100_000)
    print(result.model_dump_json())
    assert dev.read("p1.arp.mac") == 0x02000000_0A02 and dev.read("p1.arp.ipv4") == 0xC6130009
    assert dev.read("p0.arp.enable") == dev.read("p1.arp.enable") == 3
    assert result.gratuitous_arp == {0: 1, 1: 1} and result.unsolicited_na == {0: 1, 1: 1}
    assert result.learning_frames == {0: 5, 1: 5} and result.learning_frames_received == {0: 5, 1: 5}
    # through the cable each port receives the other's announcement and advertisement
    assert result.other_frames_received == {0: 2, 1: 2}
    # the DUT (a cable) asks nothing
    assert result.arp_requests == {0: 0, 1: 0} and result.ns_received == {0: 0, 1: 0}


def test_cli_calibrate_then_rfc2544_with_the_file(tmp_path, capsys):
    cal_path = tmp_path / "calibration.json"
    assert main(["calibrate", "--target", "sim", "--sizes", "64,1518", "--out", str(cal_path)]) == 0
    cal = json.loads(cal_path.read_text())
    assert cal["format"] == "wirespeed-calibration/1" and cal["target"] == "sim"
    assert {p["pipeline_delay_ns"] for p in cal["points"]} == {PIPELINE_NS}
    out = tmp_path / "out"
    code = main(["rfc2544", "--target", "sim", "--dut", "loopback:delay=40ns", "--sizes", "64,1518",
                 "--trial-duration", "1ms", "--calibration", str(cal_path), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    assert record["latency_calibrated"] is True and record["learning"]["gratuitous_arp"] == {"0": 1, "1": 1}
    with open(out / "Latency.csv", newline="") as f:
        header, *rows = list(csv.reader(f))
    col = {name: i for i, name in enumerate(header)}
    # two sizes x two definitions; bit forwarding measured, store and forward derived, calibrated
    assert len(rows) == 4
    for row in rows:
        size = int(row[col["frame_size_B"]])
        want = 40 if row[col["source"]] == "measured" else 40 - 8 * size
        assert int(row[col["min_ns"]]) == int(row[col["max_ns"]]) == want
        assert row[col["calibrated"]] == "yes" and row[col["pipeline_delay_ns"]] == str(PIPELINE_NS)


def test_calibrated_store_and_forward_latency_of_the_router(tester):
    """The router model (sim/harness/dut_router.h): a frame arrives when its last byte is in
    (the cycle tx_en falls), waits its service time ceil(1/rate) and the fixed latency, then
    its preamble starts: for an idle router, last bit in to first bit out (first byte after
    the SFD) = ceil(1/rate) + latency + 8 bytes of preamble/SFD, at every frame size."""
    rate, latency_ns = 400_000, 20_000
    service_ns = -(-1_000_000_000 // (rate * CLK_NS)) * CLK_NS      # ceil(1/rate) in whole clocks: 2504 ns
    want = service_ns + latency_ns + 8 * 8
    cal = calibration(tester("loopback:delay=0ns"), [64, 1518])
    dev = tester(f"router:rate={rate},queue=16,latency={latency_ns // 1000}us")
    for size in (64, 1518):
        trial = dev.run_trial(one_flow(size), 10_000.0, 2_000_000, 100_000, lat_def=1)   # idle between frames
        assert trial.passed
        sf, bf = latency_figures(trial, cal.pipeline_ns)
        print(f"router, {size} B: calibrated store and forward (measured) {sf.min_ns}/{sf.max_ns} ns, "
              f"bit forwarding (derived) {bf.min_ns}/{bf.max_ns} ns; model {want} ns")
        assert sf.definition == STORE_AND_FORWARD and sf.source == "measured"
        assert abs(sf.min_ns - want) <= CLK_NS and abs(sf.max_ns - want) <= CLK_NS
        assert bf.min_ns == sf.min_ns + 8 * size
