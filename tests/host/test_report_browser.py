"""report.html printed by a real headless Chromium on A4 and Letter: no table is wider than
the page's text column, so no column is cut at the right margin. Needs the system's Chromium
(Debian: apt-get install chromium; .ci/run installs it when it runs as root) and Playwright,
which drives it; skipped only when no Chromium is installed."""

import shutil

import pytest
from sixtests import write_six

from wirespeed.report import make_report

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")]

# the page's text column at 96 px per inch: the paper's width less the report's @page margins (12 mm a side)
PAPERS = {"A4": 210, "Letter": 215.9}
MARGINS_MM = 24

# every table against the element that holds it, and the widest element against the page
OVERFLOWS = """() => {
  const out = [];
  for (const t of document.querySelectorAll("table")) {
    const box = t.parentElement.getBoundingClientRect();
    const r = t.getBoundingClientRect();
    if (t.scrollWidth > t.parentElement.clientWidth + 1 || r.right > box.right + 1)
      out.push([t.closest("div,section,header")?.querySelector("h1,h2,h3")?.textContent, t.scrollWidth,
                t.parentElement.clientWidth]);
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    out.push(["page", document.documentElement.scrollWidth, window.innerWidth]);
  return out;
}"""


@pytest.fixture(scope="module")
def report_html(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    return make_report(write_six(base / "run"), base / "out").html


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_no_table_is_wider_than_the_page(report_html, paper):
    from playwright.sync_api import sync_playwright

    width = round((PAPERS[paper] - MARGINS_MM) / 25.4 * 96)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(report_html.as_uri())
            page.emulate_media(media="print")
            assert page.evaluate("document.querySelectorAll('table').length") > 20
            assert page.evaluate(OVERFLOWS) == []
            pdf = page.pdf(format=paper, print_background=True)
        finally:
            browser.close()
    assert pdf.startswith(b"%PDF-")
