"""DUT specification strings (wirespeed.sim.dut)."""

from __future__ import annotations

import pydantic
import pytest

from wirespeed.sim.dut import DutSpec, LoopbackSpec, RouterSpec, SwitchSpec, parse_dut


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
    # impairments
    ("router:latency=10us,jitter=2us,seed=7", RouterSpec(jitter_ns=2000, seed=7)),
    ("loopback:delay=40ns,loss=0.01,dup=0.001,reorder=0.01,corrupt=0.001",
     LoopbackSpec(loss=0.01, dup=0.001, reorder=0.01, corrupt=0.001)),
    ("router:loss=1,corrupt=0.000000001,dup=.5,reorder=0",
     RouterSpec(loss=1.0, corrupt=1e-9, dup=0.5)),
    ("router:blackout=5ms:2ms", RouterSpec(blackout_ns=(5_000_000, 2_000_000))),
    ("loopback:blackout=0ns:8ns,seed=0", LoopbackSpec(blackout_ns=(0, 8), seed=0)),
    ("router:seed=4294967295", RouterSpec(seed=2**32 - 1)),
    ("router:rate=400k,collapse=100k,recover=2s", RouterSpec(rate=400_000, collapse=100_000, recover_ns=2 * 10**9)),
    # switch
    ("switch", SwitchSpec(latency_ns=2000, queue=256, table=8192, aging_ns=300 * 10**9, rate=0, learning=1)),
    ("switch:latency=5us,queue=64,table=1024,aging=10s,rate=1M",
     SwitchSpec(latency_ns=5000, queue=64, table=1024, aging_ns=10**10, rate=1_000_000)),
    ("switch:latency=0ns,queue=1,table=1,aging=0s", SwitchSpec(latency_ns=0, queue=1, table=1, aging_ns=0)),
    ("switch:table=1048576,aging=1000000s,queue=65536,latency=1s",
     SwitchSpec(table=2**20, aging_ns=10**15, queue=65536, latency_ns=10**9)),
    ("switch:learning=0,rate=125M", SwitchSpec(learning=0, rate=125_000_000)),
    ("switch:aging=8ns,learning=1", SwitchSpec(aging_ns=8)),
    ("switch:loss=0.01,reboot=2s,seed=3", SwitchSpec(loss=0.01, reboot_ns=2 * 10**9, seed=3)),
])
def test_parse_good(text, expected):
    spec = parse_dut(text)
    assert spec == expected
    assert isinstance(spec, DutSpec)
    assert parse_dut(str(spec)) == spec  # canonical text round-trips


MODEL_NAMES = "loopback, router, switch, linux-router, linux-bridge, tap"
PROFILE_NAMES = ("bsdrp-306m, bsdrp-306m-tuned, bsdrp-306m-ipfw, bsdrp-306m-pf, openbsd49-i386-em, openbsd49-amd64-em, "
                 "freebsd-livelock")
LOOPBACK_PARAMS = "delay, loss, dup, reorder, corrupt, blackout, seed, reboot"
PROBABILITY = "must be a probability 0..1 with at most 9 decimals (e.g. 0.01)"
BLACKOUT = "must be START:LENGTH, two times 0ns..3600s, multiples of 8ns, LENGTH > 0 (e.g. 5ms:2ms)"


@pytest.mark.parametrize("text,message", [
    ("", "dut: empty specification, expected one of: " + MODEL_NAMES
         + " (e.g. 'router:rate=400k,queue=256,latency=20us') or a profile: " + PROFILE_NAMES),
    ("hub", "dut 'hub': unknown model, known models: " + MODEL_NAMES + "; profiles: " + PROFILE_NAMES),
    ("Loopback", "dut 'Loopback': unknown model, known models: " + MODEL_NAMES + "; profiles: " + PROFILE_NAMES),
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
    ("router:bogus=1", "dut router: unknown parameter 'bogus', allowed: rate, queue, latency, jitter"
                       ", collapse, recover, loss, dup, reorder, corrupt, blackout, seed, reboot"),
    ("router:latency_ns=8", "dut router: unknown parameter 'latency_ns', allowed: rate, queue, latency, jitter"
                       ", collapse, recover, loss, dup, reorder, corrupt, blackout, seed, reboot"),
    ("loopback:rate=1", "dut loopback: unknown parameter 'rate', allowed: " + LOOPBACK_PARAMS),
    ("router:queue", "dut router: expected key=value, got 'queue'"),
    ("router:rate=1k,,queue=2", "dut router: expected key=value, got ''"),
    ("router:=5", "dut router: expected key=value, got '=5'"),
    ("router:queue=1,queue=2", "dut router: parameter 'queue' given twice"),
    # impairments
    ("router:jitter=12ns", "dut router: jitter must be a time 0ns..1s, multiple of 8ns "
                           "(e.g. 2us), got '12ns'"),
    ("router:jitter=2s", "dut router: jitter must be a time 0ns..1s, multiple of 8ns "
                         "(e.g. 2us), got '2s'"),
    ("loopback:jitter=8ns", "dut loopback: unknown parameter 'jitter', allowed: " + LOOPBACK_PARAMS),
    ("router:loss=1.5", f"dut router: loss {PROBABILITY}, got '1.5'"),
    ("router:dup=-0.1", f"dut router: dup {PROBABILITY}, got '-0.1'"),
    ("router:reorder=1e-3", f"dut router: reorder {PROBABILITY}, got '1e-3'"),
    ("loopback:corrupt=0.0000000001", f"dut loopback: corrupt {PROBABILITY}, got '0.0000000001'"),
    ("router:corrupt=", f"dut router: corrupt {PROBABILITY}, got ''"),
    ("router:loss=1%", f"dut router: loss {PROBABILITY}, got '1%'"),
    ("router:blackout=5ms", f"dut router: blackout {BLACKOUT}, got '5ms'"),
    ("router:blackout=5ms:0ns", f"dut router: blackout {BLACKOUT}, got '5ms:0ns'"),
    ("router:blackout=5ms:3ns", f"dut router: blackout {BLACKOUT}, got '5ms:3ns'"),
    ("router:blackout=3601s:1ms", f"dut router: blackout {BLACKOUT}, got '3601s:1ms'"),
    ("router:blackout=1ms:2ms:3ms", f"dut router: blackout {BLACKOUT}, got '1ms:2ms:3ms'"),
    ("router:seed=x", "dut router: seed must be an integer 0..4294967295, got 'x'"),
    ("router:seed=4294967296", "dut router: seed must be an integer 0..4294967295, got '4294967296'"),
    ("router:loss=0.1,loss=0.2", "dut router: parameter 'loss' given twice"),
    # overload collapse
    ("router:rate=400k,collapse=400k,recover=1s",
     "dut router: collapse must be below rate (400000 frames/s), got 400000"),
    ("router:collapse=10k", "dut router: collapse and recover go together (e.g. collapse=20k,recover=2s)"),
    ("router:recover=1s", "dut router: collapse and recover go together (e.g. collapse=20k,recover=2s)"),
    ("router:collapse=10k,recover=0s",
     "dut router: recover must be a time 8ns..3600s, multiple of 8ns (e.g. 2s), got '0s'"),
    # switch
    ("switch:latency=12ns", "dut switch: latency must be a time 0ns..1s, multiple of 8ns (e.g. 2us), got '12ns'"),
    ("switch:latency=2s", "dut switch: latency must be a time 0ns..1s, multiple of 8ns (e.g. 2us), got '2s'"),
    ("switch:queue=0", "dut switch: queue must be an integer 1..65536, got '0'"),
    ("switch:table=0", "dut switch: table must be an integer 1..1048576, got '0'"),
    ("switch:table=1048577", "dut switch: table must be an integer 1..1048576, got '1048577'"),
    ("switch:table=8k", "dut switch: table must be an integer 1..1048576, got '8k'"),
    ("switch:aging=300", "dut switch: aging must be a time 0s..1000000s, multiple of 8ns, 0s: never (e.g. 300s), "
                         "got '300'"),
    ("switch:aging=1000001s", "dut switch: aging must be a time 0s..1000000s, multiple of 8ns, 0s: never "
                              "(e.g. 300s), got '1000001s'"),
    ("switch:aging=4ns", "dut switch: aging must be a time 0s..1000000s, multiple of 8ns, 0s: never (e.g. 300s), "
                         "got '4ns'"),
    ("switch:rate=0", "dut switch: rate must be an integer number of frames/s 1..125000000 "
                      "(k and M suffixes allowed, e.g. 400k, 1.2M), got '0'"),
    ("switch:rate=126M", "dut switch: rate must be an integer number of frames/s 1..125000000 "
                         "(k and M suffixes allowed, e.g. 400k, 1.2M), got '126M'"),
    ("switch:learning=2", "dut switch: learning must be 0 or 1, got '2'"),
    ("switch:learning=off", "dut switch: learning must be 0 or 1, got 'off'"),
    ("switch:delay=40ns", "dut switch: unknown parameter 'delay', allowed: latency, queue, table, aging, rate, "
                          "learning, loss, dup, reorder, corrupt, blackout, seed, reboot"),
    ("switch:jitter=8ns", "dut switch: unknown parameter 'jitter', allowed: latency, queue, table, aging, rate, "
                          "learning, loss, dup, reorder, corrupt, blackout, seed, reboot"),
    ("switch:table=4,table=5", "dut switch: parameter 'table' given twice"),
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


def test_impairment_specs_canonical_text_args_and_describe():
    r = parse_dut("router:blackout=5ms:2ms,seed=7,latency=10us,jitter=2us,loss=0.010")
    assert str(r) == "router:rate=1M,queue=256,latency=10us,jitter=2us,loss=0.01,blackout=5ms:2ms,seed=7"
    assert r.harness_args() == [
        "--dut", "router", "--dut-param", "rate=1000000", "--dut-param", "queue=256",
        "--dut-param", "latency_ns=10000", "--dut-param", "jitter_ns=2000",
        "--dut-param", "loss_ppb=10000000", "--dut-param", "blackout_start_ns=5000000",
        "--dut-param", "blackout_len_ns=2000000", "--dut-param", "seed=7"]
    d = r.describe()
    assert d["jitter_ns"] == 2000
    assert d["impairments"] == {"loss": 0.01, "blackout_start_ns": 5_000_000,
                                "blackout_len_ns": 2_000_000, "seed": 7}
    assert str(parse_dut("loopback:corrupt=0.000000001")) == \
        "loopback:delay=40ns,corrupt=0.000000001"
    assert "impairments" not in parse_dut("loopback:seed=1").describe()


def test_specs_validate_when_built_directly():
    with pytest.raises(pydantic.ValidationError, match="multiple of 8"):
        LoopbackSpec(delay_ns=7)
    with pytest.raises(pydantic.ValidationError):
        RouterSpec(queue=0)
    with pytest.raises(pydantic.ValidationError):
        RouterSpec(rate=1000, bogus=1)
    with pytest.raises(pydantic.ValidationError, match="loss must be a probability"):
        RouterSpec(loss=1.5)
    with pytest.raises(pydantic.ValidationError, match="at most 9 decimals"):
        LoopbackSpec(dup=1e-10)
    with pytest.raises(pydantic.ValidationError, match="multiple of 8"):
        RouterSpec(jitter_ns=4)
    with pytest.raises(pydantic.ValidationError, match="blackout length"):
        RouterSpec(blackout_ns=(0, 0))
    with pytest.raises(TypeError):
        DutSpec(model="x")  # abstract
    with pytest.raises(pydantic.ValidationError):
        parse_dut("loopback").delay_ns = 80  # frozen


def test_profiles_expand_to_their_model_and_take_overrides():
    from wirespeed.sim.dut import PROFILES, profile_description

    assert parse_dut("bsdrp-306m") == RouterSpec(rate=400_000, queue=1024, latency_ns=20_000)
    assert parse_dut("bsdrp-306m-pf").collapse == 0       # 274 kpps forwarded under the lab's overload
    # overrides replace the profile's parameters or add impairments
    assert parse_dut("bsdrp-306m:queue=16,loss=0.001") == \
        RouterSpec(rate=400_000, queue=16, latency_ns=20_000, loss=0.001)
    for name, profile in PROFILES.items():
        spec = parse_dut(name)
        assert parse_dut(profile.spec) == spec and profile.source and profile.assumed
        assert profile_description(f" {name}:seed=3")["profile"]["name"] == name
    assert profile_description("router:rate=1k") == {}
    # the seed labs' figures: 400 kpps, 320 kpps with ipfw, 274 kpps with pf, OpenBSD near 300 kpps
    assert [parse_dut(n).rate for n in ("bsdrp-306m", "bsdrp-306m-ipfw", "bsdrp-306m-pf", "openbsd49-i386-em")] == \
        [400_000, 320_000, 274_000, 298_000]


@pytest.mark.parametrize("text,message", [
    ("bsdrp-306m:queue", "dut bsdrp-306m: expected key=value, got 'queue'"),
    ("bsdrp-306m:queue=0", "dut router: queue must be an integer 1..65536, got '0'"),
    ("bsdrp-306m:bogus=1", "dut router: unknown parameter 'bogus', allowed: rate, queue, latency, jitter, "
                           "collapse, recover, loss, dup, reorder, corrupt, blackout, seed, reboot"),
])
def test_profile_errors(text, message):
    with pytest.raises(ValueError) as e:
        parse_dut(text)
    assert str(e.value) == message


def test_switch_canonical_text_args_and_describe():
    sw = parse_dut("switch")
    assert str(sw) == "switch:latency=2us,queue=256,table=8192,aging=300s"
    assert sw.harness_args() == ["--dut", "switch", "--dut-param", "latency_ns=2000", "--dut-param", "queue=256",
                                 "--dut-param", "table=8192", "--dut-param", "aging_ns=300000000000"]
    assert sw.describe() == {"model": "switch", "spec": "switch:latency=2us,queue=256,table=8192,aging=300s",
                             "latency_ns": 2000, "queue_frames": 256, "table_entries": 8192,
                             "aging_ns": 300 * 10**9}
    sw = parse_dut("switch:learning=0,rate=400k,aging=0s,table=16,loss=0.5,latency=1.6us")
    assert str(sw) == "switch:latency=1600ns,queue=256,table=16,aging=0ns,rate=400k,learning=0,loss=0.5"
    assert sw.harness_args() == [
        "--dut", "switch", "--dut-param", "latency_ns=1600", "--dut-param", "queue=256",
        "--dut-param", "table=16", "--dut-param", "aging_ns=0", "--dut-param", "rate=400000",
        "--dut-param", "learning=0", "--dut-param", "loss_ppb=500000000"]
    d = sw.describe()
    assert (d["rate_fps"], d["service_ns"], d["learning"], d["impairments"]) == (400_000, 2500.0, False, {"loss": 0.5})
    assert parse_dut("switch:reboot=1s").describe()["reboot_ns"] == 10**9
    # built directly, the same rules
    with pytest.raises(pydantic.ValidationError, match="aging must be a multiple of 8 ns"):
        SwitchSpec(aging_ns=12)
    with pytest.raises(pydantic.ValidationError):
        SwitchSpec(table=0)
    with pytest.raises(pydantic.ValidationError):
        SwitchSpec(learning=2)
