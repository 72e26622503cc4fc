"""``wirespeed serve``: the REST API of :mod:`wirespeed.serve` on uvicorn (docs/appliance.md)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

import typer

from ..serve.settings import DEFAULT_LISTEN
from .app import app
from .common import InputError, dut_option, err_console, target_option

__all__ = ["serve"]


@app.command("serve")
def serve(
    listen: Annotated[str, typer.Option(metavar="HOST:PORT",
                                        help="Address to listen on; one other than loopback needs --token or "
                                             "--new-token.")
                      ] = DEFAULT_LISTEN,
    data: Annotated[Path, typer.Option(metavar="DIR", help="Runs (DIR/runs/<id>/), profiles and the index.")
                    ] = Path("wirespeed-data"),
    target: Annotated[str, target_option()] = "sim",
    dut: Annotated[str | None, dut_option()] = None,
    token: Annotated[str | None, typer.Option(metavar="TOKEN", envvar="WIRESPEED_TOKEN",
                                              help="Every API call must carry it: Authorization: Bearer TOKEN.")
                     ] = None,
    new_token: Annotated[bool, typer.Option("--new-token", help="Make a random token, as --token; printed at "
                                                                "start with the page's address.")] = False,
) -> None:
    """Serve the web pages and the REST API (OpenAPI at /docs): profiles, runs, their events and files."""
    from ..host.tester import ConnectError, describe_dut
    from ..serve.api import create_app
    from ..serve.settings import Settings, parse_listen

    if new_token:
        if token:
            raise InputError("--new-token", "makes the token: give it or --token TOKEN (or WIRESPEED_TOKEN), "
                                            "not both")
        token = secrets.token_urlsafe(24)
    try:
        host, port = parse_listen(listen, token)
    except ValueError as exc:
        raise InputError("--listen", str(exc)) from None
    if target == "sim" and dut is not None:
        try:
            describe_dut(dut, target)
        except ConnectError as exc:
            raise InputError(exc.field, exc.message) from None
    try:
        data.mkdir(parents=True, exist_ok=True)
        application = create_app(Settings(data=data, target=target, dut=dut, token=token))
    except OSError as exc:
        raise InputError("--data", f"cannot use {data}: {exc.strerror or exc}") from None
    import uvicorn

    address = f"[{host}]" if ":" in host else host
    err_console.print(f"wirespeed serve: http://{address}:{port}/ (the API: /docs; data in {data}/)",
                      highlight=False, soft_wrap=True)
    if new_token:
        err_console.print(f"wirespeed serve: token {token}; the page: http://{address}:{port}/?token={token}",
                          highlight=False, soft_wrap=True)
    uvicorn.run(application, host=host, port=port, log_level="warning")
