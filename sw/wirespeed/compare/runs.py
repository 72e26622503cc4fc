"""Several runs side by side: each labelled set is one results folder or a folder of repeated
runs' folders; their throughput, latency and loss per frame size, pooled over the repeats, for
the overlay graphs (:mod:`wirespeed.compare.overlay`) and a ministat table per frame size."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from .. import sizes
from ..results import RunRecord
from ..results.resume import RecordError, load_record
from ..units import DECIMALS
from .present import format_report
from .stats import CompareError, DataSet

__all__ = ["RunSet", "load_runs", "Series", "throughput_series", "latency_series", "loss_series",
           "ministat_tables"]


@dataclass
class RunSet:
    """One compared configuration: its label and the records of its runs (one, or repeats)."""

    label: str
    paths: list[Path]
    records: list[RunRecord]


def load_runs(spec: str, label: str | None = None) -> RunSet:
    """A results folder, its results.json, or a folder whose subfolders are results folders
    (repeats of one configuration, pooled). CompareError names ``spec`` when it is none."""
    path = Path(spec)
    if path.is_file() and path.name == "results.json":
        path = path.parent
    if not path.is_dir():
        raise CompareError(spec, "no such results folder; expected a folder written by 'wirespeed rfc2544 --out' "
                                 "or a folder of such folders")
    folders = [path] if (path / "results.json").is_file() else sorted(
        p for p in path.iterdir() if p.is_dir() and (p / "results.json").is_file())
    if not folders:
        raise CompareError(spec, "holds no results.json, nor do its subfolders")
    records = []
    for folder in folders:
        try:
            records.append(load_record(folder))
        except RecordError as exc:
            raise CompareError(str(exc.path), exc.message) from None
    return RunSet(label or path.name, folders, records)


K = TypeVar("K", int | str, float)


@dataclass
class Series(Generic[K]):
    """One set's figure per x (a frame size, or an offered load): every repeat's value."""

    label: str
    values: dict[K, list[float]] = field(default_factory=dict)

    def add(self, x: K, value: float | None) -> None:
        if value is not None:
            self.values.setdefault(x, []).append(float(value))

    def points(self) -> list[tuple[K, float, float, float]]:
        """(x, mean, min, max), in x order (sizes as the run listed them). The mean is kept within
        min..max: the floating-point mean of equal values can round past them."""
        return [(x, min(max(statistics.fmean(v), min(v)), max(v)), min(v), max(v))
                for x, v in self.values.items() if v]


def throughput_series(run: RunSet) -> Series[int | str]:
    """Throughput (frames/s, RFC 2544 26.1) per frame size."""
    series: Series[int | str] = Series(run.label)
    for record in run.records:
        for r in record.results_of("throughput"):
            # the figure as Throughput.csv has it: the statistics of compare on the CSVs
            series.add(r.frame_size, round(r.throughput_fps, DECIMALS["fps"]))
    return series


def latency_series(run: RunSet) -> tuple[Series[int | str], str | None]:
    """Average latency (us) at the throughput rate per frame size, in the measured definition
    (the analyzers' own, not derived), and that definition's name."""
    series: Series[int | str] = Series(run.label)
    definition = None
    for record in run.records:
        for r in record.results_of("throughput"):
            for lat in r.latency:
                if lat.available and lat.source == "measured" and lat.avg_ns is not None:
                    definition = definition or lat.definition
                    if lat.definition == definition:
                        series.add(r.frame_size, lat.avg_ns / 1000)
    return series, definition


def loss_series(run: RunSet) -> dict[int | str, Series[float]]:
    """Frame loss (%) vs offered load (% of line rate), a series per frame size (RFC 2544 26.3)."""
    out: dict[int | str, Series[float]] = {}
    for record in run.records:
        for r in record.results_of("frame-loss"):
            series = out.setdefault(r.frame_size, Series[float](run.label))
            for p in r.points:
                series.add(round(p.offered_pct, 3), p.loss_pct)
    return out


def ministat_tables(runs: list[RunSet], confidence: float = 95.0, style: str = "current",
                    width: int = 74) -> dict[int | str, str]:
    """Per frame size measured in every set, ministat's table of the throughput (frames/s) of the
    sets' repeats, each against the first set; a size where a set has one run only gets the
    summary lines without the t test (it needs two values a set)."""
    per_set = [throughput_series(r) for r in runs]
    common = [s for s in per_set[0].values if all(s in other.values for other in per_set[1:])]
    tables = {}
    for size in common:
        sets = [DataSet(f"{series.label} {sizes.text(size)}", tuple(series.values[size])) for series in per_set]
        tests = all(len(d.values) >= 2 for d in sets)
        tables[size] = format_report(sets, confidence, width, style, plot=True, tests=tests)
    return tables
