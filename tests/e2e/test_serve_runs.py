"""``workbench serve`` in a real browser: Debian's chromium, driven by Playwright.

The tests that train (or build), split from tests/tui/test_serve.py, whose other tests do not.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.hub import closed_port
from tests.helpers.processes import train_steps, wait_until
from tests.helpers.runs import tiny_toml
from workbench.core.live.liveness import live_runs, run_liveness
from workbench.core.live.stop_request import request_stop, wait_until_ended

CHROMIUM = Path("/usr/bin/chromium")


def missing(what: str, fix: str) -> None:
    """Fail under CI, skip elsewhere (see the module docstring)."""
    if os.environ.get("CI"):
        pytest.fail(f"{what}, and CI must run this test: {fix}")
    pytest.skip(f"{what}: {fix}")


def tab_processes(output: Path) -> list[int]:
    """The pids of ``workbench tui`` processes serving tabs for ``output``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"tui" in argv and str(output).encode() in argv and b"-m" in argv:
            found.append(int(proc.name))
    return found


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def colours(png: bytes) -> int:
    """How many colours a screenshot has (a blank page has one or two)."""
    from PIL import Image

    return len(Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 20) or [])


def test_a_tab_paints_starts_a_run_and_closing_it_leaves_the_run_training(tmp_path: Path):
    if not CHROMIUM.is_file() or shutil.which("chromium") is None:
        missing("chromium is not installed", "apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed", "pip install -e '.[test]'")
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        missing("textual-serve is not installed", "pip install -e '.[web]'")
    (tmp_path / "tiny.toml").write_text(tiny_toml(), encoding="utf-8")
    output = tmp_path / "out"
    port = closed_port()
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--port", str(port), "--preset", "demo",
         "--config", "tiny.toml", "--epochs", "300", "--output-dir", str(output)],
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    requests: list[str] = []
    run = None
    try:
        wait_until(lambda: listening(port), "the server listening", 60)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("body.-first-byte", timeout=120_000)
            wait_until(lambda: len(tab_processes(output)) == 1, "the tab's app", 60)
            (tab,) = tab_processes(output)
            time.sleep(2)  # the first frame
            assert colours(page.screenshot()) > 4  # painted, not a blank page
            # Keys go to xterm.js's hidden text field, which must have the focus.
            page.wait_for_selector("textarea.xterm-helper-textarea", state="attached")
            page.click("textarea.xterm-helper-textarea", force=True)
            runs = output / "runs"
            deadline = time.monotonic() + 120
            while not (runs.is_dir() and any(runs.iterdir())):  # panes mount after frame 1
                assert time.monotonic() < deadline, "2 then s started no run"
                page.keyboard.press("2")
                time.sleep(0.5)
                page.keyboard.press("s")
                time.sleep(2)
            (run,) = runs.iterdir()
            wait_until(lambda: run_liveness(run).writing, "the run held", 60)
            record = run_liveness(run).record
            assert record is not None
            assert record.pid != tab  # a process of its own
            wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
            page.close()  # the tab goes: its app ends, the run goes on
            wait_until(lambda: tab not in tab_processes(output), "the tab's app ended", 30)
            steps = len(train_steps(run))
            wait_until(lambda: len(train_steps(run)) > steps, "steps after the tab closed")
            assert run_liveness(run).status == "running"
            again = browser.new_page(viewport={"width": 1200, "height": 800})
            again.goto(f"http://127.0.0.1:{port}/")
            again.wait_for_selector("body.-first-byte", timeout=120_000)
            wait_until(lambda: len(tab_processes(output)) == 1, "the new tab's app", 60)
            time.sleep(2)
            assert colours(again.screenshot()) > 4
            browser.close()
        hosts = {url.split("/")[2] for url in requests}
        assert hosts == {f"127.0.0.1:{port}"}  # nothing asked of another machine
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        for _, live in live_runs(output) if output.is_dir() else []:
            if live.record is not None:
                os.kill(live.record.pid, 9)
    if run is not None and run_liveness(run).live:
        request_stop(run, "a test")
        wait_until_ended(run, 60)
