"""Fixtures for host tests: the tester's register map and a tiny Etherbone server."""

import pytest
from ebserver import EtherboneServer

from wirespeed.gateware.top import build_register_map


@pytest.fixture(scope="session")
def regmap():
    return build_register_map()


@pytest.fixture
def eb_server():
    with EtherboneServer() as server:
        yield server
