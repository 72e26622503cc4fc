"""A plan: which RFC 2544 tests to run, at which frame sizes, with which durations, traffic,
learning phase and calibration, and each test's own parameters.

A :class:`Plan` holds values, not text: the command line, a config file and the web form parse
their options into one (:mod:`wirespeed.cli.options`), a script builds one directly. Values
left ``None`` take the target's defaults: RFC 2544's durations on a board, scaled-down ones in
simulation (:data:`COMMON_DEFAULTS`, each test's :class:`~.registry.Option.target_defaults`).
:meth:`Plan.configs` turns the plan into each test's configuration model, or raises
:class:`PlanError` naming the option at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import sizes as size_points
from ..calibration import RFC_SIZES
from ..traffic import IpVersion, PortAddress, StreamSpec
from ..units import format_duration
from . import registry
from .common import LearningConfig, PortPairConfig
from .expect import parse_expectation

__all__ = ["Plan", "PlanError", "COMMON_DEFAULTS", "TargetKind", "resolve_calibration"]

TargetKind = Literal["sim", "board"]

#: ns: RFC 2544 sections 23 and 24 on a board; scaled down for simulation speed
COMMON_DEFAULTS: dict[str, dict[str, int]] = {
    "sim": {"trial": 10_000_000, "wait": 1_000_000, "settle": 1_000_000},
    "board": {"trial": 60_000_000_000, "wait": 2_000_000_000, "settle": 2_000_000_000},
}


class PlanError(ValueError):
    """A plan that cannot run, as one line ``<field>: <what is allowed>``; ``field`` is the
    option at fault (``--tests``)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


class Plan(BaseModel):
    """Every choice of a run (see the module doc)."""

    model_config = ConfigDict(validate_assignment=True)

    tests: list[str] = Field(default_factory=lambda: ["throughput"],
                             description="RFC 2544 tests (registry names; an alias becomes its "
                                                         "test's name), run in RFC order")
    sizes: list[int | str] = Field(default_factory=lambda: list[int | str](RFC_SIZES),
                                   description="frame sizes in bytes (FCS included) and IMIX mixes")
    trial_duration_ns: int | None = Field(None, gt=0, description="None: 10 ms in simulation, 60 s on a board")
    wait_ns: int | None = Field(None, ge=0, description="after each trial; None: 1 ms in simulation, 2 s on a board")
    learning: bool = Field(True, description="RFC 2544 section 23 learning phase before the first trial")
    learning_frames: int = Field(4, ge=0, le=1_000_000)
    settle_ns: int | None = Field(None, ge=0, description="after the learning frames; None: as wait")
    addresses: dict[int, PortAddress] = Field(default_factory=dict, description="tester addresses by port")
    bidirectional: bool = False
    sources: int = Field(1, ge=1, le=65536)
    ip_version: IpVersion = Field(4, description="IP version of the test frames (--ip-version): 4 or 6 (RFC 5180)")
    destinations: int = Field(1, ge=1, le=65536)
    calibration: str = Field("auto", description="auto, none, or a calibration file")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="the tests' own options by name (resolution, b2b_trials, ...)")
    expect: list[str] = Field(default_factory=list,
                              description="thresholds the results must meet (wirespeed.rfc2544.expect), e.g. "
                                          "throughput_pct>=99@64")
    target: TargetKind | None = Field(None, description="whose defaults apply: the simulation's or a board's "
                                                       "(None: the tester's, when the plan runs)")
    title: str | None = Field(None, description="the report's title (--title)")
    operator: str | None = Field(None, description="who ran the test (--operator)")
    dut_info: dict[str, str] = Field(default_factory=dict, description="facts about the DUT for the report: "
                                                                       "model, serial, firmware... (--dut-info)")

    @field_validator("tests")
    @classmethod
    def _tests(cls, tests: list[str]) -> list[str]:
        if not tests:
            raise ValueError("at least one test")
        resolved = []
        for name in tests:
            test = registry.resolve_name(name)
            if test is None:
                raise ValueError(f"one or more of {registry.allowed()}; not {name!r}")
            resolved.append(test)
        return [t for t in registry.names() if t in resolved]

    @field_validator("expect")
    @classmethod
    def _expect(cls, expect: list[str]) -> list[str]:
        return [parse_expectation(text).text for text in expect]

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, sizes: list[int | str]) -> list[int | str]:
        return size_points.parse_list(sizes)

    # the target's defaults

    @property
    def target_kind(self) -> TargetKind:
        return self.target or "sim"

    def _common(self, key: str) -> int:
        return COMMON_DEFAULTS[self.target_kind][key]

    @property
    def trial_ns(self) -> int:
        return self.trial_duration_ns if self.trial_duration_ns is not None else self._common("trial")

    @property
    def wait(self) -> int:
        return self.wait_ns if self.wait_ns is not None else self._common("wait")

    @property
    def settle(self) -> int:
        return self.settle_ns if self.settle_ns is not None else self._common("settle")

    @property
    def learning_config(self) -> LearningConfig | None:
        return LearningConfig(frames=self.learning_frames, settle_ns=self.settle) if self.learning else None

    def option(self, name: str) -> Any:
        """A test option's value: the plan's, else its target default, else its own default."""
        for test in registry.all_tests():
            for opt in test.options:
                if opt.name == name:
                    if self.options.get(name) is not None:
                        try:
                            return opt.value(self.options[name])
                        except ValueError as exc:
                            raise PlanError(opt.flag, str(exc)) from None
                    if self.target_kind in opt.target_defaults:
                        return opt.target_defaults[self.target_kind]
                    return None if opt.default is None else (opt.parse or _plain(opt))(opt.default)
        raise KeyError(f"no test option named {name!r}")

    def test_options(self, test: registry.TestType) -> dict[str, Any]:
        return {opt.name: self.option(opt.name) for opt in test.options}

    # checks and configurations

    def configs(self) -> dict[str, PortPairConfig]:
        """Each test's configuration, in run order (PlanError: a plan that cannot run)."""
        for test in map(registry.get, self.tests):
            for needed, why in test.needs.items():
                if needed not in self.tests:
                    raise PlanError("--tests", f"{test.name} {why}: add {needed}")
        known = {opt.name for test in registry.all_tests() for opt in test.options}
        unknown = sorted(set(self.options) - known)
        if unknown:
            raise PlanError("options", f"no test option named {unknown[0]!r}; the names are the command line's "
                                       "long options with _ for - (wirespeed rfc2544 --help)")
        for text in self.expect:
            expectation = parse_expectation(text)
            if expectation.test not in self.tests:
                raise PlanError("--expect", f"{expectation.metric} is a figure of the {expectation.test} test: add "
                                            f"{expectation.test} to --tests")
            missing = [s for s in expectation.sizes or [] if s not in self.sizes]
            if missing:
                raise PlanError("--expect", f"{text!r} names frame size {missing[0]}, which --sizes does not have")
        shortest = StreamSpec(ip_version=self.ip_version).min_frame
        short = [s for s in size_points.distinct_sizes(self.sizes) if s < shortest]
        if short:
            raise PlanError("--sizes", f"IPv{self.ip_version} test frames are at least {shortest} bytes (headers, "
                                       f"signature, FCS); not {short[0]}")
        # every test sends the plan's IP version: the tests' own configure() need not know of it
        configs = {name: registry.get(name).configure(self, self.test_options(registry.get(name)))
                   .model_copy(update={"ip_version": self.ip_version}) for name in self.tests}
        first = next(iter(configs.values()))
        ports = (getattr(first, "tx_port", 0), getattr(first, "rx_port", 1))
        bad = [p for p in self.addresses if p not in ports]
        if bad:
            raise PlanError("--address", f"port {bad[0]} is not used by this test (ports {ports[0]} and {ports[1]})")
        return configs

    def estimate(self, dut: Any = None, pace: Any = None) -> Any:
        """Trials and duration per test (:func:`wirespeed.rfc2544.estimate.estimate_configs`):
        ``dut`` a :class:`~.estimate.DutHint` (None: the prior), ``pace`` a
        :class:`~.estimate.Pace` (None: real time). PlanError: a plan that cannot run."""
        from .estimate import estimate_configs
        return estimate_configs(self.configs(), dut, pace, self.learning_config)

    def notes(self, configs: Mapping[str, PortPairConfig]) -> list[str]:
        """What the results should say about the plan: scaled-down durations, traffic."""
        notes = []
        learning = self.learning_config
        if learning is not None and learning.settle_ns < COMMON_DEFAULTS["board"]["settle"]:
            notes.append(f"learning settle wait {format_duration(learning.settle_ns)} is scaled down from "
                         f"RFC 2544 section 23 ({format_duration(COMMON_DEFAULTS['board']['settle'])})")
        for name, config in configs.items():
            notes += registry.get(name).notes(config)
        first = next(iter(configs.values()))
        traffic = getattr(first, "traffic_notes", None)
        return notes + (list(traffic()) if callable(traffic) else [])


def _plain(opt: registry.Option) -> type[int | float | str]:
    return {"int": int, "float": float, "text": str}.get(opt.kind, str)


def resolve_calibration(plan: Plan, target: str, sizes: list[int],
                        on_status: Any = None) -> tuple[Any, dict[str, Any] | None]:
    """The calibration ``plan.calibration`` asks for on ``target``: (Calibration or None, what the
    results say of its source). ``auto``: in simulation, a calibration run on a zero-delay
    loopback simulation of its own (at ``sizes``); on a board, none. ``none``: none. Otherwise a
    calibration file. Raises :class:`PlanError` for a bad file, ConnectError or CalibrationError
    when the calibration run fails."""
    from ..calibration import CAL_SIM_DUT, CalibrationError, auto_calibration, load_calibration

    if plan.calibration == "none" or (plan.calibration == "auto" and target != "sim"):
        return None, None
    if plan.calibration == "auto":
        return (auto_calibration(sizes, on_status=on_status),
                {"source": f"automatic: calibration run on a '{CAL_SIM_DUT}' simulation before the test"})
    try:
        return load_calibration(Path(plan.calibration)), {"source": f"file {plan.calibration}"}
    except CalibrationError as exc:
        field, _, message = str(exc).partition(": ")
        raise PlanError(field, message) from None
