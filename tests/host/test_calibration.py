"""Calibration: the run (against a scripted device), the file, and how rfc2544 uses it."""

import json

import pytest
from clirun import interrupt, run
from ebserver import EtherboneServer, serve_identity
from fakes import make_trial
from records import parameters
from test_cli import FAST, assert_one_line_error

from wirespeed.calibration import CalibrationError, calibration_flows, load_calibration, run_calibration
from wirespeed.gateware.regmap import MAGIC
from wirespeed.host.models import GatewareId, PortCounters, TrialResult


def ident_of(regmap, **overrides):
    values = dict(magic=MAGIC, version=0x000100, map_hash=regmap.hash, clk_hz=regmap.clk_hz,
                  n_ports=regmap.n_ports) | overrides
    return GatewareId(**values)


class CableTester:
    """run_trial like a tester whose ports a cable joins: every frame arrives, latency
    ``latency(tx, rx, size)`` ± ``spread`` ns."""

    n_ports = 2

    def __init__(self, latency, spread=0, lose=0, generators=0b11, analyzers=0b11):
        self.latency, self.spread, self.lose, self.trials = latency, spread, lose, []
        self.generators, self.analyzers = generators, analyzers

    def has_generator(self, port):
        return bool(self.generators >> port & 1)

    def has_analyzer(self, port):
        return bool(self.analyzers >> port & 1)

    def run_trial(self, flows, rate_fps, duration_ns, wait_ns, histogram=None, *, lat_def=0):
        self.trials.append((flows, rate_fps, lat_def))
        counters = {p: PortCounters() for p in range(2)}
        n = 1000
        for f in flows:
            lat = self.latency(f.tx_port, f.rx_port, f.spec.point)
            counters[f.tx_port].tx_frames = n
            rx = counters[f.rx_port]
            rx.rx_frames, rx.lat_min, rx.lat_max = n - self.lose, lat, lat + self.spread
            rx.lat_sum = (n - self.lose) * lat + (n - self.lose) // 2 * self.spread
        return TrialResult(frame_size=flows[0].spec.point, offered_fps=rate_fps, period_q32=0,
                           duration_ns=duration_ns, wait_ns=wait_ns, flows=flows, started_ns=0,
                           counters=counters, lat_def=lat_def)


def calibrate(regmap, tester, sizes=(64, 1518), cable=0):
    return run_calibration(tester, ident_of(regmap), "sim", list(sizes), duration_ns=1_000_000, wait_ns=1000,
                           cable_delay_ns=cable)


def test_a_unidirectional_tester_calibrates_its_one_direction(regmap):
    """Port 0 sends, port 1 receives (the 25F board build): one direction is measured, and a
    run needing the other is refused by the file."""
    tester = CableTester(lambda tx, rx, size: 200 + (size == 1518) * 8, generators=0b01, analyzers=0b10)
    cal = calibrate(regmap, tester)
    assert [[(f.tx_port, f.rx_port) for f in flows] for flows, _, _ in tester.trials] == [[(0, 1)], [(0, 1)]]
    assert cal.summary() == {"0->1": {"64": 200, "1518": 208}}
    with pytest.raises(CalibrationError, match="no direction port 1 -> port 0"):
        cal.pipeline_ns(1, 0, 64)
    assert [(f.tx_port, f.rx_port) for f in calibration_flows(2, 64, lambda tx, rx: rx == 0)] == [(1, 0)]
    with pytest.raises(CalibrationError, match="no port of this gateware both sends"):
        calibrate(regmap, CableTester(lambda *a: 200, generators=0b01, analyzers=0b01))


def test_pipeline_delay_per_direction_and_size(regmap):
    tester = CableTester(lambda tx, rx, size: 200 + 10 * tx + (size == 1518) * 8)
    cal = calibrate(regmap, tester)
    assert [(f.tx_port, f.rx_port) for f in calibration_flows(2, 64)] == [(0, 1), (1, 0)]
    assert all(lat_def == 0 for _, _, lat_def in tester.trials) and len(tester.trials) == 2
    assert cal.summary() == {"0->1": {"64": 200, "1518": 208}, "1->0": {"64": 210, "1518": 218}}
    point = cal.points[0]
    assert point.bit_forwarding.source == "measured" and point.store_and_forward.source == "derived"
    assert point.store_and_forward.min_ns == 200 - 8 * 64
    assert cal.pipeline_ns(1, 0, 1518) == 218
    with pytest.raises(CalibrationError, match="differs between sizes"):
        cal.pipeline_ns(0, 1, 128)


def test_a_size_not_calibrated_takes_a_constant_delay(regmap):
    cal = calibrate(regmap, CableTester(lambda tx, rx, size: 200))
    assert cal.pipeline_ns(0, 1, 512) == 200


def test_cable_delay_is_not_tester_delay(regmap):
    cal = calibrate(regmap, CableTester(lambda tx, rx, size: 240), cable=40)
    assert {p.pipeline_delay_ns for p in cal.points} == {200}


def test_latency_not_constant_is_an_error(regmap):
    with pytest.raises(CalibrationError, match="not constant.*spread 16 ns"):
        calibrate(regmap, CableTester(lambda tx, rx, size: 200, spread=16))
    calibrate(regmap, CableTester(lambda tx, rx, size: 200, spread=8))      # one clock: fine


def test_loss_on_the_cable_is_an_error(regmap):
    with pytest.raises(CalibrationError, match="sent 1000, received 999"):
        calibrate(regmap, CableTester(lambda tx, rx, size: 200, lose=1))


def test_file_round_trip_and_gateware_check(regmap, tmp_path):
    cal = calibrate(regmap, CableTester(lambda tx, rx, size: 200))
    path = tmp_path / "cal.json"
    path.write_text(cal.model_dump_json())
    loaded = load_calibration(path)
    assert loaded == cal and loaded.tool["name"] == "wirespeed" and loaded.format == "wirespeed-calibration/1"
    loaded.check_usable(ident_of(regmap), "sim", [(0, 1, 64)])
    with pytest.raises(CalibrationError, match="gateware.version"):
        loaded.check_usable(ident_of(regmap, version=0x000200), "sim", [(0, 1, 64)])
    with pytest.raises(CalibrationError, match="kind of target"):
        loaded.check_usable(ident_of(regmap), "udp://10.0.0.2", [(0, 1, 64)])


# the command line ---------------------------------------------------------------------------------------


@pytest.fixture
def cal_file(regmap, tmp_path):
    def make(target="udp://127.0.0.1", **ident):
        cal = run_calibration(CableTester(lambda tx, rx, size: 200), ident_of(regmap, **ident), target, [64],
                              duration_ns=1000, wait_ns=0)
        path = tmp_path / "cal.json"
        path.write_text(cal.model_dump_json(indent=2))
        return path
    return make


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON"),
    ("[1, 2]", "a JSON object expected"),
    ('{"format": "wirespeed-results/1"}', "field format"),
    ('{"format": "wirespeed-calibration/1", "target": "sim"}', "field gateware: Field required"),
])
def test_malformed_calibration_file(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "rfc2544", "--calibration", str(path), "--target", "udp://127.0.0.1:1")
    assert code == 2 and out == ""
    assert_one_line_error(err, "--calibration")
    assert message in err


def test_a_bad_value_in_the_file_names_its_field(capsys, cal_file):
    path = cal_file()
    data = json.loads(path.read_text())
    data["points"][0]["pipeline_delay_ns"] = -5
    path.write_text(json.dumps(data))
    code, _, err = run(capsys, "rfc2544", "--calibration", str(path), "--target", "udp://127.0.0.1:1")
    assert code == 2
    assert_one_line_error(err, "--calibration")
    assert "points.0.pipeline_delay_ns" in err


@pytest.mark.parametrize("argv, field", [
    (["rfc2544", "--calibration", "/no/such/calibration.json"], "--calibration"),
    (["rfc2544", "--latency-definition", "fifo"], "--latency-definition"),
    (["rfc2544", "--address", "0:mac=zz"], "--address"),
    (["rfc2544", "--address", "0:color=red"], "--address"),
    (["rfc2544", "--address", "5:ipv4=198.18.0.9"], "--address"),
    (["rfc2544", "--settle", "later"], "--settle"),
    (["calibrate", "--dut", "router:rate=1k"], "--dut"),
    (["calibrate", "--dut", "loopback:delay=0ns,loss=0.1"], "--dut"),
    (["calibrate", "--cable-delay", "40ns"], "--cable-delay"),
    (["calibrate", "--sizes", "10"], "--sizes"),
    (["calibrate", "--out", "/no/such/dir/cal.json"], "--out"),
])
def test_bad_input_is_one_line(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert_one_line_error(err, field)


def test_mismatched_gateware_is_one_line(capsys, regmap, tmp_path, cal_file):
    path = cal_file(map_hash=regmap.hash ^ 1)
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--calibration", str(path),
                           "--out", str(tmp_path / "out"), *FAST)
    assert code == 2
    assert_one_line_error(err, "--calibration")
    assert "gateware.map_hash" in err


def test_run_records_the_calibration_used(capsys, regmap, tmp_path, cal_file):
    path = cal_file()
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--calibration", str(path),
                             "--out", str(tmp_path / "out"), "--json", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record["latency_calibrated"] is True
    assert record["calibration"]["pipeline_delay_ns"] == {"0->1": {"64": 200}, "1->0": {"64": 200}}
    assert record["calibration"]["file"]["format"] == "wirespeed-calibration/1"
    assert str(path) in record["calibration"]["source"]


def test_board_run_without_calibration_says_so(capsys, regmap, tmp_path):
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "out"),
                             "--json", "--latency-definition", "store-and-forward", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record["latency_calibrated"] is False and record["calibration"] is None
    assert any("latency not calibrated" in note for note in record["notes"])
    assert parameters(record, "throughput")["latency_definition"] == "store_and_forward"


def test_calibrated_trial_figures(regmap):
    """The rfc2544 path: a calibration's pipeline_ns subtracts from both definitions."""
    from wirespeed.latency import latency_figures
    cal = calibrate(regmap, CableTester(lambda tx, rx, size: 200))
    bf, sf = latency_figures(make_trial(64, 1.0, 100, 100, latency_ns=(900, 1000, 1100)), cal.pipeline_ns)
    assert (bf.min_ns, sf.min_ns) == (700, 700 - 512) and bf.calibrated and sf.pipeline_delay_ns == 200


def test_ctrl_c_while_calibrating_says_nothing_was_written(capsys, regmap, tmp_path, monkeypatch):
    from wirespeed.cli import calibrate as cli_calibrate

    interrupt(monkeypatch, cli_calibrate, "run_calibration")
    out = tmp_path / "cal.json"
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "calibrate", "--target", server.url, "--out", str(out))
    assert code == 130 and not out.exists()
    assert "interrupted; no calibration written" in err and str(out) in " ".join(err.split())
