"""``wirespeed serve``'s pages in a real headless Chromium (Playwright), against a live server
whose runs go to the fake tester of test_serve.py: a run started from the New test page with
its trials appearing live, Stop, Resume and the busy tester's 409 in the page, profiles between
the page and ``--config``, bad values at their field, injected markup shown as text, the token's
login, no external address in any page, Runs with compare and delete.

With WIRESPEED_SCREENSHOTS=DIR the pages are also saved there as PNG (docs/appliance.md's
pictures come from such a run). Needs the system's Chromium (skipped without one)."""

import json
import os
import re
from pathlib import Path

import pytest
from browser import CHROMIUM, NO_CHROMIUM, checked_page, chromium, serving
from playwright.sync_api import expect
from served import PLAN, TARGET, WAIT_S

from wirespeed.cli.app import defaults_for

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]
WAIT_MS = WAIT_S * 1000
SHOTS = os.environ.get("WIRESPEED_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser):
    with checked_page(browser, WAIT_MS) as checked:
        yield checked


def shot(page, name):
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"appliance-{name}.png"), full_page=True)


def fill_plan(page, url, sizes="64,128", title=None):
    """The New test page filled with PLAN's values for the fake tester."""
    page.goto(f"{url}/new")
    page.locator('.field[data-key="tests"] input[value="throughput"]').check()
    page.fill("#opt-sizes", sizes)
    page.locator('details[data-group="Throughput (RFC 2544 26.1)"] > summary').click()
    page.fill("#opt-resolution", str(PLAN["resolution"]))
    page.locator('details[data-group="Latency (RFC 2544 26.2)"] > summary').click()
    page.fill("#opt-calibration", PLAN["calibration"])
    page.locator('details[data-group="Learning (RFC 2544 section 23)"] > summary').click()
    page.locator("#opt-learning").uncheck()
    if title is not None:
        page.fill("#opt-title", title)


def trial_rows(page, size):
    return page.locator("#trials tbody tr").filter(has=page.locator(f"td:nth-child(3):text-is('{size}')"))


def test_a_run_from_the_new_test_page_is_live_stops_resumes_and_refuses_a_second(browser, page, settings, tester):
    tester.gate_size = 128
    with serving(settings) as url:
        fill_plan(page, url, title="bench <b>one</b>")
        expect(page.locator("#estimate")).to_contain_text("Estimate: ")      # follows the form
        shot(page, "new-test")
        page.click("#start")
        page.wait_for_url(re.compile(r"/runs/[^/]+$"))
        run_id = page.url.rsplit("/", 1)[1]
        assert tester.entered.wait(WAIT_S)          # 64 B measured, a 128 B trial in progress
        measured = len((settings.data / "runs" / run_id / "trials.jsonl").read_text().splitlines())
        expect(trial_rows(page, 64)).to_have_count(measured)      # arrived while the run goes on
        expect(page.locator("#progress-text")).to_contain_text(f"{measured} of about")
        assert page.locator("#status").text_content() == "running"
        assert page.locator("#heading").text_content() == "bench <b>one</b>"
        shot(page, "live-run")

        second = browser.new_page()
        fill_plan(second, url)
        second.click("#start")
        second.locator("#error").filter(has_text="409").or_(second.locator("#error").filter(
            has_text=f"the tester is running run {run_id}")).wait_for()
        assert second.locator("#error a").get_attribute("href") == f"/runs/{run_id}"
        second.close()

        page.click("#stop")
        tester.release.set()
        page.locator("#status").filter(has_text="interrupted").wait_for()
        kept = trial_rows(page, 64).count()
        assert kept > 1 and page.locator("#resume").is_visible() and not page.locator("#stop").is_visible()
        page.reload()                                # a finished run's trials come from its files
        page.locator("#status").filter(has_text="interrupted").wait_for()
        expect(trial_rows(page, 64)).to_have_count(kept)

        page.click("#resume")
        page.locator("#status").filter(has_text="complete").wait_for()
        record = (settings.data / "runs" / run_id / "trials.jsonl").read_text().splitlines()
        expect(page.locator("#trials tbody tr")).to_have_count(len(record))
        expect(trial_rows(page, 64)).to_have_count(kept)
        assert trial_rows(page, 128).count() == len(record) - kept
        page.locator("#headline table").first.wait_for()
        assert page.locator("#files a", has_text="Throughput.csv").count() == 1


def test_a_profile_saved_in_the_page_loads_with_config_and_back(page, settings):
    with serving(settings) as url:
        fill_plan(page, url, sizes="64,1518", title="saved")
        page.fill("#profile-name", "lab-1")
        page.click("#save-profile")
        page.locator("#profile-status").filter(has_text="saved lab-1").wait_for()
        saved = settings.data / "profiles" / "lab-1.yaml"
        config = defaults_for("rfc2544", saved)
        assert config["sizes"] == [64, 1518] and config["title"] == "saved" and config["learning"] is False
        assert config["resolution"] == 10 and config["calibration"] == "none"

        (settings.data / "profiles" / "from-cli.toml").write_text(
            '[rfc2544]\ntests = ["throughput"]\nsizes = [128, 256]\ntrial-duration = "5ms"\nlearning = false\n')
        page.reload()
        page.select_option("#profile", "from-cli")
        page.click("#load-profile")
        page.locator("#profile-status").filter(has_text="loaded from-cli").wait_for()
        assert page.input_value("#opt-sizes") == "128,256" and page.input_value("#opt-trial-duration") == "5ms"
        assert not page.locator("#opt-learning").is_checked()


@pytest.mark.parametrize("field, value, words", [
    ("#opt-sizes", "64,x", "sizes"),
    ("#opt-resolution", "0", "resolution"),
])
def test_bad_values_are_refused_at_their_field(page, settings, field, value, words):
    with serving(settings) as url:
        fill_plan(page, url)
        page.fill(field, value)
        page.click("#start")
        box = page.locator(f'.field.invalid[data-key="{words}"] .field-error')
        box.wait_for()
        assert page.locator("#error").text_content().startswith(f"{words}: ")
        assert box.text_content() and box.text_content() in page.locator("#error").text_content()
        assert page.url.endswith("/new") and list((settings.data / "runs").iterdir()) == []


def test_markup_in_titles_and_profile_names_is_text(page, settings):
    script = "<img src=x onerror=window.hacked=1><script>window.hacked=1</script>"
    with serving(settings) as url:
        fill_plan(page, url, title=script)
        page.click("#start")
        page.wait_for_url(re.compile(r"/runs/[^/]+$"))
        page.locator("#status").filter(has_text="complete").wait_for()
        assert page.locator("#heading").text_content() == script
        page.goto(f"{url}/runs")
        page.locator("#runs tbody tr").first.wait_for()
        assert page.locator("#runs tbody a").first.text_content() == script
        assert page.locator("#runs img").count() == 0
        bad = page.request.put(f"{url}/api/profiles/{'%3Cb%3E'}", data={"values": {"sizes": "64"}})
        assert bad.status == 422
        assert page.evaluate("window.hacked") is None


def test_runs_page_lists_compares_and_deletes(page, settings):
    with serving(settings) as url:
        ids = []
        for title in ("first", "second"):
            fill_plan(page, url, title=title)
            page.click("#start")
            page.wait_for_url(re.compile(r"/runs/[^/]+$"))
            page.locator("#status").filter(has_text="complete").wait_for()
            ids.append(page.url.rsplit("/", 1)[1])
        page.goto(f"{url}/runs")
        rows = page.locator("#runs tbody tr")
        rows.nth(1).wait_for()
        assert [rows.nth(i).get_attribute("data-run") for i in range(2)] == ids[::-1]
        expect(page.locator(f'tr[data-run="{ids[0]}"] .headline')).to_contain_text("64")
        shot(page, "runs")
        assert page.locator("#compare").is_disabled()
        for run_id in ids:
            page.check(f'input[value="{run_id}"]')
        with page.expect_popup() as popup:
            page.click("#compare")
        compare = popup.value
        compare.wait_for_load_state()
        assert "/api/compare?runs=" in compare.url and all(run_id in compare.url for run_id in ids)
        body = compare.locator("body").text_content()
        assert compare.locator("h1").text_content().startswith("Comparison: ") and all(i in body for i in ids)
        compare.close()

        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click(f'tr[data-run="{ids[0]}"] .delete')
        assert (settings.data / "runs" / ids[0]).is_dir()
        page.once("dialog", lambda dialog: dialog.accept())
        page.click(f'tr[data-run="{ids[0]}"] .delete')
        page.locator(f'tr[data-run="{ids[0]}"]').wait_for(state="detached")
        assert not (settings.data / "runs" / ids[0]).exists() and (settings.data / "runs" / ids[1]).is_dir()


def test_the_tester_page_and_the_api_page_work_offline(page, settings):
    with serving(settings) as url:
        page.goto(url)
        page.locator("#tester dd").first.wait_for()
        assert TARGET in page.locator("#tester").text_content()
        page.click("#identify")
        page.locator("#tester dd", has_text="0x2").wait_for()     # the fake board's register map hash
        shot(page, "tester")
        page.goto(f"{url}/docs")
        page.locator(".swagger-ui .opblock").first.wait_for()
        for path in ("/", "/new", "/runs", "/runs/x", "/docs"):
            html = page.request.get(f"{url}{path}").text()
            assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), path


def test_pages_need_the_token_and_keep_it_in_a_session(browser, settings):
    settings.token = "s3cret"
    with serving(settings) as url:
        page = browser.new_page()
        response = page.goto(f"{url}/runs")
        assert response.status == 401 and page.locator("input[name=token]").count() == 1
        page.fill("input[name=token]", "wrong")
        page.press("input[name=token]", "Enter")
        page.wait_for_load_state()
        assert "not the server's token" in page.locator("#login-message").text_content()
        assert page.request.get(f"{url}/api/runs").status == 401
        page.goto(f"{url}/runs")
        page.fill("input[name=token]", "s3cret")
        page.press("input[name=token]", "Enter")
        page.wait_for_url(f"{url}/runs")             # the token left the address for a cookie
        page.locator("#no-runs").wait_for()
        assert page.request.get(f"{url}/api/runs").status == 200
        cookie = next(c for c in page.context.cookies() if c["name"] == "wirespeed_token")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        page.close()


def test_a_run_left_running_by_a_dead_server_shows_interrupted_and_resumes(page, settings):
    with serving(settings) as url:
        fill_plan(page, url)
        page.click("#start")
        page.wait_for_url(re.compile(r"/runs/[^/]+$"))
        page.locator("#status").filter(has_text="complete").wait_for()
        run_id = page.url.rsplit("/", 1)[1]
    # what a server killed mid-run leaves: results.json says running, and nobody holds its lock
    results = settings.data / "runs" / run_id / "results.json"
    record = json.loads(results.read_text())
    record["status"] = "running"
    record["tests"][0]["results"] = record["tests"][0]["results"][:1]
    results.write_text(json.dumps(record))
    with serving(settings) as url:
        page.goto(f"{url}/runs")
        expect(page.locator(f'tr[data-run="{run_id}"] .status')).to_have_text("interrupted")
        page.click(f'tr[data-run="{run_id}"] a[href="/runs/{run_id}"]')
        page.locator("#resume").click()
        page.locator("#status").filter(has_text="complete").wait_for()
