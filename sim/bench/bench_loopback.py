"""Benchmark: frames/s the Verilated tester generates and receives at each RFC 2544 frame
size through the loopback DUT at 100 % of line rate, against the theoretical maximum, and
how many simulated clock cycles the harness runs per wall-clock second.

    python sim/bench/bench_loopback.py [--trial-ms 10]

Rates are measured from the hardware timestamps of the first and last frame of a trial
((frames - 1) / (last - first)); the theoretical maximum is 1e9 / 8 / (L + 20).
"""

import argparse
import contextlib
import time

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.port import PIPELINE_NS
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.build import ensure_harness
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport

SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
CABLE_NS = 40


def fps(frames, first_ns, last_ns):
    return (frames - 1) * 1e9 / (last_ns - first_ns) if frames > 1 and last_ns > first_ns else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trial-ms", type=float, default=10.0, help="simulated trial length (default 10)")
    args = ap.parse_args()
    trial_ns = int(args.trial_ms * 1e6)

    t0 = time.perf_counter()
    ensure_harness()
    print(f"harness ready in {time.perf_counter() - t0:.1f} s (cached after the first build)")

    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(parse_dut(f"loopback:delay={CABLE_NS}ns")))
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()

        # idle speed: simulated time advanced per wall second with no traffic
        w0, s0 = time.perf_counter(), dev.now_ns()
        time.sleep(2.0)
        w1, s1 = time.perf_counter(), dev.now_ns()
        idle_cps = (s1 - s0) / 8 / (w1 - w0)

        print(f"\nloopback DUT ({CABLE_NS} ns cable), 100 % of line rate, trial {args.trial_ms:g} ms simulated")
        print(f"{'size B':>7} {'theory fps':>13} {'tx fps':>13} {'rx fps':>13} {'rx/theory':>10} "
              f"{'err ppm':>8} {'sent':>7} {'lost':>5} {'seq err':>7} {'lat min/max ns':>15} {'Mcyc/s':>7}")
        busy = []
        for size in SIZES:
            flow = Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size))
            w0 = time.perf_counter()
            r = dev.run_trial([flow], line_rate_fps(size), trial_ns, 100_000)
            wall = time.perf_counter() - w0
            tx, rx = r.counters[0], r.counters[1]
            theory = line_rate_fps(size)
            tx_fps = fps(tx.tx_frames, tx.first_tx_ns, tx.last_tx_ns)
            rx_fps = fps(rx.rx_frames, rx.first_rx_ns, rx.last_rx_ns)
            sim_cycles = (trial_ns + 100_000) / 8
            busy.append(sim_cycles / wall)
            print(f"{size:7d} {theory:13,.2f} {tx_fps:13,.2f} {rx_fps:13,.2f} {rx_fps / theory:10.6f} "
                  f"{(rx_fps / theory - 1) * 1e6:8.1f} {tx.tx_frames:7d} {r.lost_frames:5d} {r.seq_errors:7d} "
                  f"{rx.lat_min:>7}/{rx.lat_max:<7} {sim_cycles / wall / 1e6:7.2f}")
        print(f"\nsimulated cycles per wall second: idle {idle_cps / 1e6:.2f} M, "
              f"during trials (incl. host polling) {min(busy) / 1e6:.2f}-{max(busy) / 1e6:.2f} M; "
              f"real time at 125 MHz is 125 M")
        print(f"latency through the {CABLE_NS} ns cable = cable + tester pipeline {PIPELINE_NS} ns "
              f"= {CABLE_NS + PIPELINE_NS} ns expected")


if __name__ == "__main__":
    main()
