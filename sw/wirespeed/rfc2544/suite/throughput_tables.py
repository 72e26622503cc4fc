"""The CSV tables of the throughput test (RFC 2544 26.1) and of the latency measured with it
(26.2): Throughput.csv, Latency.csv, Latency_Trials.csv and Latency_Histograms.csv, written from
its results (:class:`~wirespeed.rfc2544.suite.throughput.ThroughputResult`). docs/results.md
and docs/rfc2544.md describe their columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ... import sizes as size_points
from ...ethernet import wire_mbps
from ...host.models import PERCENTILES
from ...latency import LatencyFigures, definition_of
from ..common import csv_text

if TYPE_CHECKING:
    from .throughput import ThroughputResult

__all__ = ["THROUGHPUT_COLUMNS", "LATENCY_COLUMNS", "LATENCY_TRIALS_COLUMNS", "HISTOGRAM_COLUMNS", "HISTOGRAM_BINS",
           "throughput_csv", "latency_csv", "latency_trials_csv", "latency_histograms_csv", "tables"]


THROUGHPUT_COLUMNS = ["frame_size_B", "offered_fps", "throughput_fps", "measured_rx_fps", "pct_line_rate",
                      "throughput_Mbps", "throughput_L1_Mbps", "throughput_L2_Mbps", "theoretical_max_fps",
                      "frames_sent", "frames_received", "trials", "search", "loss_tolerance_pct", "confirmed",
                      "mean_frame_B"]
LATENCY_COLUMNS = ["frame_size_B", "rate_fps", "min_ns", "avg_ns", "max_ns", "stddev_ns", "jitter_ns",
                   "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "histogram_bin_ns", "frames", "definition",
                   "source", "calibrated", "pipeline_delay_ns", "repeats", "repeats_mean_ns",
                   "repeats_mean_stddev_ns", "repeats_min_ns", "repeats_max_ns"]


def _throughput_row(r: ThroughputResult) -> list[object]:
    best = r.best
    fps = f"{r.throughput_fps:.2f}"
    # the throughput is the offered rate of the highest passing trial: the same figure under
    # the RFC's name; L1 counts each frame's preamble, SFD and gap, L2 the frame itself
    return [r.frame_size, fps, fps, f"{best.measured_rx_fps:.2f}" if best else "",
            f"{r.pct_line_rate:.3f}", f"{r.throughput_mbps:.3f}", f"{wire_mbps(r.frame_size, r.throughput_fps):.3f}",
            f"{r.throughput_mbps:.3f}", f"{r.theoretical_max_fps:.2f}",
            best.tx_frames if best else "", best.rx_frames if best else "", r.trials, r.search,
            f"{r.loss_tolerance_pct:g}", {True: "yes", False: "no", None: ""}[r.confirmed],
            f"{float(size_points.mean_len(r.frame_size)):g}"]


def throughput_csv(results: list[ThroughputResult]) -> str:
    """Throughput.csv: one row per frame size; frames of the trial at the throughput rate."""
    return csv_text(THROUGHPUT_COLUMNS, [_throughput_row(r) for r in results])


def _latency_row(r: ThroughputResult, lat: LatencyFigures) -> list[object]:
    def pct(q: float) -> float | str:
        value = lat.percentiles_ns.get(f"p{q:g}")
        return "" if value is None else value

    return [r.frame_size, f"{r.throughput_fps:.2f}", lat.min_ns, f"{lat.avg_ns:.1f}", lat.max_ns,
            f"{lat.stddev_ns:.1f}", f"{lat.jitter_ns:.1f}", *(pct(q) for q in PERCENTILES),
            lat.bin_ns or "", lat.frames, lat.definition, lat.source, "yes" if lat.calibrated else "no",
            "" if lat.pipeline_delay_ns is None else lat.pipeline_delay_ns, *_repeats(r, lat.definition)]


def _repeats(r: ThroughputResult, definition: str) -> list[object]:
    rep = next((x for x in r.repeated_latency if x.definition == definition), None)
    if rep is None:
        return ["", "", "", "", ""]
    return [rep.trials, f"{rep.mean_ns:.1f}", f"{rep.stddev_of_means_ns:.1f}", rep.min_ns, rep.max_ns]


def latency_csv(results: list[ThroughputResult]) -> str:
    """Latency.csv: latency of the final passing trial of each frame size, one row per
    RFC 1242 definition (the measured one first, then the derived one when it is exact), with
    RFC 2544 26.2's repeated-trial figures when latency trials were run."""
    rows = [_latency_row(r, lat) for r in results if r.best for lat in r.latency if lat.available]
    return csv_text(LATENCY_COLUMNS, rows)


LATENCY_TRIALS_COLUMNS = ["frame_size_B", "repeat", "rate_fps", "definition", "source", "min_ns", "avg_ns", "max_ns",
                          "stddev_ns", "jitter_ns", "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "frames",
                          "frames_lost", "calibrated"]


def latency_trials_csv(results: list[ThroughputResult]) -> str:
    """Latency_Trials.csv: each RFC 2544 26.2 latency trial, both definitions (as Latency.csv)."""
    rows = []
    for r in results:
        for i, (trial, figures) in enumerate(zip(r.latency_repeats, r.latency_repeat_figures), 1):
            for lat in figures:
                if lat.available:
                    pct = [lat.percentiles_ns.get(f"p{q:g}") for q in PERCENTILES]
                    rows.append([r.frame_size, i, f"{trial.offered_fps:.2f}", lat.definition, lat.source, lat.min_ns,
                                 f"{lat.avg_ns:.1f}", lat.max_ns, f"{lat.stddev_ns:.1f}", f"{lat.jitter_ns:.1f}",
                                 *("" if v is None else v for v in pct), lat.frames, max(0, trial.lost_frames),
                                 "yes" if lat.calibrated else "no"])
    return csv_text(LATENCY_TRIALS_COLUMNS, rows)


HISTOGRAM_BINS = 1024        # pN.ana.hist entries: the overflow row's lower bound
HISTOGRAM_COLUMNS = ["frame_size_B", "trial", "rx_port", "definition", "bin_low_ns", "bin_high_ns", "frames"]


def latency_histograms_csv(results: list[ThroughputResult]) -> str:
    """Latency_Histograms.csv: the raw measured latency histogram (tester pipeline delay
    included, the trial's measured definition) of each size's final passing trial ("best") and
    of each repeated latency trial; non-empty bins, then an underflow and an overflow row
    (empty bin bounds) when not zero."""
    rows = []
    for r in results:
        trials = ([("best", r.best)] if r.best else []) + [(f"repeat {i}", t) for i, t in
                                                              enumerate(r.latency_repeats, 1)]
        for label, trial in trials:
            name = definition_of(trial.lat_def)
            for port, hist in sorted(trial.histograms.items()):
                for index in sorted(hist.counts):
                    low = hist.offset_ns + index * hist.bin_ns
                    rows.append([r.frame_size, label, port, name, low, low + hist.bin_ns, hist.counts[index]])
                if hist.underflow:
                    rows.append([r.frame_size, label, port, name, "", hist.offset_ns, hist.underflow])
                if hist.overflow:
                    rows.append([r.frame_size, label, port, name,
                                 hist.offset_ns + HISTOGRAM_BINS * hist.bin_ns, "", hist.overflow])
    return csv_text(HISTOGRAM_COLUMNS, rows)


def tables(results: Sequence[ThroughputResult], record: Any) -> dict[str, tuple[list[str], str]]:
    """The test's CSV files (the registry's ``tables``): name -> (columns, text)."""
    tables = {"Throughput.csv": (THROUGHPUT_COLUMNS, throughput_csv(list(results))),
              "Latency.csv": (LATENCY_COLUMNS, latency_csv(list(results)))}
    if record.parameters_of("throughput").latency_trials:
        tables["Latency_Trials.csv"] = (LATENCY_TRIALS_COLUMNS, latency_trials_csv(list(results)))
    tables["Latency_Histograms.csv"] = (HISTOGRAM_COLUMNS, latency_histograms_csv(list(results)))
    return tables
