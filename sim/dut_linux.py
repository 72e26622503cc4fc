"""The Linux kernel as the device under test: the ``tap`` model of the harness
(sim/harness/dut_tap.h) with a ready-made setup of the namespace it runs in.

    linux-router                 IPv4 and IPv6 forwarding between the tester's two sides
    linux-bridge                 a Linux bridge of the two TAPs
    linux-router:latency=5us,queue=256
    linux-router:rules=fw.nft    and an nftables ruleset (``--dut-rules FILE``)
    linux-router:mtu=1000        both TAPs' MTU (the kernel fragments or refuses larger packets)
    tap:netns=/run/netns/lab,if0=t0,if1=t1
                                 a namespace the user built (``ip netns add lab``), as it is

What the kernel decides is real: forwarding, TTL/hop limit and checksum rewrites, ARP and
neighbour discovery (against the tester's own responder, never static entries), bridge
learning, drops. When is the model's: the kernel takes no simulated time, each frame it puts
out leaves ``latency`` after the frame that caused it, at line rate behind an output queue of
``queue`` frames; ``poll`` is how often the TAPs are read for what the kernel sends on its own
timers (which run on wall-clock time, ~400 times faster than the simulated one). Throughput
and latency measured through it are therefore the model's, not the kernel's: results say so
(``timing: modelled``).

The router's sides are the tester ports' own addresses (:meth:`DutSpec.with_addresses`: the
run's ``--address``, else the defaults of :mod:`wirespeed.traffic.addressing`): each TAP takes
as its MAC the destination MAC of the frames that arrive on it (the peer tester port's, as the
tester addresses test frames), holds the last address of its side's /16 and /64, and routes its
side's /16 via the tester port's own address, so the kernel resolves exactly one neighbour per
side.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from ipaddress import IPv4Network, IPv6Network
from typing import ClassVar, Literal

from pydantic import Field

from wirespeed.traffic.addressing import PortAddress

from .dut_base import DutSpec, DutStartError, _int_text, _limits, _ranged, _time_field_check, _time_text
from .dut_params import param
from .netns import run_in, unavailable

__all__ = ["LinuxRouterSpec", "LinuxBridgeSpec", "TapNetnsSpec", "LINUX_MODELS", "TAPS"]

#: the TAP facing tester port p (sim/harness/dut_tap_kernel.h)
TAPS = ("ws0", "ws1")
_PORTS = range(len(TAPS))
_SIDE_V4 = 16
_SIDE_V6 = 64
#: the TAPs' MTU: IPv4's minimum (RFC 791) .. the largest a TAP takes; below 1280 the kernel
#: turns IPv6 off on the device (RFC 8200's minimum link MTU)
_MTU = (68, 65521)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sysctl(path: str, value: int) -> str:
    return f"echo {value} > /proc/sys/{path}"


class _LinuxSpec(DutSpec):
    """What both Linux DUTs share: the tap model's timing parameters and the namespace's
    life (set up once the simulation is ready, its counters read while it runs)."""

    latency_ns: int = param("tap", "latency_ns").default
    poll_ns: int = param("tap", "poll_ns").default
    queue: int = _ranged(param("tap", "queue"))
    rules: str | None = None    # an nftables ruleset file (absolute path)
    mtu: int = 0                # both TAPs' MTU; 0: the kernel's (1500)
    #: the tester ports' own addresses by port (the others: the defaults); not part of the text
    addresses: dict[int, PortAddress] = Field(default_factory=dict)

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "latency": ("latency_ns", "time", _time_text(param("tap", "latency_ns"), "2us")),
        "poll": ("poll_ns", "time", _time_text(param("tap", "poll_ns"), "10us")),
        "queue": ("queue", "int", _int_text(param("tap", "queue"))),
        "rules": ("rules", "file", "a readable nftables ruleset file (e.g. fw.nft)"),
        "mtu": ("mtu", "int", f"an integer {_MTU[0]}..{_MTU[1]} (bytes of IP packet, e.g. 1000)"),
    }
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"latency", "poll", "queue", "rules", "mtu"})
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {
        "latency_ns": _limits(param("tap", "latency_ns")),
        "poll_ns": _limits(param("tap", "poll_ns")),
        "queue": _limits(param("tap", "queue")),
        "mtu": _MTU,
    }

    def _check_times(self) -> None:
        _time_field_check("latency", self.latency_ns, *self.LIMITS["latency_ns"])
        _time_field_check("poll", self.poll_ns, *self.LIMITS["poll_ns"])

    def model_post_init(self, context: object) -> None:
        self._check_times()

    def setup(self) -> str:
        """The shell script that makes the namespace this DUT (TAPs ws0, ws1 exist, down)."""
        raise NotImplementedError

    def with_addresses(self, addresses: Mapping[int, PortAddress]) -> _LinuxSpec:
        return self.model_copy(update={"addresses": dict(addresses)})

    def _mtu_lines(self, taps: tuple[str, ...] = TAPS) -> list[str]:
        # after a TAP's IPv6 setup: an MTU below 1280 takes IPv6 (and its /proc/sys entries) away
        return [f"ip link set {tap} mtu {self.mtu}" for tap in taps] if self.mtu else []

    def port_address(self, port: int) -> PortAddress:
        """Tester port ``port``'s own addresses: the run's, else the defaults."""
        return self.addresses.get(port) or PortAddress.default(port)

    def report(self) -> dict[str, str]:
        """Name -> shell command whose output is part of :meth:`state`."""
        return {"links": "ip -s -j link show",
                "addresses": "ip -j address show",
                "snmp": "cat /proc/net/snmp /proc/net/snmp6 2>/dev/null || true",
                **({"ruleset": "nft -j list ruleset"} if self.rules else {})}

    def ruleset(self) -> str:
        """The text of ``rules`` (:class:`DutStartError` when it cannot be read)."""
        if not self.rules:
            return ""
        try:
            with open(self.rules, encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise DutStartError(f"dut {self.model}: rules: cannot read {self.rules}: {exc}", 2) from None

    def harness_args(self) -> list[str]:
        return ["--dut", "tap", "--dut-param", f"latency_ns={self.latency_ns}",
                "--dut-param", f"poll_ns={self.poll_ns}", "--dut-param", f"queue={self.queue}"]

    def describe(self) -> dict:
        script = self.setup()
        rules = self.ruleset()
        return {"model": self.model, "spec": str(self), "latency_ns": self.latency_ns, "poll_ns": self.poll_ns,
                "queue_frames": self.queue, "timing": "modelled", "kernel": os.uname().release,
                "setup": script, "setup_sha256": _sha256(script),
                **({"rules": self.rules, "ruleset": rules, "ruleset_sha256": _sha256(rules)} if self.rules else {})}

    def unavailable(self) -> str | None:
        why = unavailable()
        if why:
            return f"dut {self.model}: needs TAP devices in a network namespace: {why}"
        if self.rules and shutil.which("nft") is None:
            return f"dut {self.model}: rules need 'nft' (the nftables package), which is not installed"
        return None

    def start(self, pid: int) -> None:
        try:
            run_in(pid, self.setup())
        except RuntimeError as exc:
            raise DutStartError(f"dut {self.model}: its setup in the namespace failed: {exc}") from None
        if self.rules:
            try:
                run_in(pid, "nft -f -", stdin=self.ruleset())
            except RuntimeError as exc:
                raise DutStartError(f"dut {self.model}: rules: nft refused {self.rules}: {exc}", 2) from None

    def state(self, pid: int) -> dict:
        out: dict = {}
        for name, command in self.report().items():
            text = run_in(pid, command, check=False)
            try:
                out[name] = json.loads(text) if text.lstrip().startswith(("[", "{")) else text
            except ValueError:
                out[name] = text
        return out


class LinuxRouterSpec(_LinuxSpec):
    """The Linux kernel routing IPv4 and IPv6 between the tester's two sides
    (198.18.0.0/16 | 198.19.0.0/16, 2001:2::/64 | 2001:2:0:1::/64), ARP and neighbour
    discovery answered by the tester's responder."""

    model: Literal["linux-router"] = "linux-router"

    def with_addresses(self, addresses: Mapping[int, PortAddress]) -> _LinuxSpec:
        spec = super().with_addresses(addresses)
        for version, net in ((4, self._side_v4), (6, self._side_v6)):
            first, second = (net(spec.port_address(p)) for p in _PORTS)
            if first == second:
                raise ValueError(f"dut {self.model} routes between two networks: ports 0 and 1 are both in {first}; "
                                 f"give one an IPv{version} address outside it")
        return spec

    @staticmethod
    def _side_v4(address: PortAddress) -> IPv4Network:
        return IPv4Network(f"{address.ipv4}/{_SIDE_V4}", strict=False)

    @staticmethod
    def _side_v6(address: PortAddress) -> IPv6Network:
        return IPv6Network(f"{address.ipv6}/{_SIDE_V6}", strict=False)

    def setup(self) -> str:
        lines = ["ip link set lo up", _sysctl("net/ipv4/ip_forward", 1),
                 _sysctl("net/ipv6/conf/all/forwarding", 1)]
        for p, tap in zip(_PORTS, TAPS):
            own, peer = self.port_address(p), self.port_address(1 - p)
            v4, v6 = self._side_v4(own), self._side_v6(own)
            lines += [
                # the frames arriving here are addressed to the peer tester port's MAC
                f"ip link set {tap} address {peer.mac}",
                _sysctl(f"net/ipv6/conf/{tap}/disable_ipv6", 0),
                f"ip address add {v4.broadcast_address - 1}/32 dev {tap}",
                f"ip address add {v6.network_address + 0xfffe}/{_SIDE_V6} dev {tap} nodad",
                *self._mtu_lines((tap,)),
                f"ip link set {tap} up",
                f"ip route add {own.ipv4}/32 dev {tap}",
                f"ip route add {v4} via {own.ipv4} dev {tap}",
            ]
        return "\n".join(lines) + "\n"

    def report(self) -> dict[str, str]:
        return super().report() | {"neighbours": "ip -j neigh show", "routes": "ip -j route show"}


class LinuxBridgeSpec(_LinuxSpec):
    """A Linux bridge (br0, no STP, no IP address) of the two TAPs: learning, flooding and
    filtering are the kernel's."""

    model: Literal["linux-bridge"] = "linux-bridge"

    def setup(self) -> str:
        lines = ["ip link set lo up", "ip link add br0 type bridge", *self._mtu_lines()]
        lines += [f"ip link set {tap} master br0" for tap in TAPS]
        lines += [f"ip link set {tap} up" for tap in TAPS] + ["ip link set br0 up"]
        return "\n".join(lines) + "\n"

    def report(self) -> dict[str, str]:
        return super().report() | {"fdb": "bridge -j fdb show br br0"}


class TapNetnsSpec(_LinuxSpec):
    """The TAPs in a network namespace the user built (``ip netns add NAME``: its file
    /run/netns/NAME), configured as the user left it. A TAP device already there under the
    name (a persistent one, ``ip tuntap add NAME mode tap``, in a bridge or routed) is attached
    to and left there; a missing one is created, brought up and vanishes with the simulation.
    The namespace is never deleted: it is not wirespeed's (sim/harness/dut_tap_kernel.h)."""

    model: Literal["tap"] = "tap"
    netns: str | None = None       # required: parse_dut refuses a tap without it
    if0: str = TAPS[0]
    if1: str = TAPS[1]

    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {
        "netns": ("netns", "netns", "an existing network namespace file, e.g. /run/netns/NAME (ip netns add NAME)"),
        **{f"if{p}": (f"if{p}", "ifname", "an interface name of 1..15 characters without '/', ':' or spaces")
           for p in _PORTS},
        # the ruleset and the TAPs' MTU are the user's
        **{k: v for k, v in _LinuxSpec.PARAMS.items() if k not in ("rules", "mtu")},
    }
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"if0", "if1", "latency", "poll", "queue"})

    def model_post_init(self, context: object) -> None:
        super().model_post_init(context)
        if not self.netns:
            raise ValueError("dut tap: netns=PATH is required (a namespace you built, e.g. /run/netns/NAME)")
        if self.if0 == self.if1:
            raise ValueError(f"dut tap: if0 and if1 must differ, not both {self.if0}")

    def setup(self) -> str:
        return ""       # the namespace is as the user built it

    def tap(self, port: int) -> str:
        return self.if1 if port else self.if0

    def harness_args(self) -> list[str]:
        return super().harness_args() + ["--tap-netns", str(self.netns), "--tap-if0", self.if0, "--tap-if1", self.if1]

    def describe(self) -> dict:
        return super().describe() | {"netns": self.netns, "taps": [self.if0, self.if1]}

    def unavailable(self) -> str | None:
        if os.geteuid() != 0:
            return f"dut {self.model}: netns needs root (entering a namespace made by ip netns add)"
        why = super().unavailable()
        if why is None and subprocess.run(["nsenter", f"--net={self.netns}", "true"], capture_output=True,
                                          timeout=30).returncode != 0:
            return f"dut {self.model}: netns {self.netns} is not a network namespace (ip netns add NAME makes " \
                   "/run/netns/NAME)"
        return why

    def report(self) -> dict[str, str]:
        return super().report() | {"neighbours": "ip -j neigh show", "routes": "ip -j route show"}


LINUX_MODELS: dict[str, type[DutSpec]] = {"linux-router": LinuxRouterSpec, "linux-bridge": LinuxBridgeSpec,
                                          "tap": TapNetnsSpec}
