"""What the browser tests share: the system's Chromium (None without one; .ci/run installs it
as root on Debian), a ``wirespeed serve`` application served in a thread, and a browser
page that fails its test on a script error or a request to any other address."""

import contextlib
import shutil
import socket
import threading
import time

import uvicorn

from wirespeed.serve.api import create_app

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
NO_CHROMIUM = "no Chromium installed (apt-get install chromium)"


@contextlib.contextmanager
def serving(settings, start_s=60):
    """The server of ``settings`` on a free loopback port, in a thread; yields its address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(start_s)


@contextlib.contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def checked_page(browser, timeout_ms):
    """A page of its own context; on leaving, no script error and no request off loopback."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors, outside = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda r: None if r.url.startswith("http://127.0.0.1:") else outside.append(r.url))
    page.set_default_timeout(timeout_ms)
    try:
        yield page
    finally:
        context.close()
    assert errors == [] and outside == []
