"""Test tiers and shared helpers.

Every test directory can import the helpers of tests/ (records.py). The tests of tests/system
(the Verilated tester driven by the host) are marked ``system``; modules built with Verilator
(cocotb benches, the harness) mark themselves ``verilator``; the fast loop leaves both out:
``pytest -m "not system and not verilator and not slow"`` (CONTRIBUTING.md).
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (HERE / "system") in Path(item.fspath).parents:
            item.add_marker(pytest.mark.system)
