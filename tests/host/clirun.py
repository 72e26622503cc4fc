"""Running the command line in-process in a test: ``run(capsys, *argv)`` -> (exit code,
stdout, stderr), and ``FAST``, the options of a tiny one-size run against a register-file
server (the ``server`` fixture)."""

from wirespeed.cli import main

FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us",
        "--dut", "a cable"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
