"""results.json, trials.jsonl, Throughput.csv and Latency.csv as written during a run."""

import csv
import json
import os
import stat

import pytest
from fakes import make_trial
from records import parameters, results

from wirespeed import __version__
from wirespeed.ethernet import line_rate_fps
from wirespeed.host.models import GatewareId
from wirespeed.results import ResultsWriter, RunHeader, WriteError, atomic_write_text
from wirespeed.rfc2544.search import SearchOutcome
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, ThroughputResult

LATENCY_COLUMNS = ["frame_size_B", "rate_fps", "min_ns", "avg_ns", "max_ns", "stddev_ns", "jitter_ns",
                   "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "histogram_bin_ns", "frames", "definition",
                   "source", "calibrated", "pipeline_delay_ns", "repeats", "repeats_mean_ns",
                   "repeats_mean_stddev_ns", "repeats_min_ns", "repeats_max_ns"]
THROUGHPUT_COLUMNS = ["frame_size_B", "offered_fps", "throughput_fps", "measured_rx_fps", "pct_line_rate",
                      "throughput_Mbps", "throughput_L1_Mbps", "throughput_L2_Mbps", "theoretical_max_fps",
                      "frames_sent", "frames_received", "trials", "search", "loss_tolerance_pct", "confirmed",
                      "mean_frame_B"]


@pytest.fixture
def header():
    config = ThroughputConfig(frame_sizes=[64, 1518], trial_duration_ns=10_000_000, wait_ns=1_000_000)
    return RunHeader(target="sim", dut={"model": "router", "rate_fps": 400_000},
                     gateware=GatewareId(magic=0x57535044, version=0x000100, map_hash=0xF4988A5A,
                                         clk_hz=125_000_000, n_ports=2),
                     tests=[{"name": "throughput", "parameters": config}], notes=config.notes())


@pytest.fixture
def writer(tmp_path, header):
    return ResultsWriter(tmp_path / "out", header)


def size_result(size, rate, trials):
    outcome = SearchOutcome(line_rate_fps=line_rate_fps(size), resolution_fps=line_rate_fps(size) / 1000,
                            rates=[t.offered_fps for t in trials], trials=trials, throughput_fps=rate,
                            failed_fps=None, best=trials[-1] if trials[-1].passed else None, converged=True)
    return ThroughputResult.from_outcome(size, outcome)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_every_file_exists_from_the_start(writer):
    names = sorted(p.name for p in writer.out_dir.iterdir())
    assert names == ["Latency.csv", "Latency_Histograms.csv", "Throughput.csv", "Trials.csv", "results.json",
                     "trials.jsonl"]
    record = json.loads((writer.out_dir / "results.json").read_text())
    assert record["status"] == "running" and results(record, "throughput") == [] and record["trials"] == []
    assert read_csv(writer.out_dir / "Throughput.csv") == [THROUGHPUT_COLUMNS]


def test_each_trial_is_on_disk_at_once(writer, monkeypatch):
    synced = []
    monkeypatch.setattr("wirespeed.safeio.os.fsync", lambda fd: synced.append(fd))
    writer.record_trial(make_trial(64, 1_488_095.24, 14881, 14000))
    writer.record_trial(make_trial(64, 744_047.62, 7441, 7441))
    lines = (writer.out_dir / "trials.jsonl").read_text().splitlines()
    assert len(synced) == 2 and len(lines) == 2
    first = json.loads(lines[0])
    assert first["n"] == 1 and first["frame_size"] == 64 and first["lost_frames"] == 881
    assert first["counters"]["1"]["rx_frames"] == 14000 and first["counters"]["0"]["tx_frames"] == 14881
    assert json.loads(lines[1])["passed"] is True


def test_throughput_and_latency_tables(writer):
    fail, ok = make_trial(64, 1_488_095.24, 14881, 4000), make_trial(64, 400_000.0, 4000, 4000)
    for t in (fail, ok):
        writer.record_trial(t)
    writer.record_result("throughput", size_result(64, 400_000.0, [fail, ok]))

    rows = read_csv(writer.out_dir / "Throughput.csv")
    assert rows[0] == THROUGHPUT_COLUMNS
    assert rows[1] == ["64", "400000.00", "400000.00", "400000.00", "26.880", "204.800", "268.800", "204.800",
                       "1488095.24", "4000", "4000", "2", "bisect", "0", "", "64"]
    latency = read_csv(writer.out_dir / "Latency.csv")
    assert latency[0] == LATENCY_COLUMNS
    # half the frames at 900 ns (bin 896..960), half at 1100 ns (bin 1088..1152), alternating;
    # a percentile is its bin's upper edge, at most the max; measured: first bit in to first
    # bit out, raw
    assert latency[1] == ["64", "400000.00", "900", "1000.0", "1100", "100.0", "200.0",
                          "960", "1100", "1100", "1100", "64", "4000",
                          "bit_forwarding", "measured", "no", "",
                          "", "", "", "", ""]
    # derived: last bit in to first bit out = 8 ns x 64 B = 512 ns less; spread and jitter unchanged
    assert latency[2] == ["64", "400000.00", "388", "488.0", "588", "100.0", "200.0",
                          "448", "588", "588", "588", "64", "4000",
                          "store_and_forward", "derived", "no", "",
                          "", "", "", "", ""]
    assert len(latency) == 3


def test_a_size_without_a_passing_rate(writer):
    fail = make_trial(1518, 81_274.38, 813, 0)
    writer.record_result("throughput", size_result(1518, 0.0, [fail]))
    rows = read_csv(writer.out_dir / "Throughput.csv")
    assert rows[1] == ["1518", "0.00", "0.00", "", "0.000", "0.000", "0.000", "0.000", "81274.38", "", "", "1",
                       "bisect", "0", "", "1518"]
    assert len(read_csv(writer.out_dir / "Latency.csv")) == 1


def test_results_json_describes_the_run(writer):
    trial = make_trial(64, 400_000.0, 4000, 4000)
    writer.record_trial(trial)
    writer.record_result("throughput", size_result(64, 400_000.0, [trial]))
    writer.finish("complete")
    record = json.loads((writer.out_dir / "results.json").read_text())
    assert record["status"] == "complete" and record["format"] == "wirespeed-results/2"
    assert record["tool"] == {"name": "wirespeed", "version": __version__}
    assert record["gateware"]["map_hash"] == 0xF4988A5A and record["gateware"]["version_text"] == "0.1.0"
    assert record["target"] == "sim" and record["dut"]["rate_fps"] == 400_000
    params = parameters(record, "throughput")
    assert params["trial_duration_ns"] == 10_000_000 and params["scaled_down"]
    assert params["resolution_pct"] == 0.1
    assert "scaled down" in record["notes"][0]
    assert "latency" in record["definitions"]
    assert results(record, "throughput")[0]["throughput_fps"] == 400_000.0
    assert record["trials"][0]["counters"]["1"]["lat_sum"] == 4_000_000


def test_interrupted_run_keeps_partial_trials(writer):
    writer.record_trial(make_trial(64, 1_488_095.24, 14881, 4000))
    writer.finish("interrupted")
    record = json.loads((writer.out_dir / "results.json").read_text())
    assert record["status"] == "interrupted" and len(record["trials"]) == 1 and results(record, "throughput") == []


def test_rewrite_is_atomic(writer, monkeypatch):
    before = (writer.out_dir / "results.json").read_text()

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("wirespeed.safeio.os.replace", fail)
    with pytest.raises(WriteError, match=r"cannot write .*results\.json: disk full"):
        writer.record_result("throughput", size_result(64, 400_000.0, [make_trial(64, 400_000.0, 4000, 4000)]))
    assert (writer.out_dir / "results.json").read_text() == before
    assert not [p for p in writer.out_dir.iterdir() if p.name.endswith(".tmp")]


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "x.csv"
    atomic_write_text(path, "a\n" * 1000)
    atomic_write_text(path, "b\n")
    assert path.read_text() == "b\n" and [p.name for p in tmp_path.iterdir()] == ["x.csv"]


@pytest.fixture
def umask():
    """Set the process's umask for the test (``umask(0o022)``), and put it back after."""
    before = os.umask(0o022)
    os.umask(before)
    yield os.umask
    os.umask(before)


def test_results_files_have_the_mode_of_any_new_file(tmp_path, header, umask):
    """Results are written atomically through a temporary file, yet created as any new file
    is (0666 less the umask), not 0600, so colleagues and a web server can read them."""
    from wirespeed.capture import write_pcap

    umask(0o022)
    writer = ResultsWriter(tmp_path / "out", header)
    writer.record_trial(make_trial(64, 400_000.0, 4000, 4000))
    writer.finish("complete")
    write_pcap(tmp_path / "out" / "capture.pcap", [])
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in writer.out_dir.iterdir()}
    assert "results.json" in modes and "Throughput.csv" in modes and "capture.pcap" in modes
    assert modes == dict.fromkeys(modes, 0o644)
    umask(0o027)
    atomic_write_text(tmp_path / "x.csv", "a\n")
    assert stat.S_IMODE((tmp_path / "x.csv").stat().st_mode) == 0o640
