"""``wirespeed serve``'s API runs RFC 2544 throughput at 64 B on the simulated router and writes
the Throughput.csv the command line writes for the same plan (apart from timestamps), and the
report after it."""

import json
import re

import pytest
from fastapi.testclient import TestClient

from wirespeed.cli import main
from wirespeed.serve.api import create_app
from wirespeed.serve.settings import Settings

pytestmark = pytest.mark.slow
DUT = "router:rate=400k,queue=256,latency=20us"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def test_an_api_run_writes_the_command_lines_throughput_csv(tmp_path, capsys):
    client = TestClient(create_app(Settings(data=tmp_path / "data", target="sim", dut=DUT)))
    created = client.post("/api/runs", json={"values": {"tests": ["throughput"], "sizes": [64]}})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    assert [e["kind"] for e in events].count("trial_done") > 1
    assert events[-1]["kind"] == "run_done" and events[-1]["status"] == "complete", events[-1]
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "complete" and run["headline"][0]["rows"][0][0] == "64"
    api_csv = client.get(f"/api/runs/{run_id}/files/Throughput.csv").text
    names = {f["name"] for f in client.get(f"/api/runs/{run_id}/files").json()}
    assert "report.html" in names and any(n.startswith("graphs/") for n in names), names

    code = main(["rfc2544", "--tests", "throughput", "--sizes", "64", "--dut", DUT, "--out", str(tmp_path / "cli")])
    assert code == 0, capsys.readouterr().err
    cli_csv = (tmp_path / "cli" / "Throughput.csv").read_text()
    assert TIMESTAMP.sub("<time>", api_csv) == TIMESTAMP.sub("<time>", cli_csv)
    assert len(api_csv.splitlines()) == 2
