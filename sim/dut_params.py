"""The parameters of the simulated DUT models, in the harness's own terms: its key, default,
range and step. This table is their one source: :mod:`wirespeed.sim.dut` takes its defaults
and limits from it, and :func:`cpp_header` generates the header the C++ harness validates its
``--dut-param KEY=VALUE`` arguments with (``dut_param_table.h``, written into each build).

Times are in ns (a multiple of the clock period), rates in frames/s, probabilities in parts
per 10^9; 0 turns an optional feature off (jitter, collapse, blackout, reboot, a switch's rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from wirespeed.gateware.config import CLK_HZ, NS_PER_CYCLE

__all__ = ["HarnessParam", "TABLE", "param", "cpp_header", "ANY"]

#: the model name of the parameters every model takes (impairments, reboot)
ANY = "any"
PPB = 10**9
HOUR_NS = 3600 * 10**9
SECOND_NS = 10**9


@dataclass(frozen=True)
class HarnessParam:
    model: str          # "loopback", "router", "switch", "tap" or ANY
    key: str            # as the harness takes it: --dut-param KEY=VALUE
    default: int
    lo: int
    hi: int
    step: int = 1       # the value must be a multiple of it

    @property
    def cpp_name(self) -> str:
        return "k" + "".join(w.capitalize() for w in (self.model, *self.key.split("_")))


def _time(model: str, key: str, default: int, lo: int, hi: int) -> HarnessParam:
    return HarnessParam(model, key, default, lo, hi, NS_PER_CYCLE)


TABLE: tuple[HarnessParam, ...] = (
    HarnessParam(ANY, "loss_ppb", 0, 0, PPB),
    HarnessParam(ANY, "dup_ppb", 0, 0, PPB),
    HarnessParam(ANY, "reorder_ppb", 0, 0, PPB),
    HarnessParam(ANY, "corrupt_ppb", 0, 0, PPB),
    _time(ANY, "blackout_start_ns", 0, 0, HOUR_NS),
    _time(ANY, "blackout_len_ns", 0, 0, HOUR_NS),
    HarnessParam(ANY, "seed", 1, 0, 2**32 - 1),
    _time(ANY, "reboot_ns", 0, 0, HOUR_NS),
    _time("loopback", "delay_ns", 40, 0, 1_000_000),
    HarnessParam("router", "rate", 1_000_000, 1, CLK_HZ),
    HarnessParam("router", "queue", 256, 1, 65536),
    _time("router", "latency_ns", 10_000, 0, SECOND_NS),
    HarnessParam("router", "max_frame", 16384, 64, 65536),
    _time("router", "jitter_ns", 0, 0, SECOND_NS),
    HarnessParam("router", "collapse", 0, 0, CLK_HZ),     # and below rate (the harness checks)
    _time("router", "recover_ns", 0, 0, HOUR_NS),
    _time("switch", "latency_ns", 2_000, 0, SECOND_NS),
    HarnessParam("switch", "queue", 256, 1, 65536),
    HarnessParam("switch", "table", 8192, 1, 1 << 20),
    _time("switch", "aging_ns", 300 * SECOND_NS, 0, 10**6 * SECOND_NS),     # the IEEE 802.1Q maximum
    HarnessParam("switch", "learning", 1, 0, 1),
    HarnessParam("switch", "rate", 0, 0, CLK_HZ),        # 0: wire speed
    HarnessParam("switch", "max_frame", 16384, 64, 65536),
    _time("tap", "latency_ns", 2_000, 0, SECOND_NS),
    _time("tap", "poll_ns", 10_000, NS_PER_CYCLE, SECOND_NS),
    HarnessParam("tap", "queue", 1024, 1, 65536),
    HarnessParam("tap", "max_frame", 16384, 64, 65536),
)

_BY_KEY = {(p.model, p.key): p for p in TABLE}


def param(model: str, key: str) -> HarnessParam:
    """The entry of ``model`` (or of every model, ANY) for the harness key ``key``."""
    return _BY_KEY.get((model, key)) or _BY_KEY[(ANY, key)]


def cpp_header() -> str:
    """``dut_param_table.h``: one ``ws::dut_param::Spec`` per entry of :data:`TABLE`."""
    lines = [
        "// The DUT models' parameters, generated from sim/dut_params.py (TABLE) by sim/build.py:",
        "// do not edit. dut_factory.cpp validates every --dut-param against these.",
        "#pragma once",
        "#include <cstdint>",
        "",
        "namespace ws::dut_param {",
        "",
        "struct Spec {",
        "    const char* key;",
        "    uint64_t def, min, max, multiple_of;",
        "};",
        "",
    ]
    lines += [f'inline constexpr Spec {p.cpp_name}{{"{p.key}", {p.default}ULL, {p.lo}ULL, {p.hi}ULL, '
              f'{p.step}ULL}};' for p in TABLE]
    lines += ["", "struct Entry {", '    const char* model;  // "any": every model', "    const Spec* spec;", "};",
              "",
              "// every entry, in table order (the harness's --help lists them)",
              "inline constexpr Entry kTable[] = {",
              *(f'    {{"{p.model}", &{p.cpp_name}}},' for p in TABLE), "};"]
    lines += ["", "}  // namespace ws::dut_param", ""]
    return "\n".join(lines)
