"""DUT specification strings (wirespeed.sim.dut)."""

from __future__ import annotations

import pydantic
import pytest

from wirespeed.sim.dut import DutSpec, LoopbackSpec, RouterSpec, parse_dut


@pytest.mark.parametrize("text,expected", [
    ("loopback", LoopbackSpec(delay_ns=40)),
    ("  loopback  ", LoopbackSpec(delay_ns=40)),
    ("loopback:", LoopbackSpec(delay_ns=40)),
    ("loopback:delay=0ns", LoopbackSpec(delay_ns=0)),
    ("loopback:delay=40ns", LoopbackSpec(delay_ns=40)),
    ("loopback:delay=2us", LoopbackSpec(delay_ns=2000)),
    ("loopback:delay=0.4us", LoopbackSpec(delay_ns=400)),
    ("loopback:delay=1ms", LoopbackSpec(delay_ns=1_000_000)),
    ("router", RouterSpec(rate=1_000_000, queue=256, latency_ns=10_000)),
    ("router:rate=400000,queue=256,latency=20us", RouterSpec(rate=400_000, queue=256, latency_ns=20_000)),
    ("router: rate = 400k , queue=16", RouterSpec(rate=400_000, queue=16, latency_ns=10_000)),
    ("router:rate=1.2M", RouterSpec(rate=1_200_000)),
    ("router:rate=1.5k,latency=0ns", RouterSpec(rate=1500, latency_ns=0)),
    ("router:rate=125M,queue=65536,latency=1s", RouterSpec(rate=125_000_000, queue=65536, latency_ns=10**9)),
    ("router:latency=0.008us", RouterSpec(latency_ns=8)),
])
def test_parse_good(text, expected):
    spec = parse_dut(text)
    assert spec == expected
    assert isinstance(spec, DutSpec)
    assert parse_dut(str(spec)) == spec  # canonical text round-trips


@pytest.mark.parametrize("text,message", [
    ("", "dut: empty specification, expected one of: loopback, router "
         "(e.g. 'router:rate=400k,queue=256,latency=20us')"),
    ("switch", "dut 'switch': unknown model, known models: loopback, router"),
    ("Loopback", "dut 'Loopback': unknown model, known models: loopback, router"),
    ("router:queue=x", "dut router: queue must be an integer 1..65536, got 'x'"),
    ("router:queue=0", "dut router: queue must be an integer 1..65536, got '0'"),
    ("router:queue=65537", "dut router: queue must be an integer 1..65536, got '65537'"),
    ("router:queue=1.5", "dut router: queue must be an integer 1..65536, got '1.5'"),
    ("router:queue=", "dut router: queue must be an integer 1..65536, got ''"),
    ("router:rate=0", "dut router: rate must be an integer number of frames/s 1..125000000 "
                      "(k and M suffixes allowed, e.g. 400k, 1.2M), got '0'"),
    ("router:rate=0.5", "dut router: rate must be an integer number of frames/s 1..125000000 "
                        "(k and M suffixes allowed, e.g. 400k, 1.2M), got '0.5'"),
    ("router:rate=126M", "dut router: rate must be an integer number of frames/s 1..125000000 "
                         "(k and M suffixes allowed, e.g. 400k, 1.2M), got '126M'"),
    ("router:rate=400K", "dut router: rate must be an integer number of frames/s 1..125000000 "
                         "(k and M suffixes allowed, e.g. 400k, 1.2M), got '400K'"),
    ("router:latency=10", "dut router: latency must be a time 0ns..1s, multiple of 8ns "
                          "(e.g. 10us), got '10'"),
    ("router:latency=12ns", "dut router: latency must be a time 0ns..1s, multiple of 8ns "
                            "(e.g. 10us), got '12ns'"),
    ("router:latency=2s", "dut router: latency must be a time 0ns..1s, multiple of 8ns "
                          "(e.g. 10us), got '2s'"),
    ("loopback:delay=41ns", "dut loopback: delay must be a time 0ns..1ms, multiple of 8ns "
                            "(e.g. 40ns, 2us), got '41ns'"),
    ("loopback:delay=0.5us", "dut loopback: delay must be a time 0ns..1ms, multiple of 8ns "
                             "(e.g. 40ns, 2us), got '0.5us'"),
    ("loopback:delay=-8ns", "dut loopback: delay must be a time 0ns..1ms, multiple of 8ns "
                            "(e.g. 40ns, 2us), got '-8ns'"),
    ("loopback:delay=1.001ms", "dut loopback: delay must be a time 0ns..1ms, multiple of 8ns "
                               "(e.g. 40ns, 2us), got '1.001ms'"),
    ("loopback:delay=40 ns", "dut loopback: delay must be a time 0ns..1ms, multiple of 8ns "
                             "(e.g. 40ns, 2us), got '40 ns'"),
    ("router:bogus=1", "dut router: unknown parameter 'bogus', allowed: rate, queue, latency"),
    ("router:latency_ns=8", "dut router: unknown parameter 'latency_ns', allowed: rate, queue, latency"),
    ("loopback:rate=1", "dut loopback: unknown parameter 'rate', allowed: delay"),
    ("router:queue", "dut router: expected key=value, got 'queue'"),
    ("router:rate=1k,,queue=2", "dut router: expected key=value, got ''"),
    ("router:=5", "dut router: expected key=value, got '=5'"),
    ("router:queue=1,queue=2", "dut router: parameter 'queue' given twice"),
])
def test_parse_bad(text, message):
    with pytest.raises(ValueError) as e:
        parse_dut(text)
    assert str(e.value) == message
    assert "\n" not in str(e.value)


def test_harness_args_and_describe():
    r = parse_dut("router:rate=400k,queue=16,latency=20us")
    assert r.harness_args() == ["--dut", "router", "--dut-param", "rate=400000",
                                "--dut-param", "queue=16", "--dut-param", "latency_ns=20000"]
    assert r.describe() == {"model": "router", "spec": "router:rate=400k,queue=16,latency=20us",
                            "rate_fps": 400_000, "queue_frames": 16, "latency_ns": 20_000,
                            "service_ns": 2500.0}
    lb = parse_dut("loopback")
    assert lb.harness_args() == ["--dut", "loopback", "--dut-param", "delay_ns=40"]
    assert lb.describe() == {"model": "loopback", "spec": "loopback:delay=40ns", "delay_ns": 40}
    assert str(parse_dut("router:rate=1234567,latency=1ms")) == \
        "router:rate=1234567,queue=256,latency=1ms"


def test_specs_validate_when_built_directly():
    with pytest.raises(pydantic.ValidationError, match="multiple of 8"):
        LoopbackSpec(delay_ns=7)
    with pytest.raises(pydantic.ValidationError):
        RouterSpec(queue=0)
    with pytest.raises(pydantic.ValidationError):
        RouterSpec(rate=1000, bogus=1)
    with pytest.raises(TypeError):
        DutSpec(model="x")  # abstract
    with pytest.raises(pydantic.ValidationError):
        parse_dut("loopback").delay_ns = 80  # frozen
