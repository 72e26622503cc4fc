"""A run as JUnit XML (``rfc2544 --junit FILE``), for CI systems that show test reports: one
test suite per RFC 2544 test, one test case per frame size. A case fails when one of its
verdicts (:mod:`wirespeed.rfc2544.expect`) fails; a size the run did not measure is an error
(the run failed or was interrupted before it). Each case's output lists its verdicts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from .. import sizes as size_points
from ..rfc2544 import registry
from ..rfc2544.expect import Verdict, format_value
from .record import RunRecord

__all__ = ["junit_xml"]


def _verdict_line(v: Verdict) -> str:
    return (f"{'pass' if v.passed else 'FAIL'}: {v.expectation} at {size_points.text(v.frame_size)}: "
            f"{format_value(v.value, v.unit)}")


def _planned_sizes(entry: Any) -> list[Any]:
    if registry.get(entry.name).one_result:
        return [entry.parameters.frame_sizes[0]]
    return list(entry.parameters.frame_sizes)


def junit_xml(record: RunRecord, verdicts: Sequence[Verdict], seconds: float | None = None) -> str:
    """The JUnit XML of ``record`` with its ``verdicts``; ``seconds``: the run's wall time."""
    root = ET.Element("testsuites", name=f"wirespeed {record.test}")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for entry in record.tests:
        test = registry.get(entry.name)
        suite = ET.SubElement(root, "testsuite", name=f"rfc2544.{entry.name}")
        props = ET.SubElement(suite, "properties")
        dut = str(record.dut.get("spec") or record.dut.get("model") or "")
        for key, value in (("target", record.target), ("dut", dut), ("gateware", record.gateware.version_text),
                           ("status", record.status)):
            ET.SubElement(props, "property", name=key, value=value)
        measured = {r.frame_size: r for r in entry.results}
        counts = {"tests": 0, "failures": 0, "errors": 0}
        for size in _planned_sizes(entry):
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"rfc2544.{entry.name}",
                                 name=f"{test.title} {size_points.text(size)}")
            mine = [v for v in verdicts if v.test == entry.name and v.frame_size == size]
            if size not in measured:
                counts["errors"] += 1
                ET.SubElement(case, "error", message=f"not measured: the run {record.status}"
                              + (f" ({record.error})" if record.error else ""))
            else:
                failed = [v for v in mine if not v.passed]
                if failed:
                    counts["failures"] += 1
                    ET.SubElement(case, "failure", message="; ".join(_verdict_line(v) for v in failed))
            if mine:
                ET.SubElement(case, "system-out").text = "\n".join(_verdict_line(v) for v in mine)
        for key, n in counts.items():
            suite.set(key, str(n))
            totals[key] += n
    for key, n in totals.items():
        root.set(key, str(n))
    if seconds is not None:
        root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
