"""The C++ DUT models, driven cycle by cycle by tests/sim/model_driver.cpp (built with ASan and
UBSan), checked against exact expectations computed here."""

from __future__ import annotations

import math
import subprocess
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

CLOCK_HZ = 125_000_000
PREAMBLE = 8
GAP = 12


@dataclass
class Run:
    ins: list[tuple[int, int, int]]  # (index, first tx cycle, arrival = first idle cycle after)
    outs: list[tuple[int, int, int, int, int]]  # (index, start, length, ok, gap before)
    er_cycles: int
    stats: dict[str, int]
    collapse: dict[str, int]    # collapses, recovered_at, and the RESET line's fields


def run_model(driver: Path, dut: str, params: dict[str, int], *, frames: int, length: int = 64,
              period: str = "84", tail: int = 20000, extra: tuple[str, ...] = ()) -> Run:
    cmd = [str(driver), "--dut", dut]
    for k, v in params.items():
        cmd += ["--dut-param", f"{k}={v}"]
    cmd += ["--frames", str(frames), "--len", str(length), "--period", period,
            "--tail", str(tail), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    ins, outs, er, stats, collapse = [], [], None, None, {}
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] == "IN":
            ins.append(tuple(int(x) for x in w[1:4]))
        elif w[0] == "OUT":
            n, idx, start, ln, ok, gap = (int(x) for x in w[1:7])
            assert n == len(outs)
            outs.append((idx, start, ln, ok, gap))
        elif w[0] == "ER":
            er = int(w[1])
        elif w[0] == "STATS":
            stats = {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
        elif w[0] in ("COLLAPSE", "RESET"):
            collapse |= {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
    assert er is not None and stats is not None, r.stdout[-2000:]
    assert len(ins) == frames
    return Run(ins, outs, er, stats, collapse)


def driver_error(driver: Path, dut: str, *params: str) -> str:
    cmd = [str(driver), "--dut", dut]
    for p in params:
        cmd += ["--dut-param", p]
    r = subprocess.run(cmd + ["--frames", "0"], capture_output=True, text=True)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.startswith("ERROR ") and r.stdout.count("\n") == 1
    return r.stdout[len("ERROR "):].strip()


# ---- loopback ----------------------------------------------------------------------------


@pytest.mark.parametrize("delay_ns", [0, 8, 40, 8000, 1_000_000])
def test_loopback_is_an_exact_delay_line(model_driver, delay_ns):
    d = delay_ns // 8
    # 1000/7 cycles per frame: irregular gaps of 70 and 71 idle cycles
    run = run_model(model_driver, "loopback", {"delay_ns": delay_ns}, frames=40,
                    period="1000/7", tail=d + 200)
    assert len(run.outs) == 40
    prev_end = None
    for (i, start, end), (idx, ostart, ln, ok, gap) in zip(run.ins, run.outs):
        assert (idx, ostart, ln, ok) == (i, start + d, 64, 1)
        if prev_end is not None:
            assert gap == start - prev_end  # gaps preserved exactly
        prev_end = end
    assert run.stats == {"frames_in": 40, "frames_out": 40, "dropped": 0, "errored": 0}
    assert run.er_cycles == 0


def test_loopback_passes_rx_er(model_driver):
    run = run_model(model_driver, "loopback", {"delay_ns": 16}, frames=5, extra=("--er-frame", "3"))
    assert run.er_cycles == 1
    assert [o[3] for o in run.outs] == [1, 1, 1, 0, 1]


# ---- router: independent reference -------------------------------------------------------


def router_reference(arrivals: list[int], rate: int, queue: int, latency_ns: int,
                     length: int) -> tuple[list[int], list[int]]:
    """Exact store-and-forward reference: returns (accepted frame indices, output starts)."""
    service = Fraction(CLOCK_HZ, rate)
    lat = latency_ns // 8
    free_at = Fraction(0)
    waiting: deque[tuple[int, int]] = deque()
    done: list[tuple[int, int]] = []  # (index, release cycle)

    def start_services(now):
        nonlocal free_at
        while waiting and free_at <= now:
            idx, arr = waiting.popleft()
            free_at = max(Fraction(arr), free_at) + service
            done.append((idx, math.ceil(free_at) + lat))

    for idx, arr in enumerate(arrivals):
        start_services(arr)
        if len(waiting) < queue:
            waiting.append((idx, arr))
            start_services(arr)
    start_services(math.inf)
    starts, line_free = [], 0
    for _, release in done:
        s = max(release, line_free)
        starts.append(s)
        line_free = s + PREAMBLE + length + GAP
    return [i for i, _ in done], starts


def check_router(run: Run, rate, queue, latency_ns, length=64):
    arrivals = [end for _, _, end in run.ins]
    accepted, starts = router_reference(arrivals, rate, queue, latency_ns, length)
    assert [o[0] for o in run.outs] == accepted
    assert [o[1] for o in run.outs] == starts
    assert all(o[2] == length and o[3] == 1 for o in run.outs), "preamble/SFD/content"
    assert all(o[4] >= GAP for o in run.outs[1:]), "inter-frame gap"
    n = len(run.ins)
    assert run.stats == {"frames_in": n, "frames_out": len(accepted),
                         "dropped": n - len(accepted), "errored": 0}
    return accepted


@pytest.mark.parametrize("rate", [400_000, 1_000_000, 333_333])
@pytest.mark.parametrize("latency_ns", [0, 10_000, 20_000])
def test_router_idle_latency_is_service_plus_latency(model_driver, rate, latency_ns):
    run = run_model(model_driver, "router", {"rate": rate, "queue": 4, "latency_ns": latency_ns},
                    frames=6, period="20000")
    assert len(run.outs) == 6
    service = math.ceil(Fraction(CLOCK_HZ, rate))
    for (_, _, arrival), out in zip(run.ins, run.outs):
        assert out[1] - arrival == service + latency_ns // 8
        assert out[3] == 1
    check_router(run, rate, 4, latency_ns)


def test_router_drops_exactly_beyond_the_queue(model_driver):
    # 1 Mfps of 64-byte frames offered to a 400 kfps router with a 16-frame queue.
    n, rate, queue, lat = 2000, 400_000, 16, 10_000
    run = run_model(model_driver, "router", {"rate": rate, "queue": queue, "latency_ns": lat},
                    frames=n, period="125", tail=30_000)
    accepted = check_router(run, rate, queue, lat)
    # Analytic: the server is busy from the first arrival a0 on (service starts at
    # a0 + k * 312.5); after the last arrival the queue is full. So the frames accepted are
    # the services started by the last arrival plus a full queue.
    a0, a_last = run.ins[0][2], run.ins[-1][2]
    service = Fraction(CLOCK_HZ, rate)
    assert len(accepted) == math.floor((a_last - a0) / service) + 1 + queue == 816
    assert run.stats["dropped"] == n - 816
    # Output k leaves when service k ends (rounded up to a cycle), plus the latency.
    for k, out in enumerate(run.outs):
        assert out[1] == math.ceil(a0 + (k + 1) * service) + lat // 8


@pytest.mark.parametrize("rate", [400_000, 333_333])
def test_router_long_run_service_rate_is_exact(model_driver, rate):
    # Line-rate input, queue large enough for everything: the output follows the server
    # exactly, with fractional service times accumulated without drift.
    n = 20_000
    service = Fraction(CLOCK_HZ, rate)
    run = run_model(model_driver, "router", {"rate": rate, "queue": 65536, "latency_ns": 0},
                    frames=n, period="84", tail=math.ceil(n * service))
    assert len(run.outs) == n and run.stats["dropped"] == 0
    a0 = run.ins[0][2]
    expected = [math.ceil(a0 + (k + 1) * service) for k in range(n)]
    assert [o[1] for o in run.outs] == expected
    # long run: n frames served in exactly n / rate seconds (to within one rounding cycle)
    assert abs((run.outs[-1][1] - a0) - n * service) < 1
    check_router(run, rate, 65536, 0)


def test_router_output_respects_line_rate_and_gap(model_driver):
    # An (unrealistically) fast server and 1-cycle input gaps: the output line is the
    # bottleneck and must still keep 12 idle cycles between frames.
    run = run_model(model_driver, "router", {"rate": CLOCK_HZ, "queue": 65536, "latency_ns": 0},
                    frames=500, length=64, period="73", tail=30_000)
    assert len(run.outs) == 500
    assert [o[4] for o in run.outs[1:]] == [GAP] * 499
    check_router(run, CLOCK_HZ, 65536, 0)


def test_router_discards_errored_frames(model_driver):
    run = run_model(model_driver, "router", {"rate": 1_000_000, "queue": 8, "latency_ns": 80},
                    frames=8, period="200",
                    extra=("--er-frame", "2", "--no-sfd-frame", "5"))
    assert [o[0] for o in run.outs] == [0, 1, 3, 4, 6, 7]
    assert all(o[3] == 1 for o in run.outs)
    assert run.stats == {"frames_in": 8, "frames_out": 6, "dropped": 0, "errored": 2}


# ---- parameters (the harness's own factory) -----------------------------------------------


@pytest.mark.parametrize("dut,params,message", [
    ("bridge", (), "dut 'bridge': unknown model, known models: loopback, router"),
    ("loopback", ("delay_ns=41",),
     "dut loopback: delay_ns must be an integer 0..1000000 and a multiple of 8, got '41'"),
    ("loopback", ("delay_ns=1000008",),
     "dut loopback: delay_ns must be an integer 0..1000000 and a multiple of 8, got '1000008'"),
    ("loopback", ("rate=5",), "dut loopback: unknown parameter 'rate', allowed: delay_ns"
     ", loss_ppb, dup_ppb, reorder_ppb, corrupt_ppb, blackout_start_ns, blackout_len_ns, seed, reboot_ns"),
    ("router", ("queue=x",), "dut router: queue must be an integer 1..65536, got 'x'"),
    ("router", ("queue=0",), "dut router: queue must be an integer 1..65536, got '0'"),
    ("router", ("rate=-1",), "dut router: rate must be an integer 1..125000000, got '-1'"),
    ("router", ("latency=5",),
     "dut router: unknown parameter 'latency', allowed: rate, queue, latency_ns, max_frame, "
     "jitter_ns, collapse, recover_ns, loss_ppb, dup_ppb, reorder_ppb, corrupt_ppb, blackout_start_ns, blackout_len_ns, seed, reboot_ns"),
    ("router", ("queue=4", "queue=5"), "dut router: parameter 'queue' given twice"),
])
def test_model_parameter_errors(model_driver, dut, params, message):
    assert driver_error(model_driver, dut, *params) == message


# ---- overload collapse (RFC 2544 26.5 system recovery) -----------------------------------------


@pytest.mark.parametrize("collapse", [0, 20_000])
def test_router_overload_collapse_and_recovery(model_driver, collapse):
    """110 % of the router's rate, then 50 %: a collapsing router (service at `collapse` fps
    after its queue overflowed) keeps losing frames until `recover` after the last frame that
    came faster than its rate, then drains its queue and loses nothing more; without collapse
    the losses stop as soon as the load falls."""
    rate, queue, recover_ns = 100_000, 8, 2_000_000
    service, slow_service = CLOCK_HZ // rate, CLOCK_HZ // (collapse or rate)    # 1250, 6250 cycles
    overload, switch, after = 3000, 3000, 1500
    params = {"rate": rate, "queue": queue, "latency_ns": 0}
    if collapse:
        params |= {"collapse": collapse, "recover_ns": recover_ns}
    run = run_model(model_driver, "router", params, frames=overload + after, tail=50_000,
                    period="12500/11", extra=("--switch", str(switch), "--period2", "2500"))
    arrival = {i: end for i, _, end in run.ins}
    out = {idx for idx, *_ in run.outs}
    lost = sorted(set(arrival) - out)
    assert len(lost) == run.stats["dropped"] > 0
    t_switch = arrival[switch]                 # the last frame that came faster than the rate
    last_lost = arrival[lost[-1]]
    if collapse:
        assert run.collapse["collapses"] == 1
        recovered = run.collapse["recovered_at"]
        assert recovered == t_switch + recover_ns // 8
        # losses go on until the recovery and stop within one collapsed service after it
        assert recovered - 2500 < last_lost <= recovered + slow_service, (last_lost - recovered)
    else:
        assert run.collapse["collapses"] == 0
        # the queue drains at once: the last loss is within one service of the switch
        assert last_lost <= t_switch + service
    # every frame that was not dropped leaves, in order
    assert [idx for idx, *_ in run.outs] == sorted(out)


# ---- reset (RFC 2544 26.6 / RFC 6201) ----------------------------------------------------------


@pytest.mark.parametrize("dut,params", [
    ("router", {"rate": 200_000, "queue": 64, "latency_ns": 8_000}),
    ("loopback", {"delay_ns": 80}),
])
def test_reset_takes_the_device_down_for_its_reboot_time(model_driver, dut, params):
    """A reset at cycle R: the device's output stops at once (a frame being sent is cut), what
    it held is lost, frames starting on its input before R + reboot are lost, and the first
    frame starting at or after R + reboot is forwarded as by a fresh device."""
    reboot_ns, reset = 400_000, 20_000
    period = 1000                                   # cycles between frames: 125 kframes/s
    run = run_model(model_driver, dut, params | {"reboot_ns": reboot_ns}, frames=200, tail=20_000,
                    period=str(period), extra=("--reset-at", str(reset)))
    r = run.collapse
    up = reset + reboot_ns // 8
    assert (r["taken"], r["resets"], r["reset_at"], r["up_at"]) == (1, 1, reset, up)
    starts = {i: start for i, start, _ in run.ins}
    during = [i for i, s in starts.items() if reset <= s < up]
    assert r["reset_lost"] == len(during) == 50
    good = [o for o in run.outs if o[3]]
    assert all(o[1] < reset for o in good if o[0] < during[0])       # sent before the reset
    assert not any(o[0] in during for o in good)                     # lost while down
    assert not [o for o in run.outs if reset <= o[1] < up]           # silent while down
    after = [o for o in good if o[1] >= up]
    assert after and after[0][0] == during[-1] + 1                   # the first frame after reboot
    # every frame that started on the input before the reset either left before it or was lost
    before_reset_out = {o[0] for o in good if o[1] < reset}
    assert before_reset_out <= {i for i, s in starts.items() if s < reset}
    # the fresh device forwards everything that follows
    assert [o[0] for o in after] == list(range(during[-1] + 1, 200))
    # without a `reboot` parameter a reset is refused and nothing is lost
    run = run_model(model_driver, dut, params, frames=50, period=str(period), extra=("--reset-at", "2000"))
    assert run.collapse["taken"] == 0 and len([o for o in run.outs if o[3]]) == 50
