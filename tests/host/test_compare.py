"""wirespeed compare: ministat's statistics, Student's t test, layout and plot, the inputs it
reads (plain files, CSV columns, results folders) and one-line errors."""

import csv
import io
import json
import math
import re
import statistics

import pytest
from clirun import run

from wirespeed.compare import (
    CONFIDENCES,
    CompareError,
    DataSet,
    format_report,
    load_set,
    plot_lines,
    relative,
    report_json,
    student_t,
    summarize,
)
from wirespeed.compare.stats import _T_TABLE

# The BSDRP lab "Forwarding performance lab of an IBM eServer 306m with Intel 82546GB": receiver
# results in kpps, 5 runs per configuration, and the ministat output published with them (the
# web page shows ministat's tabs as 8 spaces; the plot is 100 columns wide).
BSDRP_SETS = {
    "hw.em.txd-rxd=1024.hw.em.rx_proc_lim=100": [400.15, 400.10, 400.09, 399.88, 399.93],
    "hw.em.txd-rxd=4096.hw.em.rx_proc_lim=500": [405.29, 405.23, 406.25, 405.20, 404.98],
    "hw.em.txd-rxd=4096.hw.em.rx_proc_lim=-1": [410.52, 409.65, 410.31, 408.92, 410.52],
}
BSDRP_OUTPUT = """\
x hw.em.txd-rxd=1024.hw.em.rx_proc_lim=100
+ hw.em.txd-rxd=4096.hw.em.rx_proc_lim=500
* hw.em.txd-rxd=4096.hw.em.rx_proc_lim=-1
+----------------------------------------------------------------------------------------------------+
|x x                                              +                                                * |
|x x                                            + ++       +                        *      *     * * |
||AM                                           |__M_A___|                              |______A__M__||
+----------------------------------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   5        399.88        400.15        400.09        400.03    0.11768602
+   5        404.98        406.25        405.23        405.39     0.4948232
Difference at 95.0% confidence
        5.36 +/- 0.524533
        1.3399% +/- 0.131123%
        (Student's t, pooled s = 0.359653)
*   5        408.92        410.52        410.31       409.984    0.69363535
Difference at 95.0% confidence
        9.954 +/- 0.725551
        2.48831% +/- 0.181374%
        (Student's t, pooled s = 0.497484)
"""
FIREWALL_SETS = {"ipfw": [320.63, 320.13, 320.79, 320.18, 320.52],
                 "pf": [272.40, 274.78, 272.56, 275.65, 274.51]}
FIREWALL_OUTPUT = """\
x ipfw
+ pf
+----------------------------------------------------------------------------------------------------+
|+                                                                                                 xx|
|+   ++ +                                                                                          xx|
||__AM_|                                                                                           A||
+----------------------------------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   5        320.13        320.79        320.52        320.45    0.28644371
+   5         272.4        275.65        274.51        273.98     1.4337538
Difference at 95.0% confidence
        -46.47 +/- 1.50781
        -14.5015% +/- 0.47053%
        (Student's t, pooled s = 1.03385)
"""
BSDRP_OUTPUT, FIREWALL_OUTPUT = (re.sub(r"(?m)^ {8}", "\t", text) for text in (BSDRP_OUTPUT, FIREWALL_OUTPUT))


def sets_of(mapping):
    return [DataSet(name, tuple(values)) for name, values in mapping.items()]


def write_sets(directory, mapping):
    for name, values in mapping.items():
        (directory / name).write_text("".join(f"{v:.2f}\n" for v in values))
    return list(mapping)



# Independent Student's t: P(|T| < t) in closed form for integer degrees of freedom
# (Abramowitz & Stegun 26.7.3 and 26.7.4), inverted by bisection.

def t_two_sided_probability(t, df):
    theta = math.atan(t / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    if df % 2:
        term, total = c, (c if df > 1 else 0.0)
        for k in range(3, df - 1, 2):
            term *= c * c * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + s * total)
    term, total = 1.0, 1.0
    for k in range(2, df - 1, 2):
        term *= c * c * (k - 1) / k
        total += term
    return s * total


def t_quantile(probability, df):
    lo, hi = 0.0, 1000.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided_probability(mid, df) < probability else (lo, mid)
    return lo


def test_the_independent_t_quantiles_are_right():
    assert t_quantile(0.95, 1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile(0.95, 8) == pytest.approx(2.3060, abs=1e-4)
    assert t_quantile(0.99, 30) == pytest.approx(2.7500, abs=1e-4)


@pytest.mark.parametrize("df", range(1, 101))
def test_t_table_is_students_t(df):
    # ministat's columns 80..99 are two-sided quantiles to 3 decimals; its "99.5" column holds the
    # two-sided 99.8 % quantiles (t at 0.999), a few of them off in the third decimal
    for confidence in CONFIDENCES[:-1]:
        assert student_t(df, confidence) == pytest.approx(t_quantile(confidence / 100, df), abs=0.0005 + 1e-9)
    assert student_t(df, 99.5) == pytest.approx(t_quantile(0.998, df), abs=0.005)


def test_t_above_100_degrees_is_the_normal_limit():
    normal = statistics.NormalDist()
    for confidence, table in zip(CONFIDENCES, _T_TABLE[0]):
        p = 0.998 if confidence == 99.5 else confidence / 100
        assert table == pytest.approx(normal.inv_cdf(0.5 + p / 2), abs=0.0005)
        assert student_t(101, confidence) == student_t(10_000, confidence) == table
    assert student_t(100, 95) == 1.984


# Statistics --------------------------------------------------------------------------------------------


def test_summary_by_hand():
    s = summarize([4, 1, 3, 2])
    assert (s.n, s.min, s.max, s.avg) == (4, 1, 4, 2.5)
    assert s.median == 2.5                        # mean of the middle two
    assert s.var == pytest.approx(5 / 3)          # (2.25 + 0.25 + 0.25 + 2.25) / 3
    assert s.stddev == pytest.approx(1.2909944487)
    assert summarize([4, 1, 3, 2], "classic").median == 3     # the upper middle value
    odd = summarize([10, 30, 20])
    assert (odd.median, odd.avg, odd.stddev) == (20, 20, 10)


@pytest.mark.parametrize("values", [
    [400.15, 400.10, 400.09, 399.88, 399.93],
    [1488095.24, 1488095.2, 1487000.0, 1488090.5, 1401000.25, 1488095.24],
    [0.001, -5.5, 3e3, 42.0],
    [7.0, 7.0],
])
@pytest.mark.parametrize("style", ["current", "classic"])
def test_summary_agrees_with_the_statistics_module(values, style):
    s = summarize(values, style)
    assert s.n == len(values)
    assert (s.min, s.max) == (min(values), max(values))
    assert s.avg == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert s.stddev == pytest.approx(statistics.stdev(values), rel=1e-6, abs=1e-9)
    expected_median = statistics.median(values) if style == "current" else statistics.median_high(values)
    assert s.median == expected_median


def test_one_value_has_no_stddev():
    s = summarize([5.0])
    assert (s.n, s.median, s.avg) == (1, 5.0, 5.0) and math.isnan(s.stddev)


def test_relative_is_students_t_with_pooled_s():
    a, b = FIREWALL_SETS["ipfw"], FIREWALL_SETS["pf"]
    for confidence in CONFIDENCES:
        r = relative(summarize(b), summarize(a), confidence)
        pooled = math.sqrt((4 * statistics.variance(a) + 4 * statistics.variance(b)) / 8)
        t = round(t_quantile(0.998 if confidence == 99.5 else confidence / 100, 8), 3)
        assert r.df == 8 and r.t == pytest.approx(t, abs=0.005)
        assert r.pooled_s == pytest.approx(pooled)
        assert r.difference == pytest.approx(statistics.fmean(b) - statistics.fmean(a))
        assert r.interval == pytest.approx(r.t * pooled * math.sqrt(1 / 5 + 1 / 5))
        assert r.difference_pct == pytest.approx(r.difference * 100 / statistics.fmean(a))
        assert r.significant


def test_relative_percent_interval_of_both_styles():
    a, b = [10.0, 11, 12, 13, 14], [12.5, 13.5, 14.5, 15.5, 16.5]     # both variance 2.5
    classic = relative(summarize(b, "classic"), summarize(a, "classic"), 95, "classic")
    current = relative(summarize(b), summarize(a), 95)
    assert classic.interval == current.interval == pytest.approx(2.306)   # t * sqrt(2.5) * sqrt(2/5) = t
    assert classic.interval_pct == pytest.approx(2.306 * 100 / 12)
    # current ministat: t * sqrt((4 va + 4 vb (14.5/12)^2) * 10 / (25 * 8)) relative to 12
    assert current.interval_pct == pytest.approx(2.306 * math.sqrt((10 + 10 * (14.5 / 12) ** 2) * 0.05) * 100 / 12)


# Layout -------------------------------------------------------------------------------------------------


def test_reproduces_the_bsdrp_lab_ministat_output():
    assert format_report(sets_of(BSDRP_SETS), width=100, style="classic") == BSDRP_OUTPUT
    assert format_report(sets_of(FIREWALL_SETS), width=100, style="classic") == FIREWALL_OUTPUT


def test_current_style_differs_from_the_lab_only_in_the_percent_interval():
    current = format_report(sets_of(FIREWALL_SETS), width=100).splitlines()
    classic = FIREWALL_OUTPUT.splitlines()
    assert [i for i, (a, b) in enumerate(zip(current, classic)) if a != b] == [len(classic) - 2]
    ipfw, pf = FIREWALL_SETS["ipfw"], FIREWALL_SETS["pf"]
    ma, mb = statistics.fmean(ipfw), statistics.fmean(pf)
    re_ = 2.306 * math.sqrt((4 * statistics.variance(pf) + 4 * statistics.variance(ipfw) * mb * mb / (ma * ma))
                            * 10 / (25 * 8))
    assert current[-2] == f"\t{(mb - ma) * 100 / ma:g}% +/- {re_ * 100 / ma:g}%"


def test_difference_lines_at_each_confidence():
    # pooled s = sqrt(2.5), so the interval is t(8 df) itself; the difference is 2.5
    sets = [DataSet("a", (10.0, 11, 12, 13, 14)), DataSet("b", (12.5, 13.5, 14.5, 15.5, 16.5))]
    expected = {80: "1.397", 90: "1.86", 95: "2.306", 98: None, 99: None, 99.5: None}
    for confidence, interval in expected.items():
        tail = format_report(sets, confidence, style="classic", plot=False).splitlines()[5:]
        if interval is None:
            assert tail == [f"No difference proven at {confidence:.1f}% confidence"]
        else:
            assert tail == [f"Difference at {confidence:.1f}% confidence",
                            f"\t2.5 +/- {interval}",
                            f"\t20.8333% +/- {float(interval) * 100 / 12:g}%",
                            "\t(Student's t, pooled s = 1.58114)"]


def test_table_layout():
    text = format_report([DataSet("one", (1.0, 2.0, 3.0)), DataSet("big", (123456789.0, 2e-5, 1.5))],
                         tests=False)
    assert text.splitlines() == [
        "x one",
        "+ big",
        "    N           Min           Max        Median           Avg        Stddev",
        "x   3             1             3             2             2             1",
        "+   3         2e-05 1.2345679e+08           1.5      41152264      71277810",
    ]


def test_plot_of_two_sets_far_apart():
    # range 0..10 on 11 columns: one column per unit
    sets = [DataSet("x", (0.0, 1, 2)), DataSet("+", (8.0, 9, 10))]
    assert format_report(sets, width=11).splitlines()[2:6] == [
        "+-----------+",
        "|xxx     +++|",
        "||A|     |A||",
        "+-----------+",
    ]


def test_plot_of_overlapping_sets():
    # a column holding points of both sets shows ministat's OR of their indices: x|+ = '*';
    # the second set's bar keeps the first's marks where they overlap
    summaries = [summarize([0.0, 2, 4]), summarize([2.0, 4, 6])]
    assert plot_lines(summaries, [(0.0, 2, 4), (2.0, 4, 6)], width=7) == [
        "+-------+",
        "|x * * +|",
        "||_|_A_||",
        "+-------+",
    ]
    assert plot_lines(summaries, [(0.0, 2, 4), (2.0, 4, 6)], width=7, separate_bars=True)[2:4] == [
        "||_A_|  |",
        "|  |_A_||",
    ]


def test_plot_stacks_equal_points():
    # range 0..8 on 9 columns; a set without spread has its bar collapsed onto its average
    sets = [DataSet("x", (0.0, 4, 8)), DataSet("+", (2.0, 2, 2))]
    assert format_report(sets, width=9).splitlines()[2:8] == [
        "+---------+",
        "|  +      |",
        "|  +      |",
        "|x + x   x|",
        "||_A_A___||",
        "+---------+",
    ]


def test_plot_height_follows_the_last_set_like_ministat():
    # ministat sizes the plot by the last set plotted: two of the first set's points are not shown
    sets = [DataSet("x", (2.0, 2, 2)), DataSet("+", (0.0, 4, 8))]
    assert format_report(sets, width=9).splitlines()[2:6] == [
        "+---------+",
        "|+ x +   +|",
        "||_A_A___||",
        "+---------+",
    ]


def test_zero_span_has_no_plot():
    text = format_report([DataSet("a", (5.0, 5, 5)), DataSet("b", (5.0, 5, 5))])
    assert "[no plot, span is zero width]" in text.splitlines()
    assert text.endswith("No difference proven at 95.0% confidence\n")


def test_json_report():
    out = report_json(sets_of(FIREWALL_SETS), 99)
    assert [s["symbol"] for s in out["sets"]] == ["x", "+"]
    assert out["sets"][1]["n"] == 5 and out["sets"][1]["median"] == 274.51
    (cmp,) = out["comparisons"]
    assert cmp["significant"] and cmp["baseline"] == "ipfw" and cmp["df"] == 8 and cmp["t"] == 3.355
    assert cmp["difference"] == pytest.approx(-46.47)
    json.dumps(out, allow_nan=False)


# Inputs -------------------------------------------------------------------------------------------------


def write_throughput_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["frame_size_B", "offered_fps", "throughput_Mbps"])
        w.writerows(rows)


def test_plain_file_with_comments_and_columns(tmp_path):
    (tmp_path / "a").write_text("# kpps per run\n400.15\n\n 400.10  # rebooted\n4.0e2\n")
    assert load_set(str(tmp_path / "a")).values == (400.15, 400.10, 400.0)
    (tmp_path / "b").write_text("1 10\n2 20\n")
    assert load_set(str(tmp_path / "b"), column="2").values == (10.0, 20.0)
    assert load_set("-", stdin=io.StringIO("3\n# c\n4\n")).values == (3.0, 4.0)


def test_csv_column_and_where(tmp_path):
    write_throughput_csv(tmp_path / "Throughput.csv", [[64, 400000.5, 204.8], [128, 399000, 408.6]])
    path = str(tmp_path / "Throughput.csv")
    assert load_set(path, "offered_fps").values == (400000.5, 399000.0)
    assert load_set(path, "offered_fps", [("frame_size_B", "64")]).values == (400000.5,)
    assert load_set(path, "throughput_Mbps", [("frame_size_B", "128.0")]).values == (408.6,)
    (tmp_path / "excel.csv").write_bytes(b"\xef\xbb\xbfrun,kpps\r\n1,400.5\r\n2,401\r\n")   # BOM, CRLF
    assert load_set(str(tmp_path / "excel.csv"), "kpps").values == (400.5, 401.0)


def test_results_folders_and_patterns(tmp_path):
    for i, rate in enumerate([400.0, 401.0, 402.0]):
        (tmp_path / "tuned" / f"run{i}").mkdir(parents=True)
        write_throughput_csv(tmp_path / "tuned" / f"run{i}" / "Throughput.csv",
                             [[64, rate, 1.0], [1518, 81274.38, 2.0]])
    one = load_set(str(tmp_path / "tuned" / "run1"), "offered_fps", [("frame_size_B", "64")])
    assert one.values == (401.0,)
    pooled = load_set(str(tmp_path / "tuned"), "offered_fps", [("frame_size_B", "64")])
    assert sorted(pooled.values) == [400.0, 401.0, 402.0] and len(pooled.sources) == 3
    pattern = load_set(str(tmp_path / "tuned" / "run[01]"), "offered_fps", [("frame_size_B", "64")])
    assert pattern.values == (400.0, 401.0)


def test_results_json_gives_its_throughput_figures(tmp_path):
    from wirespeed.results import RunRecord
    from wirespeed.rfc2544.suite.throughput import throughput_csv

    record = RunRecord.model_validate({
        "target": "sim", "dut": {"model": "router"},
        "gateware": {"magic": 0x57535044, "version": 0x000100, "map_hash": 1, "clk_hz": 125_000_000, "n_ports": 2},
        "tests": [{"name": "throughput", "parameters": {"frame_sizes": [64], "trial_duration_ns": 10_000_000,
                                                         "wait_ns": 1_000_000}}]})
    (tmp_path / "results.json").write_text(record.model_dump_json())
    assert throughput_csv(record.results_of("throughput")).startswith("frame_size_B,offered_fps")
    with pytest.raises(CompareError, match="header row only"):
        load_set(str(tmp_path), "offered_fps")
    with pytest.raises(CompareError, match="no column 'bogus'"):
        load_set(str(tmp_path / "results.json"), "bogus")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(CompareError, match="not a wirespeed results.json"):
        load_set(str(tmp_path / "other.json"), "offered_fps")


# The command --------------------------------------------------------------------------------------------


def test_command_prints_ministat_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    names = write_sets(tmp_path, BSDRP_SETS)
    code, out, err = run(capsys, "compare", "--classic", "-w", "100", *names)
    assert (code, out, err) == (0, BSDRP_OUTPUT, "")
    code, out, _ = run(capsys, "compare", *names)
    assert code == 0 and out.splitlines()[3] == "+" + "-" * 74 + "+"
    code, out, _ = run(capsys, "compare", "-c", "99.5", "--json", *names)
    data = json.loads(out)
    assert code == 0 and data["confidence_pct"] == 99.5 and [c["t"] for c in data["comparisons"]] == [4.499] * 2


def test_command_compares_csv_columns(tmp_path, capsys):
    for name, rates in {"a": [400.0, 401.0, 399.0], "b": [500.0, 501.0, 499.5]}.items():
        for i, rate in enumerate(rates):
            (tmp_path / name / str(i)).mkdir(parents=True)
            write_throughput_csv(tmp_path / name / str(i) / "Throughput.csv", [[64, rate, 0], [128, 1, 0]])
    code, out, err = run(capsys, "compare", "--column", "offered_fps", "--where", "frame_size_B=64", "-A",
                         tmp_path / "a", tmp_path / "b")
    assert code == 0 and err == ""
    assert out.splitlines()[3] == "x   3           399           401           400           400             1"
    assert out.splitlines()[5] == "Difference at 95.0% confidence"


@pytest.mark.parametrize("files, argv, field, message", [
    ({}, ["missing"], "missing", "no such file or folder"),
    ({"a": "1\n2\nabc\n"}, ["a"], "a", "line 3: not a number: 'abc'"),
    ({"a": "1\n2\n1_000\n"}, ["a"], "a", "line 3: not a number"),
    ({"a": "# only a comment\n\n"}, ["a"], "a", "no numbers"),
    ({"a": "1 10\n2\n"}, ["a", "--column", "2"], "a", "line 2: no column 2 in '2'"),
    ({"a": "1 10\n2\n"}, ["a", "--column", "offered_fps"], "--column", "a column number (1, 2, ...)"),
    ({"a": "1\n2\n"}, ["a", "--where", "x=1"], "--where", "only for CSV files and results folders"),
    ({"d/x": "1\n"}, ["d"], "d", "a folder without Throughput.csv or results.json"),
    ({"a": "1\n2\n", "b": "5\n"}, ["a", "b"], "b", "1 value; a difference needs at least 2"),
    ({"t.csv": "frame_size_B,offered_fps\n64,1\n"}, ["t.csv", "--column", "fps"], "--column",
     "no column 'fps' in t.csv; columns: frame_size_B, offered_fps"),
    ({"t.csv": "frame_size_B,offered_fps\n64,1\n"}, ["t.csv"], "--column", "required for CSV input t.csv"),
    ({"t.csv": "frame_size_B,offered_fps\n64,1\n"}, ["t.csv", "--column", "offered_fps", "--where", "size=64"],
     "--where", "no column 'size'"),
    ({"t.csv": "frame_size_B,offered_fps\n64,1\n"}, ["t.csv", "--column", "offered_fps", "--where", "64"],
     "--where", "NAME=VALUE"),
    ({"t.csv": "frame_size_B,offered_fps\n64,1\n"}, ["t.csv", "-C", "offered_fps", "--where", "frame_size_B=128"],
     "--where", "no row of t.csv has frame_size_B=128 (frame_size_B has 64)"),
    ({"t.csv": "frame_size_B,offered_fps\n64,\n"}, ["t.csv", "-C", "offered_fps"], "t.csv",
     "line 2: column offered_fps is empty"),
    ({"a": "1\n2\n"}, ["a", "-c", "97"], "--confidence", "one of 80, 90, 95, 98, 99, 99.5"),
    ({"a": "1\n2\n"}, ["a", "--width", "2"], "--width", ""),
    ({"a": "1\n2\n"}, ["a"] * 8, "sets", "at most 7 data sets"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, files, argv, field, message):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    code, out, err = run(capsys, "compare", *argv)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"wirespeed: error: {field}: {message}"), lines[0]
