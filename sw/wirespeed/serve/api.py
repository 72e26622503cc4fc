"""The REST API (FastAPI; OpenAPI at ``/docs``): the tester, the DUT models, profiles, runs
(create, list, get, events, stop, resume, files); :mod:`.api_runs` (delete, zip, PDF, compare)
and :mod:`.api_plans` (the estimate) add theirs. Every error is JSON ``{field, message}``:
422 for a bad value (the command line's words), 409 when the tester is busy (with the run that
holds it), 404, and 401 without the token when the server has one."""

from __future__ import annotations

import mimetypes
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from .. import __version__
from ..cli.plans import PlanRefused
from ..cli.rfc2544 import check_gateware, resume_parts
from ..results.resume import RecordError, ResumeError, load_run
from .api_plans import plans_router
from .api_runs import runs_router
from .api_tester import tester_router
from .common import ApiError, PlanBody, run_folder
from .pages import add_pages, login_page
from .profiles import ProfileStore
from .runs import Busy, RunManager
from .settings import Settings
from .store import BadName, RunStore, record_json, safe_file

__all__ = ["create_app", "ApiError", "SESSION_COOKIE"]

#: the cookie a page session carries the token in (HttpOnly, SameSite=Strict)
SESSION_COOKIE = "wirespeed_token"


class ProfileBody(BaseModel):
    """A profile: a config file's ``text`` in ``format`` (toml or yaml), or its ``values`` (saved as YAML)."""

    text: str | None = None
    format: str | None = None
    values: dict[str, Any] | None = None


def create_app(settings: Settings) -> FastAPI:
    """The application for ``settings``; the runs index is rebuilt from the folders (a run left
    ``running`` by a dead process marked interrupted) before it answers."""
    store = RunStore(settings.data)
    store.rebuild()
    profiles = ProfileStore(settings)
    runs = RunManager(settings, store, check_resume=check_gateware)

    def authorized(request: Request) -> None:
        if not settings.token:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            given = request.cookies.get(SESSION_COOKIE, "")
        if not token_matches(given.strip(), settings.token):
            raise ApiError(401, "token", "every call needs the server's token: Authorization: Bearer TOKEN")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        runs.shutdown()

    app = FastAPI(title="wirespeed", version=__version__, dependencies=[Depends(authorized)], lifespan=lifespan,
                  description="The wirespeed tester as an appliance (docs/appliance.md).", docs_url=None,
                  redoc_url=None)
    app.state.store, app.state.runs, app.state.profiles = store, runs, profiles

    @app.middleware("http")
    async def session(request: Request, call_next: Any) -> Any:
        """A page opened with ``?token=`` (the link ``--new-token`` prints, the login form) becomes
        a session: the token moves into a cookie and the address loses it."""
        given = request.query_params.get("token")
        page = request.method == "GET" and not request.url.path.startswith("/api/")
        if settings.token and given is not None and page:
            if not token_matches(given, settings.token):
                return login_page("That is not the server's token.")
            answer = RedirectResponse(request.url.path, 303)
            answer.set_cookie(SESSION_COOKIE, given, httponly=True, samesite="strict")
            return answer
        return await call_next(request)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        if exc.status == 401 and not request.url.path.startswith(("/api/", "/openapi.json")):
            return login_page("This server needs its token (given to wirespeed serve with --token or printed by "
                              "--new-token).")
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"field": exc.field, "message": exc.message, **exc.extra}, exc.status, headers=headers)

    @app.exception_handler(PlanRefused)
    @app.exception_handler(BadName)
    async def not_allowed(request: Request, exc: PlanRefused | BadName) -> JSONResponse:
        """A value that is not allowed, wherever it is found: 422 naming its key."""
        return JSONResponse({"field": exc.field, "message": exc.message}, 422)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return JSONResponse({"field": field, "message": first.get("msg", "not valid")}, 422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"field": "path", "message": f"{exc.detail}: {request.url.path}"}, exc.status_code)

    @app.get("/api/dut-models", summary="The simulated DUT models, their parameters and limits, and the profiles")
    def dut_models() -> dict[str, Any]:
        from wirespeed.sim.dut_catalog import catalog

        listing: dict[str, Any] = catalog()
        return listing

    @app.get("/api/profiles", summary="The saved profiles")
    def profile_list() -> list[dict[str, str]]:
        return profiles.names()

    @app.get("/api/profiles/{name}", summary="A profile: its file text, format and values")
    def profile_get(name: str) -> dict[str, Any]:
        found = profiles.get(name)
        if found is None:
            raise ApiError(404, "name", f"no profile {name}")
        return found

    @app.put("/api/profiles/{name}", summary="Save a profile (checked as a run's plan)")
    def profile_put(name: str, body: ProfileBody) -> dict[str, Any]:
        return profiles.put(name, body.text, body.format, body.values)

    @app.delete("/api/profiles/{name}", summary="Delete a profile")
    def profile_delete(name: str) -> dict[str, Any]:
        if not profiles.delete(name):
            raise ApiError(404, "name", f"no profile {name}")
        return {"name": name, "deleted": True}

    def busy(exc: Busy) -> ApiError:
        return ApiError(409, "run", exc.message, run=exc.run)

    @app.post("/api/runs", status_code=201, summary="Start a run of a plan (409 when the tester is busy)")
    def run_create(body: PlanBody) -> dict[str, Any]:
        checked = profiles.plan(body.profile, body.text, body.format, body.values)
        try:
            handle = runs.start(checked.plan, checked.dut, checked.configs)
        except Busy as exc:
            raise busy(exc) from None
        return {"id": handle.id, "state": handle.state}

    @app.get("/api/runs", summary="Every run, newest first (the index of DATA/runs)")
    def run_list() -> list[dict[str, Any]]:
        return store.rows()

    @app.get("/api/runs/{run_id}", summary="A run: status, header, headline figures")
    def run_get(run_id: str) -> dict[str, Any]:
        handle = runs.handles.get(run_id)
        try:
            answer = {"id": run_id} | record_json(store.record(run_id))
        except RecordError:
            if handle is None:
                raise ApiError(404, "run", f"no run {run_id}") from None
            answer = {"id": run_id, "status": handle.state, "error": handle.error}
        if handle is not None:
            answer |= {"live": handle is runs.active, "state": handle.state, "warning": handle.warning}
            answer["error"] = answer.get("error") or handle.error
        return answer

    @app.get("/api/runs/{run_id}/events", summary="The run's events as server-sent events, from the first",
             response_class=StreamingResponse)
    def run_events(run_id: str) -> StreamingResponse:
        handle = runs.handles.get(run_id)
        if handle is None:
            run_folder(store, run_id)
            raise ApiError(404, "run", f"run {run_id} was not run by this server since it started: its events are "
                                       "not kept; its results are in its files")

        def stream() -> Iterator[str]:
            for item in handle.log.follow():
                if item is None:
                    yield ": keepalive\n\n"
                else:
                    name, text = item
                    yield f"data: {text}\n\n" if name is None else f"event: {name}\ndata: {text}\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    @app.post("/api/runs/{run_id}/stop", summary="Stop after the trial in progress (the run is then interrupted)")
    def run_stop(run_id: str) -> dict[str, Any]:
        run_folder(store, run_id)
        handle = runs.stop(run_id)
        if handle is None:
            raise ApiError(409, "run", f"run {run_id} is not running", run=runs.active.id if runs.active else None)
        return {"id": run_id, "stopping": True}

    @app.post("/api/runs/{run_id}/resume", status_code=201, summary="Continue an interrupted or failed run")
    def run_resume(run_id: str) -> dict[str, Any]:
        from ..cli.common import InputError

        folder = run_folder(store, run_id)
        if runs.active is not None:
            raise busy(Busy(f"the tester is running run {runs.active.id}; stop it or wait for it to end",
                            runs.active.id))
        try:
            record = load_run(folder)
            dut, calibration, note, left = resume_parts(record, folder, settings.target)
        except ResumeError as exc:
            raise ApiError(422, "run", str(exc)) from None
        except InputError as exc:
            field, _, message = str(exc).partition(": ")
            raise ApiError(422, field.lstrip("-"), message) from None
        if record.target != settings.target and "sim" in (record.target, settings.target):
            raise ApiError(422, "target", f"the run was on {record.target}; this server's tester is {settings.target}")
        try:
            handle = runs.resume(run_id, record, dut, calibration, note, left)
        except Busy as exc:
            raise busy(exc) from None
        return {"id": handle.id, "state": handle.state}

    @app.get("/api/runs/{run_id}/files", summary="The run's files")
    def run_files(run_id: str) -> list[dict[str, Any]]:
        run_folder(store, run_id)
        return store.files(run_id)

    @app.get("/api/runs/{run_id}/files/{name:path}", summary="One file of the run's folder")
    def run_file(run_id: str, name: str) -> Response:
        folder = run_folder(store, run_id)
        try:
            path = safe_file(folder, name)
        except FileNotFoundError:
            raise ApiError(404, "name", f"no file {name} in run {run_id}") from None
        # read whole, then sent: a running run's files grow, and a length taken first would not match
        media = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return Response(path.read_bytes(), media_type=media)

    app.include_router(tester_router(settings, store, runs))
    app.include_router(runs_router(store, runs))
    app.include_router(plans_router(settings, store, profiles))
    add_pages(app, settings)
    return app


def token_matches(given: str, token: str) -> bool:
    return secrets.compare_digest(given.encode(), token.encode())
