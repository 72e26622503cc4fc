"""The API of whole runs (:mod:`.archive`): delete one, download it as a zip, its report as a
PDF, and the compare page of several. Included by :func:`.api.create_app`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse, HTMLResponse
from starlette.background import BackgroundTask

from ..results.resume import RecordError
from .archive import Held, NoResults, compare_page, delete_run, report_pdf, write_zip
from .common import ApiError, run_folder
from .runs import RunManager
from .store import BadName, RunStore, check_id

__all__ = ["runs_router"]


def runs_router(store: RunStore, runs: RunManager) -> APIRouter:
    """The routes of this module for the server's ``store`` and ``runs``."""
    router = APIRouter()

    def not_running(run_id: str, doing: str) -> None:
        active = runs.active
        if active is not None and active.id == run_id:
            raise ApiError(409, "run", f"run {run_id} is running: stop it or wait for it to end before {doing}",
                           run=run_id)

    @router.delete("/api/runs/{run_id}", summary="Delete a run: its folder and its index row (409 while it runs)")
    def run_delete(run_id: str) -> dict[str, object]:
        folder = run_folder(store, run_id)
        not_running(run_id, "deleting it")
        try:
            delete_run(store, run_id, folder)
        except Held as exc:
            raise ApiError(409, "run", str(exc), run=None) from None
        except OSError as exc:
            raise ApiError(500, "run", f"cannot delete run {run_id}: {exc.strerror or exc}") from None
        runs.handles.pop(run_id, None)
        return {"id": run_id, "deleted": True}

    @router.get("/api/runs/{run_id}/zip", summary="The run's files as one zip, each under <id>/",
                response_class=FileResponse)
    def run_zip(run_id: str) -> FileResponse:
        folder = run_folder(store, run_id)
        try:
            path = write_zip(store, run_id, folder)
        except OSError as exc:
            raise ApiError(500, "run", f"cannot pack run {run_id}: {exc.strerror or exc}") from None
        return FileResponse(path, media_type="application/zip", filename=f"{run_id}.zip",
                            background=BackgroundTask(os.unlink, path))

    @router.get("/api/runs/{run_id}/report.pdf", summary="The run's report as a PDF (made once, kept in its folder)",
                response_class=FileResponse)
    def run_pdf(run_id: str) -> FileResponse:
        from ..report import ReportError

        folder = run_folder(store, run_id)
        not_running(run_id, "printing its report")
        try:
            path = report_pdf(folder)
        except (NoResults, Held) as exc:
            raise ApiError(409, "run", str(exc), run=run_id if isinstance(exc, NoResults) else None) from None
        except ReportError as exc:
            if exc.field == "--pdf":        # WeasyPrint missing or failing: the server's fault
                raise ApiError(500, "pdf", exc.message) from None
            raise ApiError(422, "run", exc.message) from None
        except OSError as exc:
            raise ApiError(500, "pdf", f"cannot write the report of run {run_id}: {exc.strerror or exc}") from None
        return FileResponse(path, media_type="application/pdf", filename=f"{run_id}.pdf")

    @router.get("/api/compare", summary="The compare page (wirespeed compare --graph) of two or more runs",
                response_class=HTMLResponse)
    def compare(runs_: Annotated[list[str] | None, Query(alias="runs")] = None) -> HTMLResponse:
        from ..compare import MAX_SETS
        from ..compare.stats import CompareError

        ids = runs_ or []
        if len(ids) < 2:
            raise ApiError(422, "runs", f"two runs or more to compare: ?runs=ID&runs=ID; not {len(ids)}")
        if len(ids) > MAX_SETS:
            raise ApiError(422, "runs", f"at most {MAX_SETS} runs; not {len(ids)}")
        for run_id in ids:
            try:
                check_id(run_id)
            except BadName as exc:
                raise ApiError(422, "runs", exc.message) from None
            if not store.folder(run_id).is_dir() or store.folder(run_id).is_symlink():
                raise ApiError(404, "runs", f"no run {run_id}")
        try:
            page = compare_page([(run_label(run_id), store.folder(run_id)) for run_id in ids])
        except CompareError as exc:
            raise ApiError(422, "runs", f"{Path(exc.field).name}: {exc.message}") from None
        return HTMLResponse(page)

    def run_label(run_id: str) -> str:
        """A run's name in the compare page's legends and tables: its title with its id (titles
        repeat, ids do not), or its id."""
        try:
            title = store.record(run_id).title
        except RecordError:         # the compare names what is wrong with its folder
            title = None
        return f"{title} ({run_id})" if title else run_id

    return router
