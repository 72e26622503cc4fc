"""The C++ DUT models, driven cycle by cycle by tests/sim/model_driver.cpp (built with ASan and
UBSan), checked against exact expectations computed here."""

from __future__ import annotations

import math
import subprocess
from collections import deque
from dataclasses import dataclass, field
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
    switch: dict[str, dict[str, int]] = field(default_factory=dict)  # p0, p1, table, peer


def run_model(driver: Path, dut: str, params: dict[str, int], *, frames: int, length: int = 64,
              period: str = "84", tail: int = 20000, extra: tuple[str, ...] = ()) -> Run:
    cmd = [str(driver), "--dut", dut]
    for k, v in params.items():
        cmd += ["--dut-param", f"{k}={v}"]
    cmd += ["--frames", str(frames), "--len", str(length), "--period", period,
            "--tail", str(tail), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    ins, outs, er, stats, collapse, switch = [], [], None, None, {}, {}
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
        elif w[0] in ("SWITCH", "TABLE", "PEER"):
            d = {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
            switch[f"p{d.pop('port')}" if w[0] == "SWITCH" else w[0].lower()] = d
    assert er is not None and stats is not None, r.stdout[-2000:]
    assert len(ins) == frames
    return Run(ins, outs, er, stats, collapse, switch)


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
    ("bridge", (), "dut 'bridge': unknown model, known models: loopback, router, switch, tap"),
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
     "jitter_ns, collapse, recover_ns, loss_ppb, dup_ppb, reorder_ppb, corrupt_ppb, blackout_start_ns, "
     "blackout_len_ns, seed, reboot_ns"),
    ("router", ("queue=4", "queue=5"), "dut router: parameter 'queue' given twice"),
    ("switch", ("table=0",), "dut switch: table must be an integer 1..1048576, got '0'"),
    ("switch", ("learning=2",), "dut switch: learning must be an integer 0..1, got '2'"),
    ("switch", ("aging_ns=12",),
     "dut switch: aging_ns must be an integer 0..1000000000000000 and a multiple of 8, got '12'"),
    ("switch", ("delay_ns=8",), "dut switch: unknown parameter 'delay_ns', allowed: latency_ns, queue, table, "
     "aging_ns, learning, rate, max_frame, loss_ppb, dup_ppb, reorder_ppb, corrupt_ppb, blackout_start_ns, "
     "blackout_len_ns, seed, reboot_ns"),
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


# ---- switch (sim/harness/dut_switch.h) ---------------------------------------------------------

BCAST = "ffffffffffff"


def mac(n: int) -> str:
    """A locally administered unicast address 02:00:00:00:00:nn."""
    return f"0200000000{n:02x}"


def switch_run(driver: Path, params: dict[str, int], headers: list[tuple[str, str]], *,
               peer: tuple[tuple[int, str, str], ...] = (), period: str = "200", length: int = 64,
               extra: tuple[str, ...] = (), tail: int = 20000) -> Run:
    """Frames i = 0.. with addresses headers[i] = (DST, SRC), good FCS, on port 0; `peer`
    frames (cycle, DST, SRC) on port 1."""
    args = ["--fcs", "1"]
    for i, (dst, src) in enumerate(headers):
        args += ["--mac", f"{i}:{dst}:{src}"]
    for cycle, dst, src in peer:
        args += ["--peer-frame", f"{cycle}:{dst}:{src}"]
    return run_model(driver, "switch", params, frames=len(headers), length=length, period=period,
                     tail=tail, extra=(*args, *extra))


def switch_reference(ready: list[int], queue: int, rate: int, length: int) -> tuple[list[int], list[int]]:
    """Egress of the switch, exactly: frames ready at `ready` (arrival + latency, in order) ->
    (indices of the frames sent, their start cycles)."""
    slot, line_free = Fraction(0), 0
    sent: list[tuple[int, int]] = []                # (index, start)
    for k, r in enumerate(ready):
        waiting = sum(1 for _, start in sent if start > r)      # a frame starting at r has left
        if waiting >= queue:
            continue
        earliest = r
        if rate:
            s = max(Fraction(r), slot)
            slot = s + Fraction(CLOCK_HZ, rate)
            earliest = math.ceil(s)
        start = max(earliest, line_free, sent[-1][1] + 1 if sent else 0)
        line_free = start + PREAMBLE + length + GAP
        sent.append((k, start))
    return [i for i, _ in sent], [s for _, s in sent]


@pytest.mark.parametrize("length", [64, 1518])
@pytest.mark.parametrize("latency_ns,rate", [(0, 0), (2000, 0), (10_000, 0), (2000, 400_000)])
def test_switch_store_and_forward_latency(model_driver, length, latency_ns, rate):
    """An idle switch: the first preamble byte leaves exactly `latency` after the frame's last
    byte arrived, i.e. (8 + length) x 8 ns + latency after its first byte went in; a rate limit
    below the offered load adds nothing."""
    params = {"latency_ns": latency_ns} | ({"rate": rate} if rate else {})
    run = run_model(model_driver, "switch", params, frames=6, length=length, period="20000",
                    extra=("--fcs", "1"))
    assert len(run.outs) == 6
    for (i, start, arrival), (idx, ostart, ln, ok, _) in zip(run.ins, run.outs):
        assert (idx, ln, ok) == (i, length, 1)
        assert ostart - arrival == latency_ns // 8
        assert ostart - start == PREAMBLE + length + latency_ns // 8
    assert run.stats == {"frames_in": 6, "frames_out": 6, "dropped": 0, "errored": 0}
    # the driver's frames have unknown destinations: flooded
    assert run.switch["p0"]["flooded"] == 6 and run.switch["p0"]["forwarded"] == 0


def test_switch_learns_filters_floods_and_forwards(model_driver):
    a1, a2, b, c, d = mac(0xA1), mac(0xA2), mac(0xB), mac(0xC), mac(0xD)
    headers = [
        (c, a1),                # 0 unknown destination: flooded; A1 learned on port 0
        (a1, a2),               # 1 A1 is on port 0, the ingress port: filtered
        (b, a1),                # 2 B was learned on port 1 (peer frame at cycle 5): forwarded
        (BCAST, a1),            # 3 broadcast: flooded
        ("01005e000001", a1),   # 4 multicast: flooded
        (d, a2),                # 5 unknown: flooded
        (d, a1),                # 6 D learned on port 1 meanwhile (peer at 1150): forwarded
        (a2, a2),               # 7 to itself: filtered
        (a2, a1),               # 8 A2 moved to port 1 (peer at 1500): forwarded
    ]
    # frame i arrives at 82 + 200 i; a peer frame 72 cycles after its start
    peer = ((5, BCAST, b), (1150, a1, d), (1500, BCAST, a2))
    run = switch_run(model_driver, {"latency_ns": 2000}, headers, peer=peer)
    assert [o[0] for o in run.outs] == [0, 2, 3, 4, 5, 6, 8]
    assert all(o[3] == 1 for o in run.outs)
    assert run.switch["p0"] == {"forwarded": 3, "flooded": 4, "filtered": 2, "fcs_errors": 0, "queue_drops": 0}
    assert run.switch["p1"] == {"forwarded": 1, "flooded": 2, "filtered": 0, "fcs_errors": 0, "queue_drops": 0}
    assert run.switch["table"] == {"learned": 4, "moved": 1, "table_full": 0, "entries": 4}
    assert run.switch["peer"] == {"frames_in": 3, "frames_out": 3, "dropped": 0, "errored": 0}
    # filtered frames are the model's drops
    assert run.stats == {"frames_in": 9, "frames_out": 7, "dropped": 2, "errored": 0}

    # learning off: everything is flooded, nothing is filtered
    run = switch_run(model_driver, {"learning": 0}, headers, peer=peer)
    assert [o[0] for o in run.outs] == list(range(9))
    assert run.switch["p0"]["flooded"] == 9 and run.switch["p0"]["filtered"] == 0
    assert run.switch["table"] == {"learned": 0, "moved": 0, "table_full": 0, "entries": 0}


def test_switch_full_table_learns_no_more(model_driver):
    """table=4: the fifth source address is not learned, so frames to it keep being flooded
    while frames to the first four (on the ingress port) are filtered."""
    x = mac(0xEE)
    headers = [(x, mac(n)) for n in range(5)] + [(mac(n), mac(0)) for n in range(5)] + [(mac(4), mac(0))]
    run = switch_run(model_driver, {"table": 4}, headers)
    assert [o[0] for o in run.outs] == [0, 1, 2, 3, 4, 9, 10]
    assert run.switch["p0"] == {"forwarded": 0, "flooded": 7, "filtered": 4, "fcs_errors": 0, "queue_drops": 0}
    assert run.switch["table"] == {"learned": 4, "moved": 0, "table_full": 1, "entries": 4}


@pytest.mark.parametrize("aging_cycles,outs,learned,table_full", [
    (600, [0, 3], 2, 3),      # A expires exactly 600 cycles after it was learned: frame 3
    (601, [0, 4], 2, 3),      # one cycle longer: A still known at frame 3, gone at frame 4
    (0, [0, 4], 1, 4),        # never ages
])
def test_switch_entries_age_out(model_driver, aging_cycles, outs, learned, table_full):
    """table=1, frames every 200 cycles: A is learned by frame 0 and filtered for frames 1, 2;
    an entry is live while t < last + aging, so with aging = 600 cycles it is gone when frame 3
    arrives (flooded), and the slot it freed takes B (then frame 4 to B is filtered); with 601
    cycles frame 3 is filtered and A's slot goes to C at frame 4 (to B: unknown, flooded)."""
    a, b, c, x = mac(0xA), mac(0xB), mac(0xC), mac(0xEE)
    headers = [(x, a), (a, b), (a, c), (a, b), (b, c)]
    run = switch_run(model_driver, {"table": 1, "aging_ns": aging_cycles * 8}, headers, period="200")
    arrivals = [end for _, _, end in run.ins]
    assert [t - arrivals[0] for t in arrivals] == [0, 200, 400, 600, 800]
    assert [o[0] for o in run.outs] == outs
    assert run.switch["table"]["learned"] == learned
    assert run.switch["table"]["table_full"] == table_full
    assert run.switch["p0"]["filtered"] == 5 - len(outs)


def test_switch_drops_bad_fcs_runts_and_errored_frames(model_driver):
    run = run_model(model_driver, "switch", {}, frames=8, period="200",
                    extra=("--fcs", "1", "--bad-fcs-frame", "2", "--er-frame", "4", "--no-sfd-frame", "6"))
    assert [o[0] for o in run.outs] == [0, 1, 3, 5, 7]
    assert run.switch["p0"]["fcs_errors"] == 1
    assert run.stats == {"frames_in": 8, "frames_out": 5, "dropped": 0, "errored": 3}
    # without an FCS every frame is dropped as bad
    run = run_model(model_driver, "switch", {}, frames=5, period="200")
    assert run.outs == [] and run.switch["p0"]["fcs_errors"] == 5
    # runts (shorter than 64 bytes with their FCS) are errored, not FCS errors
    run = run_model(model_driver, "switch", {}, frames=5, length=60, period="200", extra=("--fcs", "1"))
    assert run.outs == [] and run.stats["errored"] == 5 and run.switch["p0"]["fcs_errors"] == 0


@pytest.mark.parametrize("rate,queue,period,n", [
    (400_000, 16, "84", 2000),       # line rate of 64-byte frames offered to a 400 kfps switch
    (1_000_000, 4, "84", 2000),
    (0, 8, "73", 1000),              # wire speed, input gaps of 1 cycle: the egress line is the limit
])
def test_switch_egress_queue_overflow(model_driver, rate, queue, period, n):
    lat = 2000
    params = {"queue": queue, "latency_ns": lat} | ({"rate": rate} if rate else {})
    run = run_model(model_driver, "switch", params, frames=n, period=period, tail=30_000, extra=("--fcs", "1"))
    ready = [end + lat // 8 for _, _, end in run.ins]
    sent, starts = switch_reference(ready, queue, rate, 64)
    assert [o[0] for o in run.outs] == sent
    assert [o[1] for o in run.outs] == starts
    assert all(o[3] == 1 for o in run.outs) and all(o[4] >= GAP for o in run.outs[1:])
    drops = n - len(sent)
    assert drops > 0
    assert run.switch["p0"]["queue_drops"] == drops
    assert run.stats == {"frames_in": n, "frames_out": len(sent), "dropped": drops, "errored": 0}
    if rate:
        # backlogged: exactly `rate` (frame k of the backlog starts at ceil(s0 + k / rate))
        s0 = starts[0]
        assert starts == [math.ceil(s0 + k * Fraction(CLOCK_HZ, rate)) for k in range(len(starts))]


def test_switch_reset_forgets_the_table_and_impairments_apply(model_driver):
    a, x = mac(0xA), mac(0xEE)
    headers = [(x, a), (a, x), (a, x), (a, x), (a, x), (x, a), (a, x)]
    # frames every 1000 cycles; a reset at 2500 takes the switch down until 3500: frames 1, 2
    # are filtered (A learned on port 0), frame 3 starts while it is down, and the rebooted
    # switch knows nothing: frame 4 to A is flooded, frames 5, 6 are filtered again
    run = switch_run(model_driver, {"reboot_ns": 8000}, headers, period="1000", extra=("--reset-at", "2500"))
    assert run.collapse["resets"] == 1 and run.collapse["reset_lost"] == 1
    assert [o[0] for o in run.outs] == [0, 4]
    assert run.switch["p0"]["flooded"] == 2 and run.switch["p0"]["filtered"] == 4
    assert run.switch["table"]["learned"] == 4 and run.switch["table"]["entries"] == 2
    # the impairment stage wraps the switch: loss=1 loses everything it forwards
    run = switch_run(model_driver, {"loss_ppb": 10**9}, headers)
    assert run.outs == []
    assert run.switch["p0"]["flooded"] == 1 and run.switch["p0"]["filtered"] == 6
