"""The management path end to end in Verilator: UartBridge (gateware/mgmt.py) plus a
RegisterBank, its UART served over TCP by sim/harness/uart_link.cpp with a fault injector
(drop, duplicate, late, corrupt, both directions), driven by the real SerialTransport over
``socket://``. Every read must return the right value, every write must happen exactly once
(a write-strobe counter and a read-counting register would show a double execution)."""

import hashlib
import importlib.metadata
import importlib.util
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from amaranth import Module, Signal
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from wirespeed.errors import TransportError
from wirespeed.gateware.mgmt import UartBridge
from wirespeed.gateware.registers import RegisterBank
from wirespeed.sim.build import HARNESS_DIR, ensure_binary
from wirespeed.transport import open_target
from wirespeed.transport.uart import SerialTransport

pytestmark = pytest.mark.verilator     # built with Verilator: not in the fast loop

TOP = "wirespeed_mgmt_top"
CLK_HZ = 125_000_000
DIVISOR = 8                     # 15.625 Mbaud of simulated time
MAGIC = 0x4D474D54              # "MGMT"
TESTS_DIR = Path(__file__).resolve().parent
CPP = [TESTS_DIR / "uart_bridge_main.cpp", HARNESS_DIR / "uart_link.cpp", HARNESS_DIR / "sim_cli.cpp"]
COUNTERS = ("requests", "replays", "stale", "malformed", "bad_frames", "rx_errors")


class MgmtTop(wiring.Component):
    """UartBridge on a RegisterBank with registers that show a double execution:
    ``t.strobe`` (w) counts its writes in ``t.strobe_count`` and sums them in
    ``t.strobe_sum``; ``t.pop`` (r) reads a counter that every read of it increments."""

    rx: In(1, init=1)
    tx: Out(1, init=1)

    def __init__(self):
        super().__init__()
        self.bridge = UartBridge(CLK_HZ, CLK_HZ // DIVISOR)
        self.bank = b = RegisterBank(name="mgmt-test", version="0.0.0", clk_hz=CLK_HZ, n_ports=0)
        self.regs = {
            "id.magic": b.add("id.magic", 32, "r", offset=0x00),
            **{f"t.scratch{i}": b.add(f"t.scratch{i}", 32, "rw", offset=0x04 + 4 * i) for i in range(4)},
            "t.wide": b.add("t.wide", 64, "rw", offset=0x14),
            "t.strobe": b.add("t.strobe", 32, "w", offset=0x1C),
            "t.strobe_count": b.add("t.strobe_count", 32, "r", offset=0x20),
            "t.strobe_sum": b.add("t.strobe_sum", 32, "r", offset=0x24),
            "t.pop": b.add("t.pop", 32, "r", offset=0x28),
            "t.cycles": b.add("t.cycles", 64, "r", offset=0x2C),
            **{f"mgmt.{c}": b.add(f"mgmt.{c}", 32, "r", offset=0x34 + 4 * k) for k, c in enumerate(COUNTERS)},
        }
        self.window = b.add_memory("t.mem", 32, 256, access="rw", offset=0x400)
        self.register_map = b.register_map()

    def elaborate(self, platform):
        m = Module()
        m.submodules.bridge = br = self.bridge
        m.submodules.bank = bank = self.bank
        m.submodules.mem = mem = Memory(shape=32, depth=256, init=[])
        r, w = self.regs, self.window
        rd, wr = mem.read_port(), mem.write_port()
        m.d.comb += [
            br.rx.eq(self.rx), self.tx.eq(br.tx),
            bank.bus.addr.eq(br.csr_addr), bank.bus.r_stb.eq(br.csr_r_stb),
            bank.bus.w_stb.eq(br.csr_w_stb), bank.bus.w_data.eq(br.csr_w_data),
            br.csr_r_data.eq(bank.bus.r_data),
            rd.addr.eq(w.addr), w.data.eq(rd.data),
            wr.addr.eq(w.w_addr), wr.data.eq(w.w_data), wr.en.eq(w.w_en),
            r["id.magic"].eq(MAGIC),
        ]
        for c in COUNTERS:
            m.d.comb += r[f"mgmt.{c}"].eq(getattr(br, c))
        rmap = self.register_map
        strobe_word, pop_word = rmap["t.strobe"].offset >> 2, rmap["t.pop"].offset >> 2
        count, total, pop, cycles = (Signal(32), Signal(32), Signal(32), Signal(64))
        with m.If(br.csr_w_stb & (br.csr_addr == strobe_word)):
            m.d.sync += [count.eq(count + 1), total.eq(total + br.csr_w_data)]
        with m.If(br.csr_r_stb & (br.csr_addr == pop_word)):
            m.d.sync += pop.eq(pop + 1)
        m.d.sync += cycles.eq(cycles + 1)
        m.d.comb += [r["t.strobe_count"].eq(count), r["t.strobe_sum"].eq(total), r["t.pop"].eq(pop),
                     r["t.cycles"].eq(cycles)]
        return m


def _key() -> str:
    h = hashlib.sha256(b"wirespeed-mgmt-sim\0")
    gw = Path(importlib.util.find_spec("wirespeed.gateware").submodule_search_locations[0])
    files = sorted(p for p in gw.rglob("*.py") if "__pycache__" not in p.parts)
    for f in [*files, Path(__file__), *CPP, *(HARNESS_DIR / h for h in ("uart_link.h", "dut_prng.h", "sim_cli.h"))]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    for dist in ("verilator", "amaranth"):
        h.update(f"{dist}={importlib.metadata.version(dist)}".encode())
    return "mgmt-" + h.hexdigest()[:26]


def _write_sources(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{TOP}.v"
    path.write_text(verilog.convert(MgmtTop(), name=TOP, emit_src=False))
    return [path]


@pytest.fixture(scope="module")
def binary() -> Path:
    t0 = time.monotonic()
    path = ensure_binary(_key(), _write_sources, top=TOP, cpp=CPP)
    print(f"\nmgmt sim binary ready in {time.monotonic() - t0:.1f} s: {path}")
    return path


@pytest.fixture(scope="module")
def rmap():
    top = MgmtTop()
    top._MustUse__silence = True
    top.bridge._MustUse__silence = True
    top.bank._MustUse__silence = True
    return top.register_map


class UartSim:
    """The Verilated bridge as a subprocess; ``stats`` after exit."""

    def __init__(self, binary: Path, *args: str):
        self.cmd = [str(binary), "--divisor", str(DIVISOR), *args]
        self.stats: dict[str, dict[str, float]] = {}

    def __enter__(self) -> "UartSim":
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.proc = subprocess.Popen(["nice", *self.cmd], stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=self._err)
        deadline = time.monotonic() + 20
        while True:
            self._out.seek(0)
            m = re.search(rb"WIRESPEED-UART READY tcp=(\d+)", self._out.read())
            if m:
                self.url = f"socket://127.0.0.1:{int(m.group(1))}"
                return self
            assert self.proc.poll() is None, self._stderr()
            assert time.monotonic() < deadline, "simulation not ready"
            time.sleep(0.01)

    def _stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace")

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
        text = self._stderr()
        for line in text.splitlines():
            words = line.split()
            if line.startswith("WIRESPEED-UART ") and len(words) > 2:
                name = words[1].lower() + ("_" + words[2] if words[1] == "FAULTS" else "")
                self.stats[name] = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line)}
        self._out.close()
        self._err.close()
        assert self.proc.returncode == 0, text[-2000:]


def read(t, rmap, name):
    reg = rmap[name]
    return reg.join(t.read(reg.word_offsets))


def test_registers_and_bursts_on_a_clean_line(binary, rmap):
    with UartSim(binary) as sim, SerialTransport(sim.url, timeout=3.0) as t:
        assert read(t, rmap, "id.magic") == MAGIC
        scratch = [rmap[f"t.scratch{i}"].offset for i in range(4)]
        t.write([(a, 0xC0DB0000 + i) for i, a in enumerate(scratch)])    # SLIP specials
        assert t.read(scratch[::-1]) == [0xC0DB0000 + i for i in range(4)][::-1]
        wide = rmap["t.wide"]
        t.write(list(zip(wide.word_offsets, wide.split(0xDBDBC0C0_12345678))))
        assert read(t, rmap, "t.wide") == 0xDBDBC0C0_12345678
        # the read latches the high word of a live 64-bit counter
        c0 = read(t, rmap, "t.cycles")
        assert 0 < c0 < read(t, rmap, "t.cycles")
        # a 256-entry block-RAM window, written and read in bursts of 255
        mem = rmap["t.mem"]
        values = [(0x9E3779B9 * i) & 0xFFFFFFFF for i in range(256)]
        t.write(list(zip(mem.word_offsets, values)))
        assert t.read(mem.word_offsets) == values
        # throughput: single-register transactions and 255-word bursts
        n = 200
        t0 = time.monotonic()
        for i in range(n):
            t.read([scratch[i % 4]])
        single = n / (time.monotonic() - t0)
        t0 = time.monotonic()
        for _ in range(4):
            t.read(mem.word_offsets[:255])
        burst = 4 * 255 / (time.monotonic() - t0)
        assert t.stats["retries"] == 0 and t.stats["bad_frames"] == 0
        counters = {c: read(t, rmap, f"mgmt.{c}") for c in COUNTERS}
    print(f"\nclean line: {single:.0f} single-register transactions/s, {burst:.0f} words/s in "
          f"255-word bursts; gateware counters {counters}; simulation {sim.stats['exit']}")
    assert counters["replays"] == counters["stale"] == counters["malformed"] == 0
    assert counters["bad_frames"] == counters["rx_errors"] == 0
    assert sim.stats["exit"]["cycles_per_s"] > 0


FAULTS = "drop=20000,dup=20000,late=20000,corrupt=20000"     # 2 % of frames each


def test_faults_both_ways_every_write_once_every_read_right(binary, rmap):
    strobe, pop = rmap["t.strobe"].offset, rmap["t.pop"].offset
    scratch = [rmap[f"t.scratch{i}"].offset for i in range(4)]
    n = 150
    t_start = time.monotonic()
    with UartSim(binary, "--seed", "2544", "--late-ms", "300", "--to-design", FAULTS,
                 "--to-host", FAULTS) as sim:
        with SerialTransport(sim.url, timeout=0.15, retries=8) as t:
            written = []
            last_pop = None
            for i in range(n):
                value = (i * 2654435761 + 1) & 0xFFFFFFFF
                # a strobe write and a scratch write in one transaction, then read-backs
                t.transact([(strobe, value)], ())
                written.append(value)
                t.write([(scratch[i % 4], value)])
                assert t.read([scratch[i % 4]]) == [value]
                (p,) = t.read([pop])
                if last_pop is not None:
                    assert p == last_pop + 1, f"a read of t.pop ran twice or not at all ({last_pop} -> {p})"
                last_pop = p
            time.sleep(0.4)     # let the late frames arrive (they must change nothing)
            count = read(t, rmap, "t.strobe_count")
            total = read(t, rmap, "t.strobe_sum")
            assert read(t, rmap, "t.pop") == last_pop + 1
            counters = {c: read(t, rmap, f"mgmt.{c}") for c in COUNTERS}
            host = dict(t.stats)
    elapsed = time.monotonic() - t_start
    assert count == n, f"{count} strobe writes executed for {n} written"
    assert total == sum(written) & 0xFFFFFFFF
    to_design, to_host = sim.stats["faults_to_design"], sim.stats["faults_to_host"]
    print(f"\nfaults to design {to_design}\nfaults to host {to_host}\nhost {host}\n"
          f"gateware {counters}\n{4 * n + 4} transactions in {elapsed:.1f} s")
    for d in (to_design, to_host):                       # every fault happened, both ways
        assert min(d["dropped"], d["duplicated"], d["late"], d["corrupted"]) > 0, d
    assert host["retries"] > 0 and host["bad_frames"] > 0 and host["duplicates"] > 0
    assert counters["replays"] > 0 and counters["bad_frames"] > 0 and counters["stale"] > 0
    assert counters["malformed"] == 0
    # each record executed exactly once: the gateware's count (read in the first of the
    # counter transactions, itself included) is the host's record count at that point
    assert counters["requests"] == host["requests"] - (len(COUNTERS) - 1)


@pytest.mark.parametrize("skew_ppm", [-15000, 15000])
def test_adapter_baud_off_by_1_5_percent(binary, rmap, skew_ppm):
    with UartSim(binary, "--skew-ppm", str(skew_ppm)) as sim, SerialTransport(sim.url, timeout=1.0) as t:
        mem = rmap["t.mem"]
        values = [(0x01000193 * i + skew_ppm) & 0xFFFFFFFF for i in range(64)]
        t.write(list(zip(mem.word_offsets, values)))
        assert t.read(mem.word_offsets[:64]) == values
        assert t.stats["retries"] == 0 and read(t, rmap, "mgmt.rx_errors") == 0
    assert sim.stats["link"]["line_errors"] == 0


def test_new_session_with_an_older_tag_resynchronises(binary, rmap):
    strobe = rmap["t.strobe"].offset
    with UartSim(binary) as sim:
        with open_target(sim.url, timeout=1.0) as t:
            assert isinstance(t, SerialTransport)
            t._tag = 0x4000_0000
            t.write([(strobe, 5)])
        with SerialTransport(sim.url, timeout=1.0) as t2:
            t2._tag = 0x1000_0000          # a new host session that happened to pick a lower tag
            t2.write([(strobe, 7)])
            assert t2.stats["resyncs"] == 1
            assert read(t2, rmap, "t.strobe_count") == 2 and read(t2, rmap, "t.strobe_sum") == 12
            assert read(t2, rmap, "mgmt.stale") == 1


def test_dead_line_fails_in_bounded_time_with_one_line(binary):
    with UartSim(binary, "--to-design", "drop=1000000") as sim, \
            SerialTransport(sim.url, timeout=0.05, retries=4) as t:
        t0 = time.monotonic()
        with pytest.raises(TransportError) as err:
            t.read([0])
        assert time.monotonic() - t0 < 1.0
    assert "\n" not in str(err.value) and "after 4 tries" in str(err.value)
    assert sim.stats["faults_to_design"]["dropped"] == 4
