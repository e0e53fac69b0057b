"""`.ci/run` exports ``CI=1``, and under it a browser test without Chromium fails instead of skipping
(`tests/support/browser.require_chromium`); outside CI it skips."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import browser

REPO = Path(__file__).resolve().parents[2]


def test_ci_run_exports_ci_before_the_tests() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    exported = re.search(r"^export CI=1$", script, flags=re.M)
    assert exported is not None and exported.start() < script.rindex("\nmake test")


def test_missing_chromium_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "chromium_binary", lambda: None)
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="no chromium on PATH"):
        browser.require_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        browser.require_chromium()
