"""Test tiers and shared helpers.

Every test directory can import the helpers of tests/ (records.py, sim_cli.py). The tests of tests/system
(the Verilated tester driven by the host) are marked ``system``; modules built with Verilator
(cocotb benches, the harness) mark themselves ``verilator``; the fast loop leaves both out:
``pytest -m "not system and not verilator and not slow"`` (CONTRIBUTING.md).
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


# The fast loop runs the first case of each parametrized test of these folders (a frame size,
# a backpressure pattern, a seed); the full suite runs every case.
SWEEPS = (HERE / "gateware", HERE / "sim")


def pytest_collection_modifyitems(config, items):
    first_cases = set()
    for item in items:
        parents = Path(item.fspath).parents
        if (HERE / "system") in parents:
            item.add_marker(pytest.mark.system)
        if hasattr(item, "callspec") and any(folder in parents for folder in SWEEPS):
            key = (item.fspath, getattr(item, "originalname", item.name))
            if key in first_cases:
                item.add_marker(pytest.mark.slow)
            first_cases.add(key)
