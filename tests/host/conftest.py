"""Fixtures for host tests: the tester's register map and a tiny Etherbone server."""

import pytest
from ebserver import EtherboneServer, serve_identity

from wirespeed.gateware.config import SIM
from wirespeed.gateware.regmap import MAGIC
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.transport import FakeTransport


@pytest.fixture(scope="session")
def regmap():
    return build_register_map()


@pytest.fixture
def fake(regmap):
    """A register file answering as a tester with this map (identity block filled in)."""
    fake = FakeTransport(regmap)
    for name, value in {"id.magic": MAGIC, "id.version": 0x000100, "id.map_hash": regmap.hash,
                        "id.clk_hz": regmap.clk_hz, "id.n_ports": regmap.n_ports,
                        "id.config": SIM.word()}.items():
        fake.set(name, value)
    return fake


@pytest.fixture
def device(fake, regmap):
    return Device(fake, regmap, stall_timeout_s=0.2, poll_interval_s=(0, 0))


@pytest.fixture
def eb_server():
    with EtherboneServer() as server:
        yield server


@pytest.fixture
def server(regmap):
    """An Etherbone register file that identifies as a tester with this map (no frame ever
    arrives: every trial loses all its frames)."""
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        yield server


@pytest.fixture
def own_lock_dir(tmp_path, monkeypatch):
    """The run and tester locks in this test's own folder."""
    monkeypatch.setenv("WIRESPEED_LOCK_DIR", str(tmp_path / "locks"))
