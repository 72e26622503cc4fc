"""The Linux DUTs' specification (sim/dut_linux.py) without a simulation: what the namespace is
made of, and the one-line refusal on a machine without TUN or namespaces."""

import os

import pytest

from wirespeed.cli import main
from wirespeed.sim import netns
from wirespeed.sim.dut import parse_dut
from wirespeed.traffic import PortAddress


@pytest.fixture
def no_tun(monkeypatch, tmp_path):
    monkeypatch.setattr(netns, "TUN_DEVICE", str(tmp_path / "tun"))
    netns.unavailable.cache_clear()
    yield str(tmp_path / "tun")
    netns.unavailable.cache_clear()


def test_a_machine_without_tun_is_refused_in_one_line(no_tun, capsys, tmp_path):
    code = main(["rfc2544", "--dut", "linux-router", "--sizes", "64", "--out", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2
    assert err == [f"wirespeed: error: --dut: dut linux-router: needs TAP devices in a network namespace: "
                   f"{no_tun} is missing (the kernel has no TUN/TAP)"]
    assert not (tmp_path / "run" / "results.json").exists()


def test_the_router_routes_each_side_via_the_tester_port_it_resolves():
    script = parse_dut("linux-router").setup()
    assert "ip link set ws0 address 02:00:00:00:00:02" in script    # the dst MAC of port 0's frames
    assert "ip route add 198.19.0.0/16 via 198.19.0.1 dev ws1" in script
    assert "neigh" not in script                                     # ARP/ND left to the tester's responder
    described = parse_dut("linux-bridge:latency=5us").describe()
    assert described["timing"] == "modelled" and described["latency_ns"] == 5000
    assert "ip link add br0 type bridge" in described["setup"] and len(described["setup_sha256"]) == 64


def test_the_router_follows_the_tester_addresses_it_is_given():
    moved = PortAddress(mac="02:00:00:00:00:09", ipv4="198.20.0.9", ipv6="2001:2:0:7::9")
    script = parse_dut("linux-router").with_addresses({1: moved}).setup()
    assert "ip link set ws0 address 02:00:00:00:00:09" in script      # port 0's frames go to port 1's MAC
    assert "ip route add 198.20.0.0/16 via 198.20.0.9 dev ws1" in script
    assert "ip address add 198.20.255.254/32 dev ws1" in script
    assert "ip address add 2001:2:0:7::fffe/64 dev ws1 nodad" in script
    assert "ip route add 198.18.0.0/16 via 198.18.0.1 dev ws0" in script    # port 0 keeps its defaults
    assert "198.19." not in script


def test_the_mtu_is_set_on_both_taps_after_their_ipv6_setup():
    script = parse_dut("linux-router:mtu=1000").setup().splitlines()
    for tap in ("ws0", "ws1"):
        mtu = script.index(f"ip link set {tap} mtu 1000")
        # below 1280 the kernel takes the TAP's IPv6 away, its /proc/sys entries with it
        assert script.index(f"echo 0 > /proc/sys/net/ipv6/conf/{tap}/disable_ipv6") < mtu
        assert mtu < script.index(f"ip link set {tap} up")
    assert "mtu 1280" in parse_dut("linux-bridge:mtu=1280").setup()
    assert " mtu " not in parse_dut("linux-router").setup()
    with pytest.raises(ValueError, match=r"^dut linux-router: mtu must be an integer 68\.\.65521 "):
        parse_dut("linux-router:mtu=67")


@pytest.mark.parametrize("port1, message", [
    ({"ipv4": "198.18.0.9"}, "--address: dut linux-router routes between two networks: ports 0 and 1 are both in "
                             "198.18.0.0/16; give one an IPv4 address outside it"),
    ({"ipv6": "2001:2::9"}, "--address: dut linux-router routes between two networks: ports 0 and 1 are both in "
                            "2001:2::/64; give one an IPv6 address outside it"),
])
@pytest.mark.skipif(netns.unavailable() is not None, reason="the Linux DUT needs TUN and namespaces")
def test_tester_addresses_the_router_cannot_route_are_refused_in_one_line(tmp_path, capsys, port1, message):
    given = ",".join(f"{k}={v}" for k, v in port1.items())
    code = main(["rfc2544", "--dut", "linux-router", "--sizes", "64", "--address", f"1:{given}",
                 "--out", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err == ["wirespeed: error: " + message]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text,message", [
    ("linux-router:latency=5ns", "dut linux-router: latency must be a time 0ns..1s, multiple of 8ns (e.g. 2us), "
                                 "got '5ns'"),
    ("linux-bridge:queue=0", "dut linux-bridge: queue must be an integer 1..65536, got '0'"),
    ("linux-router:rate=1M", "dut linux-router: unknown parameter 'rate', allowed: latency, poll, queue, rules, mtu"),
])
def test_bad_parameters_are_named(text, message):
    with pytest.raises(ValueError) as exc:
        parse_dut(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("args,message", [
    (["--dut", "router", "--dut-rules", "{rules}"], "--dut-rules: needs --dut linux-router or linux-bridge"),
    (["--dut", "linux-router", "--dut-rules", "{missing}"], "--dut-rules: {missing}: not a readable file"),
])
def test_dut_rules_are_refused_in_one_line(tmp_path, capsys, args, message):
    names = {"rules": str(tmp_path / "fw.nft"), "missing": str(tmp_path / "none.nft")}
    (tmp_path / "fw.nft").write_text("table inet t {}\n")
    code = main(["rfc2544", *[a.format(**names) for a in args], "--out", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err == ["wirespeed: error: " + message.format(**names)]


def test_dut_rules_become_the_linux_duts_rules_parameter(tmp_path):
    from wirespeed.cli.common import with_rules

    rules = tmp_path / "fw.nft"
    rules.write_text("table inet t {}\n")
    spec = parse_dut(with_rules("linux-bridge:latency=4us", rules))
    assert spec.rules == str(rules) and spec.latency_ns == 4000
    assert spec.describe()["ruleset"] == "table inet t {}\n"


@pytest.mark.skipif(netns.unavailable() is not None or os.geteuid() != 0,
                    reason="entering a namespace of ip netns add needs root, TUN and namespaces")
@pytest.mark.parametrize("dut, message", [
    ("tap", "dut tap: netns=PATH is required (a namespace you built, e.g. /run/netns/NAME)"),
    ("tap:netns={missing}", "dut tap: netns must be an existing network namespace file, e.g. /run/netns/NAME "
                            "(ip netns add NAME), got '{missing}'"),
    ("tap:netns={plain}", "dut tap: netns {plain} is not a network namespace (ip netns add NAME makes "
                          "/run/netns/NAME)"),
    ("tap:netns={plain},if0=t0,if1=t0", "dut tap: if0 and if1 must differ, not both t0"),
    ("tap:netns={plain},if1=a:b", "dut tap: if1 must be an interface name of 1..15 characters without '/', ':' "
                                  "or spaces, got 'a:b'"),
    ("tap:netns={plain},if0=sixteen-chars-xx", "dut tap: if0 must be an interface name of 1..15 characters "
                                               "without '/', ':' or spaces, got 'sixteen-chars-xx'"),
])
def test_a_namespace_of_the_users_that_cannot_be_had_is_refused_in_one_line(tmp_path, capsys, dut, message):
    names = {"missing": str(tmp_path / "none"), "plain": str(tmp_path / "plain")}
    (tmp_path / "plain").write_text("")
    code = main(["rfc2544", "--dut", dut.format(**names), "--sizes", "64", "--out", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and err == ["wirespeed: error: --dut: " + message.format(**names)]
    assert not (tmp_path / "run").exists()
