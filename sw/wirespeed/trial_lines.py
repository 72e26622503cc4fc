"""What the console says of a trial and of a run's control path: the parts of a trial line
beyond sent and lost (sequence and FCS errors, control-path retries), the verdict with its
reason, and the run's control-path summary line."""

from __future__ import annotations

from .host.models import TrialResult

__all__ = ["trial_extras", "verdict", "control_summary"]


def trial_extras(result: TrialResult) -> str:
    """What a console trial line adds to sent/lost: duplicated, out-of-order, late frames, FCS
    errors (sequence errors on a build without sequence tracking), and control-path retries."""
    parts = [f"{what} {n:,}" for what, n in (("dup", result.duplicate_frames), ("ooo", result.out_of_order_frames),
                                            ("late", result.late_frames), ("FCS errors", result.fcs_errors)) if n]
    if result.duplicate_frames is None and result.seq_errors:
        parts.append(f"seq errors {result.seq_errors:,}")
    control = result.control or {}
    if control.get("retries") or control.get("duplicates"):
        parts.append(f"control: {control.get('retries', 0)} retries, {control.get('timeouts', 0)} timeouts, "
                     f"{control.get('duplicates', 0)} duplicate answers")
    return "".join(f"  {p}" for p in parts)


def verdict(result: TrialResult) -> str:
    """pass, or fail with why (rich markup)."""
    return "[green]pass[/]" if result.passed else f"[red]fail[/] ({result.failure})"


def control_summary(control: dict[str, int] | None, url: str | None = None) -> str:
    """The run's control path in one line: requests, retries, timeouts, duplicate answers."""
    c = control or {}
    where = f" ({url})" if url else ""
    line = (f"control path{where}: {c.get('requests', 0):,} requests, {c.get('retries', 0):,} retries, "
            f"{c.get('timeouts', 0):,} timeouts, {c.get('duplicates', 0):,} duplicate answers")
    if c.get("bad_frames") or c.get("resyncs"):
        line += f", {c.get('bad_frames', 0):,} bad frames, {c.get('resyncs', 0):,} resyncs"
    return line
