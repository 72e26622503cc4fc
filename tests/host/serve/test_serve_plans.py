"""``wirespeed serve`` before a run: the estimate of a plan, what GET /api/tester says of the
calibration from earlier runs, the generated token, and the profiles shipped with the server."""

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from served import PLAN, TARGET, events_of, served_settings, start

from wirespeed.calibration import Calibration, CalibrationPoint, DefinitionStats
from wirespeed.cli import main
from wirespeed.cli.app import defaults_for
from wirespeed.cli.plans import mapping_of_text, plan_from_mapping
from wirespeed.host.tester import describe_dut
from wirespeed.rfc2544.estimate import DutHint, Pace
from wirespeed.serve.api import create_app
from wirespeed.serve.profiles import shipped_profiles

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "sw" / "wirespeed" / "serve" / "profiles"
SIM_DUT = "router:rate=400k,queue=64"


def finished(client):
    run_id = start(client)
    assert events_of(client, run_id)[-1]["status"] == "complete"
    return run_id


def expected(values, target, dut, pace):
    checked = plan_from_mapping(values, defaults={"target": target} | ({"dut": dut} if dut else {}))
    hint = DutHint.from_dut(describe_dut(checked.dut, target, checked.plan.addresses) if target == "sim" else None)
    return checked.plan.estimate(hint, pace)


def test_estimate_on_a_board_is_real_time_and_the_prior(client):
    answer = client.post("/api/estimate", json={"values": PLAN})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    want = expected(PLAN, TARGET, None, Pace())
    assert body["trials"] == want.trials and body["most_trials"] == want.most_trials
    assert body["wire_s"] == pytest.approx(want.wire_ns / 1e9) and body["wall_s"] == pytest.approx(want.wall_s)
    assert body["basis"].startswith("prior") and body["pace_from"] is None
    assert body["tests"] == [{"test": "throughput", "trials": want.trials, "most_trials": want.most_trials,
                              "wall_s": pytest.approx(want.wall_s)}]
    assert set(body) == {"trials", "most_trials", "wire_s", "wall_s", "basis", "pace_from", "tests"}
    assert client.get("/api/runs").json() == []             # nothing started


def test_estimate_in_simulation_takes_the_dut_model_and_the_newest_recorded_pace(tmp_path, own_lock_dir, tester):
    data = tmp_path / "data"
    values = {"tests": ["throughput", "frame-loss"], "sizes": [64, 1518], "resolution": 1}
    client = TestClient(create_app(served_settings(data, tester, "sim", SIM_DUT)))
    body = client.post("/api/estimate", json={"values": values}).json()
    want = expected(values, "sim", SIM_DUT, None)
    assert body["basis"] == want.basis and body["basis"].startswith("simulated router")
    assert body["trials"] == want.trials and body["wall_s"] is None and body["pace_from"] is None
    assert [t["test"] for t in body["tests"]] == ["throughput", "frame-loss"]
    assert all(t["wall_s"] is None for t in body["tests"])
    other = client.post("/api/estimate", json={"values": values | {"dut": "router:rate=100k"}}).json()
    assert other["trials"] != body["trials"] or other["basis"] != body["basis"]     # the plan's own DUT

    # runs recorded on this target: the newest one's pace counts, a board's never
    board = TestClient(create_app(served_settings(tmp_path / "board", tester)))
    made = finished(board)
    record = json.loads((tmp_path / "board" / "runs" / made / "results.json").read_text())
    for run_id, target, pace, started in (("old", "sim", 2e6, "2026-01-01T00:00:00+00:00"),
                                          ("new", "sim", 5e6, "2026-02-01T00:00:00+00:00"),
                                          ("board", TARGET, None, "2026-03-01T00:00:00+00:00")):
        folder = data / "runs" / run_id
        folder.mkdir(parents=True)
        record |= {"target": target, "started_utc": started}
        record["estimate"]["pace"] = Pace.simulation(pace, "pilot trial").model_dump() if pace else Pace().model_dump()
        (folder / "results.json").write_text(json.dumps(record))
    client = TestClient(create_app(served_settings(data, tester, "sim", SIM_DUT)))
    body = client.post("/api/estimate", json={"values": values}).json()
    want = expected(values, "sim", SIM_DUT, Pace.simulation(5e6, "pilot trial"))
    assert body["pace_from"] == "new" and body["wall_s"] == pytest.approx(want.wall_s)
    assert [t["wall_s"] for t in body["tests"]] == pytest.approx([t.wall_s for t in want.tests])


@pytest.mark.parametrize("body", [
    {"values": PLAN | {"resolution": 0}},
    {"values": PLAN | {"target": "sim"}},
    {"values": PLAN | {"tests": ["toaster"]}},
    {"text": "sizes = [64,", "format": "toml"},
    {"profile": "nosuch"},
])
def test_estimate_refuses_what_a_run_refuses_in_the_same_words(client, body):
    estimate, run = client.post("/api/estimate", json=body), client.post("/api/runs", json=body)
    assert estimate.status_code == run.status_code == 422
    assert estimate.json() == run.json()


def test_tester_gives_the_newest_runs_calibration_and_no_link_state(client, settings):
    info = client.get("/api/tester").json()
    assert info["calibration"] is None and info["link"] is None
    first = finished(client)
    assert client.get("/api/tester").json()["calibration"] is None        # that run used none
    run_id = finished(client)
    for run, started in ((first, "2026-01-01T00:00:00+00:00"), (run_id, "2026-01-02T00:00:00+00:00")):
        path = settings.data / "runs" / run / "results.json"      # one second may hold both starts
        path.write_text(json.dumps(json.loads(path.read_text()) | {"started_utc": started}))
        client.app.state.store.update(run)
    record = json.loads(path.read_text())

    def point(size, delay):
        stats = DefinitionStats(min_ns=delay, max_ns=delay, mean_ns=delay, source="measured")
        return CalibrationPoint(tx_port=0, rx_port=1, frame_size=size, pipeline_delay_ns=delay, frames=10,
                                bit_forwarding=stats, store_and_forward=stats)

    # a record that names its file's delays per direction only through the file's points
    file = Calibration(target="sim", gateware=record["gateware"], method="loopback cable",
                       created_utc="2026-01-02T03:04:05+00:00", cable_delay_ns=5, trial_duration_ns=1_000_000,
                       wait_ns=0, points=[point(64, 200), point(1518, 208)])
    record["calibration"] = {"source": "file cal.json", "file": file.model_dump(mode="json")}
    path.write_text(json.dumps(record))
    info = client.get("/api/tester").json()
    assert info["calibration"] == {"run": run_id, "source": "file cal.json", "method": "loopback cable",
                                   "created_utc": "2026-01-02T03:04:05+00:00", "cable_delay_ns": 5,
                                   "pipeline_delay_ns": {"0->1": {"64": 200, "1518": 208}}}
    assert info["link"] is None


def test_new_token_is_printed_with_the_page_and_required(tmp_path, monkeypatch, capsys):
    import uvicorn

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: served.append((app, kwargs)))
    monkeypatch.delenv("WIRESPEED_TOKEN", raising=False)
    assert main(["serve", "--new-token", "--listen", "0.0.0.0:9123", "--data", str(tmp_path / "d")]) == 0
    err = capsys.readouterr().err
    found = re.search(r"token (\S+); the page: http://0\.0\.0\.0:9123/\?token=(\S+)", err)
    assert found and found[1] == found[2] and len(found[1]) == 32, err
    (app, kwargs), = served
    assert kwargs["host"] == "0.0.0.0" and kwargs["port"] == 9123
    client = TestClient(app)
    assert client.get("/api/runs").status_code == 401
    assert client.get("/api/runs", headers={"Authorization": "Bearer " + found[1] + "x"}).status_code == 401
    assert client.get("/api/runs", headers={"Authorization": "Bearer " + found[1]}).status_code == 200

    assert main(["serve", "--new-token", "--token", "t", "--data", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("wirespeed: error: --new-token: ")
    assert main(["serve", "--listen", "0.0.0.0:9123", "--data", str(tmp_path / "d")]) == 2
    assert "not a loopback address" in capsys.readouterr().err
    assert len(served) == 1


def test_the_shipped_profiles_pass_the_command_lines_config_check(tmp_path):
    names = sorted(p.name for p in SHIPPED.iterdir())
    assert names == ["bsdrp-lab-replay.toml", "quick-check.toml", "rfc2544-full.toml"]
    assert sorted(shipped_profiles()) == names
    for path in SHIPPED.iterdir():
        given = defaults_for("rfc2544", path)              # as 'wirespeed rfc2544 --config FILE' reads it
        assert "target" not in given, path.name            # the server's tester, whichever it is
        checked = plan_from_mapping(mapping_of_text(path.read_text(), "toml", path.name),
                                    defaults={"target": "sim", "dut": SIM_DUT})
        assert checked.plan.estimate().trials > 0
        assert path.read_text().startswith(f"# {path.stem}: ")
    full = defaults_for("rfc2544", SHIPPED / "rfc2544-full.toml")
    assert full["tests"] == ["throughput", "frame-loss", "back-to-back", "system-recovery", "reset"]
    assert full["sizes"] == [64, 128, 256, 512, 1024, 1280, 1518]
    assert defaults_for("rfc2544", SHIPPED / "quick-check.toml")["sizes"] == [64, 1518]
    lab = defaults_for("rfc2544", SHIPPED / "bsdrp-lab-replay.toml")
    assert lab["sizes"] == [64] and lab["dut"] == "bsdrp-306m"
    assert "IBM eServer 306m with Intel 82546GB" in (SHIPPED / "bsdrp-lab-replay.toml").read_text()
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert all(any(Path("profiles", name).match(g) for g in globs["wirespeed.serve"]) for name in names)


def test_a_new_data_folder_gets_the_shipped_profiles_and_keeps_the_users(settings, tmp_path):
    client = TestClient(create_app(settings))
    assert [p["name"] for p in client.get("/api/profiles").json()] == ["bsdrp-lab-replay", "quick-check",
                                                                       "rfc2544-full"]
    assert client.get("/api/profiles/quick-check").json()["text"] == (SHIPPED / "quick-check.toml").read_text()
    (settings.data / "profiles" / "quick-check.toml").write_text('tests = ["throughput"]\nsizes = [128]\n')
    assert client.delete("/api/profiles/rfc2544-full").status_code == 200
    client = TestClient(create_app(settings))                # a restart: the folder is the user's now
    assert [p["name"] for p in client.get("/api/profiles").json()] == ["bsdrp-lab-replay", "quick-check"]
    assert client.get("/api/profiles/quick-check").json()["values"]["sizes"] == [128]
    shutil.rmtree(settings.data / "profiles")
    (settings.data / "profiles").mkdir()
    client = TestClient(create_app(settings))
    assert client.get("/api/profiles").json() == []          # an empty folder is the user's too
    run = client.post("/api/estimate", json={"profile": "quick-check"})
    assert run.status_code == 422 and run.json()["field"] == "profile"
