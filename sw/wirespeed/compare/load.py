"""Reading data sets: files of numbers (ministat's input), columns of CSV tables chosen by name
and filters, wirespeed results folders and results.json files."""

from __future__ import annotations

import csv
import glob
import io
import math
import re
import sys
from pathlib import Path

from .stats import CompareError, DataSet

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class _TooLarge(ValueError):
    """A number beyond a double (e.g. 1e400)."""


def _number(text: str) -> float | None:
    """The number ``text`` writes (None: not a number); _TooLarge for one beyond a double."""
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    if math.isinf(value):
        raise _TooLarge(f"{text} is beyond the range of a double (magnitudes up to {sys.float_info.max:.4g})")
    return value


def parse_where(items: list[str]) -> list[tuple[str, str]]:
    """``--where NAME=VALUE`` items as pairs."""
    pairs = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise CompareError("--where", f"NAME=VALUE, e.g. frame_size_B=64; not {item!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def _read_text(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CompareError(name, "no such file or folder") from None
    except UnicodeDecodeError:
        raise CompareError(name, "not a text file") from None
    except OSError as exc:
        raise CompareError(name, f"cannot read: {exc.strerror or exc}") from None


def read_plain(text: str, name: str, column: int = 1) -> list[float]:
    """ministat's input: whitespace-separated columns (``column`` counts from 1), one value a
    line, blank lines and ``#`` comments ignored."""
    values = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        tokens = line.split("#", 1)[0].split()
        if not tokens:
            continue
        if len(tokens) < column:
            raise CompareError(name, f"line {lineno}: no column {column} in {line.strip()!r}")
        try:
            value = _number(tokens[column - 1])
        except _TooLarge as exc:
            raise CompareError(name, f"line {lineno}: {exc}") from None
        if value is None:
            raise CompareError(name, f"line {lineno}: not a number: {tokens[column - 1]!r}")
        values.append(value)
    return values


def _matches(cell: str, wanted: str) -> bool:
    try:
        a, b = _number(cell), _number(wanted)
    except _TooLarge:
        a = b = None
    if a is not None and b is not None:
        return a == b
    return cell.strip() == wanted


def read_csv_column(text: str, name: str, column: str | None, where: list[tuple[str, str]]) -> list[float]:
    """The numbers of one named column of a CSV with a header row, from the rows matching
    every ``where`` pair."""
    rows = list(csv.reader(io.StringIO(text)))
    while rows and not any(c.strip() for c in rows[0]):
        rows.pop(0)
    if not rows:
        raise CompareError(name, "no numbers (an empty CSV file)")
    header = [h.strip() for h in rows[0]]
    available = ", ".join(h for h in header if h)
    if column is None:
        raise CompareError("--column", f"required for CSV input {name}; one of: {available}")
    for wanted, _ in [(column, None), *where]:
        if wanted not in header:
            raise CompareError("--column" if wanted == column else "--where",
                               f"no column {wanted!r} in {name}; columns: {available}")
    index = header.index(column)
    conditions = [(header.index(k), v) for k, v in where]
    values = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        cells = row + [""] * (len(header) - len(row))
        if not all(_matches(cells[i], v) for i, v in conditions):
            continue
        try:
            value = _number(cells[index])
        except _TooLarge as exc:
            raise CompareError(name, f"line {lineno}: column {column}: {exc}") from None
        if value is None:
            what = "empty" if not cells[index].strip() else f"not a number: {cells[index].strip()!r}"
            raise CompareError(name, f"line {lineno}: column {column} is {what}")
        values.append(value)
    if not values:
        if where:
            shown = "; ".join(f"{k} has {', '.join(_distinct(rows[1:], header.index(k)))}" for k, _ in where)
            raise CompareError("--where", f"no row of {name} has "
                                          f"{' and '.join(f'{k}={v}' for k, v in where)} ({shown})")
        raise CompareError(name, "no numbers (a header row only)")
    return values


def _distinct(rows: list[list[str]], index: int) -> list[str]:
    seen: list[str] = []
    for row in rows:
        if index < len(row) and row[index].strip() and row[index].strip() not in seen:
            seen.append(row[index].strip())
    return seen or ["no values"]


def _results_csv(path: Path, name: str, table: str = "Throughput") -> str:
    """The text of ``<table>.csv`` of a results folder; Throughput.csv can also come from the
    folder's (or the given) results.json."""
    if path.is_dir():
        csv_path = path / f"{table}.csv"
        if csv_path.is_file():
            return _read_text(csv_path, f"{name}/{table}.csv")
        present = ", ".join(sorted(p.stem for p in path.glob("*.csv"))) or "none"
        if table != "Throughput":
            raise CompareError("--table", f"no {table}.csv in {name} (tables there: {present})")
        path = path / "results.json"
        if not path.is_file():
            raise CompareError(name, "a folder without Throughput.csv or results.json (not a wirespeed "
                                     "results folder)")
    elif table != "Throughput":
        raise CompareError("--table", f"{table} comes from a results folder's {table}.csv, not from {name}; "
                                      "give the folder")
    import json

    from pydantic import ValidationError

    from ..results.record import RunRecord, upgrade
    from ..rfc2544.suite.throughput import throughput_csv

    text = _read_text(path, name)
    try:
        data = json.loads(text)
        record = RunRecord.model_validate(upgrade(data) if isinstance(data, dict) else data)
    except ValidationError as exc:
        raise CompareError(name, f"not a wirespeed results.json ({exc.error_count()} problems, the first: "
                                 f"{exc.errors()[0]['msg']})") from None
    except ValueError as exc:
        raise CompareError(name, f"not a wirespeed results.json ({exc})") from None
    return throughput_csv(record.results_of("throughput"))


def _is_results(path: Path) -> bool:
    return (path.is_dir() and ((path / "Throughput.csv").is_file() or (path / "results.json").is_file())) \
        or (path.is_file() and path.suffix.lower() == ".json")


def _column_number(column: str | None, name: str) -> int:
    if column is None:
        return 1
    if not column.isdigit() or int(column) < 1:
        raise CompareError("--column", f"a column number (1, 2, ...) for the plain file {name}; not {column!r}")
    return int(column)


def _values_of(path: Path, name: str, column: str | None, where: list[tuple[str, str]],
               table: str) -> list[float]:
    if _is_results(path):
        return read_csv_column(_results_csv(path, name, table), name, column, where)
    if path.suffix.lower() == ".csv":
        return read_csv_column(_read_text(path, name), name, column, where)
    if where:
        raise CompareError("--where", f"only for CSV files and results folders, not {name}")
    values = read_plain(_read_text(path, name), name, _column_number(column, name))
    if not values:
        raise CompareError(name, "no numbers")
    return values


def load_set(spec: str, column: str | None = None, where: list[tuple[str, str]] | None = None,
             table: str = "Throughput", stdin: io.TextIOBase | None = None) -> DataSet:
    """One data set from a command-line argument: a plain file of numbers (ministat's format),
    a CSV (``column`` names the column), a wirespeed results folder (its ``table``.csv, by
    default Throughput.csv) or results.json (its Throughput.csv figures), a folder of results
    folders (one value set from all of them), or a quoted glob pattern matching several of those
    (their values pooled); ``-`` is stdin."""
    where = where or []
    if spec == "-":
        if where:
            raise CompareError("--where", "only for CSV files and results folders, not <stdin>")
        values = read_plain((stdin or sys.stdin).read(), "<stdin>", _column_number(column, "<stdin>"))
        if not values:
            raise CompareError("<stdin>", "no numbers")
        return DataSet("<stdin>", tuple(values), ("<stdin>",))
    path = Path(spec)
    if path.exists():
        if path.is_dir() and not _is_results(path):
            members = sorted(p for p in path.iterdir() if p.is_dir() and _is_results(p))
            if not members:
                raise CompareError(spec, "a folder without Throughput.csv or results.json, nor results "
                                         "folders inside (not a wirespeed results folder)")
            paths = members
        else:
            paths = [path]
    elif glob.has_magic(spec):
        paths = [Path(p) for p in sorted(glob.glob(spec))]
        if not paths:
            raise CompareError(spec, "no file or folder matches this pattern")
    else:
        raise CompareError(spec, "no such file or folder")
    values = []
    for p in paths:
        values += _values_of(p, str(p) if len(paths) > 1 else spec, column, where, table)
    return DataSet(spec, tuple(values), tuple(str(p) for p in paths))
