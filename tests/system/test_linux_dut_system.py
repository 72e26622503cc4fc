"""The Linux kernel as the DUT (``--dut linux-router``, ``--dut linux-bridge``): the simulated
tester measured through two TAPs in a network namespace the simulation owns. The kernel
routes, bridges and resolves the tester's addresses by ARP against the gateware's responder;
the timing is the tap model's (line rate), so throughput is 100 % with zero loss, and what
the kernel learned is in results.json. Nothing may outlive the simulation."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from records import snmp
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

from wirespeed.capture import arm_capture, capture_status, read_capture, write_pcap
from wirespeed.cli import main
from wirespeed.gateware.frame import parse_signature
from wirespeed.sim import netns
from wirespeed.sim.build import ensure_harness
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.netns import unavailable
from wirespeed.traffic import PortAddress, PortProgram, SizeSpec, StreamSpec, dissect

WHY = unavailable()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=f"Linux DUT: {WHY}")]

T0, T1 = "02:00:00:00:00:01", "02:00:00:00:00:02"     # the tester ports' default MACs
FAST = ["--tests", "throughput", "--bidirectional", "--trial-duration", "1ms", "--calibration", "none",
        "--latency-trials", "0", "--wait", "200us", "--settle", "200us"]


def _run(tmp_path: Path, capsys, dut: str, sizes: str, *more: str) -> dict:
    out = tmp_path / "run"
    code = main(["rfc2544", *FAST, "--sizes", sizes, "--dut", dut, "--out", str(out), *more])
    console = capsys.readouterr().err
    assert code == 0, console
    return json.loads((out / "results.json").read_text())


def test_linux_router_forwards_at_the_models_rate_and_resolves_the_tester_by_arp(tmp_path, capsys):
    record = _run(tmp_path, capsys, "linux-router", "64,1518")
    results = {r["frame_size"]: r for r in record["tests"][0]["results"]}
    assert sorted(results) == [64, 1518]
    for size, r in results.items():
        assert r["pct_line_rate"] == pytest.approx(100.0), size
    final = [t for t in record["trials"] if t["passed"]]
    assert final and all(t["lost_frames"] == 0 and t["rx_frames"] == t["tx_frames"] for t in final)
    assert record["dut"]["model"] == "linux-router" and record["dut"]["timing"] == "modelled"
    state = record["dut_state"]
    neigh = {(n["dst"], n.get("lladdr")) for n in state["neighbours"]}
    # resolved by ARP through the gateware responder: no static entry was ever made
    assert ("198.18.0.1", T0) in neigh and ("198.19.0.1", T1) in neigh, neigh
    assert all("PERMANENT" not in n.get("state", []) for n in state["neighbours"])
    links = {link["ifname"]: link for link in state["links"]}
    sent = sum(t["tx_frames"] for t in record["trials"])
    assert links["ws0"]["stats64"]["rx"]["packets"] >= sent // 2
    assert "IpExt" in state["snmp"] or "Ip:" in state["snmp"]


def test_the_router_follows_a_tester_port_moved_by_address(tmp_path, capsys):
    record = _run(tmp_path, capsys, "linux-router", "64", "--address", "1:ipv4=198.19.0.9,mac=02:00:00:00:00:09")
    final = [t for t in record["trials"] if t["passed"]]
    assert final and all(t["lost_frames"] == 0 and t["rx_frames"] == t["tx_frames"] > 2900 for t in final)
    neigh = {(n["dst"], n.get("lladdr")) for n in record["dut_state"]["neighbours"]}
    assert ("198.18.0.1", T0) in neigh and ("198.19.0.9", "02:00:00:00:00:09") in neigh, neigh
    assert "198.19.0.1" not in {dst for dst, _ in neigh}
    assert "ip route add 198.19.0.0/16 via 198.19.0.9 dev ws1" in record["dut"]["setup"]


def test_linux_bridge_forwards_at_line_rate_and_learns_the_tester_macs(tmp_path, capsys):
    record = _run(tmp_path, capsys, "linux-bridge", "64")
    (r,) = record["tests"][0]["results"]
    assert r["pct_line_rate"] == pytest.approx(100.0)
    fdb = {(e["mac"], e["ifname"]) for e in record["dut_state"]["fdb"]}
    assert (T0, "ws0") in fdb and (T1, "ws1") in fdb, fdb


def _net_ns(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _holders(ns: str) -> list[int]:
    """Processes still in network namespace ``ns``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns/net") == ns:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


_HOST = """
import sys, time
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
with SimProcess(parse_dut(sys.argv[1])) as sim:
    print(sim.pid, flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("dut", ["linux-router", "linux-bridge"])
def test_nothing_outlives_a_host_killed_with_sigkill(dut):
    host = subprocess.Popen([sys.executable, "-c", _HOST, dut], stdout=subprocess.PIPE, text=True)
    try:
        sim_pid = int(host.stdout.readline())
        ns = _net_ns(sim_pid)
        assert ns != _net_ns(os.getpid())
        host.send_signal(signal.SIGKILL)
        host.wait()
        deadline = time.monotonic() + 20
        while _holders(ns) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _holders(ns) == [], "the simulation outlived its host"
        assert not _running(sim_pid)
    finally:
        if host.poll() is None:
            host.kill()
    root_links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert " ws0:" not in root_links and " ws1:" not in root_links and " br0:" not in root_links


def test_routed_frames_leave_with_ttl_63_valid_checksums_and_the_signature_intact(tester, tmp_path):
    dev = tester("linux-router")
    dev.configure_addresses({p: PortAddress.default(p) for p in (0, 1)})
    stream = StreamSpec(src_mac=T0, dst_mac=T1, src_ip="198.18.0.1", dst_ip="198.19.0.1", ttl=64,
                        size=SizeSpec.parse("64"))
    count = 8
    compiled = PortProgram(port=0, streams=(stream,), rate_pct=10).compile()
    dev.stop()
    dev.disable_generator(1)
    dev.load_program(0, compiled, count=count)
    dev.clear()
    # port 1 also hears the kernel's ARP request for 198.19.0.1 and its own MLD reports
    arm_capture(dev, 1, trigger="first", count=32, snaplen=128)
    started = dev.start()
    while dev.now_ns() < started + 500_000 and capture_status(dev, 1).state != "done":
        pass
    packets = rdpcap(str(write_pcap(tmp_path / "p1.pcap", read_capture(dev, 1))))
    routed = [p for p in packets if UDP in p]
    assert len(routed) == count, [p.summary() for p in packets]
    assert any(p[Ether].type == 0x0806 for p in packets)       # resolved by ARP, not a static entry
    for seq, pkt in enumerate(routed):
        assert pkt[IP].ttl == 63
        again = Ether(bytes(pkt))
        del again[IP].chksum
        assert IP(bytes(again[IP]))[IP].chksum == pkt[IP].chksum
        assert dissect(bytes(pkt))[1]
        assert parse_signature(bytes(pkt))[:2] == (0, seq)


RULES = """table inet wsfw {
    chain forward_chain {
        type filter hook forward priority 0; policy accept;
        ip saddr 198.18.0.3 udp dport 7 counter drop
    }
}
"""


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft is not installed (Debian package nftables)")
def test_a_ruleset_dropping_one_flow_of_ten_loses_exactly_that_share(tmp_path, capsys):
    rules = tmp_path / "fw.nft"
    rules.write_text(RULES)
    out = tmp_path / "run"
    code = main(["rfc2544", "--tests", "frame-loss", "--loss-points", "100,50", "--flows", "10x1", "--sizes", "64",
                 "--trial-duration", "1ms", "--calibration", "none", "--wait", "200us", "--settle", "200us",
                 "--dut", "linux-router", "--dut-rules", str(rules), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    trials = record["trials"]
    assert len(trials) == 2
    for t in trials:        # the flows are walked in turn: one frame in ten is 198.18.0.3's
        assert t["lost_frames"] in (t["tx_frames"] // 10, -(-t["tx_frames"] // 10)), t["lost_frames"]
        assert t["duplicate_frames"] == t["out_of_order_frames"] == t["fcs_errors"] == 0
    (rule,) = [item["rule"] for item in record["dut_state"]["ruleset"]["nftables"] if "rule" in item]
    (counter,) = [e["counter"] for e in rule["expr"] if "counter" in e]
    assert counter["packets"] == sum(t["lost_frames"] for t in trials)
    assert record["dut"]["ruleset"] == RULES and len(record["dut"]["ruleset_sha256"]) == 64


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft is not installed (Debian package nftables)")
def test_a_ruleset_nft_refuses_is_one_line_naming_the_file(tmp_path, capsys):
    rules = tmp_path / "bad.nft"
    rules.write_text("table inet x {\n    chain c { type filter hook forward priority 0; bogus }\n}\n")
    code = main(["rfc2544", "--sizes", "64", "--dut", "linux-router", "--dut-rules", str(rules),
                 "--out", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"wirespeed: error: --dut: dut linux-router: rules: nft refused {rules}: ")
    assert "syntax error" in err[0]
    assert not (tmp_path / "run" / "results.json").exists()


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft is not installed (Debian package nftables)")
def test_icmp_errors_quoting_test_frames_back_are_not_received_frames(tmp_path, capsys):
    rules = tmp_path / "fw.nft"
    rules.write_text(RULES.replace("counter drop", "counter reject with icmp type admin-prohibited"))
    out = tmp_path / "run"
    code = main(["rfc2544", "--tests", "frame-loss", "--loss-points", "100", "--flows", "10x1", "--sizes", "64",
                 "--bidirectional", "--trial-duration", "1ms", "--calibration", "none", "--wait", "200us",
                 "--settle", "200us", "--dut", "linux-router", "--dut-rules", str(rules), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    (t,) = record["trials"]
    (rule,) = [item["rule"] for item in record["dut_state"]["ruleset"]["nftables"] if "rule" in item]
    (counter,) = [e["counter"] for e in rule["expr"] if "counter" in e]
    assert t["lost_frames"] == counter["packets"] > 0
    # each ICMP error (rate-limited by the kernel) came back to port 0 with port 0's signature
    icmp = snmp(record, "Icmp")["OutDestUnreachs"]
    assert icmp > 0 and t["stray_frames"] == {"0": icmp}
    assert t["counters"]["0"]["rx_frames"] == t["streams"]["1"]["rx_frames"] + icmp
    assert t["rx_frames"] == t["tx_frames"] - t["lost_frames"]


def test_rfc2544_over_ipv6_is_routed_without_loss_after_neighbour_discovery(tmp_path, capsys):
    """82 bytes: the shortest IPv6 test frame (40-byte header, UDP, signature, FCS)."""
    record = _run(tmp_path, capsys, "linux-router", "82", "--ip-version", "6")
    assert record["plan"]["ip_version"] == 6
    (r,) = record["tests"][0]["results"]
    assert r["pct_line_rate"] == pytest.approx(100.0)
    final = [t for t in record["trials"] if t["passed"]]
    assert final and all(t["lost_frames"] == 0 and t["rx_frames"] == t["tx_frames"] > 2400 for t in final)
    assert {(f["spec"]["src_ip"], f["spec"]["dst_ip"]) for f in final[0]["flows"]} == {
        ("2001:2::1", "2001:2:0:1::1"), ("2001:2:0:1::1", "2001:2::1")}
    state = record["dut_state"]
    forwarded = int(next(line.split()[1] for line in state["snmp"].splitlines()
                         if line.startswith("Ip6OutForwDatagrams")))
    assert forwarded >= sum(t["tx_frames"] for t in record["trials"])
    learned = {(n["dst"], n.get("lladdr")) for n in state["neighbours"]}
    # resolved by neighbour discovery against the tester's responder, no static entry
    assert ("2001:2::1", T0) in learned and ("2001:2:0:1::1", T1) in learned, learned
    assert all("PERMANENT" not in n.get("state", []) for n in state["neighbours"])


def test_ipv6_packets_above_the_egress_mtu_are_refused_with_packet_too_big(tmp_path, capsys):
    """IPv6 routers never fragment: a 1518-byte frame's 1500-byte packet meets an MTU of 1280."""
    out = tmp_path / "run"
    code = main(["rfc2544", "--tests", "frame-loss", "--loss-points", "100", "--sizes", "1518", "--ip-version", "6",
                 "--trial-duration", "1ms", "--calibration", "none", "--wait", "200us", "--settle", "200us",
                 "--dut", "linux-router:mtu=1280", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "results.json").read_text())
    (t,) = record["trials"]
    assert t["tx_frames"] > 80 and t["lost_frames"] == t["tx_frames"] and t["rx_frames"] == 0
    snmp6 = {line.split()[0]: int(line.split()[1]) for line in record["dut_state"]["snmp"].splitlines()
             if line.startswith(("Icmp6", "Ip6"))}
    assert snmp6["Icmp6OutPktTooBigs"] >= t["tx_frames"] and snmp6["Ip6FragFails"] >= t["tx_frames"]
    # the errors go back to the sender as other frames, never as frames received
    assert t["counters"]["0"]["other_frames"] >= t["tx_frames"] and t["stray_frames"] == {}


def _sim_child(parent: int) -> int | None:
    """The simulation process started by ``parent``, once it runs in a namespace of its own."""
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or b"wirespeed-sim" not in (entry / "cmdline").read_bytes():
                continue
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            if ppid == parent and _net_ns(int(entry.name)) != _net_ns(os.getpid()):
                return int(entry.name)
        except (OSError, ValueError, IndexError):
            pass
    return None


@pytest.mark.parametrize("how", ["ctrl-c", "ctrl-c after a trial", "failing run"])
def test_nothing_outlives_an_interrupted_or_failing_run(tmp_path, how):
    out = tmp_path / "run"
    # after a trial: six more sizes, so that the signal lands inside the run on a loaded machine
    # (with two sizes the run could end between the first trial and the signal)
    sizes = "64,128,256,512,1024,1280,1518" if how == "ctrl-c after a trial" else "64,1518"
    args = [sys.executable, "-m", "wirespeed.cli", "rfc2544", *FAST, "--sizes", sizes, "--dut", "linux-router",
            "--out", str(out)]
    if how == "failing run":        # a latency the model (2 us) cannot meet: the run exits 3
        args += ["--max-latency", "1us"]
    # SIGINT as a terminal leaves it: a shell without job control starts background jobs (a CI
    # runner's) with SIGINT ignored, and Python keeps an ignored SIGINT ignored
    run = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while (sim := _sim_child(run.pid)) is None and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sim is not None, "the simulation never started"
        ns = _net_ns(sim)
        trials = out / "trials.jsonl"
        while how == "ctrl-c after a trial" and run.poll() is None and time.monotonic() < deadline and not (
                trials.exists() and trials.read_text().strip()):
            time.sleep(0.05)
        if how.startswith("ctrl-c"):
            run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=120)
        assert run.returncode == (3 if how == "failing run" else 130), err
        deadline = time.monotonic() + 20
        while _holders(ns) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _holders(ns) == [] and not _running(sim)
    finally:
        if run.poll() is None:
            run.kill()
    if how != "ctrl-c":     # a run that measured something says what the kernel had learned when it ended
        record = json.loads((out / "results.json").read_text())
        assert record["status"] == ("complete" if how == "failing run" else "interrupted")
        neigh = {(n["dst"], n.get("lladdr")) for n in record["dut_state"]["neighbours"]}
        assert ("198.18.0.1", T0) in neigh and ("198.19.0.1", T1) in neigh, neigh


def _tshark(path: Path, fields: list[str], display: str = "") -> list[list[str]]:
    args = ["tshark", "-r", str(path), "-o", "eth.check_fcs:TRUE", "-T", "fields",
            *(["-Y", display] if display else []), *[a for f in fields for a in ("-e", f)]]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (Debian package tshark)")
def test_pcap_wire_holds_every_frame_on_the_four_wires_and_tshark_reads_them(tmp_path, capsys):
    wire = tmp_path / "wire"
    record = _run(tmp_path, capsys, "linux-router", "64", "--pcap-wire", str(wire))
    path = wire / "wire.pcapng"
    frames = _tshark(path, ["frame.interface_id", "eth.fcs.status"])
    per_wire = [sum(1 for f in frames if f[0] == str(i)) for i in range(4)]
    model = record["dut_model"]        # the models' own counts since the simulation started
    assert per_wire == [model["0->1"]["frames_in"], model["0->1"]["frames_out"],
                        model["1->0"]["frames_in"], model["1->0"]["frames_out"]]
    assert per_wire[0] > 1488 and {f[1] for f in frames} == {"1"}     # every FCS good
    assert _tshark(path, ["frame.number"], "_ws.malformed || _ws.expert.severity >= error") == []
    ttls = {i: {f[0] for f in _tshark(path, ["ip.ttl"], f"frame.interface_id == {i} && udp")} for i in range(4)}
    assert ttls == {0: {"10"}, 1: {"9"}, 2: {"10"}, 3: {"9"}}          # the tester sends TTL 10; routed: 9


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run the simulation as an unprivileged user")
def test_without_root_the_simulation_makes_a_user_namespace_the_setup_can_enter():
    folder = Path(tempfile.mkdtemp(prefix="wirespeed-nobody-"))
    try:
        folder.chmod(0o755)
        binary = folder / "wirespeed-sim"
        shutil.copy(ensure_harness(), binary)
        binary.chmod(0o755)
        sim = subprocess.Popen([*NOBODY, str(binary), "--dut", "tap"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        if not os.stat("/dev/net/tun").st_mode & 0o006:
            # a machine whose TUN device only root may open: the simulation says so in one line
            _, err = sim.communicate(timeout=30)
            assert sim.returncode != 0 and err == "wirespeed-sim: error: dut tap: /dev/net/tun: Permission denied\n"
            pytest.skip("/dev/net/tun is open to root only on this machine: no unprivileged simulation can use "
                        "a TAP device, so its user namespace is not tried")
        try:
            assert sim.stdout.readline().startswith("WIRESPEED-SIM READY")
            assert _net_ns(sim.pid) != _net_ns(os.getpid())
            setup = parse_dut("linux-bridge").setup() + "ip -br link show br0\n"
            r = subprocess.run([*NOBODY, *netns.enter_args(sim.pid), "sh", "-ec", setup], capture_output=True,
                               text=True, timeout=60)
            assert r.returncode == 0 and "br0" in r.stdout, r.stderr
        finally:
            sim.terminate()
            _, err = sim.communicate(timeout=30)
        assert " ns=userns+netns " in err, err
    finally:
        shutil.rmtree(folder)
