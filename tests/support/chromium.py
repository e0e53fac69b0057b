"""Headless Chromium driven over the Chrome DevTools protocol: open a page, wait for rendered text, read the
DOM text, take a screenshot. For the browser tests of JS apps (the MLflow UI), which render nothing
without running their scripts.

Chromium comes from the system's packages (Debian `chromium`; `.ci/run` installs it when missing); the
protocol client is `websockets` (sync API). The browser listens on a loopback port that it picks itself
(``--remote-debugging-port=0``; the port is read from ``DevToolsActivePort`` in its profile folder), runs
in its own process group, and that group is killed on exit.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0")


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless browser with one page (``with Chromium() as page: page.open(url)``)."""

    def __init__(self, *, width: int = 1400, height: int = 900, start_timeout: float = 60.0) -> None:
        self.width, self.height, self.start_timeout = width, height, start_timeout
        self.profile = Path(tempfile.mkdtemp(prefix="biorab-chromium-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.ws: Any = None
        self._ids = itertools.count(1)

    def __enter__(self) -> Chromium:
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("no chromium on PATH: `apt-get install -y chromium` (.ci/run does this)")
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={self.width},{self.height}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            self._connect()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _connect(self) -> None:
        from websockets.sync.client import connect

        port = self._port()
        deadline = time.monotonic() + self.start_timeout
        while True:  # the first page target appears a moment after the port
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if not pages:
            raise RuntimeError("chromium started but shows no page target")
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)

    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited at start (code {self.proc.returncode})")
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            time.sleep(0.1)
        raise RuntimeError(f"chromium did not open its debugging port within {self.start_timeout:.0f} s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One protocol command; events that arrive before its answer are skipped."""
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def text(self) -> str:
        """The rendered text of the page (what a person reads)."""
        return str(self.evaluate("document.body ? document.body.innerText : ''") or "")

    def wait_for_text(self, needles: Iterable[str], *, timeout: float = 60.0) -> str:
        """Poll the page's text until it contains every needle; returns it (raises with what was shown)."""
        wanted = list(needles)
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.text()
            if all(n in text for n in wanted):
                return text
            time.sleep(0.5)
        missing = [n for n in wanted if n not in text]
        raise AssertionError(f"page never showed {missing} within {timeout:.0f} s; it showed:\n{text[:3000]}")

    def wait_for(self, expression: str, *, timeout: float = 60.0) -> Any:
        """Poll a page expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"{expression!r} stayed false for {timeout:.0f} s; the page showed:\n"
                             f"{self.text()[:3000]}")

    def click_text(self, label: str) -> bool:
        """Click the innermost visible element whose own text is `label`; False when there is none."""
        script = ("(() => { const want = %s; const els = [...document.querySelectorAll('body *')]"
                  ".filter(e => e.offsetParent !== null && e.innerText && e.innerText.trim() === want);"
                  " const el = els[els.length - 1]; if (!el) return false; el.click(); return true; })()")
        return bool(self.evaluate(script % json.dumps(label)))

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(OSError):
                self.ws.close()
            self.ws = None
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
