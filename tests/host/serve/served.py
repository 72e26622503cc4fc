"""What the tests of ``wirespeed serve`` share: a fake board the server's runs go to
(:class:`ServedTester`, whose trials can be held mid-run), its settings, and reading a run's
events; conftest.py makes the fixtures of them."""

import contextlib
import json
import threading

from fakes import FakeTester
from fastapi.testclient import TestClient

from wirespeed.host.models import GatewareId
from wirespeed.serve.api import create_app
from wirespeed.serve.settings import Settings

TARGET = "udp://127.0.0.1:1234"
PLAN = {"tests": ["throughput"], "sizes": [64, 128], "learning": False, "calibration": "none", "resolution": 10}
WAIT_S = 60     # a deadline for a thread that is stuck, never a measured time


class ServedTester(FakeTester):
    """A board answering as FakeTester; its first trial at ``gate_size`` waits for ``release``
    (``entered`` says it is waiting), so a test can act while a run is mid-way."""

    target, is_simulation, transport = TARGET, False, None

    def __init__(self, gate_size=None):
        super().__init__(limit_pct=50)
        self.ident = GatewareId(magic=1, version=0x000100, map_hash=2, clk_hz=125_000_000, n_ports=2)
        self.dut = {"description": "a fake"}
        self.gate_size, self.entered, self.release = gate_size, threading.Event(), threading.Event()

    def require(self, block, field, why):
        pass

    def check_directions(self, flows, field):
        pass

    def counts_sequence_errors(self, port):
        return False

    def run_trial(self, flows, *args, **kwargs):
        if flows[0].spec.point == self.gate_size and not self.release.is_set():
            self.entered.set()
            assert self.release.wait(WAIT_S)
        return super().run_trial(flows, *args, **kwargs)


def served_settings(data, tester, target=TARGET, dut=None):
    """A server on ``target`` whose runs use ``tester``, without graphs and report.html."""
    @contextlib.contextmanager
    def connector(given, dut, **kwargs):
        assert given == target
        yield tester

    return Settings(data=data, target=target, dut=dut, connector=connector, report=False)


def served_client(settings):
    return TestClient(create_app(settings))


def stream_of(client, run_id, headers=None):
    """The events stream until it closes, as (SSE event name or None, JSON) in order."""
    items, name = [], None
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                items.append((name, json.loads(line[len("data: "):])))
            elif not line:
                name = None
    return items


def events_of(client, run_id, headers=None):
    """Every event of the run, from the first, until it ends (the stream closes)."""
    return [data for name, data in stream_of(client, run_id, headers) if name is None]


def start(client, values=PLAN):
    response = client.post("/api/runs", json={"values": values})
    assert response.status_code == 201, response.text
    return response.json()["id"]
