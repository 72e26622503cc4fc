"""Etherbone over UDP: a board's LiteEth Etherbone server, or the simulation harness's.

LiteEth answers to the UDP port it listens on, not to the request's source port, so a transport
to a board binds that port locally (as LiteX's ``CommUDP`` does); a server on this machine (the
simulation) answers to the source address, so a transport to a loopback address binds an
ephemeral port.

Retries: a packet that gets no answer within ``timeout`` is sent again, ``retries`` tries in
all. A lost *answer* therefore repeats the packet's writes; on a quiet point-to-point link or
on the loopback interface this does not happen in practice.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urlsplit

from ..errors import TransportError
from .base import Record, RecordTransport, decode_answer, encode_request, next_tag

__all__ = ["EtherboneTransport", "parse_udp_url", "DEFAULT_PORT"]

DEFAULT_PORT = 1234


class EtherboneTransport(RecordTransport):
    """Etherbone over UDP to ``host:port``.

    ``local_port``: the UDP port to receive answers on; None picks it from the host (an
    ephemeral port for a loopback host, else ``port``, where LiteEth sends its answers).
    """

    def __init__(self, host: str, port: int = DEFAULT_PORT, timeout: float = 1.0, retries: int = 3,
                 local_port: int | None = None):
        if not 0 < port < 65536:
            raise ValueError(f"UDP port must be 1..65535, not {port}")
        super().__init__(f"udp://{host}:{port}", timeout, retries)
        self._remote = (_resolve(host, self.url), port)
        if local_port is None:
            local_port = 0 if ipaddress.ip_address(self._remote[0]).is_loopback else port
        self._sock = _bind_udp(local_port, self.url)

    def close(self) -> None:
        self._sock.close()

    def _exchange(self, record: Record) -> list[int]:
        self._tag = next_tag(self._tag)
        request = encode_request(record, self._tag)
        self.stats["requests"] += 1
        for attempt in range(self.retries):
            if attempt:
                self.stats["retries"] += 1
            self._send(request)
            words = self._await_answer(self._tag)
            if words is not None:
                return self._answer_words(record, words)
            self.stats["timeouts"] += 1
        raise TransportError(f"no answer from {self.url} after {self.retries} tries")

    def _send(self, request: bytes) -> None:
        try:
            self._sock.sendto(request, self._remote)
        except OSError as exc:
            raise TransportError(f"cannot send to {self.url}: {exc.strerror or exc}") from None

    def _await_answer(self, tag: int) -> list[int] | None:
        """The words of the answer tagged ``tag``, or None after ``timeout`` seconds. Stray
        datagrams and late answers to earlier requests are skipped."""
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            self._sock.settimeout(left)
            try:
                datagram = self._sock.recv(65536)
            except (TimeoutError, ConnectionRefusedError):
                return None
            answer = decode_answer(datagram)
            if answer is not None and answer[0] == tag:
                return answer[1]
            self.stats["duplicates" if answer is not None else "bad_frames"] += 1
        return None


def _resolve(host: str, url: str) -> str:
    try:
        # an AF_INET socket address is (host, port): str() only tells mypy, which types any family's
        return str(socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0])
    except (socket.gaierror, UnicodeError):
        raise TransportError(f"cannot resolve the host of {url}") from None


def _bind_udp(local_port: int, url: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind(("", local_port))
    except OSError as exc:
        sock.close()
        raise TransportError(
            f"cannot listen on local UDP port {local_port} for answers from {url} "
            f"(LiteEth answers to the port it listens on): {exc.strerror or exc}") from None
    return sock


def parse_udp_url(url: str) -> tuple[str, int]:
    """``(host, port)`` of ``udp://HOST[:PORT]`` (default port 1234); ValueError (one line)
    for anything else."""
    parts = urlsplit(url)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        port = None
    if parts.scheme != "udp" or not parts.hostname or port is None or parts.path or parts.query:
        raise ValueError(f"udp://HOST[:PORT] (default port {DEFAULT_PORT}), not {url!r}")
    return parts.hostname, port
