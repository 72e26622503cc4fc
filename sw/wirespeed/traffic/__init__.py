"""Test traffic: what the generator sends and how to describe it, apart from any tester.

:mod:`.spec` (streams, sizes, modifiers, flows), :mod:`.compile` (a port's streams into the
generator's tables; rates and periods), :mod:`.golden` (the frames a port sends, for tests and
for checking captures) and :mod:`.addressing` (the tester's ports' addresses, the benchmarking
ranges). The contract with the gateware is :mod:`wirespeed.gateware.streamdesc`. This package
never imports the host."""

from .addressing import (
    BENCHMARK_NET,
    BENCHMARK_NET6,
    BenchmarkRangeWarning,
    MacAddress,
    PortAddress,
    check_distinct,
    tester_ip,
    tester_ipv6,
    tester_mac,
)
from .compile import CompiledPort, CompiledStream, PortProgram, ns_to_cycles, period_to_rate, rate_to_period
from .golden import ExpectedFrame, dissect, expected_frames
from .spec import MODIFIER_FIELDS, Flow, IpVersion, ModifierSpec, SizeSpec, StreamSpec, error_text, flow_stream

__all__ = ["BENCHMARK_NET", "BENCHMARK_NET6", "BenchmarkRangeWarning", "check_distinct", "MacAddress", "PortAddress",
           "tester_ip", "tester_ipv6", "tester_mac", "CompiledPort", "CompiledStream", "PortProgram", "ns_to_cycles",
           "period_to_rate", "rate_to_period", "ExpectedFrame", "dissect", "expected_frames", "MODIFIER_FIELDS",
           "Flow", "IpVersion", "ModifierSpec", "SizeSpec", "StreamSpec", "error_text", "flow_stream"]
