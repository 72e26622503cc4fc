"""Register transports: the tester's CSR space reached by Etherbone records over UDP (a board,
or the simulation: :mod:`.udp`) or over a serial line (a board's management UART, or the
simulated one over TCP: :mod:`.uart`), and an in-memory fake for unit tests (:mod:`.fake`).
A transport moves 32-bit words; register names are the host's business
(:class:`wirespeed.host.device.Device`)."""

from __future__ import annotations

from .base import CONTROL_COUNTERS, MAX_BURST, Transport
from .fake import FakeTransport
from .udp import DEFAULT_PORT, EtherboneTransport, parse_udp_url

__all__ = ["CONTROL_COUNTERS", "Transport", "EtherboneTransport", "FakeTransport", "open_target", "parse_udp_url",
           "DEFAULT_PORT", "MAX_BURST"]


def open_target(url: str, timeout: float = 1.0, retries: int = 3) -> Transport:
    """The transport for ``udp://HOST[:PORT]`` (a board's or the simulation's Etherbone
    server), or for ``serial://DEVICE?baud=N`` / ``socket://HOST:PORT`` (Etherbone over a
    UART, :mod:`.uart`; at least 5 tries there)."""
    if url.startswith(("serial://", "socket://")):
        from .uart import SerialTransport

        return SerialTransport(url, timeout=timeout, retries=max(retries, 5))
    host, port = parse_udp_url(url)
    return EtherboneTransport(host, port, timeout=timeout, retries=retries)
