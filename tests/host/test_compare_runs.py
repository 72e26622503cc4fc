"""wirespeed compare --graph: several runs (sets of repeats) on shared axes, one HTML page."""

import re

import pytest
from fakes import make_trial
from test_report import header, size_result

from wirespeed.cli import main
from wirespeed.compare.runs import Series, load_runs, ministat_tables, throughput_series
from wirespeed.ethernet import line_rate_fps
from wirespeed.results import ResultsWriter
from wirespeed.rfc2544.suite.frame_loss import FrameLossPoint, FrameLossResult

SIZES = (64, 512, 1518)
#: throughput of each set's repeats, frames/s (the same at every size, for the test)
RATES = {"q64": (300_000, 301_000, 302_000), "q256": (400_000, 402_000, 404_000), "q1024": (500_000, 505_000, 510_000)}


def write_run(out_dir, rate, loss_at_90):
    writer = ResultsWriter(out_dir, header(("throughput", "frame-loss"), SIZES))
    for size in SIZES:
        fail = make_trial(size, line_rate_fps(size), 1000, 300, latency_ns=(20_000, rate // 10, 40_000))
        ok = make_trial(size, rate, 4000, 4000, latency_ns=(20_000, rate // 10, 40_000))
        for t in (fail, ok):
            writer.record_trial(t, test="throughput")
        writer.record_result("throughput", size_result(size, rate, [fail, ok]))
        line = line_rate_fps(size)
        points = [FrameLossPoint(offered_pct=pct, offered_fps=line * pct / 100,
                                 trial=make_trial(size, line * pct / 100, 1000, received, duration_ns=1_000_000))
                  for pct, received in ((100, 700), (90, 1000 - loss_at_90), (80, 1000), (70, 1000))]
        writer.record_result("frame-loss", FrameLossResult(frame_size=size, theoretical_max_fps=line, settled=True,
                                                         points=points))
    writer.finish("complete")


@pytest.fixture(scope="module")
def three_sets(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    for i, (name, rates) in enumerate(RATES.items()):
        for k, rate in enumerate(rates):
            write_run(base / name / f"run{k}", rate, loss_at_90=100 - 40 * i)
    return base


def test_a_set_pools_its_repeats_per_frame_size(three_sets):
    series = throughput_series(load_runs(str(three_sets / "q256")))
    assert series.label == "q256"
    assert series.points() == [(s, 402_000, 400_000, 404_000) for s in SIZES]


def test_a_single_run_folder_is_a_set_of_one(three_sets):
    run = load_runs(str(three_sets / "q64" / "run1" / "results.json"), "one")
    assert (run.label, len(run.records)) == ("one", 1)
    assert throughput_series(run).points()[0] == (64, 301_000, 301_000, 301_000)


def test_a_ministat_table_per_frame_size(three_sets):
    runs = [load_runs(str(three_sets / name)) for name in RATES]
    tables = ministat_tables(runs)
    assert list(tables) == list(SIZES)
    text = tables[512]
    assert "x q64 512" in text and "+ q256 512" in text and "* q1024 512" in text
    # N, min, max of each set, and a significant difference of the later sets against the first
    assert re.search(r"x\s+3\s+300000\s+302000", text)
    assert re.search(r"\*\s+3\s+500000\s+510000", text)
    assert text.count("Difference at 95.0% confidence") == 2


def test_compare_graph_writes_one_page_with_a_line_per_set(three_sets, tmp_path, capsys):
    out = tmp_path / "cmp"
    sets = [str(three_sets / name) for name in RATES]
    assert main(["compare", *sets, "--graph", str(out), "--labels", "small,medium,large"]) == 0
    assert f"wrote {out / 'compare.html'}" in capsys.readouterr().out
    page = (out / "compare.html").read_text()
    # one offline file: graphs inline, nothing fetched
    assert "<img " not in page and not re.search(r'(src|href)="(https?:)?//', page)
    assert page.count("<svg") == 4
    for name in ("compare_throughput", "compare_throughput_pct", "compare_latency", "compare_frame_loss"):
        assert (out / f"{name}.png").stat().st_size > 1000 and (out / f"{name}.svg").is_file()
    for label in ("small", "medium", "large"):
        assert f"<td>{label}</td>" in page
    # the throughput table: each set's mean and % of line rate
    assert "402,000" in page and f"{100 * 402_000 / line_rate_fps(1518):.2f} %" in page
    assert page.count("<pre>") == 3
    # ids of the inlined graphs do not collide
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_the_overlay_draws_one_line_per_set(three_sets, tmp_path):
    from wirespeed.compare.overlay import draw_compare
    from wirespeed.graphs import pyplot

    runs = [load_runs(str(three_sets / name)) for name in RATES]
    plt = pyplot()
    seen = {}
    real_save = plt.Figure.savefig

    def spy(fig, path, *args, **kwargs):
        seen.setdefault(path.stem, [ax.get_legend_handles_labels()[1] for ax in fig.axes])
        return real_save(fig, path, *args, **kwargs)

    plt.Figure.savefig = spy
    try:
        draw_compare(runs, tmp_path)
    finally:
        plt.Figure.savefig = real_save
    assert seen["compare_throughput"][0] == ["line rate (1 Gb/s)", "q64", "q256", "q1024"]
    assert seen["compare_latency"][0] == ["q64", "q256", "q1024"]
    assert [labels for labels in seen["compare_frame_loss"]] == [["q64", "q256", "q1024"]] * 3


@pytest.mark.parametrize("argv, field", [
    (["--labels", "a,b"], "--labels"),
    (["--labels", "a,,c"], "--labels"),
])
def test_bad_labels_are_one_line_errors(three_sets, tmp_path, capsys, argv, field):
    sets = [str(three_sets / name) for name in RATES]
    code = main(["compare", *sets, "--graph", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and field in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_folder_without_runs_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code = main(["compare", str(tmp_path / "empty"), "--graph", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "holds no results.json" in err and "Traceback" not in err


def test_labels_need_graph(three_sets, capsys):
    code = main(["compare", str(three_sets / "q64"), "--labels", "a"])
    assert code == 2 and "--labels" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_graph_as_pdf(three_sets, tmp_path, capsys):
    from pypdf import PdfReader

    out = tmp_path / "cmp"
    sets = [str(three_sets / name) for name in RATES]
    assert main(["compare", *sets, "--graph", str(out), "--pdf", "--paper", "letter"]) == 0
    assert f"{out / 'compare.pdf'}" in capsys.readouterr().out
    text = " ".join(page.extract_text() for page in PdfReader(out / "compare.pdf").pages)
    for name in RATES:
        assert name in text
    assert "Difference at 95.0% confidence" in text and "402,000" in text


def test_pdf_needs_graph(three_sets, capsys):
    code = main(["compare", str(three_sets / "q64"), "--pdf"])
    assert code == 2 and "--pdf" in capsys.readouterr().err



def test_equal_runs_compare_as_equal_and_stay_within_their_range(tmp_path):
    """Five runs at 512-byte line rate: their throughput as Throughput.csv has it, so that
    --graph's statistics are those of ``compare`` on the CSVs (stddev 0, no plot of a zero
    span), and the mean of equal values drawn without a negative error bar (the floating-point
    mean of five 234,962.4060150376 is 234,962.40601503762)."""
    rate = line_rate_fps(512)
    for name in ("a", "b"):
        for k in range(5):
            write_run(tmp_path / name / f"run{k}", rate, loss_at_90=0)
    runs = [load_runs(str(tmp_path / name)) for name in ("a", "b")]
    table = ministat_tables(runs)[512]
    assert "span is zero width" in table and "No difference proven" in table
    assert table.splitlines()[-2].split()[-1] == "0", table
    series = Series("line rate")
    for _ in range(5):
        series.add(512, rate)
    (_, mean, low, high), = series.points()
    assert low <= mean <= high
