"""The whole tester reached through the board's management path in Verilator: the host's
SerialTransport -> TCP -> simulated UART line (sim/harness/uart_link, optionally with
per-frame faults) -> the gateware UartBridge -> the tester's CSR bus
(gateware/uart_sim_top.py, ``SimProcess(..., management="uart")``). No C++ Etherbone server
on the tester's registers.

An RFC 2544 throughput search at 64 bytes through a store-and-forward router must give the
figure the router model's rules predict (see test_rfc2544_b2b_loss_system.py), and with
drops, duplicates, late copies and corrupted frames on the line in both directions the very
same trials: every START executed exactly once (each trial's pN.gen.tx_frames is what its
rate and duration imply, the gateware executed as many records as the host sent)."""

import contextlib
import math
import time

import pytest
from sim_cli import SHARED_ERRORS, check_error, check_help

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.rfc2544 import events as ev
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput
from wirespeed.sim.build import ensure_uart_harness
from wirespeed.sim.control import DutControl
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess, UartFaults, parse_exit_stats
from wirespeed.transport import EtherboneTransport
from wirespeed.transport.uart import SerialTransport

RATE, QUEUE = 400_000, 64
DUT = f"router:rate={RATE},queue={QUEUE},latency=2us"
TRIAL_NS, WAIT_NS = 1_000_000, 100_000
SIZE = 64
RESOLUTION_PCT = 0.1
FAULTS = "drop=20000,dup=20000,late=20000,corrupt=20000"      # 2 % of frames each, both ways
# The host's answer timeout must cover the exchange in wall-clock time (a 255-word burst:
# about 1 040 bytes each way). The line runs at 15.6 Mbaud of simulated time, so its
# wall-clock speed is the simulation's, which depends on the machine and its load. On a clean
# line no answer is lost, so its timeout only bounds a hang. On the faulty line each lost
# frame costs one timeout, so each exchange gets one derived from the slowest exchange of its
# size class (up to SMALL_WORDS words, or more) that the clean run measured.
CLEAN_TIMEOUT_S, RETRIES = 30.0, 8
SMALL_WORDS = 16
MIN_TIMEOUT_S, TIMEOUT_PER_SLOWEST = {"small": 0.5, "large": 1.5}, 2
FAULT_SEED = 3      # its draws give every kind of fault, both ways, within the first 65 frames
M64 = (1 << 64) - 1
KINDS = (("drop", "dropped"), ("dup", "duplicated"), ("late", "late"), ("corrupt", "corrupted"))


def fault_draws(seed: int, direction: int, rates: str, frames: int) -> tuple[dict[str, int], int | None]:
    """The injector's decisions for the first ``frames`` frames of a direction
    (sim/harness/uart_link.cpp, FrameFaults::frame_done: SplitMix64 seeded as
    prng_seed(seed, kImpair = 1, direction), one draw below 10^6 per frame, two more for a
    corrupted one): the count of each fault, and the frame count by which every kind had
    happened (None: not yet)."""
    ppm = dict(item.split("=") for item in rates.split(","))
    state, counts, complete = (seed + (1 << 48) + (direction << 32)) & M64, {k: 0 for _, k in KINDS}, None

    def below(n):
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return ((z ^ (z >> 31)) * n) >> 64

    for i in range(frames):
        r, edge = below(1_000_000), 0
        for key, kind in KINDS:
            edge += int(ppm.get(key, 0))
            if r < edge:
                counts[kind] += 1
                if kind == "corrupted":
                    below(2), below(8)      # where and which bit (the values do not matter here)
                break
        if complete is None and min(counts.values()) > 0:
            complete = i + 1
    return counts, complete


def analytic_forwarded(sent: int, offered_fps: float) -> int:
    """Frames the router forwards of a trial of ``sent`` frames offered at ``offered_fps``
    (test_rfc2544_b2b_loss_system.py: the server busy from the first arrival, Q waiting)."""
    return min(sent, math.floor((sent - 1) * RATE / offered_fps) + 1 + QUEUE)


def analytic_throughput() -> float:
    """The highest rate at which a trial of TRIAL_NS loses nothing, to 1 frame/s."""
    def passes(r):
        sent = math.ceil(r * TRIAL_NS / 1e9)
        return analytic_forwarded(sent, r) == sent
    lo, hi = float(RATE), line_rate_fps(SIZE)
    assert passes(lo) and not passes(hi)
    while hi - lo > 1:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if passes(mid) else (lo, mid)
    return lo


class Trials:
    def __init__(self):
        self.trials = []

    def __call__(self, event):
        if isinstance(event, ev.TrialDone):
            self.trials.append(event.result)


@pytest.fixture(scope="module")
def uart_binary():
    t0 = time.monotonic()
    path = ensure_uart_harness()
    print(f"\nUART flavour binary ready in {time.monotonic() - t0:.1f} s: {path}")
    return path


def size_class(record) -> str:
    return "small" if len(record.data) + len(record.reads) <= SMALL_WORDS else "large"


class TimedTransport(SerialTransport):
    """A SerialTransport that keeps the wall time of its slowest exchange of each size class
    and, given ``timeouts`` (size class: seconds), waits that long for an exchange's answer."""

    def __init__(self, *args, timeouts=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.timeouts = timeouts
        self.slowest_s = dict.fromkeys(MIN_TIMEOUT_S, 0.0)

    def _exchange(self, record):
        size = size_class(record)
        if self.timeouts is not None:
            self.timeout = self.timeouts[size]
        t0 = time.monotonic()
        try:
            return super()._exchange(record)
        finally:
            self.slowest_s[size] = max(self.slowest_s[size], time.monotonic() - t0)


def _search(binary, faults=None, singles=40, timeouts=None):
    """Run the search on a fresh UART flavour; return (result, trials, host stats, sim stats,
    wall seconds, single-register transactions/s measured over ``singles`` reads first,
    the slowest exchange of each size class in seconds)."""
    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut(DUT), binary=binary, management="uart",
                                             faults=faults))
        assert sim.url == f"socket://127.0.0.1:{sim.port}"
        transport = stack.enter_context(TimedTransport(sim.url, timeout=CLEAN_TIMEOUT_S, retries=RETRIES,
                                                       timeouts=timeouts))
        dev = Device(transport, build_register_map())
        dev.connect()
        magic = dev.regmap["id.magic"].offset
        t1 = time.monotonic()
        for _ in range(singles):
            assert transport.read([magic]) == [0x57535044]
        per_s = singles / (time.monotonic() - t1) if singles else 0.0
        config = ThroughputConfig(frame_sizes=[SIZE], trial_duration_ns=TRIAL_NS, wait_ns=WAIT_NS,
                                  resolution_pct=RESOLUTION_PCT, learning=None)
        observer = Trials()
        result, = run_throughput(dev, config, observer)
        host = dict(transport.stats)
    return result, observer.trials, host, sim.stats, time.monotonic() - t0, per_s, transport.slowest_s


@pytest.fixture(scope="module")
def clean_run(uart_binary):
    return _search(uart_binary)


def _check_trials(trials):
    for t in trials:
        sent, received = t.counters[0].tx_frames, t.counters[1].rx_frames
        # START ran once: the generator sent what the rate and the duration imply
        assert sent == math.ceil(t.offered_fps * TRIAL_NS / 1e9), (t.offered_fps, sent)
        assert abs(received - analytic_forwarded(sent, t.offered_fps)) <= 1, (t.offered_fps, sent, received)


@pytest.mark.slow
def test_throughput_through_the_uart_bridge_matches_the_router_model(clean_run):
    result, trials, host, stats, wall, per_s, slowest = clean_run
    want, res = analytic_throughput(), line_rate_fps(SIZE) * RESOLUTION_PCT / 100
    print(f"\nclean line: throughput {result.throughput_fps:.0f} fps (model {want:.0f}, resolution {res:.0f}) "
          f"in {result.trials} trials, {wall:.1f} s; {per_s:.1f} single-register transactions/s; "
          f"{host['requests']} records, {host['requests'] / wall:.1f}/s over the run, the slowest "
          f"{slowest} s; host {host}; "
          f"gateware {stats['mgmt']}; simulation {stats['cycles_per_s']:.0f} cycles/s")
    assert result.converged and result.trials == len(trials) >= 2
    # within the search's resolution of the model's figure (and one frame per trial of 1 ms)
    assert want - res - 1000 <= result.throughput_fps <= want + 1000
    _check_trials(trials)
    assert host["retries"] == host["timeouts"] == host["bad_frames"] == host["duplicates"] == 0
    assert all(t.control["retries"] == t.control["timeouts"] == 0 for t in trials)
    mgmt = stats["mgmt"]
    assert mgmt["requests"] == host["requests"]               # each record executed once
    assert mgmt["replays"] == mgmt["stale"] == mgmt["bad_frames"] == mgmt["rx_errors"] == 0
    assert stats["link"]["line_errors"] == 0
    assert stats["dut_a"]["frames_in"] == sum(t.counters[0].tx_frames for t in trials)


@pytest.mark.slow
def test_faults_on_the_line_change_no_trial(uart_binary, clean_run):
    result, trials, *_, slowest = clean_run
    timeouts = {size: max(least, TIMEOUT_PER_SLOWEST * slowest[size]) for size, least in MIN_TIMEOUT_S.items()}
    # a late copy comes after the host gave up on it: it is a duplicate, never the answer
    faults = UartFaults.both(FAULTS, seed=FAULT_SEED, late_ms=int(max(timeouts.values()) * 1000 * 1.5))
    f_result, f_trials, host, stats, wall, *_ = _search(uart_binary, faults, singles=0, timeouts=timeouts)
    to_design, to_host = stats["faults_to_design"], stats["faults_to_host"]
    print(f"\nfaults ({FAULTS} both ways): {wall:.1f} s, timeouts {timeouts} s; to design {to_design}; "
          f"to host {to_host}; "
          f"host {host}; gateware {stats['mgmt']}")
    for direction, d in enumerate((to_design, to_host)):    # every kind of fault happened, both ways
        counts, complete = fault_draws(FAULT_SEED, direction, FAULTS, int(d["frames"]))
        assert complete is not None and complete <= 65 <= d["frames"], (direction, complete, d)
        assert {kind: d[kind] for _, kind in KINDS} == counts        # the injector did as seeded
        assert min(counts.values()) > 0
    assert host["retries"] > 0 and host["timeouts"] > 0 and host["bad_frames"] > 0 and host["duplicates"] > 0
    # the recovery is counted per trial too (and a run records and prints it): never invisible
    assert sum(t.control["retries"] for t in f_trials) > 0
    assert sum(t.control["requests"] for t in f_trials) <= host["requests"]
    mgmt = stats["mgmt"]
    assert mgmt["replays"] > 0 and mgmt["bad_frames"] > 0 and mgmt["malformed"] == 0
    # every record executed exactly once, whatever the line did
    assert mgmt["requests"] == host["requests"]
    # the same trials, frame for frame, and the same result
    assert [(t.offered_fps, t.counters[0].tx_frames, t.counters[1].rx_frames) for t in f_trials] == \
        [(t.offered_fps, t.counters[0].tx_frames, t.counters[1].rx_frames) for t in trials]
    _check_trials(f_trials)
    assert (f_result.throughput_fps, f_result.trials) == (result.throughput_fps, result.trials)
    assert stats["dut_a"]["frames_in"] == sum(t.counters[0].tx_frames for t in f_trials)


@pytest.mark.slow
def test_same_trials_as_the_default_udp_simulation(clean_run, tester):
    """The same search on the default flavour (C++ Etherbone server on the CSR bus): the
    management path changes nothing the tester measures."""
    result, trials, *_ = clean_run
    dev = tester(DUT)
    observer = Trials()
    udp_result, = run_throughput(dev, ThroughputConfig(frame_sizes=[SIZE], trial_duration_ns=TRIAL_NS,
                                                       wait_ns=WAIT_NS, resolution_pct=RESOLUTION_PCT,
                                                       learning=None), observer)
    assert [(t.offered_fps, t.counters[0].tx_frames, t.counters[1].rx_frames) for t in observer.trials] == \
        [(t.offered_fps, t.counters[0].tx_frames, t.counters[1].rx_frames) for t in trials]
    assert udp_result.throughput_fps == result.throughput_fps


@pytest.mark.slow
def test_dut_control_window_on_its_own_port(uart_binary):
    with SimProcess(parse_dut(DUT + ",reboot=10us"), binary=uart_binary, management="uart") as sim, \
            contextlib.closing(EtherboneTransport(sim.host, sim.control_port)) as control_transport, \
            SerialTransport(sim.url, timeout=CLEAN_TIMEOUT_S) as transport:
        control = DutControl(control_transport)
        c0 = control.cycles()
        assert control.reset() is True
        assert control.counters()[0].resets == 1 and control.cycles() > c0
        # the control port serves nothing but the window: the tester's registers read 0 there
        regmap = build_register_map()
        assert control_transport.read([regmap["id.magic"].offset]) == [0]
        # and the bridge does not reach the window (beyond its 256 KiB): it reads 0
        assert transport.read([0x0010_0008]) == [0]
        assert transport.read([regmap["id.magic"].offset]) == [0x57535044]
    assert sim.stats["control"]["out_of_range"] == 1


@pytest.mark.parametrize("args,message", [
    *SHARED_ERRORS,
    (["--divisor", "3"], "--divisor must be an integer 4..1048576, got '3'"),
    (["--skew-ppm", "-50001"], "--skew-ppm must be an integer -50000..50000, got '-50001'"),
    (["--to-host", "lose=5"], "unknown fault 'lose' (drop, dup, late, corrupt)"),
    (["--vcd", "x.vcd"], "unknown argument '--vcd', allowed: --tcp-port, --control-udp-port, --divisor, "
                         "--dut, --dut-param, --tap-netns, --tap-if0, --tap-if1, --max-cycles, --seed, "
                         "--late-ms, --skew-ppm, --to-design, --to-host, --help"),
])
def test_cli_errors(uart_binary, args, message):
    check_error(uart_binary, "wirespeed-sim-uart", args, message)


def test_cli_help(uart_binary):
    check_help(uart_binary, "wirespeed-sim-uart")


# Without the simulation: the launcher's options and the statistics lines ------------------


def test_uart_faults_are_checked_in_one_line():
    f = UartFaults.both("drop=1000,late=5", seed=7, late_ms=900)
    assert f.harness_args() == ["--seed", "7", "--late-ms", "900", "--skew-ppm", "0",
                                "--to-design", "drop=1000,late=5", "--to-host", "drop=1000,late=5"]
    assert UartFaults(to_host="corrupt=1000000").harness_args()[-2:] == ["--to-host", "corrupt=1000000"]
    for bad in ("drop=1000001", "lose=5", "drop", "drop=-1", "drop=600000,dup=400001"):
        with pytest.raises(ValueError) as err:
            UartFaults.both(bad)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError):
        UartFaults(seed=-1)


def test_sim_process_uart_command_and_default_unchanged(tmp_path):
    spec = parse_dut(DUT)
    sim = SimProcess(spec, 4321, binary=tmp_path / "x", management="uart", faults="dup=10", tcp_port=1234)
    assert sim.command == [str(tmp_path / "x"), "--tcp-port", "1234", "--control-udp-port", "4321",
                           "--divisor", "8", *spec.harness_args(), "--seed", "1", "--late-ms", "300",
                           "--skew-ppm", "0", "--to-design", "dup=10", "--to-host", "dup=10"]
    assert sim.faults == UartFaults.both("dup=10") and sim.url is None
    default = SimProcess(spec, 4321, binary=tmp_path / "x")
    assert default.command == [str(tmp_path / "x"), "--udp-port", "4321", *spec.harness_args()]
    for kwargs in ({"management": "serial"}, {"faults": "drop=1"}, {"tcp_port": 5},
                   {"management": "uart", "tcp_port": 70000}, {"management": "uart", "faults": "x=1"}):
        with pytest.raises(ValueError):
            SimProcess(spec, binary=tmp_path / "x", **kwargs)


def test_uart_flavour_statistics_lines():
    stats = parse_exit_stats(
        "WIRESPEED-SIM FAULTS to_design frames=5 passed=4 dropped=1 duplicated=0 late=0 corrupted=0 bytes=9\n"
        "WIRESPEED-SIM FAULTS to_host frames=4 passed=4 dropped=0 duplicated=0 late=0 corrupted=0 bytes=8\n"
        "WIRESPEED-SIM LINK connections=1 bytes_in=9 bytes_out=8 line_errors=0\n"
        "WIRESPEED-SIM MGMT requests=4 replays=1 stale=0 malformed=0 bad_frames=0 rx_errors=0\n"
        "WIRESPEED-SIM CONTROL packets=2 malformed=0 reads=3 writes=1 out_of_range=0 send_errors=0\n"
        "WIRESPEED-SIM EXIT reason=signal cycles=100 wall_s=0.5 cycles_per_s=200\n")
    assert stats["faults_to_design"]["dropped"] == 1 and stats["faults_to_host"]["frames"] == 4
    assert stats["link"]["bytes_in"] == 9 and stats["mgmt"] == {
        "requests": 4, "replays": 1, "stale": 0, "malformed": 0, "bad_frames": 0, "rx_errors": 0}
    assert stats["control"]["reads"] == 3 and stats["cycles"] == 100
