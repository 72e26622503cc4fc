"""What a server is given: where it keeps its data, which tester it drives, its token; and the
``--listen`` address, refused without a token unless it is a loopback address."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Settings", "Connector", "parse_listen", "DEFAULT_LISTEN", "is_loopback"]

DEFAULT_LISTEN = "127.0.0.1:8544"

#: opens the tester as :func:`wirespeed.connect` does: (target, dut, requires=..., command=...)
Connector = Callable[..., AbstractContextManager[Any]]


def _default_connector() -> Connector:
    from ..host.tester import connect

    return connect


@dataclass
class Settings:
    """``data``: the data folder (``runs/``, ``profiles/``, the index); ``target`` and ``dut``: the
    tester and the simulated DUT runs use unless a plan names its own DUT; ``token``: required
    on every API call when set; ``connector``: how a run opens the tester; ``report``: a complete
    run's graphs and report.html are written after it, as the command line does."""

    data: Path
    target: str = "sim"
    dut: str | None = None
    token: str | None = None
    connector: Connector = field(default_factory=_default_connector)
    report: bool = True


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_listen(text: str, token: str | None) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) as (host, port); ValueError with the one-line
    reason when malformed, or when the address is not a loopback one and there is no token."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"HOST:PORT, e.g. {DEFAULT_LISTEN}; not {text!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise ValueError(f"a port 1..65535 after the host, e.g. {DEFAULT_LISTEN}; not {text!r}")
    if not is_loopback(host) and not token:
        raise ValueError(f"{host} is not a loopback address: give --token TOKEN (or --new-token), which every API "
                         "call must then carry (Authorization: Bearer TOKEN)")
    return host, port
