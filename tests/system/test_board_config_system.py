"""The boards' testers Verilated and driven by the unmodified CLI over the Etherbone target, as
a board would be, against figures derived from the router model's rules (see
test_rfc2544_b2b_loss_system.py and test_rfc2544_recovery_system.py):

* the Colorlight's (``BOARD_25F``: one way, port 0 sends and port 1 receives, 8 streams, one
  histogram, per-stream statistics, no ARP/ND responder): every RFC 2544 test with sequence
  errors counted, without the learning phase, and what this build cannot carry (learning,
  both directions) refused with one line;
* the Versa's (``BOARD_45F``: one way, with the responder and per-stream statistics): every
  RFC 2544 test, with the learning phase;
* the Colorlight's other build (``BOARD_25F_LEARNING``, ``--variant learning``: the responder
  in place of the per-stream statistics): the learning phase and the tests that need no
  per-stream statistics, and system recovery, which does, refused with one line.

Each build is first checked at the register level, over the same Etherbone target: its
configuration word and register-map hash match its preset, and a stream of frames sent from
port 0 arrives at port 1, every frame counted and its latency in the histogram."""

import contextlib
import json
import math
import sys

import pytest
from records import results
from test_rfc2544_b2b_loss_system import analytic_back_to_back, analytic_forwarded
from test_rfc2544_recovery_system import reset_time_bounds

from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware import config as gateware_config
from wirespeed.gateware.config import BOARD_25F, BOARD_25F_LEARNING, BOARD_45F, ID_CONFIG_OFFSET
from wirespeed.gateware.regmap import CMD_SNAPSHOT, MAGIC
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.host.program import fit_to_build, port_program_writes
from wirespeed.sim.build import ensure_harness
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.traffic import PortProgram, StreamSpec
from wirespeed.transport import EtherboneTransport

pytestmark = pytest.mark.slow

RATE, QUEUE = 400_000, 16
DUT = f"router:rate={RATE},queue={QUEUE},latency=2us"


@pytest.fixture(scope="module")
def colorlight_binary():
    return ensure_harness(config=BOARD_25F)


@pytest.fixture(scope="module")
def board_tester(colorlight_binary):
    """The URL of a simulation of the 25F build behind the router."""
    binary = colorlight_binary
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut(DUT), binary=binary, ready_timeout=60))
        yield sim.url


def _run(capsys, *args):
    code = main(["rfc2544", *args])
    return code, capsys.readouterr().err


def test_throughput_at_line_rate_on_the_board_build(board_tester, tmp_path, capsys):
    """1518 B frames pass the router at line rate, above which nothing is offered (the 64 B
    figures of this build are in the parametrized tests below)."""
    code, err = _run(capsys, "--target", board_tester, "--no-learning", "--tests", "throughput",
                     "--sizes", "1518", "--trial-duration", "2ms", "--wait", "100us", "--resolution", "1",
                     "--calibration", "none", "--latency-trials", "1", "--out", str(tmp_path))
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "complete"
    (row,) = results(record, "throughput")
    assert row["throughput_fps"] == pytest.approx(line_rate_fps(1518), rel=0.005), row["throughput_fps"]
    measured = [lat for lat in row["latency"] if lat["source"] == "measured"]
    assert measured and measured[0]["frames"] > 0 and measured[0]["min_ns"] >= 2000, row["latency"]


@pytest.mark.parametrize("args, field, message", [
    (["--no-learning", "--bidirectional"], "--bidirectional", "port 1 of this gateware has no generator"),
    ([], "--learning", "built without the ARP/ND responder"),
])
def test_what_the_board_build_cannot_carry_is_refused(board_tester, tmp_path, capsys, args, field, message):
    code, err = _run(capsys, "--target", board_tester, "--sizes", "64", "--trial-duration", "100us",
                     "--out", str(tmp_path / "r"), *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wirespeed: error: {field}: ") and message in lines[0], err
    assert not (tmp_path / "r").exists()


# Every RFC 2544 test on each board's build -----------------------------------------------------

V_RATE, V_QUEUE, V_LATENCY_NS = 400_000, 64, 2_000
V_RECOVER_NS, V_REBOOT_NS, V_COLLAPSE = 500_000, 1_000_000, 100_000
#: a router that collapses under overload and can be reset: system recovery and reset
V_RECOVERING = (f"router:rate={V_RATE},queue={V_QUEUE},latency={V_LATENCY_NS // 1000}us,collapse={V_COLLAPSE},"
                f"recover={V_RECOVER_NS // 1000}us,reboot={V_REBOOT_NS // 1_000_000}ms")
#: the same router without the collapse: back-to-back and frame loss follow its queue alone
V_PLAIN = f"router:rate={V_RATE},queue={V_QUEUE},latency={V_LATENCY_NS // 1000}us"
#: a board target gets RFC 2544's durations (60 s trials, ...) unless told: scaled down here
V_COMMON = ["--sizes", "64", "--trial-duration", "2ms", "--wait", "100us", "--settle", "100us",
            "--resolution", "1", "--calibration", "none", "--latency-trials", "1"]


@pytest.fixture(scope="module")
def versa_binary():
    return ensure_harness(config=BOARD_45F)


#: each board's build and whether it carries the learning phase (the ARP/ND responder)
BUILDS = [pytest.param("versa_binary", True, id="versa"), pytest.param("colorlight_binary", False, id="colorlight")]


def _board_run(binary, dut, tmp_path, capsys, *args, reset_hook=False, learning=True, stats=True):
    """Run the CLI on a fresh simulation of a board's build behind ``dut``; ``reset_hook``:
    reset the DUT through :data:`V_HOOK`, aimed at that simulation; ``learning``: with the
    learning phase (else ``--no-learning``); ``stats``: the build has per-stream statistics."""
    if not learning:
        args = ["--no-learning", *args]
    with SimProcess(parse_dut(dut), binary=binary, ready_timeout=60) as sim:
        if reset_hook:
            args = [*args, "--reset-hook", V_HOOK.format(python=sys.executable, url=sim.url)]
        code, err = _run(capsys, "--target", sim.url, *V_COMMON, "--out", str(tmp_path), *args)
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "complete"
    # the per-stream statistics count sequence errors: a note says so when there are none
    unseen = [note for note in record["notes"] if note.startswith("sequence numbers not tracked")]
    assert bool(unseen) != stats, record["notes"]
    if not learning:
        return record
    phase = record["learning"]
    # the responder announces port 1 (the port that receives); port 0, which only sends, sends
    # the learning frames
    assert phase["gratuitous_arp"] == {"1": 1} and phase["unsolicited_na"] == {"1": 1}, phase
    assert phase["learning_frames"]["0"] == 4 and phase["learning_frames_received"]["1"] == 4, phase
    return record


#: the bench's reset hook, as a lab would give it: a command that resets the DUT, here the
#: simulated one through the simulation's DUT control window (its own Etherbone client)
V_HOOK = ('{python} -c "import sys; from wirespeed.transport import open_target; '
          'from wirespeed.sim.control import DutControl; '
          'sys.exit(0 if DutControl(open_target(sys.argv[1])).reset() else 1)" {url}')


@pytest.mark.parametrize("binary, learning", BUILDS)
def test_board_build_runs_recovery_and_reset(binary, learning, request, tmp_path, capsys):
    # The hook (a new Python process) resets the DUT some wall time after the reset point, a
    # quarter into the trial; on a loaded machine that is a few ms of simulated time, and the
    # 1 ms reboot must end within the trial.
    record = _board_run(request.getfixturevalue(binary), V_RECOVERING, tmp_path, capsys,
                        "--tests", "throughput,system-recovery,reset", "--trial-duration", "10ms",
                        "--overload", "4ms", "--recovery", "4ms", "--recovery-trials", "1", "--reset-trials", "1",
                        reset_hook=True, learning=learning)
    (result,) = results(record, "system-recovery")
    (trial,) = result["trials"]
    period_ns = 1e9 / trial["reduced_fps"]
    assert trial["recovered"] and trial["lost_overload"] > 0 and trial["lost_reduced"] > 0
    assert V_RECOVER_NS - period_ns <= trial["recovery_ns"] <= V_RECOVER_NS + 1e9 / V_COLLAPSE + period_ns
    (trial,) = results(record, "reset")[0]["trials"]
    assert trial["trigger"].startswith("hook: ")
    low, high = reset_time_bounds(64, trial["rate_fps"], rate=V_RATE, latency_ns=V_LATENCY_NS,
                                  reboot_ns=V_REBOOT_NS)
    assert low <= trial["reset_ns"] <= high


@pytest.mark.parametrize("binary, learning", BUILDS)
def test_board_build_runs_throughput_back_to_back_and_frame_loss(binary, learning, request, tmp_path, capsys):
    record = _board_run(request.getfixturevalue(binary), V_PLAIN, tmp_path, capsys,
                        "--tests", "throughput,back-to-back,frame-loss", "--b2b-trials", "2", "--b2b-max-burst", "400",
                        "--loss-points", "100,80", learning=learning)
    (row,) = results(record, "throughput")
    # the router's rate, plus what its queue hides over a 2 ms trial (N frames at r pass while
    # N - 1 - queue <= (N - 1) * rate / r: r up to about rate + (queue + 1) / 2 ms)
    assert 0.99 * V_RATE <= row["throughput_fps"] <= V_RATE + (V_QUEUE + 1) / 2e-3, row["throughput_fps"]
    measured = [lat for lat in row["latency"] if lat["source"] == "measured"]
    assert measured and measured[0]["frames"] > 0 and measured[0]["min_ns"] >= V_LATENCY_NS, row["latency"]
    (b2b,) = results(record, "back-to-back")
    assert abs(b2b["mean_burst_frames"] - analytic_back_to_back(64, V_RATE, V_QUEUE)) <= 1, b2b
    (loss,) = results(record, "frame-loss")
    for p in loss["points"]:
        t = p["trial"]
        assert abs(t["rx_frames"] - analytic_forwarded(t["tx_frames"], p["offered_fps"], V_RATE, V_QUEUE)) <= 1, p
        assert t["tx_frames"] == math.ceil(p["offered_fps"] * 2e-3)


# The Colorlight's learning build ---------------------------------------------------------------


@pytest.fixture(scope="module")
def learning_binary():
    return ensure_harness(config=BOARD_25F_LEARNING)


def test_learning_build_runs_the_learning_phase(learning_binary, tmp_path, capsys):
    """The responder answers the learning phase on the 25F's other build; throughput and
    back-to-back follow the router as on the default build, loss counted without the
    per-stream statistics (frames sent - frames received)."""
    record = _board_run(learning_binary, V_PLAIN, tmp_path, capsys, "--tests", "throughput,back-to-back",
                        "--b2b-trials", "2", "--b2b-max-burst", "400", learning=True, stats=False)
    (row,) = results(record, "throughput")
    assert 0.99 * V_RATE <= row["throughput_fps"] <= V_RATE + (V_QUEUE + 1) / 2e-3, row["throughput_fps"]
    (b2b,) = results(record, "back-to-back")
    assert abs(b2b["mean_burst_frames"] - analytic_back_to_back(64, V_RATE, V_QUEUE)) <= 1, b2b


def test_learning_build_refuses_system_recovery(learning_binary, tmp_path, capsys):
    with SimProcess(parse_dut(V_PLAIN), binary=learning_binary, ready_timeout=60) as sim:
        code, err = _run(capsys, "--target", sim.url, *V_COMMON, "--out", str(tmp_path / "r"),
                         "--tests", "throughput,system-recovery")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wirespeed: error: --tests: "), err
    assert "built without per-stream receive statistics, which system-recovery needs" in lines[0], err
    assert not (tmp_path / "r").exists()


# Each board's build, register by register ------------------------------------------------------

#: each board's build: the fixture that builds it, and its configuration
BOARD_BUILDS = {"colorlight": ("colorlight_binary", BOARD_25F),
                "colorlight-learning": ("learning_binary", BOARD_25F_LEARNING),
                "versa": ("versa_binary", BOARD_45F)}
NS_PER_CLOCK = 8
FRAMES = 50


@pytest.mark.parametrize("build", list(BOARD_BUILDS))
def test_a_board_build_reports_its_configuration_and_carries_a_stream(build, request):
    """``id.config``, read at its fixed address without the map, gives back the build's
    configuration, and the map built from it has the hash the gateware reports. One 64-byte
    stream of 50 frames at line rate from port 0 to port 1 through a cable (the loopback DUT):
    all counted, none lost, every latency in port 1's histogram. START waits for CLEAR's
    histogram sweep (``hist_streams`` x 1024 clocks), also when port 0 has no histogram of its
    own (a one-way build), so the generator ends within the sweep and the frames' time."""
    fixture, config = BOARD_BUILDS[build]
    with SimProcess(parse_dut("loopback:delay=0ns"), binary=request.getfixturevalue(fixture)) as sim, \
            contextlib.closing(EtherboneTransport(sim.host, sim.port)) as transport:
        (word,) = transport.read([ID_CONFIG_OFFSET])
        assert word == config.word() and gateware_config.TesterConfig.from_word(word) == config
        rmap = build_register_map(config)
        dev = Device(transport, rmap)
        assert dev.read_many(["id.magic", "id.map_hash", "id.n_ports"]) == \
            {"id.magic": MAGIC, "id.map_hash": rmap.hash, "id.n_ports": 2}
        assert ("p0.ana.rx_frames" in rmap) == config.has_analyzer(0)
        assert ("p1.gen.tx_frames" in rmap) == config.has_generator(1)
        dev.connect()
        # what Device.load_program writes: the program fitted to this build's streams and
        # modifier units
        program = PortProgram(port=0, streams=(StreamSpec(stream_id=0, size="64"),), rate_pct=100.0)
        memories, registers = fit_to_build(rmap, *port_program_writes(0, program.compile()))
        for name, entries in memories.items():
            dev.write_memory(name, entries)
        dev.write_many(registers)
        dev.write_many({"p0.gen.mode": 1, "p0.gen.count": FRAMES, "p0.gen.enable": 1})
        # every latency below the first bin: the underflow count is the histogram's sample count
        dev.write("p1.ana.hist_offset", 0xFFFF_FFFF)
        dev.clear()
        started = dev.start()
        deadline = started + (config.hist_streams * 1024 + FRAMES * 84) * NS_PER_CLOCK + 5000
        dev.wait_until(["p0.gen.running"], lambda v: not v["p0.gen.running"], expected_ns=deadline,
                       deadline_ns=deadline)
        dev.wait_ns(1000)
        dev.write("ctrl.cmd", CMD_SNAPSHOT)
        counts = dev.read_many(["p0.gen.tx_frames", "p1.ana.rx_frames", "p1.ana.rx_bytes", "p1.ana.fcs_errors",
                                "p1.ana.hist_used", "p1.ana.hist_underflow"])
        assert counts == {"p0.gen.tx_frames": FRAMES, "p1.ana.rx_frames": FRAMES, "p1.ana.rx_bytes": FRAMES * 64,
                          "p1.ana.fcs_errors": 0, "p1.ana.hist_used": 1, "p1.ana.hist_underflow": FRAMES}
        if config.stream_stats:
            assert dev.read("p1.ana.seq_errors") == 0
        assert dev.read_stream_tx(0)[0] == (FRAMES, FRAMES * 64)
