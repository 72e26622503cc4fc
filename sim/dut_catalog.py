"""The simulated DUT models and profiles as people read them (``wirespeed dut-models``): each
model's parameters with their default, what is allowed, unit and meaning.

Names, defaults and what is allowed come from the models' own tables (:data:`wirespeed.sim.dut.MODELS`:
each spec's ``PARAMS``, its field defaults, which :mod:`wirespeed.sim.dut_params` sets), so the
listing is what ``--dut`` accepts; only the meanings live here, one line per parameter name
(:data:`MEANINGS`, a test checks that every parameter has one).
"""

from __future__ import annotations

from typing import Any

from .dut import _KINDS, _OPTIONAL, IMPAIR_PARAMS, MODELS, PROFILES

__all__ = ["MEANINGS", "UNITS", "catalog"]

#: the unit a parameter kind is written in
UNITS = {"time": "time", "rate": "frames/s", "prob": "0..1", "window": "time:time", "int": "integer", "file": "path",
         "netns": "path", "ifname": "name"}

#: (model, parameter) -> what it means; model "any" for the impairments every model takes
MEANINGS: dict[tuple[str, str], str] = {
    ("loopback", "delay"): "a cable: every byte arrives this much later",
    ("router", "rate"): "frames/s its one server forwards",
    ("router", "queue"): "input queue in frames (tail drop)",
    ("router", "latency"): "fixed delay after service, before the output",
    ("router", "jitter"): "each frame's latency is latency + U[0, jitter], order kept",
    ("router", "collapse"): "service rate after an overload overflows the queue (RFC 2544 26.5)",
    ("router", "recover"): "the collapse ends this long after frames stop coming faster than rate",
    ("switch", "latency"): "after a frame's last byte, before it joins the egress queue",
    ("switch", "queue"): "egress queue in frames (tail drop)",
    ("switch", "table"): "MAC table entries, shared by both ports",
    ("switch", "aging"): "an entry ages out this long after its address's last frame (0s: never)",
    ("switch", "rate"): "forwarding limit in frames/s (default: wire speed)",
    ("switch", "learning"): "1: learn source addresses; 0: flood every frame",
    ("tap", "netns"): "the network namespace you built (ip netns add NAME: /run/netns/NAME); never deleted",
    ("tap", "if0"): "the TAP facing tester port 0: yours if it exists (kept), else created and removed",
    ("tap", "if1"): "the TAP facing tester port 1: yours if it exists (kept), else created and removed",
    **{(model, name): meaning for model in ("linux-router", "linux-bridge", "tap") for name, meaning in (
        ("latency", "from the frame the kernel answered (or a poll) to the output queue: the kernel takes no "
                    "simulated time"),
        ("poll", "how often the TAPs are read for what the kernel sends on its own timers"),
        ("queue", "output queue per port in frames (tail drop)"),
        ("rules", "an nftables ruleset loaded into the namespace after the setup (nft -f)"),
        ("mtu", "both TAPs' MTU (default the kernel's 1500): larger packets are fragmented or refused"))
       if model != "tap" or name not in ("rules", "mtu")},      # a user's namespace keeps its own
    ("any", "loss"): "share of frames dropped at random",
    ("any", "dup"): "share of frames sent twice",
    ("any", "reorder"): "share of frames held back behind the next one",
    ("any", "corrupt"): "share of frames with a byte inverted (bad FCS)",
    ("any", "blackout"): "frames put out during [START, START+LENGTH) are dropped",
    ("any", "seed"): "seeds every random decision, so runs repeat",
    ("any", "reboot"): "a reset (RFC 2544 26.6) takes the device down this long",
}


def _default(cls: Any, name: str, attr: str, kind: str) -> str:
    value = cls.model_fields[attr].default
    if value is None or (name in _OPTIONAL or name in getattr(cls, "OPTIONAL", ())) and not value:
        return "off"
    return str(_KINDS[kind][1](value))


def catalog() -> dict[str, Any]:
    """Every model with its parameters, then every profile: the JSON ``dut-models --json``
    prints and the table is drawn from."""
    models = []
    for model, cls in MODELS.items():
        params = []
        for name, (attr, kind, allowed) in cls.PARAMS.items():
            owner = "any" if name in IMPAIR_PARAMS else model
            params.append({"name": name, "default": _default(cls, name, attr, kind), "allowed": allowed,
                           "unit": UNITS[kind], "meaning": MEANINGS[(owner, name)], "every_model": owner == "any"})
        doc = " ".join((cls.__doc__ or "").split()).replace("``", "")
        models.append({"name": model, "description": doc, "parameters": params})
    profiles = [{"name": name, **profile.model_dump()} for name, profile in PROFILES.items()]
    return {"models": models, "profiles": profiles}
