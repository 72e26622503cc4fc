"""The fixtures of the serve tests: ``tester`` (a :class:`served.ServedTester`), ``settings`` (a
server of it in the test's folder, its locks the test's own) and ``client`` (FastAPI's test client
of that server)."""

import pytest
from served import ServedTester, served_client, served_settings


@pytest.fixture
def tester():
    return ServedTester()


@pytest.fixture
def settings(tmp_path, own_lock_dir, tester):
    return served_settings(tmp_path / "data", tester)


@pytest.fixture
def client(settings):
    return served_client(settings)
