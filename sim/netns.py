"""The network namespace the simulation makes for a ``tap`` DUT (sim/harness/dut_tap_kernel.h):
whether this machine can have one, and commands run inside it.

The simulation process owns the namespace (it dies with the process, so nothing is left
behind); others enter it through ``/proc/PID/ns``: ``nsenter --target PID --net``, plus
``--user --preserve-credentials`` when the simulation had to make a user namespace (not root).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

__all__ = ["unavailable", "run_in", "enter_args", "TUN_DEVICE"]

TUN_DEVICE = "/dev/net/tun"
_TIMEOUT_S = 30


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot give the simulation a namespace with TAPs (one line), or None."""
    if not os.path.exists(TUN_DEVICE):
        return f"{TUN_DEVICE} is missing (the kernel has no TUN/TAP)"
    if not os.access(TUN_DEVICE, os.R_OK | os.W_OK):
        return f"{TUN_DEVICE} is not readable and writable by this user"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (util-linux, iproute2)"
    probe = ["unshare", "--net", "true"] if os.geteuid() == 0 else \
        ["unshare", "--user", "--map-root-user", "--net", "true"]
    try:
        r = subprocess.run(probe, capture_output=True, text=True, timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot make a network namespace: {exc}"
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return f"cannot make a network namespace ({'root' if os.geteuid() == 0 else 'user namespaces'}): {why}"
    return None


def enter_args(pid: int) -> list[str]:
    """The command prefix that runs a command in the namespaces of process ``pid``."""
    own_user = os.readlink(f"/proc/{pid}/ns/user") == os.readlink("/proc/self/ns/user")
    # keeping the credentials: the user namespace denies setgroups, and this user is its root
    return ["nsenter", f"--target={pid}", "--net", *([] if own_user else ["--user", "--preserve-credentials"])]


def run_in(pid: int, script: str, *, check: bool = True, stdin: str = "") -> str:
    """Run the shell ``script`` (``set -e``) in the namespace of process ``pid``, ``stdin`` its
    input; its stdout. ``check``: a failure raises RuntimeError with the first line of its
    error output."""
    r = subprocess.run([*enter_args(pid), "sh", "-ec", script], input=stdin, capture_output=True, text=True,
                       timeout=_TIMEOUT_S)
    if check and r.returncode != 0:
        lines = [line.strip() for line in r.stderr.splitlines() if line.strip()]
        why = lines[0] if lines else f"exit {r.returncode}"
        raise RuntimeError(why)
    return r.stdout
