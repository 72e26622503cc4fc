"""The rfc2544 command's back-to-back (26.4) and frame loss (26.3) options: bad values are one
line naming the flag; runs against a register file (no frames ever arrive) write their files."""

import json

import pytest
import records
from clirun import run
from ebserver import EtherboneServer, serve_identity
from records import parameters, results


@pytest.mark.parametrize("argv, field", [
    (["--tests", "back-to-back,jitter"], "--tests"),
    (["--b2b-trials", "0"], "--b2b-trials"),
    (["--b2b-trials", "many"], "--b2b-trials"),
    (["--b2b-max-burst", "0"], "--b2b-max-burst"),
    (["--b2b-max-burst", "1.5"], "--b2b-max-burst"),
    (["--loss-step", "0"], "--loss-step"),
    (["--loss-step", "101"], "--loss-step"),
    (["--loss-step", "ten"], "--loss-step"),
    (["--loss-points", "100,0"], "--loss-points"),
    (["--loss-points", "100,abc"], "--loss-points"),
    (["--loss-points", "90,90"], "--loss-points"),
    (["--loss-points", "120"], "--loss-points"),
])
def test_bad_values_are_one_line_naming_the_flag(capsys, argv, field):
    code, out, err = run(capsys, "rfc2544", *argv)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wirespeed: error: {field}: "), err
    assert "Traceback" not in err


FAST = ["--sizes", "64", "--trial-duration", "2us", "--wait", "1us", "--settle", "1us"]


def test_back_to_back_and_frame_loss_against_a_register_file(capsys, regmap, tmp_path):
    """No frame is ever sent: every burst fails down to 0 frames, every load point is lossy
    (nothing sent proves nothing), and the files say so."""
    with EtherboneServer() as server:
        serve_identity(server, regmap)
        code, out, err = run(capsys, "rfc2544", "--target", server.url, "--dut", "a cable", "--out", str(tmp_path),
                             "--json", "--tests", "back-to-back,frame-loss", "--b2b-trials", "2",
                             "--b2b-max-burst", "100", "--loss-points", "100,50", *FAST)
    assert code == 0, err
    record = json.loads(out)
    assert record == json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "complete" and records.names(record) == ["frame-loss", "back-to-back"]
    assert record["test"] == "rfc2544-frame-loss+back-to-back" and results(record, "throughput") == []
    b2b, = results(record, "back-to-back")
    assert [r["burst_frames"] for r in b2b["repetitions"]] == [0, 0] and b2b["max_burst"] == 100
    assert b2b["repetitions"][0]["bursts"] == [100, 50, 25, 12, 6, 3, 1] and b2b["repetitions"][1]["bursts"] == [1]
    assert b2b["corrected_buffer_time_s"] is None
    assert parameters(record, "back-to-back")["repetitions"] == 2
    loss, = results(record, "frame-loss")
    assert [p["offered_pct"] for p in loss["points"]] == [100, 50] and not loss["settled"]
    lines = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    assert [line["test"] for line in lines] == ["frame-loss"] * 2 + ["back-to-back"] * 8
    assert lines[2]["burst_frames"] == 100 and lines[2]["repetition"] == 1 and lines[0]["offered_pct"] == 100
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["Back_to_Back.csv", "Frame_Loss.csv", "Trials.csv", "results.json", "trials.jsonl"]
    assert (tmp_path / "Back_to_Back.csv").read_text().splitlines()[1].startswith("64,0.00,0.00,0,0,2,100,no,")
    assert "2 repetitions per frame size, scaled down" in err and "bursts capped at 100 frames" in err
