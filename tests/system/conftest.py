"""System tests: the host driver against the Verilated tester and a simulated DUT."""

import contextlib

import pytest

from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.transport import EtherboneTransport


@pytest.fixture
def tester():
    """tester(dut_text) -> a connected Device on a fresh simulation of that DUT."""
    with contextlib.ExitStack() as stack:
        def start(dut_text):
            sim = stack.enter_context(SimProcess(parse_dut(dut_text)))
            transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
            dev = Device(transport, build_register_map())
            dev.connect()
            return dev
        yield start


