"""Expectations: thresholds a run's results must meet, and the verdicts they give.

An expectation is ``METRIC OP VALUE[UNIT][@SIZES]``: ``throughput_pct>=99@64``,
``latency_us<=50``, ``loss_pct<=0.1@64,1518``. ``METRIC`` is a figure one test gives per frame
size (each test declares its own: :attr:`~.registry.TestType.metrics`), ``OP`` one of ``>=``,
``<=``, ``>``, ``<``, ``==``, ``UNIT`` (optional) the metric's own, and ``@SIZES`` the frame
sizes it applies to (default: every size the test measured). The plan keeps the text
(:attr:`~.plan.Plan.expect`), so the record of a run says what was expected; the verdicts are
computed from the record (:func:`verdicts_of`), one per expectation and frame size. A size the
expectation names that the run did not measure is a failed verdict with no value.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from .. import sizes as size_points
from ..units import format_figure
from . import registry

__all__ = ["Expectation", "Verdict", "parse_expectation", "verdicts", "verdicts_of", "metric_names", "OPS",
           "format_value"]

Op = Literal[">=", "<=", ">", "<", "=="]
OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt,
                                                   "<": operator.lt, "==": operator.eq}
_SYNTAX = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*(>=|<=|==|>|<)\s*([-+0-9.eE]+)\s*([a-zA-Z%/]*)\s*(?:@\s*(.+?))?\s*$")


class Expectation(BaseModel):
    """One parsed expectation (see the module doc)."""

    text: str
    test: str = Field(description="the test whose results the metric reads")
    metric: str
    op: Op
    limit: float
    unit: str
    sizes: list[int | str] | None = Field(None, description="frame sizes it applies to; None: all measured")


class Verdict(BaseModel):
    """An expectation checked against one frame size's result."""

    expectation: str
    test: str
    metric: str
    frame_size: int | str
    value: float | None = Field(description="the measured figure; None: not measured")
    op: Op
    limit: float
    unit: str
    passed: bool


def format_value(value: float | None, unit: str) -> str:
    """A verdict's measured figure for people: ``27.360 %``, ``424,854.59 fps``."""
    if value is None:
        return "not measured"
    return f"{format_figure(value, unit)} {unit}"


def _metrics() -> dict[str, tuple[str, registry.Metric]]:
    return {m.name: (t.name, m) for t in registry.all_tests() for m in t.metrics}


def metric_names() -> list[str]:
    """Every metric an expectation may name, with its unit: ``throughput_pct (%)``."""
    return [f"{name} ({metric.unit})" for name, (_, metric) in _metrics().items()]


def parse_expectation(text: str) -> Expectation:
    """``text`` as an :class:`Expectation`, or ValueError saying what is allowed."""
    metrics = _metrics()
    allowed = (f"METRIC OP VALUE[@SIZES], e.g. throughput_pct>=99@64; OP one of {', '.join(OPS)}; METRIC one of "
               f"{', '.join(metrics)}")
    m = _SYNTAX.match(text)
    if m is None:
        raise ValueError(f"{allowed}; not {text!r}")
    name, op, number, unit, sizes = m.groups()
    if name not in metrics:
        raise ValueError(f"{allowed}; not {text!r}")
    test, metric = metrics[name]
    try:
        limit = float(number)
    except ValueError:
        raise ValueError(f"{name}: the value must be a number, not {number!r}") from None
    if unit and unit != metric.unit:
        raise ValueError(f"{name} is in {metric.unit}: write the value in {metric.unit} or without a unit, "
                         f"not {number + unit!r}")
    parsed = None
    if sizes:
        try:
            parsed = size_points.parse_list([s.strip() for s in sizes.split(",")])
        except ValueError as exc:
            raise ValueError(f"@SIZES of {text!r}: {exc}") from None
    return Expectation(text=text.strip(), test=test, metric=name, op=op, limit=limit, unit=metric.unit,
                       sizes=parsed)


def verdicts(expectations: Sequence[Expectation], results: Mapping[str, Sequence[Any]]) -> list[Verdict]:
    """Each expectation against ``results`` (the results of each test, by test name)."""
    metrics = _metrics()
    out = []
    for e in expectations:
        metric = metrics[e.metric][1]
        measured = {r.frame_size: r for r in results.get(e.test, [])}
        for size in (e.sizes if e.sizes is not None else list(measured)):
            result = measured.get(size)
            value = None if result is None else metric.value(result)
            out.append(Verdict(expectation=e.text, test=e.test, metric=e.metric, frame_size=size, value=value,
                               op=e.op, limit=e.limit, unit=e.unit,
                               passed=value is not None and OPS[e.op](value, e.limit)))
    return out


def verdicts_of(record: Any) -> list[Verdict]:
    """The verdicts of a run record (``results.json``): its plan's expectations against its
    results."""
    texts = (getattr(record, "plan", None) or {}).get("expect") or []
    expectations = [parse_expectation(t) for t in texts]
    return verdicts(expectations, {e.test: record.results_of(e.test) for e in expectations})
