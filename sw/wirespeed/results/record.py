"""The record of a run, ``results.json``: self-describing (tool and gateware versions, target,
DUT, every parameter, every trial's raw counters), from which every CSV, graph and report is
derived.

Format ``wirespeed-results/2``: the run's header, then ``tests``, one entry per RFC 2544 test
of the run in order, each ``{name, parameters, results}`` (the test's configuration and its
results, one per frame size; the models of :mod:`wirespeed.rfc2544.registry`), then every
trial (``trials``, with ``trial_tags`` saying which test and step each belongs to). Its JSON
Schema is ``docs/results.schema.json`` (:func:`json_schema`). Format 1 records (one field per
test) are read and converted (:func:`upgrade`).
"""

from __future__ import annotations

import functools
import operator
from datetime import UTC, datetime
from types import GenericAlias
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from .. import __version__
from ..host.models import GatewareId, TrialResult
from ..latency import DEFINITION_NAMES
from ..rfc2544 import registry
from ..rfc2544.common import LearningConfig
from ..rfc2544.estimate import RunEstimate
from ..traffic import PortAddress

__all__ = ["FORMAT", "FORMAT_1", "Status", "TestEntry", "RunHeader", "RunRecord", "upgrade", "upgrade_flows",
           "json_schema", "GENERAL_DEFINITIONS"]

FORMAT = "wirespeed-results/2"
FORMAT_1 = "wirespeed-results/1"
Status = Literal["running", "complete", "interrupted", "failed"]

LATENCY_DEFINITION = ("RFC 1242 3.8, both definitions per frame size (the CSVs' definition column): "
                      f"bit_forwarding = {DEFINITION_NAMES['bit_forwarding']}; store_and_forward = "
                      f"{DEFINITION_NAMES['store_and_forward']}. The analyzers measure one per trial "
                      "(parameters.latency_definition, source 'measured'); the other is the measured one "
                      "shifted by 8 ns x frame size (source 'derived', exact for one frame size). Calibrated "
                      "figures have the tester's pipeline delay (from a loopback-cable calibration) "
                      "subtracted; raw ones include it")
#: what every run's figures mean, whatever its tests (each test adds its own definitions)
GENERAL_DEFINITIONS = {
    "frame_size": "bytes from destination MAC to FCS inclusive; or an IMIX (RFC 6985) named by its label, "
                  "imix:GENOME or imix:SIZE:WEIGHT,..., whose frames repeat the mix's size sequence "
                  "(mean_frame_B: its mean size)",
    "line_rate": "1 Gb/s; a frame of L bytes occupies L + 20 bytes on the wire (preamble, SFD, gap); an IMIX's "
                 "line rate is 1e9 / 8 / (mean L + 20) frames/s",
    "frames_lost": "frames sent that never arrived intact: from the analyzers' sequence tracking, sent - unique "
                   "arrivals (in sequence, reordered or late), never negative; duplicated, out-of-order and late "
                   "frames are counted beside it (RFC 4689 3.3, docs/analyzer.md) and each fails a zero-loss "
                   "trial. A build without per-stream statistics has only sent - received (at least 0; more "
                   "received than sent fails the trial)",
    "control_path": "register transactions with the tester (Etherbone): requests, retries, timeouts and "
                    "duplicate answers, per trial and for the run (control_path)",
    "latency": LATENCY_DEFINITION,
}


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class TestEntry(BaseModel):
    """One test of the run: its name, its parameters and its results (one per frame size)."""

    __test__ = False        # not a pytest class
    name: str
    parameters: Any
    results: list[Any] = Field(default_factory=list)


def _entry_models() -> tuple[type[TestEntry], ...]:
    models = []
    for test in registry.all_tests():
        title = "".join(part.capitalize() for part in test.name.split("-"))
        # types made of values known only at import (Literal[name], list[result]): to mypy, plain values
        fields: dict[str, Any] = dict(name=(Literal[test.name], test.name), parameters=(test.config, ...),
                                      results=(GenericAlias(list, (test.result,)), Field(default_factory=list)))
        models.append(create_model(f"{title}Entry", __base__=TestEntry,
                                   __doc__=f"RFC 2544 {test.section}: {test.title}", **fields))
    return tuple(models)


_ENTRIES = _entry_models()
if TYPE_CHECKING:
    AnyEntry = TestEntry        # what mypy can know of the union below: its common base
else:
    # the union of every test's entry, told apart by name (X | Y | ..., the tests known only at import)
    AnyEntry = Annotated[functools.reduce(operator.or_, _ENTRIES), Field(discriminator="name")]


class RunHeader(BaseModel):
    """What describes a run, known before the first trial."""

    model_config = ConfigDict(validate_assignment=False)

    format: str = FORMAT
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "wirespeed", "version": __version__})
    test: str = Field("rfc2544-throughput", description="rfc2544- and the tests joined by +")
    target: str
    gateware: GatewareId
    dut: dict[str, Any]
    title: str | None = Field(None, description="the report's title; None: one made of the tests and the DUT")
    operator: str | None = Field(None, description="who ran the test")
    dut_info: dict[str, str] = Field(default_factory=dict, description="facts about the DUT given by the user "
                                                                       "(model, serial, firmware...)")
    notes: list[str] = Field(default_factory=list)
    definitions: dict[str, str] = Field(default_factory=lambda: dict(GENERAL_DEFINITIONS))
    latency_calibrated: bool = Field(False, description="latency figures have the tester pipeline delay "
                                                        "subtracted")
    calibration: dict[str, Any] | None = Field(None, description="the calibration used: where it came from "
                                                                  "and its whole file")
    learning_parameters: LearningConfig | None = Field(None, description="the learning phase before the first "
                                                                         "trial (RFC 2544 section 23); None: none")
    learning: dict[str, Any] | None = Field(None, description="what the learning phase did (addresses, ARP/ND, "
                                                               "learning frames, settle)")
    started_utc: str = Field(default_factory=_utc_now)
    plan: dict[str, Any] = Field(default_factory=dict, description="the plan as given (wirespeed.Plan)")
    config_file: dict[str, str] | None = Field(None, description="the --config file of the run: path, format, "
                                                                 "sha256 and its text")
    tests: list[AnyEntry] = Field(default_factory=list, description="the run's tests in order: name, parameters, "
                                                                   "results")

    @property
    def test_names(self) -> list[str]:
        return [entry.name for entry in self.tests]

    def entry(self, name: str) -> TestEntry | None:
        return next((e for e in self.tests if e.name == name), None)

    def parameters_of(self, name: str) -> Any:
        entry = self.entry(name)
        return None if entry is None else entry.parameters

    def results_of(self, name: str) -> list[Any]:
        entry = self.entry(name)
        return [] if entry is None else entry.results

    def planned_addresses(self) -> dict[int, PortAddress]:
        """The tester addresses the run was planned with (a simulated router is set up for
        them); {} for a run recorded without its plan."""
        from ..rfc2544.plan import Plan

        return Plan.model_validate(self.plan).addresses if self.plan else {}


class RunRecord(RunHeader):
    """``results.json``: the header, the run's status, the results so far and every trial."""

    status: Status = "running"
    error: str | None = None
    updated_utc: str = Field(default_factory=_utc_now)
    trials: list[TrialResult] = Field(default_factory=list)
    trial_tags: list[dict[str, Any]] = Field(default_factory=list,
                                             description="per trial (same order): the test and step it belongs to; "
                                                         "superseded: true for a trial of a frame size that a "
                                                         "resumed run measured again from scratch")
    resumed: list[dict[str, Any]] = Field(default_factory=list,
                                          description="each time the run was resumed ('rfc2544 --resume'): when, "
                                                      "the status and error it had, the learning phase it had "
                                                      "before, the trials superseded")
    control_path: dict[str, int] | None = Field(
        None, description="the run's register transactions with the tester (every session, resumed ones added): "
                          "requests, retries, timeouts, duplicate answers, bad frames, resynchronisations")
    dut_model: dict[str, dict[str, int]] | None = Field(
        None, description="simulation only: the simulated DUT model's own counters when the run ended (since the "
                          "simulation started: learning and every trial), per direction 'A->B' of tester ports")
    dut_state: dict[str, Any] | None = Field(
        None, description="simulation with a Linux DUT only: what the kernel reported of itself when the run ended "
                          "(interfaces with their counters, addresses, neighbours or bridge table, SNMP counters)")
    estimate: RunEstimate | None = Field(
        None, description="what the run was expected to take when it started (its last start, for a resumed run): "
                          "trials, time on the wire and wall seconds, per test and frame size, and the pace and DUT "
                          "model they assume")



# format 1: one field per test (test name -> (parameters field, results field))
_V1_FIELDS = {"throughput": ("parameters", "results"), "frame-loss": ("frame_loss_parameters", "frame_loss"),
              "back-to-back": ("back_to_back_parameters", "back_to_back"),
              "system-recovery": ("recovery_parameters", "recovery"), "reset": ("reset_parameters", "reset")}


def upgrade_flows(data: Any) -> Any:
    """Every flow in ``data`` (a record, a trial, any part of them) with its stream as format 2
    has it: format 1 described a flow's frames by frame size (``frame_len``, ``imix``) and
    ``sources`` x ``destinations`` address walks; format 2 by the stream the generator sends
    (:class:`~wirespeed.traffic.StreamSpec`)."""
    if isinstance(data, list):
        return [upgrade_flows(item) for item in data]
    if not isinstance(data, dict):
        return data
    out = {key: upgrade_flows(value) for key, value in data.items()}
    for flow in out.get("flows") or []:
        spec = flow.get("spec") if isinstance(flow, dict) else None
        if isinstance(spec, dict) and "frame_len" in spec:
            flow["spec"] = _stream_of_v1(spec)
    return out


def _stream_of_v1(spec: dict[str, Any]) -> dict[str, Any]:
    from .. import sizes as size_points

    point = spec.get("imix") or spec["frame_len"]
    size = ({"mode": "sequence", "sequence": list(size_points.sizes_of(point)), "label": point}
            if isinstance(point, str) else {"mode": "fixed", "a": point})
    walks = []
    if spec.get("sources", 1) > 1:
        walks.append({"field": "src_ip", "count": spec["sources"]})
    if spec.get("destinations", 1) > 1:
        walks.append({"field": "dst_ip", "count": spec["destinations"], "chain": bool(walks)})
    keep = ("stream_id", "dst_mac", "src_mac", "src_ip", "dst_ip", "src_port", "dst_port", "ttl")
    return {k: spec[k] for k in keep if k in spec} | {"size": size, "modifiers": walks}


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A format 1 record's data as format 2 (other formats unchanged): each test's parameters
    and results into ``tests``, the learning phase's parameters (those of the first test) to
    ``learning_parameters``, every flow's frames as a stream (:func:`upgrade_flows`)."""
    if data.get("format") != FORMAT_1:
        return data
    data = upgrade_flows(data)
    out = {k: v for k, v in data.items() if k not in {f for pair in _V1_FIELDS.values() for f in pair} | {"tests"}}
    out["format"] = FORMAT
    tests, learning = [], None
    for name in data.get("tests") or ["throughput"]:
        fields = _V1_FIELDS.get(name)
        if fields is None or data.get(fields[0]) is None:
            continue
        params_field, results_field = fields
        params = dict(data[params_field])
        if learning is None and params.get("learning") is not None:
            learning = params["learning"]
        params.pop("learning", None)
        results = data.get(results_field)
        results = [] if results is None else results if isinstance(results, list) else [results]
        tests.append({"name": name, "parameters": params, "results": results})
    out["tests"] = tests
    out["learning_parameters"] = learning
    return out


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``results.json`` (format 2), from the models."""
    schema: dict[str, Any] = RunRecord.model_json_schema(mode="serialization")
    schema["$id"] = "https://wirespeed.invalid/schemas/results-2.json"
    schema["title"] = "wirespeed results.json (wirespeed-results/2)"
    return schema

