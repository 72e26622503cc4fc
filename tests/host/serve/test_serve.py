"""``wirespeed serve``'s REST API against a fake tester (tests/host/fakes.py): runs, their events,
stop and resume, the busy tester, bad values, path traversal, the token, a restart mid-run."""

import contextlib
import json
import os
import threading

import pytest
from fastapi.testclient import TestClient
from served import PLAN, TARGET, WAIT_S, events_of, start, stream_of

from wirespeed import locks
from wirespeed.cli import main
from wirespeed.locks import Holder, results_lock
from wirespeed.serve.api import create_app
from wirespeed.serve.settings import parse_listen


def test_a_run_writes_its_folder_streams_its_events_and_is_indexed(client, settings):
    settings.report = True
    run_id = start(client)
    events = events_of(client, run_id)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_done" and events[-1]["status"] == "complete"
    assert kinds.count("size_done") == 2
    late = events_of(client, run_id)            # a late subscriber gets them all, from the start
    assert late == events
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "complete" and run["tests"] == ["throughput"]
    assert [row[0] for row in run["headline"][0]["rows"]][:2] == ["64", "128"]
    listed = client.get("/api/runs").json()
    assert [r["id"] for r in listed] == [run_id] and listed[0]["status"] == "complete"
    names = {f["name"] for f in client.get(f"/api/runs/{run_id}/files").json()}
    assert {"results.json", "trials.jsonl", "Throughput.csv", "report.html"} <= names, names
    assert any(n.startswith("graphs/") for n in names) and run.get("warning") is None
    assert ".wirespeed.lock" not in names
    csv = client.get(f"/api/runs/{run_id}/files/Throughput.csv")
    assert csv.status_code == 200
    assert csv.text == (settings.data / "runs" / run_id / "Throughput.csv").read_text()


def test_the_stream_ends_when_the_tester_is_free_after_the_report(client, settings):
    # run_done comes before the graphs and report.html; "released" after them and the release
    settings.report = True
    run_id = start(client)
    items = stream_of(client, run_id)
    names = [name for name, _ in items]
    assert names.count("released") == 1 and names[-1] == "released"
    assert items[-2][1]["kind"] == "run_done"
    assert items[-1][1] == {"status": "complete", "error": None, "warning": None}
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["live"] is False and run["state"] == "complete"
    assert "report.html" in {f["name"] for f in client.get(f"/api/runs/{run_id}/files").json()}
    nxt = start(client)                         # the tester is free the moment the stream ends
    assert stream_of(client, nxt)[-1] == ("released", {"status": "complete", "error": None, "warning": None})


def test_busy_409_stop_keeps_finished_trials_and_resume_completes(client, settings, tester):
    tester.gate_size = 128
    run_id = start(client)
    assert tester.entered.wait(WAIT_S)           # 64 B done, the first 128 B trial in progress
    second = client.post("/api/runs", json={"values": PLAN})
    assert second.status_code == 409
    assert second.json()["run"] == run_id and run_id in second.json()["message"]
    assert client.post(f"/api/runs/{run_id}/resume").status_code == 409

    assert client.post(f"/api/runs/{run_id}/stop").status_code == 200
    tester.release.set()
    items = stream_of(client, run_id)
    assert items[-1] == ("released", {"status": "interrupted", "error": None, "warning": None})
    events = [data for name, data in items if name is None]
    assert events[-1]["kind"] == "run_done" and events[-1]["status"] == "interrupted"
    record = json.loads((settings.data / "runs" / run_id / "results.json").read_text())
    assert record["status"] == "interrupted"
    assert [r["frame_size"] for r in record["tests"][0]["results"]] == [64]
    kept = len(record["trials"])
    assert kept > 1 and len((settings.data / "runs" / run_id / "trials.jsonl").read_text().splitlines()) == kept
    assert client.post(f"/api/runs/{run_id}/stop").status_code == 409       # not running any more

    assert client.post(f"/api/runs/{run_id}/resume").status_code == 201
    events = events_of(client, run_id)
    assert events[-1]["status"] == "complete"
    record = json.loads((settings.data / "runs" / run_id / "results.json").read_text())
    assert record["status"] == "complete" and len(record["trials"]) > kept
    assert [r["frame_size"] for r in record["tests"][0]["results"]] == [64, 128]
    assert client.get("/api/runs").json()[0]["status"] == "complete"


def test_a_cli_run_holding_the_tester_is_a_409_naming_it(client):
    with locks.tester_lock(TARGET).acquire(Holder.current(command="wirespeed rfc2544 --target " + TARGET)):
        response = client.post("/api/runs", json={"values": PLAN})
    assert response.status_code == 409
    assert response.json()["field"] == "run" and "wirespeed rfc2544 --target" in response.json()["message"]


@pytest.mark.parametrize("values, flag", [
    ({"resolution": 0}, "--resolution"),
    ({"sizes": "64,x"}, "--sizes"),
    ({"tests": ["throughput", "toaster"]}, "--tests"),
    ({"address": ["0:ipv4=198.18.0.1", "0:ipv4=198.18.0.2"]}, "--address"),
])
def test_bad_values_are_422_with_the_command_lines_words(client, capsys, values, flag):
    response = client.post("/api/runs", json={"values": PLAN | values})
    assert response.status_code == 422
    body = response.json()
    assert body["field"] == flag[2:]
    argv = ["rfc2544", "--target", TARGET, "--no-learning", "--calibration", "none"]
    for key, value in (PLAN | values).items():
        if key in ("learning", "calibration"):
            continue
        for item in (value if key == "address" else [value]):
            argv += [f"--{key}", ",".join(map(str, item)) if isinstance(item, list) else str(item)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"wirespeed: error: {flag}: {body['message']}"
    assert client.get("/api/runs").json() == []


def test_server_owned_options_and_unknown_keys_are_refused(client):
    for values, field in (({"target": "sim"}, "target"), ({"pcap-wire": "x"}, "pcap-wire"),
                          ({"trial-durations": "1s"}, "trial-durations")):
        response = client.post("/api/runs", json={"values": PLAN | values})
        assert response.status_code == 422 and response.json()["field"] == field, response.text


def test_profiles_are_config_files_the_cli_reads(client, settings, tmp_path, capsys):
    text = 'tests = ["throughput"]\nsizes = [64, 128]\nlearning = false\ncalibration = "none"\nresolution = 10\n'
    assert client.put("/api/profiles/quick", json={"text": text, "format": "toml"}).status_code == 200
    path = settings.data / "profiles" / "quick.toml"
    assert path.read_text() == text
    assert {"name": "quick", "format": "toml"} in client.get("/api/profiles").json()
    assert client.get("/api/profiles/quick").json()["values"]["sizes"] == [64, 128]
    bad = client.put("/api/profiles/quick", json={"values": {"resolution": 0}})
    assert bad.status_code == 422 and bad.json()["field"] == "resolution"
    assert path.read_text() == text                     # a refused profile leaves the saved one
    assert client.put("/api/profiles/..", json={"text": text}).status_code in (404, 422)
    assert client.put("/api/profiles/a.b", json={"text": text}).json()["field"] == "name"
    saved = client.put("/api/profiles/yamlish", json={"values": {"sizes": [64], "resolution": 5}}).json()
    assert saved["format"] == "yaml"
    from wirespeed.cli.app import defaults_for
    assert defaults_for("rfc2544", settings.data / "profiles" / "yamlish.yaml")["sizes"] == [64]
    run_id = client.post("/api/runs", json={"profile": "quick"}).json()["id"]
    assert events_of(client, run_id)[-1]["status"] == "complete"
    assert client.delete("/api/profiles/quick").status_code == 200
    assert client.get("/api/profiles/quick").status_code == 404
    assert client.post("/api/runs", json={"profile": "quick"}).json()["field"] == "profile"


def test_files_outside_the_run_folder_are_refused(client, settings, tmp_path):
    run_id = start(client)
    events_of(client, run_id)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the web")
    folder = settings.data / "runs" / run_id
    os.symlink(secret, folder / "link.txt")
    os.symlink(tmp_path, folder / "linkdir")
    for name in ("%2E%2E/%2E%2E/%2E%2E/secret.txt", "%2E%2E%2F%2E%2E%2Fsecret.txt", "%2F" + str(secret).lstrip("/"),
                 "link.txt", "linkdir/secret.txt", ".wirespeed.lock"):
        response = client.get(f"/api/runs/{run_id}/files/{name}")
        assert response.status_code in (404, 422), name
        assert "not for the web" not in response.text
    for bad_id in ("%2E%2E", "..%2F" + run_id, ".hidden"):
        response = client.get(f"/api/runs/{bad_id}/files")
        assert response.status_code in (404, 422) and "field" in response.json(), bad_id
    assert {f["name"] for f in client.get(f"/api/runs/{run_id}/files").json()}.isdisjoint({"link.txt", "linkdir"})


def test_a_token_is_needed_on_every_call(settings):
    settings.token = "s3cret"
    client = TestClient(create_app(settings))
    for method, url in (("get", "/api/runs"), ("get", "/api/tester"), ("get", "/api/profiles"),
                        ("post", "/api/runs"), ("get", "/api/runs/x/files/results.json")):
        response = getattr(client, method)(url)
        assert response.status_code == 401, url
        assert response.json()["field"] == "token"
        assert getattr(client, method)(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    good = {"Authorization": "Bearer s3cret"}
    assert client.get("/api/runs", headers=good).status_code == 200
    run_id = client.post("/api/runs", json={"values": PLAN}, headers=good).json()["id"]
    assert events_of(client, run_id, headers=good)[-1]["status"] == "complete"


def test_listen_needs_a_token_off_loopback(capsys):
    assert parse_listen("127.0.0.1:8544", None) == ("127.0.0.1", 8544)
    assert parse_listen("[::1]:9000", None) == ("::1", 9000)
    assert parse_listen("0.0.0.0:8544", "t") == ("0.0.0.0", 8544)
    with pytest.raises(ValueError, match="not a loopback address"):
        parse_listen("0.0.0.0:8544", None)
    assert main(["serve", "--listen", "192.0.2.1:8544"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("wirespeed: error: --listen: 192.0.2.1 is not a loopback")


def test_a_restart_marks_a_dead_run_interrupted_and_resume_completes(client, settings, tester):
    run_id = start(client)
    events_of(client, run_id)
    folder = settings.data / "runs" / run_id
    record = json.loads((folder / "results.json").read_text())
    record["status"], record["tests"][0]["results"] = "running", record["tests"][0]["results"][:1]
    (folder / "results.json").write_text(json.dumps(record, indent=2))
    held = settings.data / "runs" / "held"          # a running run whose process is alive: left alone
    held.mkdir()
    (held / "results.json").write_text(json.dumps(record, indent=2))

    with results_lock(held).acquire(Holder.current(command="wirespeed rfc2544 --out held")):
        restarted = TestClient(create_app(settings))
        assert restarted.get("/api/runs/held").json()["status"] == "running"
    run = restarted.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "interrupted" and "server stopped" in run["error"]
    assert restarted.post(f"/api/runs/{run_id}/resume").status_code == 201
    assert events_of(restarted, run_id)[-1]["status"] == "complete"
    record = json.loads((folder / "results.json").read_text())
    assert record["status"] == "complete" and [r["frame_size"] for r in record["tests"][0]["results"]] == [64, 128]


def test_tester_and_dut_models(client):
    info = client.get("/api/tester").json()
    assert info["target"] == TARGET and info["busy"] is None and info["identification"] is None
    models = client.get("/api/dut-models").json()
    from wirespeed.sim.dut_catalog import catalog
    assert models == json.loads(json.dumps(catalog()))
    run_id = start(client)
    events_of(client, run_id)
    info = client.get("/api/tester").json()
    assert info["identification"]["map_hash"] == 2 and info["identified_by_run"] == run_id


def test_identify_reads_the_tester_now_unless_a_run_holds_it(client, settings, tester, monkeypatch):
    tester.ident = tester.ident.model_copy(update={"map_hash": 7})
    answer = client.post("/api/tester/identify")
    assert answer.status_code == 200 and answer.json()["identification"]["map_hash"] == 7
    info = client.get("/api/tester").json()
    assert info["identification"]["map_hash"] == 7 and info["identified_by_run"] is None
    assert info["identified_utc"] == answer.json()["identified_utc"]

    tester.gate_size = 128
    run_id = start(client)
    assert tester.entered.wait(WAIT_S)
    busy = client.post("/api/tester/identify")
    assert busy.status_code == 409 and busy.json()["run"] == run_id
    tester.release.set()
    events_of(client, run_id)

    from wirespeed.errors import ConnectError

    @contextlib.contextmanager
    def unreachable(target, dut, **kwargs):
        raise ConnectError("--target", "no answer from udp://127.0.0.1:1234 within 1 s")
        yield

    monkeypatch.setattr(settings, "connector", unreachable)
    down = client.post("/api/tester/identify")
    assert down.status_code == 503 and down.json() == {"field": "target",
                                                       "message": "no answer from udp://127.0.0.1:1234 within 1 s"}


def test_a_run_or_an_identify_asked_for_during_an_identify_gets_409(client, settings, monkeypatch):
    opened, go_on = threading.Event(), threading.Event()
    connect = settings.connector

    @contextlib.contextmanager
    def slow(target, dut, **kwargs):
        with connect(target, dut, **kwargs) as tester:
            opened.set()
            assert go_on.wait(WAIT_S)
            yield tester

    monkeypatch.setattr(settings, "connector", slow)
    answers = []
    identify = threading.Thread(target=lambda: answers.append(client.post("/api/tester/identify")))
    identify.start()
    assert opened.wait(WAIT_S)                  # the identify holds the tester
    refused = client.post("/api/runs", json={"values": PLAN})
    assert refused.status_code == 409 and "being identified" in refused.json()["message"]
    again = client.post("/api/tester/identify")
    assert again.status_code == 409 and "being identified" in again.json()["message"]
    go_on.set()
    identify.join(WAIT_S)
    assert answers[0].status_code == 200
    monkeypatch.setattr(settings, "connector", connect)
    run_id = start(client)                      # free again
    assert events_of(client, run_id)[-1]["status"] == "complete"


def test_stopping_the_server_interrupts_its_run_after_the_trial(settings, tester):
    tester.gate_size = 128
    with TestClient(create_app(settings)) as client:        # the block's end is the server's shutdown
        run_id = start(client)
        assert tester.entered.wait(WAIT_S)
        threading.Timer(0.2, tester.release.set).start()     # the shutdown waits for the trial either way
    record = json.loads((settings.data / "runs" / run_id / "results.json").read_text())
    assert record["status"] == "interrupted"
    assert [r["frame_size"] for r in record["tests"][0]["results"]] == [64]


def test_the_config_files_of_docs_config_md_load_as_profiles(client):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "config.md").read_text()
    blocks = re.findall(r"```(toml|yaml)\n(.*?)```", doc, re.S)
    assert [fmt for fmt, _ in blocks] == ["toml", "yaml"]
    toml_text = blocks[0][1]
    saved = client.put("/api/profiles/bsdrp", json={"text": toml_text, "format": "toml"})
    assert saved.status_code == 200, saved.text
    assert saved.json()["values"]["dut"] == "bsdrp-306m"
    yaml_text = blocks[1][1]         # its target is sim: not this server's tester
    refused = client.put("/api/profiles/lab", json={"text": yaml_text, "format": "yaml"})
    assert refused.status_code == 422 and refused.json()["field"] == "target"


SERVER_PROCESS = """
import contextlib, sys
from pathlib import Path
sys.path[:0] = [sys.argv[2], str(Path(sys.argv[2]).parent)]
from fastapi.testclient import TestClient
from served import PLAN, TARGET, ServedTester
from wirespeed.serve.api import create_app
from wirespeed.serve.settings import Settings

tester = ServedTester(gate_size=128)

@contextlib.contextmanager
def connector(target, dut, **kwargs):
    yield tester

client = TestClient(create_app(Settings(data=Path(sys.argv[1]), target=TARGET, connector=connector, report=False)))
print(client.post("/api/runs", json={"values": PLAN}).json()["id"], flush=True)
tester.entered.wait()
print("measuring 128", flush=True)
tester.release.wait()
"""


def test_a_server_killed_mid_run_leaves_it_resumable(settings, tester):
    import signal
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    server = subprocess.Popen([sys.executable, "-c", SERVER_PROCESS, str(settings.data), here],
                              stdout=subprocess.PIPE, text=True)
    try:
        run_id = server.stdout.readline().strip()
        assert server.stdout.readline().strip() == "measuring 128"     # 64 B done, its trials on disk
        folder = settings.data / "runs" / run_id
        assert json.loads((folder / "results.json").read_text())["status"] == "running"
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(WAIT_S)
    assert server.returncode == -signal.SIGKILL
    client = TestClient(create_app(settings))
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "interrupted" and [r[0] for r in run["headline"][0]["rows"]] == ["64"]
    assert client.post(f"/api/runs/{run_id}/resume").status_code == 201
    assert events_of(client, run_id)[-1]["status"] == "complete"
    record = json.loads((folder / "results.json").read_text())
    assert record["status"] == "complete" and [r["frame_size"] for r in record["tests"][0]["results"]] == [64, 128]
