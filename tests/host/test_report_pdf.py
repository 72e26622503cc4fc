"""The report as a deliverable: report.html and report.pdf of a six-test run (RFC 2544 26.1 to
26.6), every value of every CSV table it shows found in the PDF's text after the report's own
formatting (wirespeed.report.human), the title, operator and DUT facts in both, and the
summary, the sections and the appendix in that order."""

import csv
import io
import re
import shutil

import pytest
from pypdf import PdfReader
from sixtests import DUT_INFO, OPERATOR, TESTS, TITLE, write_six
from test_report import assert_one_line_error, run

from wirespeed.report import DETAIL_TABLES, make_report
from wirespeed.report.human import EMPTY, cell, header
from wirespeed.report.view import MAX_COLUMNS, flatten, split_columns

#: the tests that render the six-test report twice as PDF (WeasyPrint draws every graph: minutes on a busy machine)
SIX = pytest.mark.slow
SHOWN = ["Throughput.csv", "Latency.csv", "Frame_Loss.csv", "Back_to_Back.csv", "System_Recovery.csv", "Reset.csv",
         "Trials.csv"]


def pdf_text(path):
    """The PDF's text with every blank removed: a cell wrapped over two lines reads as one word."""
    return re.sub(r"\s+", "", "".join(page.extract_text() for page in PdfReader(path).pages))


@pytest.fixture(scope="module")
def six(tmp_path_factory):
    base = tmp_path_factory.mktemp("six")
    src = write_six(base / "run")
    a4 = make_report(src, base / "a4", pdf=True)
    letter = make_report(src, base / "letter", pdf=True, paper="letter", title="Letter copy",
                         dut_info={"firmware": "4.2.2"})
    return src, a4, letter


@pytest.mark.parametrize("column, text, shown", [
    ("throughput_fps", "1488095.24", "1,488,095.24"),
    ("offered_fps", "400000.00", "400,000.00"),
    ("corrected_buffer_time_us", "-2106.976", "-2,106.976"),
    ("frames_sent", "1489", "1,489"),
    ("min_ns", "26680", "26.680"),                   # nanoseconds shown as microseconds, nothing rounded away
    ("avg_ns", "29800.5", "29.8005"),
    ("timestamp_b_ns", "14345783", "14,345.783"),
    ("frame_size_B", "1518", "1518"),                # identifiers as written
    ("repetition", "mean", "mean"),
    ("definition", "bit_forwarding", "bit forwarding"),
    ("search", "bisect", "bisect"),
    ("timestamp_b_ns", "", EMPTY),
])
def test_the_formatting_rule(column, text, shown):
    assert cell(column, text) == shown


def test_column_names_for_people():
    assert header("throughput_Mbps") == "throughput (Mb/s)"
    assert header("p99.9_ns") == "p99.9 (µs)"
    assert header("pct_line_rate") == "% of line rate"
    assert header("frame_size_B") == "frame size (B)"
    assert header("capped") == "capped"


def test_parameters_read_as_text():
    """The appendix's tables: durations with their unit, no JSON, no Python reprs."""
    calibration = {"source": "file cal.json", "pipeline_delay_ns": {"0->1": {"64": 200, "1518": 208}},
                   "trial_duration_ns": 10_000_000, "rate_fps": 1488095.24, "step_pct": 0.1,
                   "sizes": [64, 1518], "hook": None, "settled": True}
    assert flatten(calibration) == [
        ("source", "file cal.json"), ("pipeline delay › 0->1", "64: 200 ns; 1518: 208 ns"),
        ("trial duration", "10 ms"), ("rate (fps)", "1,488,095.24"), ("step (%)", "0.1"), ("sizes", "64, 1518"),
        ("hook", EMPTY), ("settled", "yes")]


def test_wide_tables_are_split_repeating_the_key_columns():
    columns = ["frame_size_B"] + [f"c{i}" for i in range(20)] + ["definition"]
    rows = [[str(i) for i in range(len(columns))]]
    parts = split_columns(columns, rows)
    assert all(len(cols) <= MAX_COLUMNS and cols[:2] == ["frame_size_B", "definition"] for cols, _ in parts)
    assert [c for cols, _ in parts for c in cols[2:]] == [f"c{i}" for i in range(20)]
    assert parts[0][1] == [["0", "21", *map(str, range(1, MAX_COLUMNS - 1))]]


@SIX
@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_every_value_of_every_table_is_in_the_pdf(six, paper):
    src, a4, letter = six
    report = {"a4": a4, "letter": letter}[paper]
    text = pdf_text(report.pdf)
    for name in SHOWN:
        rows = list(csv.reader(io.StringIO((src / name).read_text())))
        assert len(rows) > 1, name
        for row in rows[1:]:
            for column, value in zip(rows[0], row):
                shown = re.sub(r"\s+", "", cell(column, value))
                assert shown in text, (name, column, value, shown)
        for column in rows[0]:
            assert re.sub(r"\s+", "", header(column)) in text, (name, column)


@SIX
def test_the_pdf_is_a_pdf_of_the_paper_asked(six):
    _, a4, letter = six
    sizes = {path: PdfReader(path).pages[0].mediabox for path in (a4.pdf, letter.pdf)}
    assert [round(float(sizes[a4.pdf].width)), round(float(sizes[a4.pdf].height))] == [595, 842]
    assert [round(float(sizes[letter.pdf].width)), round(float(sizes[letter.pdf].height))] == [612, 792]


@SIX
def test_summary_first_then_one_section_per_test_then_the_appendix(six):
    _, a4, _ = six
    page = a4.html.read_text()
    order = ["<h2>Summary</h2>", "Verdicts", "<h2>Throughput", "<h2>Latency", "<h2>Frame loss rate",
             "<h2>Back-to-back frames", "<h2>System recovery", "<h2>Reset", "Parameters, notes and definitions",
             "<h3>Notes</h3>", "Parameters: throughput", "<h3>Definitions</h3>", "<h3>Calibration</h3>",
             "<h3>Every trial (Trials.csv)</h3>", "<footer>"]
    places = [page.find(mark) for mark in order]
    assert -1 not in places and places == sorted(places), dict(zip(order, places))
    summary = page[places[0]:places[2]]
    for column in ("throughput (fps)", "% of line rate", "L1 (Mb/s)", "L2 (Mb/s)", "latency avg, bit forwarding (µs)",
                   "latency max, store and forward (µs)", "loss at the top load (%)", "back-to-back (frames)",
                   "recovery time (µs)", "reset time (µs)"):
        assert f"<th>{column}</th>" in summary, column
    assert "<td>400,000.00</td><td>26.880</td><td>268.800</td><td>204.800</td>" in summary   # 64 B: L1 = L2 x 84/64
    assert "3 of 4 failed" in summary and "<td>FAIL</td>" in summary
    assert "<td>≥ 1,000.0</td>" in summary and "<td>22.0</td>" in summary     # frames; 1518 B capped: a lower bound
    words = re.sub(r"<[^>]+>", " ", re.sub(r"<svg .*?</svg>", "", page.split("</head>")[1], flags=re.DOTALL))
    assert "{" not in words and "None" not in words and "': " not in words     # no JSON or Python reprs
    assert len(TESTS) == 5 and page.count('<section class="test"') == 6     # 26.2 is the throughput test's


@SIX
def test_title_operator_and_dut_facts(six):
    _, a4, letter = six
    page = a4.html.read_text()
    assert f"<title>{TITLE}</title>" in page and f"<h1>{TITLE}</h1>" in page
    assert f"<td>{OPERATOR}</td>" in page
    for key, value in DUT_INFO.items():
        assert f"<tr><th>DUT {key}</th><td>{value}</td></tr>" in page
    text = pdf_text(a4.pdf)
    assert all(re.sub(r"\s+", "", v) in text for v in (TITLE, OPERATOR, *DUT_INFO.values()))
    other = letter.html.read_text()         # the report's options over the run's
    assert "<title>Letter copy</title>" in other and "<td>4.2.2</td>" in other and "<td>XS-1930</td>" in other


@SIX
def test_graphs_inline_as_svg_and_nothing_external(six):
    _, a4, _ = six
    page = a4.html.read_text()
    assert page.count("<svg ") == len(a4.graphs) == 8        # all but rate_over_time: fake trials have no timeline
    assert "<img" not in page and "<script" not in page and "<link" not in page
    assert not re.search(r"https?:", page, re.IGNORECASE)
    assert not re.search(r"""(src|href)\s*=\s*(?!["']?#)""", page, re.IGNORECASE)
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    for name in a4.graphs:                  # the files in graphs/ stay as matplotlib wrote them
        assert (a4.out_dir / "graphs" / f"{name}.svg").read_text().startswith("<?xml")
    for name in DETAIL_TABLES:
        assert name in page


@SIX
def test_report_command_pdf_and_bad_input(capsys, six, tmp_path):
    src, _, _ = six
    code, _, err = run(capsys, "report", str(src), "--out", str(tmp_path / "out"), "--pdf", "--paper", "letter",
                       "--title", "From the CLI", "--operator", "K", "--dut-info", "serial=X1")
    assert code == 0, err
    assert f"pdf: {tmp_path / 'out' / 'report.pdf'}" in err
    assert (tmp_path / "out" / "report.pdf").read_bytes().startswith(b"%PDF-")
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<title>From the CLI</title>" in page and "<td>X1</td>" in page
    code, _, err = run(capsys, "report", str(src), "--out", str(tmp_path / "x"), "--dut-info", "model")
    assert code == 2
    assert_one_line_error(err, "--dut-info", "KEY=VALUE", "'model'")
    code, _, err = run(capsys, "report", str(src), "--out", str(tmp_path / "x"), "--paper", "A5")
    assert code == 2 and "--paper" in err and "A5" in err and "Traceback" not in err


@SIX
def test_a_format_1_folder_reports_to_pdf(capsys, tmp_path):
    from test_format1 import FOLDER

    folder = tmp_path / "run"
    shutil.copytree(FOLDER, folder)
    code, _, err = run(capsys, "report", str(folder), "--pdf")
    assert code == 0, err
    text = pdf_text(folder / "report.pdf")
    for name in ("Throughput.csv", "Back_to_Back.csv", "Frame_Loss.csv"):
        rows = list(csv.reader(io.StringIO((folder / name).read_text())))
        for row in rows[1:]:
            for column, value in zip(rows[0], row):
                assert re.sub(r"\s+", "", cell(column, value)) in text, (name, column, value)


def test_report_pdf_counts_as_a_run_file(tmp_path):
    """A folder holding a report.pdf is not an empty --out: a new run would leave it beside its own."""
    from wirespeed.outdir import run_files

    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.7\n")
    assert run_files(tmp_path) == ["report.pdf"]
