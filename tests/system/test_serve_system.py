"""``wirespeed serve`` on the simulated router, driven from its New test page in a real headless
Chromium: RFC 2544 throughput with its latency trials at 64 and 1518 bytes, the trials shown as
they are measured, and a finished run whose Throughput.csv and report.html are those the
command line writes for the same plan, apart from timestamps."""

import re

import pytest
from browser import CHROMIUM, NO_CHROMIUM, checked_page, chromium, serving
from playwright.sync_api import expect
from reference import DUT, SIZES

from wirespeed.serve.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]
RUN_MS = 1_800_000          # a deadline for a stuck run, never a measured time
# wall-clock times, and the simulated time at which the learning phase ran (the simulation runs
# on while the host prepares, so it depends on the machine's speed)
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
LEARNING_TIME = re.compile(r"<tr><td>(started|ended)</td><td>[\d.,]+ [mun]?s</td></tr>")


def normal(text):
    return LEARNING_TIME.sub("<learning time>", TIMESTAMP.sub("<time>", text))


def test_a_run_from_the_page_writes_the_command_lines_csv_and_report(tmp_path, reference_run):
    settings = Settings(data=tmp_path / "data", target="sim", dut=DUT)
    with serving(settings) as url, chromium() as browser, checked_page(browser, RUN_MS) as page:
        page.goto(f"{url}/new")
        page.locator('.field[data-key="tests"] input[value="throughput"]').check()
        page.fill("#opt-sizes", SIZES)
        page.click("#start")
        page.wait_for_url(re.compile(r"/runs/[^/]+$"))
        run_id = page.url.rsplit("/", 1)[1]
        page.locator("#trials tbody tr").first.wait_for()
        assert page.locator("#status").text_content() == "running"      # a trial shown before the run's end
        page.locator("#status").filter(has_text="complete").wait_for()
        trials = (settings.data / "runs" / run_id / "trials.jsonl").read_text().splitlines()
        expect(page.locator("#trials tbody tr")).to_have_count(len(trials))
        expect(page.locator("#headline caption").first).to_contain_text("throughput")
        page_csv = page.request.get(f"{url}/api/runs/{run_id}/files/Throughput.csv").text()
        page_report = page.request.get(f"{url}/api/runs/{run_id}/files/report.html").text()

    assert normal(page_csv) == normal((reference_run / "Throughput.csv").read_text())
    assert len(page_csv.splitlines()) == 3
    assert normal(page_report) == normal((reference_run / "report.html").read_text())
