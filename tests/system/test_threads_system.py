"""The simulated tester on two threads (its two parts evaluated at once, wirespeed.sim.partition)
against the same tester on one: both ports at line rate with random modifiers give the same
counters, times relative to the start, and per-stream tables."""

import contextlib

from test_traffic_system import run, sixteen_streams

from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.transport import EtherboneTransport

# counters that hold a time: compared relative to port 0's first transmit timestamp
_TIMES = ("first_tx_ns", "last_tx_ns", "first_rx_ns", "last_rx_ns", "gap_end_rx", "gap_end_tx",
          "loss_last_tx", "loss_last_rx")  # of the port counters and the per-stream tables


def _measured(threads):
    sim = SimProcess(parse_dut("loopback:delay=1us"), threads=threads)
    with contextlib.ExitStack() as stack:
        stack.enter_context(sim)
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()
        counters, tx, rx = run(dev, {0: sixteen_streams(0), 1: sixteen_streams(1)}, count=8_000)
    base = counters[0].first_tx_ns

    def relative(values):
        return {name: value - base if name in _TIMES and value else value for name, value in values.items()}

    assert sim.stats["model"] == {"parts": 2, "threads": threads}
    return ({port: relative(c.model_dump()) for port, c in counters.items()}, tx,
            {port: [relative(s) for s in streams] for port, streams in rx.items()})


def test_two_threads_measure_what_one_does():
    one = _measured(1)
    assert one[0][1]["rx_frames"] == one[0][0]["rx_frames"] == 8_000
    assert _measured(2) == one
