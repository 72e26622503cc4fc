"""``wirespeed report`` (tables, graphs and report.html from a results folder) and ``wirespeed
compare`` (ministat statistics of repeated runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .. import parse
from .app import app
from .common import InputError, dut_info_option, err_console, parser


@app.command()
def report(
    results_dir: Annotated[Path, typer.Argument(metavar="RESULTS_DIR",
                                                help="A results folder (with results.json) from 'wirespeed "
                                                     "rfc2544'.")],
    out: Annotated[Path | None, typer.Option(help="Where to write the tables, graphs/ and report.html "
                                                  "(default: RESULTS_DIR).")] = None,
    pdf: Annotated[bool, typer.Option("--pdf", help="Also write report.pdf (WeasyPrint).")] = False,
    paper: Annotated[Any, typer.Option(parser=parser(parse.choice("A4", "letter")), metavar="A4|letter",
                                       help="The PDF's paper size.")] = "A4",
    title: Annotated[str | None, typer.Option(metavar="TEXT", help="The report's title (default: the "
                                                                   "run's --title).")] = None,
    operator: Annotated[str | None, typer.Option(metavar="NAME", help="Who ran the test (default: the "
                                                                      "run's --operator).")] = None,
    dut_info: Annotated[list[str] | None, typer.Option(
        metavar="KEY=VALUE", help="A DUT fact: model=, serial=, firmware=... (repeatable; over the run's).")] = None,
) -> None:
    """Regenerate the CSV tables, the graphs (graphs/*.png, *.svg) and a one-file report.html (and
    with --pdf report.pdf) from a results folder's results.json."""
    from ..report import ReportError, make_report

    info = dut_info_option(dut_info)
    try:
        made = make_report(results_dir, out, title=title, operator=operator, dut_info=info, pdf=pdf, paper=paper)
    except ReportError as exc:
        raise InputError(exc.field, str(exc)) from None
    except OSError as exc:
        raise InputError("--out", f"cannot write to {out or results_dir}: {exc.strerror or exc}", exit_code=1) from None
    err_console.print(f"tables: {', '.join(str(p) for p in made.tables.values())}", highlight=False, soft_wrap=True)
    err_console.print(f"graphs: {', '.join(str(p) for ps in made.graphs.values() for p in ps)}", highlight=False,
                      soft_wrap=True)
    err_console.print(f"report: {made.html}", highlight=False, soft_wrap=True)
    if made.pdf is not None:
        err_console.print(f"pdf: {made.pdf}", highlight=False, soft_wrap=True)


@app.command()
def schema(out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None) -> None:
    """The JSON Schema of results.json (docs/results.schema.json)."""
    import json

    from ..results import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text)
    except OSError as exc:
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}") from None


# Compare -----------------------------------------------------------------------------------------------


def _parse_confidence(text: str) -> float:
    from ..compare import CompareError, parse_confidence

    try:
        return parse_confidence(text)
    except CompareError as exc:
        raise typer.BadParameter(exc.message) from None


@app.command()
def compare(
    sets: Annotated[list[str], typer.Argument(metavar="SET", show_default=False,
                                              help="Data sets, compared with the first: a file of numbers "
                                                   "(one a line, # comments), a CSV, a results folder or "
                                                   "results.json (its Throughput.csv), a folder of results "
                                                   "folders, or a quoted glob pooling several; - is stdin.")],
    column: Annotated[str | None, typer.Option("--column", "-C", metavar="NAME|N",
                                               help="CSV/results column, e.g. offered_fps, throughput_Mbps; "
                                                    "for a plain file a column number (default 1).")] = None,
    where: Annotated[list[str] | None, typer.Option(metavar="NAME=VALUE",
                                                    help="Keep CSV/results rows with this value, e.g. "
                                                         "frame_size_B=64 (repeatable).")] = None,
    table: Annotated[str, typer.Option(metavar="NAME", help="The CSV of a results folder: Throughput, Latency, "
                                                            "or another NAME.csv in it.")] = "Throughput",
    confidence: Annotated[Any, typer.Option("--confidence", "-c", parser=_parse_confidence, metavar="PCT",
                                            help="80, 90, 95, 98, 99 or 99.5.")] = "95",
    width: Annotated[int, typer.Option("--width", "-w", min=10, help="Width of the plot.")] = 74,
    separate: Annotated[bool, typer.Option("--separate", "-s",
                                           help="Avg/median/stddev bars on separate lines.")] = False,
    no_plot: Annotated[bool, typer.Option("--no-plot", "-A", help="Statistics and tests, no plot.")] = False,
    stats_only: Annotated[bool, typer.Option("--stats-only", "-n",
                                             help="Summary statistics only, no plot and no test.")] = False,
    classic: Annotated[bool, typer.Option("--classic", help="Older ministat, as in the 2013 BSDRP labs: "
                                                            "upper median for even N, +/- % = interval "
                                                            "/ first mean.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable statistics.")] = False,
    graph: Annotated[Path | None, typer.Option(metavar="DIR",
                                               help="Compare runs instead: each SET a results folder or a folder "
                                                    "of repeated runs' folders; write DIR/compare.html with "
                                                    "overlay graphs and a ministat table per frame size.")] = None,
    labels: Annotated[str | None, typer.Option(metavar="A,B,...",
                                               help="With --graph: a name for each SET (default its folder's "
                                                    "name).")] = None,
    pdf: Annotated[bool, typer.Option("--pdf", help="With --graph: also DIR/compare.pdf (WeasyPrint).")] = False,
    paper: Annotated[Any, typer.Option(parser=parser(parse.choice("A4", "letter")), metavar="A4|letter",
                                       help="The PDF's paper size.")] = "A4",
) -> None:
    """ministat-compatible statistics of repeated runs: N, Min, Max, Median, Avg, Stddev, an
    ASCII plot, and Student's t difference of each set against the first."""
    import json

    from ..compare import CompareError, format_report, load_set, parse_where, report_json

    style = "classic" if classic else "current"
    if graph is not None:
        _compare_runs(sets, labels, graph, confidence, style, paper if pdf else None)
        return
    for name, given in (("--labels", labels is not None), ("--pdf", pdf)):
        if given:
            raise InputError(name, "goes with --graph DIR")
    try:
        pairs = parse_where(where or [])
        if sets.count("-") > 1:
            raise CompareError("-", "stdin can be one data set only")
        data = [load_set(spec, column, pairs, table.removesuffix(".csv")) for spec in sets]
        if json_out:
            text = json.dumps(report_json(data, confidence, style, tests=not stats_only), indent=2) + "\n"
        else:
            text = format_report(data, confidence, width, style, plot=not no_plot, tests=not stats_only,
                                 separate_bars=separate)
    except CompareError as exc:
        raise InputError(exc.field, exc.message) from None
    typer.echo(text, nl=False)


def _compare_runs(sets: list[str], labels: str | None, out_dir: Path, confidence: float, style: str,
                  paper: str | None) -> None:
    """``compare --graph``: several runs (or sets of repeated runs) on shared axes, one HTML."""
    from ..compare import MAX_SETS, CompareError
    from ..compare.page import write_compare
    from ..compare.runs import load_runs
    from ..report.render import PdfError

    names = [n.strip() for n in labels.split(",")] if labels is not None else [None] * len(sets)
    if len(names) != len(sets) or any(n == "" for n in names):
        raise InputError("--labels", f"one non-empty name per SET, comma-separated: {len(sets)} names, "
                                     f"not {labels!r}")
    if len(sets) > MAX_SETS:
        raise InputError("SET", f"at most {MAX_SETS} sets, not {len(sets)}")
    try:
        runs = [load_runs(spec, name) for spec, name in zip(sets, names)]
        paths = write_compare(runs, out_dir, confidence=confidence, style=style,
                              pdf_paper=paper)
    except CompareError as exc:
        raise InputError(exc.field, exc.message) from None
    except PdfError as exc:
        raise InputError("--pdf", str(exc), exit_code=1) from None
    except OSError as exc:
        raise InputError("--graph", f"cannot write {out_dir}: {exc.strerror or exc}") from None
    typer.echo("wrote " + ", ".join(str(p) for p in paths))
