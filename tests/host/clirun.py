"""Running the command line in-process in a test: ``run(capsys, *argv)`` -> (exit code,
stdout, stderr); ``FAST``, the options of a tiny one-size run against a register-file server
(the ``server`` fixture); ``interrupt``, a Ctrl-C at a chosen call."""

from wirespeed.cli import main

FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us",
        "--dut", "a cable"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def interrupt(monkeypatch, owner, name, at_call=1):
    """``owner.name`` raises KeyboardInterrupt (a Ctrl-C) from its ``at_call``-th call on, the
    calls before it going through."""
    real, calls = getattr(owner, name), []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) >= at_call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, interrupted)
