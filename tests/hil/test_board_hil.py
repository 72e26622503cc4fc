"""Hardware-in-the-loop: identification, PHY bring-up and link, and a short loopback trial
on a real board (port A -> cable or DUT -> port B). Skipped without WIRESPEED_HIL_TARGET."""

import time

import pytest

from wirespeed.board import read_board_status
from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.board_top import BOARD_MAGIC
from wirespeed.gateware.regmap import MAGIC
from wirespeed.traffic import Flow, flow_stream

CLK_HZ = 125_000_000
LINK_TIMEOUT_S = 10.0


def test_identity(device):
    ident = device.ident
    assert ident.magic == MAGIC and ident.clk_hz == CLK_HZ and ident.n_ports == 2
    t0 = device.now_ns()
    time.sleep(0.05)
    elapsed = device.now_ns() - t0
    assert 40e6 <= elapsed <= 5e9       # the timebase runs at about wall-clock speed


def _status(transport, board_name):
    return read_board_status(transport, board_name)


def test_phys_answer_and_links_come_up_at_1000(transport, board_name):
    deadline = time.monotonic() + LINK_TIMEOUT_S
    status = _status(transport, board_name)
    while time.monotonic() < deadline and not all(
            status[f"p{i}.phy.link"] and status[f"p{i}.phy.speed"] == 2 for i in (0, 1)):
        time.sleep(0.2)
        status = _status(transport, board_name)
    assert status["board.magic"] == BOARD_MAGIC
    for i in (0, 1):
        assert status[f"p{i}.phy.id"] not in (0, 0xFFFFFFFF), f"port {i}: no PHY answers at its MDIO address"
        assert status[f"p{i}.phy.nack"] == 0
        assert status[f"p{i}.phy.link"] == 1, f"port {i}: no link (BMSR {status[f'p{i}.phy.bmsr']:#06x})"
        assert status[f"p{i}.phy.speed"] == 2, f"port {i}: link below 1000 Mb/s"
        # the PHY's RGMII in-band status agrees: link up, 1000 Mb/s
        inband = status[f"p{i}.rgmii.inband"]
        assert inband & 1 and (inband >> 1) & 3 == 2


@pytest.mark.parametrize("size", [64, 1518])
def test_short_loopback_trial_a_to_b(device, transport, board_name, size):
    before = _status(transport, board_name)
    flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size))]
    rate = 0.1 * line_rate_fps(size)
    trial = device.run_trial(flows, rate, duration_ns=100_000_000, wait_ns=10_000_000)
    tx, rx = trial.counters[0], trial.counters[1]
    assert tx.tx_frames > 0.9 * rate * 0.1
    assert rx.rx_frames == tx.tx_frames and rx.fcs_errors == 0 and rx.seq_errors == 0
    assert trial.passed
    after = _status(transport, board_name)
    for i in (0, 1):
        assert after[f"p{i}.rgmii.underruns"] == before[f"p{i}.rgmii.underruns"]
        assert after[f"p{i}.rgmii.overflows"] == before[f"p{i}.rgmii.overflows"]
    # a cable or a DUT: the latency is positive and its spread small against a 100 ms trial
    assert 0 < rx.lat_min <= rx.lat_max
