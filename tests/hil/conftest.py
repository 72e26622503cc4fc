"""Hardware-in-the-loop fixtures: a real board reached through the host driver.

Set ``WIRESPEED_HIL_TARGET`` to the board's management URL, e.g.
``serial:///dev/ttyUSB0?baud=1000000`` (docs/lab-setup.md), and ``WIRESPEED_HIL_BOARD`` to
its name in hw/ (default ``colorlight-5a-75b-v7``). Port A (0) must be cabled to port B (1),
directly (calibration cable) or through a DUT that forwards at least 10 % of line rate
without loss. Without ``WIRESPEED_HIL_TARGET`` every test here is skipped, with that reason.
"""

import os

import pytest

TARGET = os.environ.get("WIRESPEED_HIL_TARGET")
BOARD = os.environ.get("WIRESPEED_HIL_BOARD", "colorlight-5a-75b-v7")
SKIP_REASON = ("no board attached: set WIRESPEED_HIL_TARGET (e.g. serial:///dev/ttyUSB0?baud=1000000) "
               "and WIRESPEED_HIL_BOARD to run the hardware-in-the-loop tests (docs/lab-setup.md)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/hil/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.hil)
            if not TARGET:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture(scope="session")
def transport():
    from wirespeed.transport import open_target

    t = open_target(TARGET, timeout=1.0, retries=5)
    yield t
    t.close()


@pytest.fixture(scope="session")
def device(transport):
    """The tester, its register map taken from the configuration it reports (id.config)."""
    from wirespeed.gateware.config import ID_CONFIG_OFFSET, TesterConfig
    from wirespeed.gateware.top import build_register_map
    from wirespeed.host.device import Device

    (word,) = transport.read([ID_CONFIG_OFFSET])
    config = TesterConfig.from_word(word)
    dev = Device(transport, build_register_map(config))
    dev.connect()
    return dev


@pytest.fixture(scope="session")
def board_name():
    return BOARD
