"""What the console says of a trial and of a run's control path: the parts of a trial line
beyond sent and lost (sequence and FCS errors, control-path retries), the verdict with its
reason, the packing of a line's parts into :data:`COLUMNS` columns, and the run's control-path
summary line."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from .host.models import TrialResult

__all__ = ["extra_parts", "short_verdict", "pack", "COLUMNS", "control_summary"]

#: a trial line's width at most: a line per trial on an 80-column terminal, never wrapped by it
COLUMNS = 80
#: what a trial line's continuation starts with
INDENT = " " * 7
#: failure reasons a trial line shows in its own fields (lost) or in :func:`extra_parts`
_SHOWN = (" lost", " duplicated", " out of order", " late", " FCS error", " FCS errors")


def extra_parts(result: TrialResult) -> list[str]:
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
    return parts


def short_verdict(result: TrialResult) -> list[str]:
    """pass, or fail and each reason the line's other fields do not show (rich markup)."""
    if result.passed:
        return ["[green]pass[/]"]
    reasons = [r for r in (result.failure or "").split(", ") if r and not r.endswith(_SHOWN)]
    return ["[red]fail[/]" + (f" ({', '.join(reasons)})" if reasons else "")]


def pack(parts: Sequence[str], width: int = COLUMNS) -> str:
    """``parts`` (rich markup) joined by spaces, a new line (indented) before a part that would
    pass ``width`` columns: a trial line that never wraps on the terminal."""
    lines = [""]
    for part in parts:
        line = lines[-1]
        joined = f"{line} {part}" if line.strip() else line + part
        if Text.from_markup(joined).cell_len <= width or not line.strip():
            lines[-1] = joined
        else:
            lines.append(INDENT + part)
    return "\n".join(lines)


def control_summary(control: dict[str, int] | None, url: str | None = None) -> str:
    """The run's control path in one line: requests, retries, timeouts, duplicate answers."""
    c = control or {}
    where = f" ({url})" if url else ""
    line = (f"control path{where}: {c.get('requests', 0):,} requests, {c.get('retries', 0):,} retries, "
            f"{c.get('timeouts', 0):,} timeouts, {c.get('duplicates', 0):,} duplicate answers")
    if c.get("bad_frames") or c.get("resyncs"):
        line += f", {c.get('bad_frames', 0):,} bad frames, {c.get('resyncs', 0):,} resyncs"
    return line
