"""Test tiers and shared helpers.

Every test directory can import the helpers of tests/ (records.py, sim_cli.py). The tests of tests/system
(the Verilated tester driven by the host) are marked ``system``; modules built with Verilator
(cocotb benches, the harness) mark themselves ``verilator``; the fast loop leaves both out:
``pytest -m "not system and not verilator and not slow"`` (CONTRIBUTING.md).
"""

import fcntl
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# The simulated tester runs on two threads where two cores are free, each spinning while it
# waits for the other (wirespeed.sim.launcher); the suite's workers share the cores, so there
# each simulation runs on one unless a test asks for two.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    os.environ.setdefault("WIRESPEED_SIM_THREADS", "1")


# The fast loop runs the first case of each parametrized test of these folders (a frame size,
# a backpressure pattern, a seed); the full suite runs every case.
SWEEPS = (HERE / "gateware", HERE / "sim")


# The files that take longest (a cold Verilator build, then minutes of simulated runs), longest
# first. With --dist loadfile a file stays on one worker, and a long file taken last leaves the
# other worker idle until it ends; so these go first, then the other system tests and the
# Verilator builds, and the many short unit tests last, where they fill both workers to the
# end (pyproject.toml turns off xdist's own order, most tests per file first, which put the
# system files, a few long tests each, last).
LONGEST_FIRST = tuple(HERE / f for f in (
    "system/test_uart_target_system.py", "system/test_board_config_system.py",
    "system/test_dut_rtl.py", "gateware/test_tester_top.py",
    "system/test_rfc2544_recovery_system.py", "gateware/test_generator.py",
    "host/test_sim_throughput.py", "host/test_fuzz_options.py",
))


def _longest_first(items):
    """``items`` in the order above: LONGEST_FIRST's files, the other system tests, the other
    files with Verilator builds, the rest; as collected within each group."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    verilator = {Path(item.fspath) for item in items if item.get_closest_marker("verilator")}

    def key(item):
        path = Path(item.fspath)
        if path in rank:
            return rank[path]
        if (HERE / "system") in path.parents:
            return len(rank)
        return len(rank) + (1 if path in verilator else 2)

    return sorted(items, key=key)


def pytest_collection_modifyitems(config, items):
    items[:] = _longest_first(items)
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


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory, worker_id):
    """The folder of the command line's run of ``reference.ARGS``, made once per test
    session: the xdist workers share it through their common temporary folder, under a lock."""
    # imported when a test asks for the run: the fast loop needs neither
    import reference

    from wirespeed.cli import main as _cli_main

    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent
    out, done = root / "cli-reference", root / "cli-reference.done"
    with open(root / "cli-reference.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            code = _cli_main([*reference.ARGS, "--out", str(out)])
            assert code == 0, f"the command line's reference run failed (exit {code})"
            done.touch()
    return out
