"""The command line both simulation mains share (sim/harness/sim_cli.h): arguments and the
error each must give, after "PROGRAM: error: ", with exit code 2. tests/sim/test_sim_harness.py
runs them on wirespeed-sim, tests/system/test_uart_target_system.py on wirespeed-sim-uart."""

import subprocess
from pathlib import Path

from wirespeed.sim.dut_params import TABLE

MAX_CYCLES = 2**63 - 1
HELP_TABLE = "DUT parameters (times in ns, probabilities in parts per 10^9):"

SHARED_ERRORS = [
    (["--dut", "router", "--dut-param", "queue=x"], "dut router: queue must be an integer 1..65536, got 'x'"),
    (["--dut", "hub"], "dut 'hub': unknown model, known models: loopback, router, switch, tap"),
    (["--dut-param", "delay_ns"], "dut parameter must be key=value, got 'delay_ns'"),
    (["--max-cycles", "x"], f"--max-cycles must be an integer 0..{MAX_CYCLES}, got 'x'"),
    (["--max-cycles", "-1"], f"--max-cycles must be an integer 0..{MAX_CYCLES}, got '-1'"),
    (["--max-cycles", str(MAX_CYCLES + 1)],
     f"--max-cycles must be an integer 0..{MAX_CYCLES}, got '{MAX_CYCLES + 1}'"),
    (["--max-cycles"], "--max-cycles needs a value"),
]


def check_error(binary: Path, program: str, args: list[str], message: str) -> None:
    """``binary args`` exits with code 2 and ``PROGRAM: error: MESSAGE``, one line."""
    r = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr == f"{program}: error: {message}\n" and r.stdout == ""


def check_help(binary: Path, program: str) -> None:
    """--help: the usage line, then every DUT parameter of the table (sim/dut_params.py)."""
    r = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"usage: {program} ")
    assert HELP_TABLE in lines
    rows = lines[lines.index(HELP_TABLE) + 1:]
    assert [row.split()[:2] for row in rows] == [[p.model, p.key] for p in TABLE]
