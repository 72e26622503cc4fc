"""DUT impairments: router jitter and the impairment stage (loss, dup, reorder, corrupt,
blackout) of the C++ models, driven by tests/sim/model_driver.cpp and checked against an
exact Python replica of the seeded SplitMix64 decisions (sim/harness/dut_prng.h)."""

from __future__ import annotations

import math
import subprocess
import zlib
from fractions import Fraction

import pytest
from test_sim_models import CLOCK_HZ, GAP, PREAMBLE, driver_error, run_model

from wirespeed.sim.dut import parse_dut

M64 = (1 << 64) - 1
PPB = 10**9
HOLD_MAX = 125_000
JITTER, IMPAIR = 0, 1


class SplitMix64:
    def __init__(self, seed: int, purpose: int, direction: int = 0):
        self.s = (seed + (purpose << 48) + (direction << 32)) & M64

    def next(self) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def chance(self, ppb: int) -> bool:
        return (self.next() >> 32) < (ppb << 32) // PPB

    def below(self, n: int) -> int:
        return (self.next() * n) >> 64


def impair_reference(n: int, *, loss=0, dup=0, reorder=0, corrupt=0, seed=1, drop=(),
                     direction=0):
    """Fates of n consecutive output frames of the inner model (ppb probabilities).

    Returns (expected output order as [(index, corrupt offset or None)], counters); assumes
    frames follow each other within 1 ms, and a frame held at the end is released by the
    hold timeout. `drop` are indices dropped by blackout (no draws)."""
    rng = SplitMix64(seed, IMPAIR, direction)
    out, held = [], None
    c = dict(lost=0, duplicated=0, reordered=0, corrupted=0, blackout=0, corrupt_dups=0, reorder_hidden=0)
    for i in range(n):
        if i in drop:
            c["blackout"] += 1
            continue
        if loss and rng.chance(loss):
            c["lost"] += 1
            continue
        off = None
        if corrupt and rng.chance(corrupt):
            off = rng.below(64)
            c["corrupted"] += 1
        d = bool(dup and rng.chance(dup))
        c["duplicated"] += d
        c["corrupt_dups"] += d and off is not None
        r = bool(reorder and rng.chance(reorder)) and held is None
        frames = [(i, off)] * (2 if d else 1)
        if r:
            c["reordered"] += 1
            held = frames
            continue
        out += frames
        if held:
            # a receiver sees it out of order only when it and the frame it went behind are intact
            c["reorder_hidden"] += held[0][1] is not None or off is not None
            out += held
            held = None
    if held:
        c["reorder_hidden"] += 1           # released by the hold timeout: nothing went before it
        out += held
    return out, c


def frame_bytes(i: int, length: int, fcs: bool = True) -> bytes:
    b = bytearray(((i >> (8 * (3 - j))) & 0xFF) if j < 4 else (i * 7 + j) & 0xFF
                  for j in range(length))
    if fcs:
        b[-4:] = zlib.crc32(bytes(b[:-4])).to_bytes(4, "little")
    return bytes(b)


def run_raw(driver, dut: str, params: dict, *, frames: int, period: str, tail: int,
            length: int = 64, dump: bool = True):
    """Like run_model, but with the FCS option and the extra OUT columns and IMPAIR line."""
    cmd = [str(driver), "--dut", dut]
    for k, v in params.items():
        cmd += ["--dut-param", f"{k}={v}"]
    cmd += ["--frames", str(frames), "--len", str(length), "--period", period, "--tail",
            str(tail), "--fcs", "1", "--dump", "1" if dump else "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    ins, outs, stats, imp = [], [], None, None
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] == "IN":
            ins.append(tuple(int(x) for x in w[1:4]))
        elif w[0] == "OUT":
            o = dict(zip(("n", "index", "start", "len", "ok", "gap", "pre_ok", "fcs_ok"),
                         (int(x) for x in w[1:9])))
            o["data"] = bytes.fromhex(w[9]) if dump else None
            outs.append(o)
        elif w[0] == "STATS":
            stats = {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
        elif w[0] == "IMPAIR":
            imp = {k: int(v) for k, v in (kv.split("=") for kv in w[1:])}
    assert len(ins) == frames and stats is not None and imp is not None
    return ins, outs, stats, imp


def identify(outs, length):
    """(index, corrupt offset or None) of each output frame, from its bytes: a frame equal to
    frame i except one byte inverted is (i, offset)."""
    got = []
    for o in outs:
        d = o["data"]
        assert o["pre_ok"] == 1 and o["len"] == length
        idx = int.from_bytes(d[:4], "big")
        if o["fcs_ok"]:
            assert d == frame_bytes(idx, length)
            got.append((idx, None))
            continue
        # corrupted: find the frame that differs in exactly one byte by 0xFF
        for k in range(min(64, length)):
            fixed = bytearray(d)
            fixed[k] ^= 0xFF
            i = int.from_bytes(fixed[:4], "big")
            if i < 1 << 24 and bytes(fixed) == frame_bytes(i, length):
                got.append((i, k))
                break
        else:
            raise AssertionError(f"output {o['n']} is not one frame with one byte inverted")
    return got


# ---- impairment stage: exact replica ---------------------------------------------------------


@pytest.mark.parametrize("params", [
    dict(loss_ppb=100_000_000),
    dict(dup_ppb=150_000_000),
    dict(reorder_ppb=200_000_000),
    dict(corrupt_ppb=100_000_000),
    dict(loss_ppb=50_000_000, dup_ppb=50_000_000, reorder_ppb=100_000_000,
         corrupt_ppb=50_000_000, seed=12345),
])
@pytest.mark.parametrize("dut,base,period", [
    ("loopback", {"delay_ns": 40}, "200"),   # sparse: every frame cut-through unless queued
    ("loopback", {"delay_ns": 0}, "73"),     # line rate: duplicates and reorders queue up
    ("router", {"rate": 1_000_000, "queue": 1024, "latency_ns": 800}, "84"),
])
def test_impairments_match_seeded_replica(model_driver, params, dut, base, period):
    n, length = 600, 64
    ins, outs, stats, imp = run_raw(model_driver, dut, {**base, **params}, frames=n,
                                    period=period, tail=HOLD_MAX + 40_000)
    p = {k.removesuffix("_ppb"): v for k, v in params.items()}
    expected, counters = impair_reference(n, **p)
    assert identify(outs, length) == expected
    assert imp == counters
    assert stats["frames_in"] == n and stats["frames_out"] == len(expected)
    assert all(o["gap"] >= GAP for o in outs[1:]), "inter-frame gap"
    # corrupt frames: bad FCS, intact preamble/SFD (checked in identify), and only those
    assert sum(1 - o["fcs_ok"] for o in outs) == sum(1 for _, k in expected if k is not None)


def test_reorder_swaps_with_the_next_frame_and_dup_is_back_to_back(model_driver):
    # sparse frames through a cable: the timing of every output is known
    n, period, d = 300, 200, 5
    ins, outs, _, imp = run_raw(model_driver, "loopback",
                                {"delay_ns": d * 8, "reorder_ppb": 300_000_000,
                                 "dup_ppb": 300_000_000, "seed": 99},
                                frames=n, period=str(period), tail=HOLD_MAX + 1000)
    expected, counters = impair_reference(n, dup=300_000_000, reorder=300_000_000, seed=99)
    order = [i for i, _ in identify(outs, 64)]
    assert order == [i for i, _ in expected] and imp == counters
    assert counters["reordered"] > 50 and counters["duplicated"] > 50
    # a held frame comes right after (the copies of) the frame that followed it
    swaps = [k for k in range(1, len(order)) if order[k] < order[k - 1]]
    assert len(swaps) == counters["reordered"]
    frame_cycles = PREAMBLE + 64
    for k, o in enumerate(outs):
        inner_start = ins[order[k]][1] + d
        if k and order[k] <= order[k - 1]:
            # second copy of a duplicate, or a held frame released after the next frame:
            # back to back with exactly the minimum gap
            assert o["gap"] == GAP
        elif o["start"] >= inner_start + HOLD_MAX:
            assert order[k] == n - 1  # the last frame, held, released by the hold timeout
        elif k == 0 or outs[k - 1]["start"] + frame_cycles + GAP <= inner_start:
            assert o["start"] == inner_start  # line free: cut-through, exactly the cable delay
        else:
            # line busy when it started: stored, queued once complete, then sent when free
            assert o["start"] == max(inner_start + frame_cycles,
                                     outs[k - 1]["start"] + frame_cycles + GAP)


def test_impairments_reproducible_and_statistical(model_driver):
    n, p = 20_000, 10_000_000  # 1 % each
    params = {"delay_ns": 0, "loss_ppb": p, "dup_ppb": p, "reorder_ppb": p, "corrupt_ppb": p}
    runs = [run_raw(model_driver, "loopback", params, frames=n, period="84", tail=HOLD_MAX + 1000,
                    dump=False) for _ in range(2)]
    other = run_raw(model_driver, "loopback", {**params, "seed": 2}, frames=n, period="84",
                    tail=HOLD_MAX + 1000, dump=False)
    (_, o1, s1, i1), (_, o2, s2, i2) = runs
    assert (o1, s1, i1) == (o2, s2, i2), "same seed, same run"
    assert [(o["index"], o["fcs_ok"]) for o in o1] != [(o["index"], o["fcs_ok"]) for o in other[1]]
    expected, counters = impair_reference(n, loss=p, dup=p, reorder=p, corrupt=p)
    assert i1 == counters
    assert len(o1) == len(expected)
    # (a frame whose corrupted byte is in its 4-byte index field reads as another index)
    assert all(o["index"] == i for o, (i, k) in zip(o1, expected) if k is None or k >= 4)
    mean, sd = n * 0.01, math.sqrt(n * 0.01 * 0.99)
    for key in ("lost", "duplicated", "corrupted"):
        assert abs(i1[key] - mean) < 4 * sd, (key, i1[key])
    assert abs(i1["reordered"] - mean) < 4 * sd + 5  # not re-held while one is held
    assert s1["frames_out"] == n - i1["lost"] + i1["duplicated"]
    # bad FCS on exactly the corrupted frames (both copies of a corrupted duplicate)
    assert [1 - o["fcs_ok"] for o in o1] == [int(k is not None) for _, k in expected]
    assert all(o["pre_ok"] for o in o1)


def test_probability_one_and_zero(model_driver):
    n = 50
    _, outs, stats, imp = run_raw(model_driver, "loopback", {"loss_ppb": PPB}, frames=n,
                                  period="100", tail=1000)
    assert outs == [] and imp["lost"] == n and stats["frames_out"] == 0
    _, outs, _, imp = run_raw(model_driver, "loopback", {"corrupt_ppb": PPB}, frames=n,
                              period="100", tail=1000)
    assert imp["corrupted"] == n and all(o["fcs_ok"] == 0 and o["pre_ok"] == 1 for o in outs)
    _, outs, _, imp = run_raw(model_driver, "loopback", {"dup_ppb": PPB}, frames=n,
                              period="200", tail=1000)
    assert [o["index"] for o in outs] == [i for i in range(n) for _ in (0, 1)]


# ---- blackout -------------------------------------------------------------------------------


@pytest.mark.parametrize("dut,base", [
    ("loopback", {"delay_ns": 40}),
    ("router", {"rate": 1_000_000, "queue": 64, "latency_ns": 800}),
])
def test_blackout_drops_exactly_the_frames_inside_the_window(model_driver, dut, base):
    n = 40
    # first run without blackout gives the output start cycle of every frame
    _, clean, _, _ = run_raw(model_driver, dut, base, frames=n, period="150", tail=2000,
                             dump=False)
    starts = {o["index"]: o["start"] for o in clean}
    # window edges exactly on the start cycles of frames 10 and 20: [start10, start20)
    lo, hi = starts[10], starts[20]
    params = {**base, "blackout_start_ns": lo * 8, "blackout_len_ns": (hi - lo) * 8}
    _, outs, stats, imp = run_raw(model_driver, dut, params, frames=n, period="150",
                                  tail=2000, dump=False)
    assert [o["index"] for o in outs] == [i for i in range(n) if not 10 <= i < 20]
    assert [o["start"] for o in outs] == [starts[i] for i in range(n) if not 10 <= i < 20]
    assert imp["blackout"] == 10 and stats["frames_out"] == n - 10
    # one cycle earlier/later edges move exactly one frame in or out
    params = {**base, "blackout_start_ns": (lo + 1) * 8, "blackout_len_ns": (hi - lo) * 8}
    _, outs, _, imp = run_raw(model_driver, dut, params, frames=n, period="150", tail=2000,
                              dump=False)
    assert [o["index"] for o in outs] == [i for i in range(n) if not 11 <= i <= 20]
    assert imp["blackout"] == 10


# ---- router jitter --------------------------------------------------------------------------


def router_jitter_reference(arrivals, rate, latency_ns, jitter_ns, seed, length=64):
    """Unbounded queue: returns (ready cycles, output starts)."""
    service = Fraction(CLOCK_HZ, rate)
    rng = SplitMix64(seed, JITTER)
    free_at, ready = Fraction(0), []
    for arr in arrivals:
        free_at = max(Fraction(arr), free_at) + service
        ready.append(math.ceil(free_at) + latency_ns // 8 + rng.below(jitter_ns // 8 + 1))
    starts, line_free = [], 0
    for r in ready:
        s = max(r, line_free)
        starts.append(s)
        line_free = s + PREAMBLE + length + GAP
    return ready, starts


@pytest.mark.parametrize("seed", [1, 7])
def test_router_jitter_sparse_within_bounds_and_exact(model_driver, seed):
    rate, lat, jit = 1_000_000, 10_000, 2_000
    run = run_model(model_driver, "router", {"rate": rate, "queue": 16, "latency_ns": lat,
                                             "jitter_ns": jit, "seed": seed},
                    frames=400, period="3000")
    service = math.ceil(Fraction(CLOCK_HZ, rate))
    delays = [o[1] - a - service for (_, _, a), o in zip(run.ins, run.outs)]
    assert all(lat // 8 <= d <= (lat + jit) // 8 for d in delays)
    assert min(delays) < lat // 8 + 20 and max(delays) > (lat + jit) // 8 - 20  # spread
    assert len(set(delays)) > 100
    _, starts = router_jitter_reference([a for _, _, a in run.ins], rate, lat, jit, seed)
    assert [o[1] for o in run.outs] == starts
    assert [o[0] for o in run.outs] == list(range(400)) and all(o[3] for o in run.outs)


def test_router_jitter_keeps_order_when_frames_contend(model_driver):
    # line-rate input to a fast server: jitter (10 us) much larger than the frame spacing, so
    # later frames are often ready first; they must wait: start = max(ready, prev end + 12).
    rate, lat, jit, n = 1_400_000, 1_000, 10_000, 3000
    run = run_model(model_driver, "router", {"rate": rate, "queue": 65536, "latency_ns": lat,
                                             "jitter_ns": jit},
                    frames=n, period="84", tail=20_000)
    assert [o[0] for o in run.outs] == list(range(n))
    ready, starts = router_jitter_reference([a for _, _, a in run.ins], rate, lat, jit, 1)
    assert [o[1] for o in run.outs] == starts
    assert sum(1 for k in range(1, n) if ready[k] < ready[k - 1]) > n // 4  # really contended
    assert all(o[4] >= GAP for o in run.outs[1:]) and all(o[3] for o in run.outs)


def test_router_without_jitter_unchanged_by_seed(model_driver):
    a = run_model(model_driver, "router", {"rate": 400_000, "queue": 8, "seed": 5}, frames=50)
    b = run_model(model_driver, "router", {"rate": 400_000, "queue": 8}, frames=50)
    assert a.outs == b.outs and a.stats == b.stats


# ---- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize("dut,params,message", [
    ("loopback", ("loss_ppb=1000000001",),
     "dut loopback: loss_ppb must be an integer 0..1000000000, got '1000000001'"),
    ("router", ("dup_ppb=0.5",), "dut router: dup_ppb must be an integer 0..1000000000, got '0.5'"),
    ("router", ("jitter_ns=12",),
     "dut router: jitter_ns must be an integer 0..1000000000 and a multiple of 8, got '12'"),
    ("loopback", ("jitter_ns=8",),
     "dut loopback: unknown parameter 'jitter_ns', allowed: delay_ns, loss_ppb, dup_ppb, "
     "reorder_ppb, corrupt_ppb, blackout_start_ns, blackout_len_ns, seed, reboot_ns"),
    ("router", ("seed=4294967296",),
     "dut router: seed must be an integer 0..4294967295, got '4294967296'"),
    ("router", ("blackout_len_ns=7",),
     "dut router: blackout_len_ns must be an integer 0..3600000000000 and a multiple of 8, "
     "got '7'"),
])
def test_impairment_parameter_errors(model_driver, dut, params, message):
    assert driver_error(model_driver, dut, *params) == message


def test_spec_to_harness_params_roundtrip():
    spec = parse_dut("loopback:delay=40ns,loss=0.01,dup=0.001,reorder=0.01,corrupt=0.001")
    assert spec.harness_args() == [
        "--dut", "loopback", "--dut-param", "delay_ns=40",
        "--dut-param", "loss_ppb=10000000", "--dut-param", "dup_ppb=1000000",
        "--dut-param", "reorder_ppb=10000000", "--dut-param", "corrupt_ppb=1000000"]
    r = parse_dut("router:latency=10us,jitter=2us,seed=7,blackout=5ms:2ms")
    assert r.harness_args()[-8:] == [
        "--dut-param", "jitter_ns=2000",
        "--dut-param", "blackout_start_ns=5000000", "--dut-param", "blackout_len_ns=2000000",
        "--dut-param", "seed=7"]
