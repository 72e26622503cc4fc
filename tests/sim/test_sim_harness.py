"""The Verilator harness end to end: build cache, launcher, Etherbone/UDP server, CSR bus
timing and the wiring of the DUT models, using tests/sim/fixture_top.v (a small module with
the ports of wirespeed_sim_top, see its header) in place of the tester."""

from __future__ import annotations

import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest
from litex.tools.remote.etherbone import (
    EtherbonePacket,
    EtherboneReads,
    EtherboneRecord,
    EtherboneWrites,
)
from sim_cli import SHARED_ERRORS, check_error, check_help

from wirespeed.gateware.registers import READ_LATENCY, WRITE_TO_READ
from wirespeed.sim import build
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess, parse_exit_stats

pytestmark = pytest.mark.verilator     # built with Verilator: not in the fast loop

FIXTURE = Path(__file__).resolve().parent / "fixture_top.v"

# fixture_top.v word addresses
GEN, BUSY, RX_FRAMES, RX_START, RX_SUM, RX_ER = range(6)
CYCLE = 0xF20


def port_reg(port: int, reg: int) -> int:
    return (0xF00 + 0x10 * port + reg) * 4


class Client:
    """Minimal Etherbone/UDP client built on LiteX's packet encoder."""

    def __init__(self, host: str, port: int):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(5)
        self.addr = (host, port)
        self.tag = 0

    def close(self):
        self.sock.close()

    def send(self, *records: EtherboneRecord) -> None:
        p = EtherbonePacket()
        p.records = list(records)
        p.encode()
        self.sock.sendto(bytes(p.bytes), self.addr)

    def write(self, addr: int, *datas: int) -> None:
        rec = EtherboneRecord()
        rec.writes = EtherboneWrites(base_addr=addr, datas=list(datas))
        self.send(rec)

    def read(self, *addrs: int) -> list[int]:
        self.tag += 1
        rec = EtherboneRecord()
        rec.reads = EtherboneReads(base_ret_addr=self.tag, addrs=list(addrs))
        self.send(rec)
        return self.reply(self.tag)[0]

    def reply(self, tag: int) -> list[list[int]]:
        data, _ = self.sock.recvfrom(65536)
        p = EtherbonePacket(init=bytearray(data))
        p.decode()
        assert p.records[0].writes.base_addr == tag
        return [r.writes.get_datas() for r in p.records]

    def wait_idle(self, port: int, cycles_after: int) -> None:
        """Wait until the port's generator is idle and `cycles_after` more cycles passed."""
        deadline = time.monotonic() + 60
        while self.read(port_reg(port, BUSY))[0]:
            assert time.monotonic() < deadline, "generator never finished"
        target = self.read(CYCLE * 4)[0] + cycles_after
        while self.read(CYCLE * 4)[0] < target:
            assert time.monotonic() < deadline, "simulation does not advance"
            time.sleep(0.005)


@pytest.fixture(scope="session")
def fixture_binary(tmp_path_factory) -> Path:
    """Build the fixture through ensure_binary from two threads at once: one build only."""
    cache = tmp_path_factory.mktemp("cache")
    calls = []

    def write_sources(outdir: Path) -> list[Path]:
        calls.append(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        dst = outdir / "wirespeed_sim_top.v"
        shutil.copy(FIXTURE, dst)
        return [dst]

    results: list[Path] = []
    errors: list[BaseException] = []

    def worker():
        try:
            results.append(build.ensure_binary("fixture-test", write_sources))
        except BaseException as e:
            errors.append(e)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WIRESPEED_CACHE", str(cache))
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        assert len(calls) == 1, "two concurrent ensure_binary calls both built"
        assert results[0] == results[1] == cache / "sim" / "fixture-test" / build.BINARY_NAME
        # cached: no Verilog generation, no build
        assert build.ensure_binary("fixture-test", write_sources) == results[0]
        assert len(calls) == 1
        # only the binary, its manifest (SHA-256), the Verilog and the log stay in the cache
        assert {p.name for p in results[0].parent.iterdir()} == {
            "build.log", build.BINARY_NAME, build.MANIFEST_NAME, "verilog", "generated"}
        assert not [p for p in (cache / "sim").iterdir() if p.name.startswith(".")]
    return results[0]


@pytest.fixture
def sim(fixture_binary):
    with SimProcess(parse_dut("loopback:delay=40ns"), binary=fixture_binary) as s:
        yield s


def test_ready_and_register_file(sim):
    c = Client(sim.host, sim.port)
    try:
        values = [(i * 0x9E3779B9) & 0xFFFFFFFF for i in range(200)]
        c.write(0x100, *values)
        # several records in one packet, each with writes then reads
        r1, r2 = EtherboneRecord(), EtherboneRecord()
        r1.writes = EtherboneWrites(base_addr=0x3BFC, datas=[0xDEADBEEF])
        r1.reads = EtherboneReads(base_ret_addr=77, addrs=[0x3BFC, 0x100, 0x100 + 4 * 199])
        r2.reads = EtherboneReads(base_ret_addr=78, addrs=[0x100 + 4 * i for i in range(200)])
        c.send(r1, r2)
        got1, got2 = c.reply(77)
        assert got1 == [0xDEADBEEF, values[0], values[199]]
        assert got2 == values
    finally:
        c.close()


def test_probe(sim):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    p = EtherbonePacket()
    p.pf = 1
    p.encode()
    s.sendto(bytes(p.bytes) + bytes(4), (sim.host, sim.port))
    data, _ = s.recvfrom(1024)
    s.close()
    r = EtherbonePacket(init=bytearray(data))
    r.decode()
    assert r.pr == 1 and r.pf == 0


def test_csr_reads_and_writes_take_the_bus_timing(sim):
    """The harness follows the tester's pipelined bus (wirespeed.gateware.registers): a read
    takes its strobe's cycle and READ_LATENCY more, a write WRITE_TO_READ cycles."""
    read_cycles, write_cycles = 1 + READ_LATENCY, WRITE_TO_READ
    c = Client(sim.host, sim.port)
    try:
        # reads of the cycle counter within one record are exactly read_cycles apart
        got = c.read(*([CYCLE * 4] * 20))
        assert [b - a for a, b in zip(got, got[1:])] == [read_cycles] * 19
        # records run in order, writes before reads
        r1, r2 = EtherboneRecord(), EtherboneRecord()
        r1.reads = EtherboneReads(base_ret_addr=5, addrs=[CYCLE * 4])
        r2.writes = EtherboneWrites(base_addr=0, datas=[1, 2, 3])
        r2.reads = EtherboneReads(base_ret_addr=6, addrs=[CYCLE * 4])
        c.send(r1, r2)
        (a,), (b,) = c.reply(5)
        assert b - a == read_cycles + 3 * write_cycles
    finally:
        c.close()


def test_malformed_packets_do_not_hurt(fixture_binary):
    with SimProcess(parse_dut("loopback"), binary=fixture_binary) as sim:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        bad = [b"", b"\x00", b"garbage" * 50, bytes.fromhex("4e6f1044000000000000000a"),
               bytes.fromhex("4e6f2044") + bytes(8), bytes(range(256)) * 100]
        for b in bad:
            s.sendto(b, (sim.host, sim.port))
        s.close()
        c = Client(sim.host, sim.port)
        c.write(0x40, 0x12345678)
        assert c.read(0x40) == [0x12345678]
        c.close()
    assert sim.returncode == 0
    assert sim.stats["etherbone"]["malformed"] == len(bad)
    assert sim.stats["reason"] == "signal"
    assert sim.stats["cycles"] > 0 and sim.stats["cycles_per_s"] > 0 and sim.stats["wall_s"] > 0


@pytest.mark.parametrize("delay_ns", [0, 40, 8000])
def test_loopback_wiring_and_delay(fixture_binary, delay_ns):
    d = delay_ns // 8
    with SimProcess(parse_dut(f"loopback:delay={delay_ns}ns"), binary=fixture_binary) as sim:
        c = Client(sim.host, sim.port)
        for src, dst in ((0, 1), (1, 0)):  # model A: p0 -> p1, model B: p1 -> p0
            c.write(port_reg(src, GEN), (3 << 16) | 100)  # 3 frames of 100 bytes
            c.wait_idle(src, d + 100)
            tx_start, = c.read(port_reg(src, GEN))
            frames, rx_start, rx_sum, rx_er = c.read(port_reg(dst, RX_FRAMES), port_reg(dst, RX_START),
                                                     port_reg(dst, RX_SUM), port_reg(dst, RX_ER))
            assert frames == 3
            # tx_en is registered at the edge counted tx_start; the model sees it in the next
            # cycle and the fixture counts rx_dv at the edge that samples it.
            assert rx_start - tx_start == d + 1
            assert rx_sum == 3 * (7 * 0x55 + 0xD5 + sum(range(100)))
            assert rx_er == 0
        c.close()
    assert sim.stats["dut_a"]["frames_in"] == sim.stats["dut_a"]["frames_out"] == 3
    assert sim.stats["dut_b"]["frames_in"] == sim.stats["dut_b"]["frames_out"] == 3
    assert sim.stats["dut_a"]["model"] == "loopback"


def test_router_end_to_end(fixture_binary):
    n, rate, queue = 300, 400_000, 16
    with SimProcess(parse_dut(f"router:rate={rate},queue={queue},latency=10us"),
                    binary=fixture_binary) as sim:
        c = Client(sim.host, sim.port)
        c.write(port_reg(0, GEN), (n << 16) | 64)  # back-to-back at line rate
        c.wait_idle(0, 40_000)
        received, = c.read(port_reg(1, RX_FRAMES))
        c.close()
    # Line rate input: one frame per 84 cycles; the server is busy from the first arrival.
    service = Fraction(125_000_000, rate)
    expected = math.floor(84 * (n - 1) / service) + 1 + queue
    assert received == expected
    a = sim.stats["dut_a"]
    assert (a["frames_in"], a["frames_out"], a["dropped"]) == (n, expected, n - expected)


def test_impairments_end_to_end(fixture_binary):
    from test_sim_impair import impair_reference

    n = 200
    spec = parse_dut("loopback:delay=40ns,loss=0.1,dup=0.05,reorder=0.05,corrupt=0.05,seed=3")
    with SimProcess(spec, binary=fixture_binary) as sim:
        c = Client(sim.host, sim.port)
        for src in (0, 1):
            c.write(port_reg(src, GEN), (n << 16) | 64)
            c.wait_idle(src, 200_000)  # past the 1 ms hold timeout of a held last frame
        rx_b, rx_a = c.read(port_reg(1, RX_FRAMES), port_reg(0, RX_FRAMES))
        c.close()
    ppb = dict(loss=100_000_000, dup=50_000_000, reorder=50_000_000, corrupt=50_000_000, seed=3)
    for which, rx, direction in (("a", rx_b, 0), ("b", rx_a, 1)):
        expected, counters = impair_reference(n, direction=direction, **ppb)
        st = sim.stats[f"dut_{which}"]
        assert {k: st[k] for k in counters} == counters
        assert st["frames_in"] == n and st["frames_out"] == rx == len(expected)
    # independent random streams per direction
    assert impair_reference(n, **ppb)[0] != impair_reference(n, direction=1, **ppb)[0]


def test_sigterm_and_exit_line(fixture_binary):
    sim = SimProcess(parse_dut("router"), binary=fixture_binary)
    with sim:
        assert sim.alive()
        time.sleep(0.3)
    assert not sim.alive() and sim.returncode == 0
    st = sim.stats
    assert st["reason"] == "signal" and st["cycles"] > 10_000
    assert st["cycles_per_s"] == pytest.approx(st["cycles"] / st["wall_s"], rel=0.01)
    assert st["dut_a"]["model"] == st["dut_b"]["model"] == "router"


def test_max_cycles(fixture_binary):
    with SimProcess(parse_dut("loopback"), binary=fixture_binary,
                    extra_args=["--max-cycles", "50000"]) as sim:
        deadline = time.monotonic() + 30
        while sim.alive():
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert sim.stats["reason"] == "max-cycles"
    assert 50_000 <= sim.stats["cycles"] < 50_000 + 1024


def test_early_death_raises_with_stderr(fixture_binary):
    with pytest.raises(RuntimeError, match=r"(?s)exited before it was ready \(exit 2\).*"
                                           r"unknown argument '--bogus'"):
        with SimProcess(parse_dut("loopback"), binary=fixture_binary, extra_args=["--bogus"]):
            pass


def test_crash_during_run_is_reported(fixture_binary):
    with pytest.raises(RuntimeError, match=r"exited during the run \(exit -9\)"):
        with SimProcess(parse_dut("loopback"), binary=fixture_binary) as sim:
            os.kill(sim.pid, signal.SIGKILL)
            time.sleep(0.2)


@pytest.mark.parametrize("args,message", [
    *SHARED_ERRORS,
    (["--udp-port", "70000"], "--udp-port must be an integer 0..65535, got '70000'"),
    (["--udp-port", "+1"], "--udp-port must be an integer 0..65535, got '+1'"),
    (["--udp-port"], "--udp-port needs a value"),
    (["--vcd", "x.vcd"], "unknown argument '--vcd', allowed: --udp-port, --pcap-wire, --threads, "
                         "--dut, --dut-param, --tap-netns, --tap-if0, --tap-if1, --max-cycles, --help"),
])
def test_cli_errors(fixture_binary, args, message):
    check_error(fixture_binary, "wirespeed-sim", args, message)


def test_cli_help(fixture_binary):
    check_help(fixture_binary, "wirespeed-sim")


def test_fixed_udp_port_and_busy_port(fixture_binary):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    try:
        with pytest.raises(RuntimeError, match=f"cannot bind UDP 127.0.0.1:{port}"):
            with SimProcess(parse_dut("loopback"), udp_port=port, binary=fixture_binary):
                pass
    finally:
        probe.close()
    with SimProcess(parse_dut("loopback"), udp_port=port, binary=fixture_binary) as sim:
        assert sim.port == port


def test_dies_with_its_parent(fixture_binary, tmp_path):
    # A parent process starts the harness, reports its pid, then is SIGKILLed.
    script = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([{str(fixture_binary)!r}], stdout=subprocess.PIPE)\n"
        "assert p.stdout.readline().startswith(b'WIRESPEED-SIM READY')\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    assert _running(pid)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _running(pid):
        assert time.monotonic() < deadline, "harness survived its parent"
        time.sleep(0.02)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_failed_build_reports_compiler_log(tmp_path, monkeypatch):
    monkeypatch.setenv("WIRESPEED_CACHE", str(tmp_path))

    def broken(outdir: Path) -> list[Path]:
        outdir.mkdir(parents=True)
        f = outdir / "wirespeed_sim_top.v"
        f.write_text("module wirespeed_sim_top(input clk);\n  this is not verilog;\nendmodule\n")
        return [f]

    with pytest.raises(RuntimeError, match=r"(?s)Verilator build of the simulation failed.*"
                                           r"wirespeed_sim_top\.v:2"):
        build.ensure_binary("broken", broken)
    # nothing half-built is left behind
    assert sorted(p.name for p in (tmp_path / "sim").iterdir()) == ["broken.lock"]


def test_cache_key_follows_sources(tmp_path, monkeypatch):
    harness = tmp_path / "harness"
    shutil.copytree(build.HARNESS_DIR, harness)
    gateware = tmp_path / "gateware"
    gateware.mkdir()
    (gateware / "top.py").write_text("X = 1\n")
    monkeypatch.setattr(build, "HARNESS_DIR", harness)
    monkeypatch.setattr(build, "_gateware_dir", lambda: gateware)
    k1 = build.harness_key()
    assert k1 == build.harness_key()
    (gateware / "top.py").write_text("X = 2\n")
    k2 = build.harness_key()
    (harness / "dut_router.cpp").write_text((harness / "dut_router.cpp").read_text() + "\n")
    k3 = build.harness_key()
    (gateware / "sub").mkdir()
    (gateware / "sub" / "more.py").write_text("")
    k4 = build.harness_key()
    assert len({k1, k2, k3, k4}) == 4


def test_parse_exit_stats():
    text = (
        "some warning\n"
        "WIRESPEED-SIM DUT a router rate=400000 queue=16 latency_ns=10000 max_frame=16384 "
        "frames_in=10 frames_out=7 dropped=3 errored=0 lost=0 duplicated=0 reordered=0 "
        "corrupted=0 blackout=0\n"
        "WIRESPEED-SIM DUT b router rate=400000 queue=16 latency_ns=10000 max_frame=16384 "
        "loss_ppb=10000000 dup_ppb=0 reorder_ppb=0 corrupt_ppb=0 blackout_start_ns=0 "
        "blackout_len_ns=0 seed=1 frames_in=10 frames_out=9 dropped=0 errored=0 lost=1 "
        "duplicated=0 reordered=0 corrupted=0 blackout=0\n"
        "WIRESPEED-SIM ETHERBONE packets=5 probes=1 malformed=0 reads=4 writes=2 "
        "out_of_range=0 send_errors=0\n"
        "WIRESPEED-SIM EXIT reason=signal cycles=1000 wall_s=0.500 cycles_per_s=2000\n"
    )
    st = parse_exit_stats(text)
    assert st["reason"] == "signal" and st["cycles"] == 1000 and st["wall_s"] == 0.5
    assert st["dut_a"]["frames_out"] == 7 and st["dut_a"]["model"] == "router"
    assert st["etherbone"]["probes"] == 1
    assert st["dut_a"]["lost"] == 0 and st["dut_b"]["lost"] == 1
    assert st["dut_b"]["loss_ppb"] == 10_000_000 and st["dut_b"]["model"] == "router"


def test_dut_reset_through_the_control_window(fixture_binary):
    """The host resets the simulated DUT through the DUT control window on the Etherbone
    transport: frames sent while it is down are lost, it comes back after `reboot`, and its
    counters say so; a DUT without `reboot` refuses the reset."""
    from wirespeed.sim.control import DutControl
    from wirespeed.transport import EtherboneTransport

    n = 20
    with SimProcess(parse_dut("router:rate=1M,queue=64,latency=1us,reboot=2ms"), binary=fixture_binary) as sim:
        c = Client(sim.host, sim.port)
        transport = EtherboneTransport(sim.host, sim.port)
        dut = DutControl(transport)
        c.write(port_reg(0, GEN), (n << 16) | 64)
        c.wait_idle(0, 40_000)
        assert dut.reset()
        t0 = dut.cycles()
        assert not dut.reset()                          # still down: refused
        c.write(port_reg(0, GEN), (n << 16) | 64)       # lost: the device is down
        c.wait_idle(0, 40_000)
        down = dut.counters()
        while dut.cycles() < t0 + 2_000_000 // 8 + 100:
            c.read(port_reg(0, BUSY))
        c.write(port_reg(0, GEN), (n << 16) | 64)       # forwarded by the fresh device
        c.wait_idle(0, 40_000)
        while dut.cycles() < t0 + 2_000_000 // 8 + 20_000:
            c.read(port_reg(0, BUSY))
        received, = c.read(port_reg(1, RX_FRAMES))
        after = dut.counters()
        transport.close()
        c.close()
    assert down[0].resets == down[1].resets == 1 and down[0].reset_lost == n
    assert after[0].down_ns == 2_000_000 and after[0].up_at > 0
    assert received == 2 * n and after[0].frames_out == 2 * n and after[0].frames_in == 2 * n

    with SimProcess(parse_dut("loopback"), binary=fixture_binary) as sim:
        transport = EtherboneTransport(sim.host, sim.port)
        assert not DutControl(transport).reset()
        assert DutControl(transport).counters()[0].resets == 0
        transport.close()
