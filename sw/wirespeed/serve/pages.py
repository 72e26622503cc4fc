"""The web pages of ``wirespeed serve``: Tester, New test, Runs and a run's live page. Each is a
template with no data of its own; its script reads everything through the REST API
(:mod:`wirespeed.serve.api`), so a page shows nothing a script could not get.

Every page is sent with a Content-Security-Policy that allows only the server's own scripts,
styles and images: nothing in a page can load from another address, and markup that reached a
page by mistake cannot run. The scripts insert every text as text (``textContent``), never as
markup.

``/docs`` is Swagger UI from the files of the installed ``fastapi-offline`` package, so the
API's page works offline too."""

from __future__ import annotations

from importlib import resources
from typing import Any

import jinja2
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..cli.plans import config_keys
from ..rfc2544 import registry
from .profiles import SERVER_OWNED
from .settings import Settings

__all__ = ["add_pages", "plan_options", "PAGE_POLICY", "PAGES"]

#: the pages' Content-Security-Policy: the server's own files only (see the module doc)
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
#: path -> (template, title) of the pages in the navigation, in its order
PAGES = {"/": ("tester", "Tester"), "/new": ("new", "New test"), "/runs": ("runs", "Runs")}
#: options of ``wirespeed rfc2544`` a server's plan does not take: the server owns the tester,
#: the results folder and what is printed
NOT_IN_FORM = set(SERVER_OWNED) | {"target", "out", "json", "force", "junit"}
PANEL = "Plan"


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("wirespeed.serve", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)


def plan_options() -> list[dict[str, Any]]:
    """The options a plan takes, for the New test form: the command line's own (key, help,
    group, kind, default, metavar), so the form offers exactly what ``--config`` reads. Kind:
    ``flag`` (true/false), ``many`` (repeatable: a list), ``text`` (one value; a LIST
    metavar takes comma-separated values)."""
    options = []
    for key, param in config_keys().items():
        if key.replace("-", "_") in NOT_IN_FORM:
            continue
        kind = "flag" if param.is_flag else "many" if param.multiple else "text"
        default = param.default
        options.append({"key": key, "help": param.help or "", "group": param.rich_help_panel or PANEL,
                        "kind": kind, "metavar": param.metavar or "",
                        "default": default if isinstance(default, (bool, int, float, str)) else None})
    return options


def add_pages(app: FastAPI, settings: Settings) -> None:
    """The pages, their static files, ``/api/plan-options`` and the offline ``/docs`` on ``app``
    (made with ``docs_url=None``)."""
    env = _environment()
    router = APIRouter()
    # the longer prefix first: a mount takes every path under it
    app.mount("/static/swagger", StaticFiles(directory=str(resources.files("fastapi_offline") / "static")),
              name="swagger")
    app.mount("/static", StaticFiles(directory=str(resources.files("wirespeed.serve") / "static")), name="static")

    def page(template: str, title: str, **data: Any) -> HTMLResponse:
        text = env.get_template(f"{template}.html.j2").render(
            title=title, nav=[(path, t) for path, (_, t) in PAGES.items()], version=__version__,
            target=settings.target, page=template, **data)
        return HTMLResponse(text, headers={"Content-Security-Policy": PAGE_POLICY,
                                           "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})

    for path, (template, title) in PAGES.items():
        def show(template: str = template, title: str = title) -> HTMLResponse:
            return page(template, title)

        router.add_api_route(path, show, methods=["GET"], response_class=HTMLResponse, include_in_schema=False)

    @router.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(run_id: str) -> HTMLResponse:
        from .store import BadName, check_id

        try:
            return page("run", "Run", run_id=check_id(run_id))
        except BadName as exc:
            raise HTTPException(404, exc.message) from None

    @router.get("/api/plan-options", summary="The options a plan takes (the New test form's fields)")
    def options() -> dict[str, Any]:
        return {"options": plan_options(), "simulation": settings.target == "sim", "dut": settings.dut,
                "tests": [{"name": t.name, "title": f"{t.section} {t.title}"
                           + "".join(f" with {section} {what}" for section, what in t.includes)}
                          for t in registry.all_tests()]}

    @router.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="wirespeed API",
                                   swagger_js_url="/static/swagger/swagger-ui-bundle.js",
                                   swagger_css_url="/static/swagger/swagger-ui.css",
                                   swagger_favicon_url="/static/swagger/favicon.png")

    app.include_router(router)


def login_page(message: str) -> HTMLResponse:
    """The page a browser gets without the server's token: a form that sends it (as ``?token=``,
    which the server turns into a session cookie)."""
    text = _environment().get_template("login.html.j2").render(message=message, version=__version__)
    return HTMLResponse(text, 401, headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-store"})
