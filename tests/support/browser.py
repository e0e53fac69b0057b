"""Headless Chromium driven by Playwright, for the browser tests of the explorer and of the MLflow UI.

The browser is the system's (Debian `chromium`, which `.ci/run` installs when missing), launched by its
path: Playwright downloads no browser. Every request whose URL starts with none of the allowed prefixes is
aborted and recorded, so a test runs with the network off and can check that its page asked for nothing
else."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The system Chromium's path; without one the test is skipped here and fails under CI."""
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on PATH: .ci/run must install it (apt-get install -y chromium)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    return binary


@dataclass
class Visit:
    """The open page, and what it tried and was refused, or reported, while the test ran."""

    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@contextmanager
def browser_page(*, allow: tuple[str, ...], width: int = 1500, height: int = 1000) -> Iterator[Visit]:
    """One page of a fresh headless Chromium; requests to URLs outside `allow` (prefixes) are aborted."""
    from playwright.sync_api import sync_playwright

    binary = require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=FLAGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            visit = Visit(page)

            def route(r: Any) -> None:
                if r.request.url.startswith(allow):
                    r.continue_()
                else:
                    visit.blocked.append(r.request.url)
                    r.abort()

            def dialog(d: Any) -> None:
                visit.dialogs.append(d.message)
                d.dismiss()

            context.route("**/*", route)
            page.on("pageerror", lambda e: visit.errors.append(str(e)))
            page.on("dialog", dialog)
            yield visit
        finally:
            browser.close()


def screenshot_dir(tmp_path: Path) -> Path:
    """Where a browser test keeps its screenshots: ``$BIORAB_SCREENSHOT_DIR``, else the test's tmp dir."""
    return Path(os.environ.get("BIORAB_SCREENSHOT_DIR") or tmp_path / "screenshots")


def wait_for_text(page: Any, needles: list[str], *, timeout: float = 60.0) -> str:
    """Wait until the page's rendered text holds every needle; returns that text (on a timeout the error
    names what was missing and shows the page's text)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("(needles) => document.body && needles.every(n => "
                               "document.body.innerText.includes(n))", arg=needles, timeout=timeout * 1000)
    except PlaywrightTimeout:
        text = str(page.evaluate("document.body ? document.body.innerText : ''"))
        missing = [n for n in needles if n not in text]
        raise AssertionError(f"page never showed {missing} within {timeout:.0f} s; it showed:\n"
                             f"{text[:3000]}") from None
    return str(page.evaluate("document.body.innerText"))
