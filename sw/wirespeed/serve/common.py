"""What the API's modules share: the error answer (:class:`ApiError`, JSON ``{field, message}``),
the plan body of ``POST /api/runs`` and ``POST /api/estimate``, and a run's folder by id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .store import RunStore

__all__ = ["ApiError", "PlanBody", "run_folder"]


class ApiError(Exception):
    """An error answer: ``status``, JSON ``{field, message}`` and ``extra`` keys."""

    def __init__(self, status: int, field: str, message: str, **extra: Any):
        super().__init__(f"{field}: {message}")
        self.status, self.field, self.message, self.extra = status, field, message, extra


class PlanBody(BaseModel):
    """A plan: a saved profile's name, a config file's text (``format`` toml or yaml) or its
    values as JSON (keys: ``wirespeed rfc2544``'s long options); ``values`` override the
    profile's or the text's keys."""

    profile: str | None = None
    text: str | None = None
    format: str | None = Field(None, description="toml or yaml, for text")
    values: dict[str, Any] | None = None


def run_folder(store: RunStore, run_id: str) -> Path:
    """The folder of run ``run_id``: BadName (422) for a malformed id, 404 when there is no such
    folder (a symbolic link in ``DATA/runs`` is not a run: nothing follows it out of the folder)."""
    folder = store.folder(run_id)
    if not folder.is_dir() or folder.is_symlink():
        raise ApiError(404, "run", f"no run {run_id}")
    return folder
