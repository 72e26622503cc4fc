"""wirespeed report: tables, graphs and report.html regenerated from results.json alone."""

import csv
import json
import re
import shutil

import pytest
from clirun import run
from ebserver import EtherboneServer, serve_identity
from fakes import make_trial
from markupsafe import escape

from wirespeed import __version__
from wirespeed.ethernet import line_rate_fps
from wirespeed.host.models import GatewareId
from wirespeed.report import DETAIL_TABLES, ReportError, human, load_record, make_report
from wirespeed.results import ResultsWriter, RunHeader
from wirespeed.rfc2544.search import SearchOutcome
from wirespeed.rfc2544.suite.back_to_back import BackToBackConfig, BackToBackResult, BurstRepetition
from wirespeed.rfc2544.suite.frame_loss import FrameLossConfig, FrameLossPoint, FrameLossResult
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, ThroughputResult

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TABLES = ["Throughput.csv", "Latency.csv", "Latency_Histograms.csv", "Back_to_Back.csv", "Frame_Loss.csv", "Trials.csv"]
SUMMARY = ["Throughput.csv", "Latency.csv", "Back_to_Back.csv", "Frame_Loss.csv", "Trials.csv"]
ALL_GRAPHS = {"throughput_fps", "throughput_mbps", "throughput_pct", "latency", "latency_distribution", "frame_loss",
              "latency_vs_load", "back_to_back"}



def size_result(size, rate, trials, pipeline=None):
    outcome = SearchOutcome(line_rate_fps=line_rate_fps(size), resolution_fps=line_rate_fps(size) / 1000,
                            rates=[t.offered_fps for t in trials], trials=trials, throughput_fps=rate,
                            failed_fps=None, best=trials[-1] if trials[-1].passed else None, converged=True)
    return ThroughputResult.from_outcome(size, outcome, pipeline)


def header(tests=("throughput", "frame-loss", "back-to-back"), sizes=(64, 512, 1518)):
    sizes = list(sizes)
    config = ThroughputConfig(frame_sizes=sizes, trial_duration_ns=10_000_000, wait_ns=1_000_000)
    b2b = BackToBackConfig(frame_sizes=sizes, repetitions=3, max_burst=1000, wait_ns=1_000_000) \
        if "back-to-back" in tests else None
    loss = FrameLossConfig(frame_sizes=sizes, trial_duration_ns=1_000_000, wait_ns=100_000) \
        if "frame-loss" in tests else None
    notes = config.notes() + (b2b.notes() if b2b else []) + (loss.notes() if loss else [])
    notes.append("latency calibrated: tester pipeline delay of 200 ns subtracted (file cal.json)")
    return RunHeader(test="rfc2544-" + "+".join(tests), target="sim",
                     dut={"model": "router", "spec": "router:rate=400k,queue=256,latency=20us"},
                     gateware=GatewareId(magic=0x57535044, version=0x000100, map_hash=0xF4988A5A,
                                         clk_hz=125_000_000, n_ports=2, version_text="0.1.0"),
                     notes=notes, latency_calibrated=True,
                     calibration={"source": "file cal.json", "pipeline_delay_ns": {"0->1": {"64": 200}}},
                     tests=[{"name": name, "parameters": {"throughput": config, "frame-loss": loss,
                                                          "back-to-back": b2b}[name]} for name in tests])


def write_run(out_dir, tests=("throughput", "frame-loss", "back-to-back"), sizes=(64, 512, 1518)):
    """A results folder written by the real writer from fake trials."""
    writer = ResultsWriter(out_dir, header(tests, sizes))
    if "throughput" in tests:
        for size, latency in zip(sizes, ((20_000, 30_000, 40_000), (25_000, 26_000, 27_000), (33_000, 34_000, 35_000))):
            fail = make_trial(size, line_rate_fps(size), 1000, 300, latency_ns=latency)
            ok = make_trial(size, 400_000.0, 4000, 4000, latency_ns=latency)
            for t in (fail, ok):
                writer.record_trial(t, test="throughput")
            writer.record_result("throughput", size_result(size, 400_000.0, [fail, ok], pipeline=lambda tx, rx, s: 200))
    if "frame-loss" in tests:
        for size in sizes:
            line = line_rate_fps(size)
            points = [FrameLossPoint(offered_pct=pct, offered_fps=line * pct / 100,
                                     trial=make_trial(size, line * pct / 100, sent, received, duration_ns=1_000_000))
                      for pct, sent, received in ((100, 1489, 1016), (90, 1340, 1100), (80, 1191, 1191),
                                                  (70, 1042, 1042))]
            writer.record_result("frame-loss", FrameLossResult(frame_size=size, theoretical_max_fps=line, settled=True,
                                                     points=points))
    if "back-to-back" in tests:
        for size, bursts in zip(sizes, ((21, 22, 23), (40, 44, 47), (1000, 1000, 1000))):
            reps = [BurstRepetition(burst_frames=b, failed_frames=None if b == 1000 else b + 1, converged=True,
                                    bursts=[b], passed=[True]) for b in bursts]
            result = BackToBackResult(frame_size=size, theoretical_max_fps=line_rate_fps(size), max_burst=1000,
                                      repetitions=reps, throughput_fps=400_000.0 if "throughput" in tests else None)
            writer.record_result("back-to-back", result)
    writer.finish("complete")
    return out_dir


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """A run with every test, and its report written into another folder."""
    base = tmp_path_factory.mktemp("report")
    src = write_run(base / "run")
    originals = {name: (src / name).read_bytes() for name in TABLES}
    report = make_report(src, base / "report")
    return src, originals, report


def test_tables_regenerated_byte_for_byte(full_run):
    src, originals, report = full_run
    assert sorted(report.tables) == sorted(TABLES)
    for name in TABLES:
        assert (report.out_dir / name).read_bytes() == originals[name], name
        assert len(originals[name].splitlines()) > 1, name       # the fixture really has rows


def test_report_in_place_leaves_the_tables_as_they_were(tmp_path):
    src = write_run(tmp_path / "run", tests=("throughput",), sizes=(64, 1518))
    originals = {name: (src / name).read_bytes() for name in ("Throughput.csv", "Latency.csv")}
    (src / "Latency.csv").write_text("damaged\n")
    report = make_report(src)
    assert report.out_dir == src and report.html == src / "report.html"
    for name, data in originals.items():
        assert (src / name).read_bytes() == data
    assert not (src / "Frame_Loss.csv").exists() and not (src / "Back_to_Back.csv").exists()


def test_every_graph_as_png_and_svg(full_run):
    _, _, report = full_run
    assert set(report.graphs) == ALL_GRAPHS
    for name in ALL_GRAPHS:
        png, svg = report.out_dir / "graphs" / f"{name}.png", report.out_dir / "graphs" / f"{name}.svg"
        assert report.graphs[name] == [png, svg]
        assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000, name
        text = svg.read_text()
        assert text.startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>"), name
        assert svg.stat().st_size > 10_000, name
    graphs = report.out_dir / "graphs"
    throughput = (graphs / "throughput_fps.svg").read_text()      # matplotlib keeps each text as a comment
    assert "theoretical maximum" in throughput and "measured throughput" in throughput
    latency = (graphs / "latency.svg").read_text()
    assert "bit forwarding (measured, calibrated)" in latency and "store and forward (derived, calibrated)" in latency
    distribution = (graphs / "latency_distribution.svg").read_text()
    assert all(f"{size} B (bins 64 ns" in distribution for size in (64, 512, 1518))
    assert "cumulative % of frames" in distribution and "p50" in distribution and "p99" in distribution
    assert "frame loss (%)" in (graphs / "frame_loss.svg").read_text()
    assert "capped (lower bound)" in (graphs / "back_to_back.svg").read_text()
    assert "throughput (% of line rate)" in (graphs / "throughput_pct.svg").read_text()
    assert "average latency (µs, calibrated)" in (graphs / "latency_vs_load.svg").read_text()


def test_axes_read_in_plain_numbers_with_separators(full_run):
    """No scientific offset ("1e6") floats beside a frames/s axis; ticks carry separators."""
    _, _, report = full_run
    fps = (report.out_dir / "graphs" / "throughput_fps.svg").read_text()
    assert "1,400,000" in fps or "1,250,000" in fps or "1,000,000" in fps
    assert not re.search(r"1e\+?6|×10", fps)


def test_a_wide_latency_histogram_is_drawn_in_at_most_40_bars(tmp_path):
    from wirespeed.graphs import COARSE_BINS, _histogram_cdf, pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    bins = [(20_000 + 256 * i, 1 + i % 3) for i in range(0, 2400, 3)]       # a comb 614 us wide
    _histogram_cdf(ax, bins, 256, sum(n for _, n in bins))
    assert 0 < len(ax.patches) <= COARSE_BINS
    assert abs(sum(p.get_height() for p in ax.patches) - 100) < 1e-6
    plt.close(fig)


def test_graphs_without_their_data_are_skipped(tmp_path):
    report = make_report(write_run(tmp_path / "tp", tests=("throughput",)))
    assert set(report.graphs) == {"throughput_fps", "throughput_mbps", "throughput_pct", "latency",
                                  "latency_distribution"}
    report = make_report(write_run(tmp_path / "b2b", tests=("back-to-back",)))
    assert set(report.graphs) == {"back_to_back"}
    assert sorted(p.name for p in (tmp_path / "b2b" / "graphs").iterdir()) == ["back_to_back.png",
                                                                               "back_to_back.svg"]


def test_html_has_every_table_value(full_run):
    """Every cell of the summary tables, as the report formats it (wirespeed.report.human)."""
    _, originals, report = full_run
    page = report.html.read_text()
    cells = 0
    for name in SUMMARY:
        rows = list(csv.reader(originals[name].decode().splitlines()))
        for column in rows[0]:
            assert f"<th>{escape(human.header(column))}</th>" in page, (name, column)
        for row in rows[1:]:
            for column, value in zip(rows[0], row):
                assert f"<td>{escape(human.cell(column, value))}</td>" in page, (name, column, value)
                cells += 1
    assert cells > 200
    for name in DETAIL_TABLES:          # named, not inlined
        assert name in page and "<th>bin low (µs)</th>" not in page
    assert "<th>control retries</th>" in page


def test_html_has_the_run_header_and_notes(full_run):
    src, _, report = full_run
    page = report.html.read_text()
    record = json.loads((src / "results.json").read_text())
    assert f"wirespeed {__version__}" in page
    assert "version 0.1.0 (0x000100), register map 0xf4988a5a" in page
    assert "router:rate=400k,queue=256,latency=20us" in page and "<td>sim</td>" in page
    assert record["notes"] and all(str(escape(note)) in page for note in record["notes"])
    assert "scaled down" in page and "file cal.json" in page
    assert "10 ms" in page and "64, 512, 1518" in page


def test_html_embeds_every_graph_and_nothing_external(full_run):
    _, _, report = full_run
    page = report.html.read_text()
    svgs = re.findall(r'<svg role="img" class="graph" aria-label="(\w+)"', page)
    assert sorted(svgs) == sorted(ALL_GRAPHS)
    assert not re.search(r"https?:", page, re.IGNORECASE)
    assert not re.search(r"""(src|href)\s*=\s*(?!["']?#)""", page, re.IGNORECASE)     # only the graphs' own ids
    assert "<style>" in page and "<link" not in page and "<script" not in page and "<img" not in page


def test_report_command(capsys, tmp_path):
    src = write_run(tmp_path / "run", tests=("throughput", "back-to-back"), sizes=(64, 1518))
    code, out, err = run(capsys, "report", str(src), "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert f"report: {tmp_path / 'out' / 'report.html'}" in err
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "out" / "graphs" / "back_to_back.svg").is_file()
    assert (tmp_path / "out" / "Back_to_Back.csv").read_bytes() == (src / "Back_to_Back.csv").read_bytes()


def assert_one_line_error(err, field, *words):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("content, words", [
    (None, ["results.json", "missing"]),
    ('{"format": "wirespeed-results/1", "target": ', ["results.json", "malformed JSON", "line 1"]),
    ("[1, 2]", ["results.json", "not a wirespeed results file"]),
    ('{"format": "wirespeed-results/1", "target": "sim"}', ["results.json", "not a valid wirespeed results file"]),
])
def test_bad_results_folder_is_one_line_and_exit_2(capsys, tmp_path, content, words):
    if content is not None:
        (tmp_path / "results.json").write_text(content)
    code, _, err = run(capsys, "report", str(tmp_path))
    assert code == 2
    assert_one_line_error(err, "RESULTS_DIR", str(tmp_path), *words)
    assert not (tmp_path / "report.html").exists()


def test_missing_folder_and_unwritable_out(capsys, tmp_path):
    code, _, err = run(capsys, "report", str(tmp_path / "nowhere"))
    assert code == 2
    assert_one_line_error(err, "RESULTS_DIR", str(tmp_path / "nowhere"), "no such directory", "results.json")
    src = write_run(tmp_path / "run", tests=("back-to-back",), sizes=(64,))
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "report", str(src), "--out", str(tmp_path / "file" / "sub"))
    assert code == 2
    assert_one_line_error(err, "--out", str(tmp_path / "file" / "sub"))
    with pytest.raises(ReportError):
        load_record(tmp_path / "file")


FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us"]


def test_rfc2544_run_ends_with_the_report(capsys, regmap, tmp_path):
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--dut", "a cable", "--out", str(tmp_path),
                           "--tests", "throughput,back-to-back", "--b2b-trials", "2", "--b2b-max-burst", "10", *FAST)
    assert code == 0, err
    assert f"report: {tmp_path / 'report.html'}" in err
    page = (tmp_path / "report.html").read_text()
    assert "<td>a cable</td>" not in page and "description=a cable" in page
    assert sorted(p.name for p in (tmp_path / "graphs").iterdir()) == sorted(
        f"{name}.{ext}" for name in ("throughput_fps", "throughput_mbps", "throughput_pct", "back_to_back")
        for ext in ("png", "svg"))


def test_a_report_failure_after_a_run_is_a_warning(capsys, regmap, tmp_path, monkeypatch):
    def broken(*args, **kw):
        raise RuntimeError("no fonts today")

    monkeypatch.setattr("wirespeed.report.make_report", broken)
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), *FAST)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "no fonts today" in warnings[0] and "wirespeed report" in warnings[0]
    assert "Traceback" not in err
    assert json.loads((tmp_path / "results.json").read_text())["status"] == "complete"
    assert not (tmp_path / "report.html").exists()


def test_report_of_a_copied_folder_needs_only_results_json(tmp_path):
    src = write_run(tmp_path / "run", tests=("throughput", "frame-loss"), sizes=(64,))
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(src / "results.json", lone / "results.json")
    report = make_report(lone)
    for name in ("Throughput.csv", "Latency.csv", "Frame_Loss.csv"):
        assert (lone / name).read_bytes() == (src / name).read_bytes()
    assert "frame_loss" in report.graphs


def test_rfc2544_records_title_operator_and_dut_facts(capsys, regmap, tmp_path):
    """--title, --operator and --dut-info, on the command line or in a --config file, are in
    results.json and the report."""
    config = tmp_path / "run.toml"
    config.write_text('[rfc2544]\ntitle = "Lab 3 router"\noperator = "A. Tester"\n'
                      'dut-info = ["model=RX-1", "serial=0042"]\n')
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "flags"), "--title",
                           "Flags", "--operator", "B", "--dut-info", "firmware=1.2", *FAST)
        assert code == 0, err
        code, _, err = run(capsys, "rfc2544", "--config", str(config), "--target", server.url, "--out",
                           str(tmp_path / "file"), *FAST)
        assert code == 0, err
    flags = json.loads((tmp_path / "flags" / "results.json").read_text())
    assert (flags["title"], flags["operator"], flags["dut_info"]) == ("Flags", "B", {"firmware": "1.2"})
    assert "<title>Flags</title>" in (tmp_path / "flags" / "report.html").read_text()
    filed = json.loads((tmp_path / "file" / "results.json").read_text())
    assert (filed["title"], filed["operator"], filed["dut_info"]) == ("Lab 3 router", "A. Tester",
                                                                      {"model": "RX-1", "serial": "0042"})
    page = (tmp_path / "file" / "report.html").read_text()
    assert "<td>A. Tester</td>" in page and "<tr><th>DUT serial</th><td>0042</td></tr>" in page


@pytest.mark.parametrize("value", ["model", "=x", "model=", "two words=x"])
def test_rfc2544_bad_dut_info_is_one_line(capsys, tmp_path, value):
    code, _, err = run(capsys, "rfc2544", "--out", str(tmp_path / "run"), "--dut-info", value, *FAST)
    assert code == 2
    assert_one_line_error(err, "--dut-info", "KEY=VALUE", repr(value))
    assert not (tmp_path / "run").exists()


def test_a_record_without_the_report_fields_loads(tmp_path):
    src = write_run(tmp_path / "run", tests=("back-to-back",), sizes=(64,))
    data = json.loads((src / "results.json").read_text())
    for key in ("title", "operator", "dut_info"):
        del data[key]
    (src / "results.json").write_text(json.dumps(data))
    record = load_record(src)
    assert (record.title, record.operator, record.dut_info) == (None, None, {})
    assert "<title>RFC 2544 report: router:rate=400k,queue=256,latency=20us</title>" in \
        make_report(src).html.read_text()
