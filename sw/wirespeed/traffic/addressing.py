"""Addresses of the tester's ports and of test traffic: the defaults of RFC 2544 Appendix C
(IPv4 198.18.0.0/15, one side in 198.18.0.0/16 and the other in 198.19.0.0/16) and RFC 5180
(IPv6 2001:2::/48), and the warning RFC 6815 asks for: benchmarking belongs on isolated
networks, so an address outside those ranges draws :class:`BenchmarkRangeWarning`."""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator

from wirespeed import regs

__all__ = ["BENCHMARK_NET", "BENCHMARK_NET6", "BenchmarkRangeWarning", "MacAddress", "PortAddress", "check_distinct",
           "tester_mac", "tester_ip", "tester_ipv6"]

BENCHMARK_NET = IPv4Network("198.18.0.0/15")  # RFC 2544 C.2.2, RFC 6815
BENCHMARK_NET6 = IPv6Network("2001:2::/48")  # RFC 5180 5


def _mac(text: str) -> str:
    parts = text.replace("-", ":").lower().split(":")
    if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise ValueError(f"a MAC address like 02:00:00:00:00:01, not {text!r}")
    return ":".join(parts)


MacAddress = Annotated[str, AfterValidator(_mac)]


class BenchmarkRangeWarning(UserWarning):
    """An address outside 198.18.0.0/15: RFC 6815 keeps benchmarking on isolated networks."""


def tester_mac(port: int) -> str:
    """Default MAC of tester port ``port``: locally administered 02:00:00:00:00:<port+1>."""
    return _mac(f"02:00:00:00:{(port + 1) >> 8:02x}:{(port + 1) & 0xFF:02x}")


def tester_ip(port: int) -> IPv4Address:
    """Default IPv4 address of tester port ``port``: RFC 2544 C.2.2 puts one side of the DUT
    in 198.18.0.0/16 and the other in 198.19.0.0/16 (port 0: 198.18.0.1, port 1: 198.19.0.1)."""
    return BENCHMARK_NET.network_address + (port % 2) * 65536 + (port // 2) * 256 + 1


def tester_ipv6(port: int) -> IPv6Address:
    """Default IPv6 address of tester port ``port``, in the benchmarking range 2001:2::/48 of
    RFC 5180, one /64 per port: port 0 2001:2::1, port 1 2001:2:0:1::1."""
    return BENCHMARK_NET6.network_address + (port << 64) + 1


class PortAddress(BaseModel):
    """A tester port's own addresses (``pN.arp.mac/ipv4/ipv6``): the port answers ARP requests
    for ``ipv4`` and neighbour solicitations for ``ipv6`` with ``mac``, and its test frames
    come from ``mac``/``ipv4``."""

    model_config = ConfigDict(frozen=True)

    mac: MacAddress
    ipv4: IPv4Address
    ipv6: IPv6Address

    @model_validator(mode="after")
    def _unicast(self):
        # a port's own address is a source and a neighbour's answer: one host, never a group
        if int(self.mac[:2], 16) & 1 or self.mac == "00:00:00:00:00:00":
            raise ValueError(f"mac: a unicast address (the first octet even, not all zero), not {self.mac}")
        if self.ipv4.is_multicast or self.ipv4.is_unspecified or self.ipv4 == IPv4Address("255.255.255.255"):
            raise ValueError(f"ipv4: a unicast address (not multicast, broadcast or 0.0.0.0), not {self.ipv4}")
        if self.ipv6.is_multicast or self.ipv6.is_unspecified:
            raise ValueError(f"ipv6: a unicast address (not multicast or ::), not {self.ipv6}")
        return self

    @classmethod
    def default(cls, port: int) -> "PortAddress":
        return cls(mac=tester_mac(port), ipv4=tester_ip(port), ipv6=tester_ipv6(port))

    def registers(self, port: int) -> dict[str, int]:
        return {regs.port(port).arp.mac: int(self.mac.replace(":", ""), 16), regs.port(port).arp.ipv4: int(self.ipv4),
                regs.port(port).arp.ipv6: int(self.ipv6)}


def check_distinct(addresses: Mapping[int, PortAddress]) -> None:
    """ValueError (one line) when two ports share a MAC, IPv4 or IPv6 address (a DUT could not
    tell them apart)."""
    ports = sorted(addresses)
    for field in ("mac", "ipv4", "ipv6"):
        seen: dict[str, int] = {}
        for port in ports:
            value = str(getattr(addresses[port], field))
            if value in seen:
                raise ValueError(f"ports {seen[value]} and {port} have the same {field} {value}: each port needs "
                                 "its own")
            seen[value] = port
