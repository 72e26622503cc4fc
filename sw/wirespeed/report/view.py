"""What the report shows, built from the typed run record: the summary per frame size, one
section per RFC 2544 test (its tables and graphs), then parameters, notes, definitions,
calibration and learning as tables of text. The template (``templates/report.html.j2``) only
lays these out; every number is formatted here or by :mod:`.human`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from .. import sizes
from ..ethernet import WIRE_OVERHEAD
from ..latency import DEFINITION_KEYS
from ..results import TRIALS_CSV, RunRecord, tables_of
from ..rfc2544 import registry
from ..units import format_duration
from . import human

__all__ = ["Table", "Section", "View", "build_view", "split_columns", "DETAIL_TABLES", "MAX_COLUMNS",
           "GRAPH_SECTIONS", "TABLE_SECTIONS"]

#: per-bin detail, thousands of rows in a run: drawn as the latency distribution graphs, the
#: file itself beside the report, not in it
DETAIL_TABLES = ("Latency_Histograms.csv",)
#: the most columns a table has on a page; wider ones are split into parts, each repeating the
#: columns that name a row, so that no column is ever cut at the right margin
MAX_COLUMNS = 9
#: the summary's parts are narrower: its figures are the ones read first
SUMMARY_COLUMNS = 7
KEY_COLUMNS = ("n", "test", "frame_size_B", "repetition", "repeat", "definition", "source", "offered_pct_line_rate")
#: sections of the report that are not a registered test of their own (26.2 is measured by the throughput test)
LATENCY_SECTION = ("latency", "26.2", "Latency")
TABLE_SECTIONS = {"Latency.csv": "latency", "Latency_Trials.csv": "latency"}
GRAPH_SECTIONS = {"throughput_fps": "throughput", "throughput_mbps": "throughput", "throughput_pct": "throughput",
                  "latency": "latency", "latency_distribution": "latency", "frame_loss": "frame-loss",
                  "latency_vs_load": "frame-loss", "back_to_back": "back-to-back", "rate_over_time": "system-recovery"}


#: the summary's column of each test metric (wirespeed.rfc2544.registry.Metric) that has a shorter name
SUMMARY_LABELS = {"loss_pct": "loss at the top load", "b2b_frames": "back-to-back", "recovery_us": "recovery time",
                  "reset_us": "reset time"}


@dataclass
class Table:
    """A table for people: its title, then one or more parts (a wide table split), each a list
    of column headers and rows of cell text."""

    title: str
    parts: list[tuple[list[str], list[list[str]]]]


@dataclass
class Section:
    key: str
    section: str
    title: str
    tables: list[Table] = field(default_factory=list)
    graphs: list[str] = field(default_factory=list)


@dataclass
class View:
    title: str
    header: list[tuple[str, str]]
    summary: Table | None
    verdicts: Table | None
    verdict_line: str
    sections: list[Section]
    details: list[str]
    trials: Table | None
    appendix: list[Table]
    notes: list[str]
    status_warning: str
    footer: str


def split_columns(columns: list[str], rows: list[list[str]], limit: int = MAX_COLUMNS,
                  key_columns: tuple[str, ...] = KEY_COLUMNS) -> list[tuple[list[str], list[list[str]]]]:
    """``columns`` x ``rows`` in parts of at most ``limit`` columns; every part starts with the
    key columns (those of ``key_columns`` present), the others follow in order."""
    if len(columns) <= limit:
        return [(columns, rows)]
    keys = [i for i, c in enumerate(columns) if c in key_columns]
    rest = [i for i in range(len(columns)) if i not in keys]
    step = max(1, limit - len(keys))
    parts = []
    for start in range(0, len(rest), step):
        picked = keys + rest[start:start + step]
        parts.append(([columns[i] for i in picked], [[row[i] for i in picked] for row in rows]))
    return parts


def csv_table(title: str, text: str) -> Table:
    """A CSV table of the run, every cell as :func:`.human.cell` shows it."""
    rows = list(csv.reader(io.StringIO(text)))
    columns, body = (rows[0], rows[1:]) if rows else ([], [])
    cells = [[human.cell(c, v) for c, v in zip(columns, row)] for row in body]
    parts = [([human.header(c) for c in cols], part) for cols, part in split_columns(columns, cells)]
    return Table(title=title, parts=parts)


def _kv(title: str, rows: list[tuple[str, str]]) -> Table:
    return Table(title=title, parts=[(["", ""], [list(r) for r in rows])])


def _value(value: Any, ns: bool = False) -> str:
    """A parameter's value as text: ``ns``: integers are durations in nanoseconds (shown with
    their unit); numbers with separators; lists and mappings spelt out."""
    if value is None:
        return human.EMPTY
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return format_duration(value) if ns else f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:g}"
    if isinstance(value, list):
        return ", ".join(_value(v, ns) for v in value) or human.EMPTY
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_value(v, ns or str(k).endswith('_ns'))}" for k, v in value.items()) or human.EMPTY
    return str(value)


def flatten(data: dict[str, Any], prefix: str = "", ns: bool = False) -> list[tuple[str, str]]:
    """A nested mapping as rows (key path, value text); nested mappings of scalars on one row.
    A key ending in ``_ns`` loses the suffix, its values (and those below it) shown as durations."""
    rows = []
    for key, value in data.items():
        key = str(key)
        in_ns = ns or key.endswith("_ns")
        label = prefix + (key.removesuffix("_ns").replace("_", " ") if key.endswith("_ns") else human.header(key))
        if isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            rows += flatten(value, f"{label} › ", in_ns)
        else:
            rows.append((label, _value(value, in_ns)))
    return rows


# The run's header and its summary ------------------------------------------------------------------------


def _dut_text(record: RunRecord) -> str:
    return ", ".join(f"{k}={v}" for k, v in record.dut.items()) or "(not described)"


def default_title(record: RunRecord) -> str:
    dut = record.dut.get("spec") or record.dut.get("model") or record.dut.get("description") or record.target
    return f"RFC 2544 report: {dut}"


def header_rows(record: RunRecord, title: str) -> list[tuple[str, str]]:
    g = record.gateware
    rows = [("Title", title)]
    if record.operator:
        rows.append(("Operator", record.operator))
    rows += [(f"DUT {k}", v) for k, v in record.dut_info.items()]
    rows += [
        ("DUT (as tested)", _dut_text(record)),
        ("Target", record.target),
        ("Tests run", ", ".join(f"{registry.get(n).section} {registry.get(n).title.lower()}"
                                for n in record.test_names) or human.EMPTY),
        ("Status", record.status + (f": {record.error}" if record.error else "")),
        ("Started (UTC)", record.started_utc),
        ("Last update (UTC)", record.updated_utc),
        ("Tool", f"{record.tool.get('name', 'wirespeed')} {record.tool.get('version', '')}"),
        ("Gateware", f"version {g.version_text or g.version} (0x{g.version:06x}), register map 0x{g.map_hash:08x}, "
                     f"{g.clk_hz / 1e6:g} MHz, {g.n_ports} ports"),
        ("Latency", "calibrated (tester pipeline delay subtracted)" if record.latency_calibrated
         else "raw (includes the tester pipeline delay)"),
    ]
    return rows


def summary_table(record: RunRecord) -> Table | None:
    """Per frame size: throughput (fps, % of line rate, L1 and L2 Mb/s), latency avg/max in
    each RFC 1242 definition present, then each other test's figures (its registry metrics)."""
    throughput = {r.frame_size: r for r in record.results_of("throughput")}
    defs = [d for d in DEFINITION_KEYS if any(f.definition == d and f.available
                                              for r in throughput.values() for f in r.latency)]
    others = [(entry.name, metric) for entry in record.tests if entry.name != "throughput"
              for metric in registry.get(entry.name).metrics]
    by_test = {entry.name: {r.frame_size: r for r in entry.results} for entry in record.tests}
    points = list(dict.fromkeys(s for results in by_test.values() for s in results))
    if not points:
        return None
    columns = ["frame size (B)"]
    if throughput:
        columns += ["throughput (fps)", "% of line rate", "L1 (Mb/s)", "L2 (Mb/s)"]
        columns += [f"latency {w}, {d.replace('_', ' ')} (µs)" for d in defs for w in ("avg", "max")]
    columns += [f"{SUMMARY_LABELS.get(m.name, m.name.replace('_', ' '))} ({m.unit.replace('us', 'µs')})"
                for _, m in others]
    rows = []
    for point in points:
        row = [sizes.text(point)]
        r = throughput.get(point)
        if throughput:
            if r is None:
                row += [human.EMPTY] * (4 + 2 * len(defs))
            else:
                mean = float(sizes.mean_len(point))
                row += [human.figure(r.throughput_fps, "fps"), human.figure(r.pct_line_rate, "%"),
                        human.figure(r.throughput_fps * (mean + WIRE_OVERHEAD) * 8 / 1e6, "Mb/s"),
                        human.figure(r.throughput_fps * mean * 8 / 1e6, "Mb/s")]
                figures = {f.definition: f for f in r.latency if f.available}
                for d in defs:
                    f = figures.get(d)
                    row += [human.us(f.avg_ns if f else None), human.us(f.max_ns if f else None)]
        for name, metric in others:
            result = by_test[name].get(point)
            value = None if result is None else metric.value(result)
            # a capped back-to-back size passed the longest burst tried: a lower bound
            bound = "≥ " if getattr(result, "capped", False) else ""
            row.append(human.EMPTY if value is None else bound + human.figure(value, metric.unit))
        rows.append(row)
    return Table(title="Summary", parts=split_columns(columns, rows, SUMMARY_COLUMNS, (columns[0],)))


def verdicts_table(record: RunRecord) -> tuple[Table | None, str]:
    from ..rfc2544.expect import format_value, verdicts_of

    verdicts = verdicts_of(record)
    if not verdicts:
        return None, ""
    missed = sum(not v.passed for v in verdicts)
    rows = [[v.expectation, sizes.text(v.frame_size), format_value(v.value, v.unit), "pass" if v.passed else "FAIL"]
            for v in verdicts]
    line = f"{missed} of {len(verdicts)} failed" if missed else f"all {len(verdicts)} passed"
    return Table(title="Verdicts", parts=[(["expectation", "frame size", "measured", "verdict"], rows)]), line


# Sections, parameters and the rest ------------------------------------------------------------------------


def sections(record: RunRecord, tables: dict[str, tuple[list[str], str]], graphs: list[str]) -> list[Section]:
    """One section per RFC 2544 test of the run, in its order, with its tables and graphs."""
    out: dict[str, Section] = {}
    for entry in record.tests:
        test = registry.get(entry.name)
        out[entry.name] = Section(entry.name, test.section, test.title)
        if entry.name == "throughput":
            out[LATENCY_SECTION[0]] = Section(*LATENCY_SECTION)
        for name in test.files:
            if name in tables and name not in DETAIL_TABLES:
                key = TABLE_SECTIONS.get(name, entry.name)
                title = f"{out[key].title} ({name})"
                out[key].tables.append(csv_table(title, tables[name][1]))
    for name in graphs:
        key = GRAPH_SECTIONS.get(name, "")
        if key == "system-recovery" and key not in out:
            key = "reset"
        if key in out:
            out[key].graphs.append(name)
    return [s for s in out.values() if s.tables or s.graphs]


def appendix(record: RunRecord) -> list[Table]:
    tables = []
    for entry in record.tests:
        params = entry.parameters.model_dump(mode="json", exclude={"addresses", "learning"})
        tables.append(_kv(f"Parameters: {registry.get(entry.name).title.lower()}", flatten(params)))
    if record.learning_parameters is not None:
        tables.append(_kv("Parameters: learning phase", flatten(record.learning_parameters.model_dump(mode="json"))))
    if record.definitions:
        tables.append(_kv("Definitions", [(k.replace("_", " "), v) for k, v in record.definitions.items()]))
    if record.calibration:
        tables.append(_kv("Calibration", flatten(record.calibration)))
    if record.learning:
        tables.append(_kv("Learning phase", flatten(record.learning)))
    return tables


def build_view(record: RunRecord, graphs: list[str], title: str | None = None) -> View:
    """Everything the template shows of ``record``; ``graphs``: the names of the graphs drawn."""
    tables = tables_of(record)
    title = title or record.title or default_title(record)
    verdicts, line = verdicts_table(record)
    status = "" if record.status == "complete" else \
        f"The run is {record.status}: the figures are what was measured before it stopped."
    footer = (f"Generated by {record.tool.get('name', 'wirespeed')} {record.tool.get('version', '')} from "
              f"results.json ({record.format}); {len(record.trials):,} trials recorded.")
    return View(title=title, header=header_rows(record, title), summary=summary_table(record), verdicts=verdicts,
                verdict_line=line, sections=sections(record, tables, graphs),
                details=[name for name in tables if name in DETAIL_TABLES],
                trials=csv_table(f"Every trial ({TRIALS_CSV})", tables[TRIALS_CSV][1]) if record.trials else None,
                appendix=appendix(record),
                notes=list(record.notes), status_warning=status, footer=footer)
