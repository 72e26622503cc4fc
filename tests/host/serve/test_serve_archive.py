"""``wirespeed serve``'s calls on whole runs against the fake tester of test_serve.py: delete,
the zip of a run's folder, its report as a PDF, the compare page of several runs."""

import io
import json
import os
import tempfile
import zipfile

import pytest
from fastapi.testclient import TestClient
from served import PLAN, WAIT_S, events_of, start

from wirespeed.locks import Holder, results_lock
from wirespeed.serve.api import create_app


def finished(client, values=PLAN):
    run_id = start(client, values)
    assert events_of(client, run_id)[-1]["status"] == "complete"
    return run_id


def test_delete_removes_the_folder_and_its_row_and_follows_no_link(client, settings, tmp_path):
    run_id, kept = finished(client), finished(client)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the run's")
    folder = settings.data / "runs" / run_id
    os.symlink(outside, folder / "linkdir")
    os.symlink(outside / "keep.txt", folder / "link.txt")
    os.symlink(outside, settings.data / "runs" / "linked")      # a link in DATA/runs is no run

    answer = client.delete(f"/api/runs/{run_id}")
    assert answer.status_code == 200 and answer.json() == {"id": run_id, "deleted": True}
    assert not folder.exists() and (outside / "keep.txt").read_text() == "not the run's"
    assert [r["id"] for r in client.get("/api/runs").json()] == [kept]
    assert client.get(f"/api/runs/{run_id}").status_code == 404
    assert client.delete(f"/api/runs/{run_id}").json() == {"field": "run", "message": f"no run {run_id}"}
    gone = client.delete("/api/runs/linked")
    assert gone.status_code == 404 and (outside / "keep.txt").exists()
    assert client.delete("/api/runs/.hidden").status_code == 422
    assert client.delete("/api/runs/..%2Fdata").status_code in (404, 422)
    assert (settings.data / "runs" / kept / "results.json").is_file()


def test_delete_is_refused_while_the_run_runs_or_another_process_writes_it(client, settings, tester):
    tester.gate_size = 128
    run_id = start(client)
    assert tester.entered.wait(WAIT_S)
    busy = client.delete(f"/api/runs/{run_id}")
    assert busy.status_code == 409 and busy.json()["field"] == "run" and busy.json()["run"] == run_id
    tester.release.set()
    events_of(client, run_id)
    folder = settings.data / "runs" / run_id
    with results_lock(folder).acquire(Holder.current(command=f"wirespeed rfc2544 --resume {folder}")):
        held = client.delete(f"/api/runs/{run_id}")
    assert held.status_code == 409 and "wirespeed rfc2544 --resume" in held.json()["message"]
    assert (folder / "results.json").is_file()
    assert client.delete(f"/api/runs/{run_id}").status_code == 200


def test_the_zip_holds_every_listed_file_under_the_run_id(client, settings, tmp_path):
    settings.report = True
    run_id = finished(client)
    folder = settings.data / "runs" / run_id
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the web")
    os.symlink(secret, folder / "link.txt")
    before = set(os.listdir(tempfile.gettempdir()))

    answer = client.get(f"/api/runs/{run_id}/zip")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/zip"
    assert f'filename="{run_id}.zip"' in answer.headers["content-disposition"]
    listed = {f["name"] for f in client.get(f"/api/runs/{run_id}/files").json()}
    assert {"results.json", "Throughput.csv", "report.html"} <= listed
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        assert set(archive.namelist()) == {f"{run_id}/{name}" for name in listed}
        for name in listed:
            assert archive.read(f"{run_id}/{name}") == (folder / name).read_bytes(), name
    assert b"not for the web" not in answer.content
    assert not [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"wirespeed-{run_id}")
                and n not in before]                         # the temporary zip is removed once sent
    assert not list(settings.data.rglob("*.zip"))
    assert client.get("/api/runs/nosuchrun/zip").status_code == 404


def test_report_pdf_is_made_once_in_the_runs_folder(client, settings):
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError) as exc:     # OSError: pango missing
        pytest.skip(f"WeasyPrint cannot be loaded: {exc}")
    run_id = finished(client)
    folder = settings.data / "runs" / run_id
    assert not (folder / "report.pdf").exists()
    answer = client.get(f"/api/runs/{run_id}/report.pdf")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/pdf" and answer.content.startswith(b"%PDF-")
    assert (folder / "report.pdf").read_bytes() == answer.content
    made = (folder / "report.pdf").stat().st_mtime_ns
    assert client.get(f"/api/runs/{run_id}/report.pdf").content == answer.content
    assert (folder / "report.pdf").stat().st_mtime_ns == made
    from pypdf import PdfReader
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(answer.content)).pages)
    assert "Throughput" in text


def test_report_pdf_is_409_while_running_or_without_results(client, settings, tester):
    tester.gate_size = 64
    run_id = start(client)
    assert tester.entered.wait(WAIT_S)
    running = client.get(f"/api/runs/{run_id}/report.pdf")
    assert running.status_code == 409 and running.json()["field"] == "run" and running.json()["run"] == run_id
    client.post(f"/api/runs/{run_id}/stop")
    tester.release.set()
    assert events_of(client, run_id)[-1]["status"] == "interrupted"
    empty = client.get(f"/api/runs/{run_id}/report.pdf")
    assert empty.status_code == 409 and "no results yet" in empty.json()["message"]
    assert "\n" not in empty.json()["message"]
    assert not (settings.data / "runs" / run_id / "report.pdf").exists()
    assert client.get("/api/runs/nosuchrun/report.pdf").status_code == 404


def test_report_pdf_without_weasyprint_is_a_500_with_one_line(client, monkeypatch):
    import wirespeed.report.render as render

    run_id = finished(client)

    def no_pdf(*args, **kwargs):
        raise render.PdfError("WeasyPrint cannot be loaded (no pango); see docs/report.md")

    monkeypatch.setattr(render, "write_pdf", no_pdf)
    monkeypatch.setattr("wirespeed.report.write_pdf", no_pdf)
    answer = client.get(f"/api/runs/{run_id}/report.pdf")
    assert answer.status_code == 500
    assert answer.json()["field"] == "pdf" and "WeasyPrint cannot be loaded" in answer.json()["message"]


def test_compare_serves_the_compare_page_of_the_runs(client, settings):
    first, second = finished(client), finished(client, PLAN | {"sizes": [64], "title": "firmware <2.1>"})
    answer = client.get("/api/compare", params={"runs": [first, second]})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    page = answer.text
    assert page.count("<svg") >= 1 and first in page
    assert f"firmware &lt;2.1&gt; ({second})" in page       # a titled run by its title, escaped
    assert "<img" not in page                               # nothing beside the page to fetch
    assert not (settings.data / "compare").exists()

    for params, status in (({"runs": [first]}, 422), ({}, 422), ({"runs": [first, ".x"]}, 422),
                           ({"runs": [first, "nosuchrun"]}, 404)):
        refused = client.get("/api/compare", params=params)
        assert refused.status_code == status and refused.json()["field"] == "runs", params
    empty = settings.data / "runs" / "empty"
    empty.mkdir()
    broken = client.get("/api/compare", params={"runs": [first, "empty"]})
    assert broken.status_code == 422 and broken.json()["field"] == "runs"


def test_the_new_calls_need_the_token(settings):
    settings.token = "s3cret"
    client = TestClient(create_app(settings))
    for method, url in (("delete", "/api/runs/x"), ("get", "/api/runs/x/zip"), ("get", "/api/runs/x/report.pdf"),
                        ("get", "/api/compare?runs=a&runs=b"), ("post", "/api/estimate")):
        answer = getattr(client, method)(url)
        assert answer.status_code == 401 and answer.json()["field"] == "token", url
    assert json.loads(client.get("/api/compare?runs=a", headers={"Authorization": "Bearer s3cret"}).text)[
        "field"] == "runs"
