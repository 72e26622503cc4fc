"""Frame loss from the sequence tracking, checked against the simulated DUT's own counters:
a DUT that loses, duplicates, reorders and corrupts frames (the impairment stage, seeded) must
be reported frame for frame as the model did it, in results.json, Frame_Loss.csv, Trials.csv
and on the console; no loss figure is ever negative. The model's counters come from the
simulation's DUT control window, per trial (sim/control.py), which mirrors what the harness
prints when it exits."""

import csv
import json
import re

import pytest

from wirespeed.cli import main
from wirespeed.ethernet import line_rate_fps
from wirespeed.host.device import Device
from wirespeed.host.maps import map_of
from wirespeed.sim.control import DutControl
from wirespeed.sim.dut import parse_dut
from wirespeed.sim.launcher import SimProcess
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport

pytestmark = pytest.mark.slow

SPECS = {
    "loss+dup": "loopback:loss=0.001,dup=0.002,seed=3",
    "all four": "loopback:loss=0.01,dup=0.001,reorder=0.01,corrupt=0.001,seed=3",
}


def expected(m):
    """What the tester must count of one direction of the model (sim/harness/dut_model.h)."""
    return {"lost_frames": m["lost"] + m["corrupted"] + m["blackout"] + m["dropped"] + m["reset_lost"],
            "duplicate_frames": m["duplicated"] - m["corrupt_dups"],
            "out_of_order_frames": m["reordered"] - m["reorder_hidden"],
            "fcs_errors": m["corrupted"] + m["corrupt_dups"], "late_frames": 0, "tx_frames": m["frames_in"]}


@pytest.mark.parametrize("name", SPECS)
def test_frame_loss_equals_the_models_own_counts(capsys, tmp_path, name):
    out = tmp_path / "run"
    code = main(["rfc2544", "--tests", "frame-loss", "--sizes", "64", "--loss-points", "100,90,80",
                 "--dut", SPECS[name], "--out", str(out)])
    console = capsys.readouterr().err
    assert code == 0, console
    record = json.loads((out / "results.json").read_text())
    trials = record["trials"]
    assert len(trials) == 3
    for t in trials:
        model = t["dut_model"]["0->1"]
        got = {k: t[k] for k in expected(model)}
        assert got == expected(model), (name, t["offered_fps"], got, model)
        assert t["lost_frames"] >= 0 and t["loss_pct"] >= 0 and t["passed"] is False
        assert t["loss_pct"] == pytest.approx(100 * t["lost_frames"] / t["tx_frames"])
    first, model = trials[0], trials[0]["dut_model"]["0->1"]
    if name == "loss+dup":      # the hostile-user session's run: 19 dropped, 27 duplicated, 8 more received
        assert (model["lost"], model["duplicated"]) == (19, 27)
        assert (first["tx_frames"], first["rx_frames"], first["lost_frames"]) == (14881, 14889, 19)
        assert first["failure"] == "19 lost, 27 duplicated"
    else:                       # 1.149 % of the frames never arrived intact (the session's report said 1.028 %)
        assert f"{first['loss_pct']:.3f}" == "1.149"
        assert model["reorder_hidden"] >= 1      # a reorder the receiver cannot see: the count says so
    with open(out / "Frame_Loss.csv") as f:
        rows = list(csv.DictReader(f))
    for row, t in zip(rows, trials):
        assert int(row["frames_lost"]) == t["lost_frames"] and float(row["loss_pct"]) >= 0
        assert int(row["frames_duplicated"]) == t["duplicate_frames"]
        assert int(row["frames_out_of_order"]) == t["out_of_order_frames"]
        assert int(row["frames_late"]) == 0 and int(row["fcs_errors"]) == t["fcs_errors"]
    with open(out / "Trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["frames_duplicated"]) for r in rows] == [t["duplicate_frames"] for t in trials]
    assert [r["failure"] for r in rows] == [t["failure"] for t in trials]
    assert re.search(rf"lost +{first['lost_frames']:,} ", console) and f"dup {first['duplicate_frames']:,}" in console
    # the run records the model's counters when it ended (learning frames included)
    assert record["dut_model"]["0->1"]["frames_in"] >= sum(t["tx_frames"] for t in trials)


def test_the_control_window_mirrors_the_models_exit_counters():
    """The counters a run records (the DUT control window) are the model's own: the same as
    the harness prints when it exits."""
    dut = parse_dut(SPECS["all four"])
    with SimProcess(dut) as sim:
        with EtherboneTransport(sim.host, sim.port) as transport:
            device = Device(transport, map_of(transport)[0])
            device.connect()
            device.dut_probe = DutControl(transport).counts
            flow = Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64))
            trial = device.run_trial([flow], line_rate_fps(64), 2_000_000, 200_000)
            window = DutControl(transport).counts()
    exit_a = sim.stats["dut_a"]
    assert {k: exit_a[k] for k in window["0->1"] if k in exit_a} == {k: v for k, v in window["0->1"].items()
                                                                    if k in exit_a}
    assert set(window["0->1"]) - set(exit_a) == {"collapses", "resets", "reset_lost"}
    assert trial.dut_model["0->1"]["frames_in"] == trial.tx_frames > 0
    model = trial.dut_model["0->1"]
    assert {k: getattr(trial, k) for k in expected(model)} == expected(model)
