"""Progress of long steps (a Verilator build of the simulation takes minutes) on the console:
on a terminal in the spinner's text; elsewhere (CI logs, a pipe) as plain lines, each stage
once and a heartbeat while it lasts (:mod:`wirespeed.sim.build`). Notes (a broken cache
entry being rebuilt) are always a line of their own."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

__all__ = ["build_progress"]


def build_progress(console: Console, status=None, what: str = "") -> Callable[..., None]:
    """A ``progress(text, *, note=False)`` callable for :func:`wirespeed.sim.build.ensure_binary`.
    ``status``: the rich Status whose text shows the stage on a terminal, after ``what``."""
    terminal = console.is_terminal

    def progress(text: str, *, note: bool = False) -> None:
        if note or not terminal or status is None:
            console.print(f"wirespeed: {'note: ' if note else ''}{text}", highlight=False, soft_wrap=True)
        else:
            status.update(f"{what}: {text}" if what else text)

    return progress
