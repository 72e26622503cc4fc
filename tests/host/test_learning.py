"""The learning phase (RFC 2544 section 23): addresses, ARP/ND answering, gratuitous ARP,
unsolicited NA, learning frames, settle wait; against the register file."""

import dataclasses
from ipaddress import IPv4Address, IPv6Address

import pytest
from fakes import FakeTester

from wirespeed.gateware.config import BOARD_25F
from wirespeed.gateware.regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, CMD_STOP, MAGIC
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.rfc2544.common import LearningConfig
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput
from wirespeed.traffic import Flow, PortAddress, flow_stream
from wirespeed.transport import FakeTransport


def script_learning(fake, frames):
    """ARP commands make the responder count what it sent; START makes each generator send
    ``frames`` learning frames that the other port receives, with the peer's GARP and NA."""
    def on_strobe(name, value):
        if name.endswith(".arp.cmd"):
            port = name.split(".")[0]
            fake.set(f"{port}.arp.arp_replies", fake.get(f"{port}.arp.arp_replies") + (value & 1))
            fake.set(f"{port}.arp.na_sent", fake.get(f"{port}.arp.na_sent") + (value >> 1 & 1))
        if name == "ctrl.cmd" and value & CMD_START:
            for port in (0, 1):
                fake.set(f"p{port}.gen.tx_frames", frames)
                fake.set(f"p{port}.ana.rx_frames", frames)
                fake.set(f"p{port}.ana.other_frames", 2)
    fake.on_strobe.append(on_strobe)


def flows(size=64, addresses=None):
    return [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size, addresses))]


def test_learning_sequence_and_record(device, fake, monkeypatch):
    script_learning(fake, frames=4)
    generators = []
    real = device.configure_generator

    def record(port, spec, rate_fps, **kw):
        generators.append((port, spec, rate_fps, kw))
        return real(port, spec, rate_fps, **kw)

    monkeypatch.setattr(device, "configure_generator", record)
    custom = {1: PortAddress(mac="02:aa:00:00:00:02", ipv4="198.19.7.1", ipv6="2001:2:0:7::1")}
    start = fake.get("time.ns")
    result = device.learn(flows(addresses=custom), custom, frames=4, settle_ns=50_000, rate_fps=10_000)

    # addresses and answering configured on both ports: port 1 custom, port 0 the defaults
    assert fake.get("p1.arp.mac") == 0x02AA00000002 and fake.get("p1.arp.ipv4") == int(IPv4Address("198.19.7.1"))
    assert fake.get("p1.arp.ipv6") == int(IPv6Address("2001:2:0:7::1"))
    assert fake.get("p0.arp.mac") == 0x020000000001 and fake.get("p0.arp.ipv4") == int(IPv4Address("198.18.0.1"))
    assert fake.get("p0.arp.ipv6") == int(IPv6Address("2001:2::1"))
    assert fake.get("p0.arp.enable") == fake.get("p1.arp.enable") == 3
    # order: stop, clear, gratuitous ARP + unsolicited NA on both ports, learning frames, snapshot
    ctrl = [(n, v) for n, v in fake.strobes if n != "ctrl.cmd" or v != CMD_STOP]
    assert ctrl == [("ctrl.cmd", CMD_CLEAR), ("p0.arp.cmd", 3), ("p1.arp.cmd", 3), ("ctrl.cmd", CMD_START),
                    ("ctrl.cmd", CMD_SNAPSHOT)]
    # learning frames: the flow's frames from port 0, the reverse from port 1 (its own MAC as source)
    assert [(p, kw) for p, _, _, kw in generators] == [(0, {"count": 4}), (1, {"count": 4})]
    assert generators[0][1].src_mac == "02:00:00:00:00:01" and generators[0][1].dst_mac == "02:aa:00:00:00:02"
    assert generators[1][1].src_mac == "02:aa:00:00:00:02" and str(generators[1][1].src_ip) == "198.19.7.1"
    assert fake.get("p0.gen.enable") == fake.get("p1.gen.enable") == 0     # off again afterwards
    # the settle wait is tester time
    assert result.ended_ns - start >= 50_000
    assert result.gratuitous_arp == {0: 1, 1: 1} and result.unsolicited_na == {0: 1, 1: 1}
    assert result.learning_frames == {0: 4, 1: 4} and result.learning_frames_received == {0: 4, 1: 4}
    assert result.other_frames_received == {0: 2, 1: 2} and result.settle_ns == 50_000
    assert result.addresses[1] == custom[1]


def test_no_learning_frames_still_announces(device, fake):
    script_learning(fake, frames=0)
    result = device.learn(flows(), frames=0, settle_ns=1000, answer_nd=False)
    assert fake.get("p0.arp.enable") == 1 and result.gratuitous_arp == {0: 1, 1: 1}
    assert ("ctrl.cmd", CMD_START) not in fake.strobes


def test_one_way_build_announces_from_its_receiving_port_only():
    """A one-way build (port 0 sends, port 1 receives, the responder on port 1 only): the
    addresses and answering go to port 1's responder, only port 1 announces itself, only
    port 0 sends learning frames; the result names the responder's figures for port 1 only."""
    config = dataclasses.replace(BOARD_25F, responder=True)
    regmap = build_register_map(config)
    assert "p1.arp.mac" in regmap and "p0.arp.mac" not in regmap
    fake = FakeTransport(regmap)
    for name, value in {"id.magic": MAGIC, "id.version": 0x000100, "id.map_hash": regmap.hash,
                        "id.clk_hz": regmap.clk_hz, "id.n_ports": regmap.n_ports, "id.config": config.word()}.items():
        fake.set(name, value)

    def on_strobe(name, value):
        if name == "p1.arp.cmd":
            fake.set("p1.arp.arp_replies", fake.get("p1.arp.arp_replies") + (value & 1))
            fake.set("p1.arp.na_sent", fake.get("p1.arp.na_sent") + (value >> 1 & 1))
        if name == "ctrl.cmd" and value & CMD_START:
            fake.set("p0.gen.tx_frames", 4)
            fake.set("p1.ana.rx_frames", 4)
    fake.on_strobe.append(on_strobe)
    device = Device(fake, regmap, stall_timeout_s=0.2, poll_interval_s=(0, 0))
    result = device.learn(flows(), frames=4, settle_ns=10_000, rate_fps=10_000)
    assert fake.get("p1.arp.mac") == 0x020000000002 and fake.get("p1.arp.enable") == 3
    ctrl = [(n, v) for n, v in fake.strobes if n != "ctrl.cmd" or v != CMD_STOP]
    assert ctrl == [("ctrl.cmd", CMD_CLEAR), ("p1.arp.cmd", 3), ("ctrl.cmd", CMD_START), ("ctrl.cmd", CMD_SNAPSHOT)]
    assert result.gratuitous_arp == {1: 1} and result.unsolicited_na == {1: 1}
    assert result.arp_requests == {1: 0} and result.ns_received == {1: 0}
    assert result.learning_frames == {0: 4, 1: 0} and result.learning_frames_received == {0: 0, 1: 4}


class LearningTester(FakeTester):
    def __init__(self):
        super().__init__(limit_pct=100)
        self.events = []

    def learn(self, flows, addresses=None, **kw):
        self.events.append(("learn", flows, addresses, kw))
        from wirespeed.host.models import LearningResult
        return LearningResult(addresses={0: PortAddress.default(0), 1: PortAddress.default(1)}, answer_arp=True,
                              answer_nd=True, gratuitous_arp={}, unsolicited_na={}, learning_frames={},
                              learning_frames_received={}, other_frames_received={}, arp_requests={},
                              ns_received={}, settle_ns=kw["settle_ns"], started_ns=0, ended_ns=0)

    def run_trial(self, *args, **kw):
        self.events.append(("trial",))
        return super().run_trial(*args, **kw)


@pytest.mark.parametrize("learning", [None, LearningConfig(frames=8, settle_ns=1_000_000)])
def test_learning_comes_once_before_the_first_trial(learning):
    tester = LearningTester()
    config = ThroughputConfig(frame_sizes=[64, 128], trial_duration_ns=1_000_000, wait_ns=0, learning=learning)
    run_throughput(tester, config)
    kinds = [e[0] for e in tester.events]
    if learning is None:
        assert "learn" not in kinds
        return
    assert kinds[0] == "learn" and kinds.count("learn") == 1 and kinds[1:] == ["trial"] * (len(kinds) - 1)
    _, learn_flows, _, kw = tester.events[0]
    assert kw["frames"] == 8 and kw["settle_ns"] == 1_000_000 and learn_flows[0].spec.point == 64
    assert any("learning settle wait 1 ms is scaled down" in n for n in config.notes())


def test_cli_addresses_reach_the_ports_the_frames_and_the_results(capsys, regmap, tmp_path):
    import json

    from ebserver import EtherboneServer, serve_identity
    from test_cli import FAST, run

    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), "--json",
                             "--address", "1:ipv4=198.19.0.9,mac=02:00:00:00:0b:02", "--learning-frames", "2",
                             *FAST)
        arp_ipv4, arp_enable = (server.get_register(regmap[f"p1.arp.{r}"]) for r in ("ipv4", "enable"))
    assert code == 0, err
    record = json.loads(out)
    learning = record["learning"]
    assert learning["addresses"]["1"] == {"mac": "02:00:00:00:0b:02", "ipv4": "198.19.0.9", "ipv6": "2001:2:0:1::1"}
    assert learning["addresses"]["0"]["ipv4"] == "198.18.0.1" and learning["settle_ns"] == 1000
    assert record["learning_parameters"]["frames"] == 2
    spec = record["trials"][0]["flows"][0]["spec"]
    assert spec["dst_ip"] == "198.19.0.9" and spec["dst_mac"] == "02:00:00:00:0b:02"
    assert arp_ipv4 == 0xC6130009 and arp_enable == 3        # written to the tester's port 1
    assert "learning: ports 0, 1" in err


def test_cli_no_learning(capsys, regmap, tmp_path):
    import json

    from ebserver import EtherboneServer, serve_identity
    from test_cli import FAST, run

    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), "--json",
                             "--no-learning", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record["learning"] is None and record["learning_parameters"] is None


def test_trial_records_what_the_responder_saw(device, fake):
    """ARP/ND during a trial (a DUT whose cache expired) shows in the trial's record."""
    from test_device import script_trial

    script_trial(fake, tx=10, rx=10)

    def dut_asks(name, value):
        if name == "ctrl.cmd" and value & CMD_START:
            fake.set("p1.arp.arp_requests", 2)
            fake.set("p1.arp.arp_replies", 2)
            fake.set("p0.arp.ns_received", 1)
    fake.on_strobe.append(dut_asks)
    result = device.run_trial(flows(), 1000.0, duration_ns=10_000, wait_ns=0)
    assert result.responder[1] == {"arp_requests": 2, "arp_replies": 2, "ns_received": 0, "na_sent": 0}
    assert result.responder[0]["ns_received"] == 1
