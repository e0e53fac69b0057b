"""The explorer as a person uses it, in headless Chromium from disk with the network off: `biorab sweep` of
two fake models on Ade-corpus-v2 without retrieval and with a 100% counterfactual BM25 corpus (4 cells),
`biorab explore` of the sweep folder, then filter "misled", open an instance and see its four cells side by
side. One generation holds ``<script>`` and an ``<img onerror>``: it must show as text and run nothing.
Screenshots are kept (``$BIORAB_SCREENSHOT_DIR``, else the test's tmp dir; docs/img/ has the ones of
docs/explorer.md).

Evidence attribution (``attribution.parquet`` per cell) is the one the run wrote at scoring time
(`biorab.attribution`); the expected counts come from those files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.explorer.attribution_file import read_attribution
from biorab.runner.store.shards import latest_rows, read_all_rows
from tests.support.browser import browser_page, require_chromium, screenshot_dir
from tests.support.cli_runs import biorab

pytestmark = pytest.mark.slow
N = 8
PLANTED_ID = "ade_corpus_v2/test/3"
PLANTED = "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2;alert(2)> 1"


def _sweep(tmp_path: Path, data_dir: Path) -> Path:
    sweep = {
        "name": "explore", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {
            "says_one": {"backend": "fake", "params": {"mode": "map", "answer": "1",
                                                       "answers": {PLANTED_ID: PLANTED}}},
            "says_zero": {"backend": "fake", "params": {"mode": "fixed", "answer": "0"}},
        },
        "matrix": [{"models": ["says_one", "says_zero"], "datasets": [{"name": "ade_corpus_v2", "limit": N}],
                    "retrievers": ["none", "bm25"], "testbeds": ["counterfactual"], "rates": [1.0]}],
        "sampling": {"max_tokens": 16, "temperature": 0.0, "seed": 0},
        "n_boot": 20,
        "resources": {"num_cpus": 2, "retrieval": {"pool_size": 1, "num_cpus": 0.25, "batch_size": 8},
                      "llm": {"pool_size": 1, "num_cpus": 1.0, "batch_size": 8}},
        "tracking": {"enabled": False},
    }
    path = tmp_path / "explore.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def _expected(sweep_dir: Path) -> tuple[int, set[str], dict[str, Any]]:
    """Rows followed a corruption, the instances holding one, and the planted row per run."""
    misled, ids, planted = 0, set(), {}
    for run in sorted(p.parent for p in sweep_dir.glob("*/summary.json")):
        for cell_dir in sorted((run / "cells").iterdir()):
            attribution = read_attribution(cell_dir)
            assert attribution is not None
            for rid, a in attribution.items():
                if a["followed_corruption"]:
                    misled += 1
                    ids.add(rid)
            planted[run.name] = planted.get(run.name) or latest_rows(read_all_rows(cell_dir)).get(PLANTED_ID)
    return misled, ids, planted


def test_filter_misled_and_open_every_cell_side_by_side(tmp_path: Path, data_dir: Path) -> None:
    require_chromium()
    cache = tmp_path / "cache"
    out = biorab("sweep", str(_sweep(tmp_path, data_dir)), "--no-ray", cache=cache, timeout=600)
    assert out.returncode == 0, out.stderr
    sweep_dir = tmp_path / "runs" / "explore"
    misled, misled_ids, planted = _expected(sweep_dir)
    assert misled > 0 and PLANTED in planted["says_one"]["gen_text"]

    built = biorab("explore", str(sweep_dir), "--no-track", cache=cache)
    assert built.returncode == 0, built.stderr
    index = Path(built.stdout.strip().splitlines()[-1])
    assert index == sweep_dir / "explorer" / "index.html" and index.is_file()
    assert "4 cells (4 with evidence attribution)" in built.stderr

    shots = screenshot_dir(tmp_path)
    with browser_page(allow=("file://",)) as visit:
        page = visit.page
        page.goto(index.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        everything = f"{N} instances, {4 * N} rows (instance × cell) match (no filter)"
        assert page.text_content("#counts") == everything
        assert page.locator("li.instance").count() == N
        assert page.is_hidden("#note")  # every cell has its attribution

        page.check("input[name=misled]")
        counts = page.text_content("#counts")
        assert counts == f"{len(misled_ids)} instances, {misled} rows (instance × cell) match", counts
        listed = page.locator("li.instance a.open").all_text_contents()
        assert set(listed) == misled_ids
        # the other filters count what a click would give under "misled"
        assert page.locator("select[name=verdict] option", has_text="right").text_content() == "right (0)"
        # a misled answer is a wrong one: all the misled rows, and no other, are "wrong" under the filter
        wrong = page.locator("select[name=verdict] option", has_text="wrong").text_content()
        assert wrong == f"wrong ({misled})", wrong
        page.screenshot(path=str(shots / "explorer-list.png"))

        page.locator("li.instance a.open").first.click()
        page.wait_for_selector(".cell-column", timeout=30_000)
        columns = page.locator(".cell-column")
        assert columns.count() == 4  # every cell of the instance: 2 models × (no retrieval, counterfactual)
        labels = columns.locator("h3").all_text_contents()
        cells = ("none__noexample", "counterfactual-1-bm25-k1__bm25")
        assert sorted(labels) == sorted(f"{m} · ade_corpus_v2-test__{c}" for m in ("says_one", "says_zero")
                                        for c in cells), labels
        matching = page.locator(".cell-column.match")
        assert matching.count() >= 1 and matching.locator(".badge.misled").count() == matching.count()
        corrupted = page.locator(".cell-column.match .tag.corrupted").first.text_content() or ""
        assert re.fullmatch(r"corrupted \(label\): [01] → [01]", corrupted), corrupted
        assert page.locator(".cell-column.match .field.answer .value").first.text_content() in ("0", "1")
        page.screenshot(path=str(shots / "explorer-instance.png"), full_page=True)

        # the planted generation: shown as text, nothing run, no image element made
        page.goto(index.as_uri() + "#i=" + str(_instance_number(page, PLANTED_ID)))
        page.wait_for_selector(".cell-column", timeout=30_000)
        shown = page.locator(".cell-column .generation pre").all_text_contents()
        assert PLANTED in shown, shown
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#columns img").count() == 0

        # the matrix of the counterfactual cells, one column per model: its counts are the files'
        page.goto(index.as_uri() + "#v=matrix&a.testbed=counterfactual&mx=model")
        page.wait_for_selector("#matrix-grid .mrow[data-instance]", timeout=30_000)
        for row in page.locator("table.matrix-counts tbody tr").all():
            model = (row.locator("td").nth(1).text_content() or "").removeprefix("model = ")
            [cell_dir] = [d for d in (sweep_dir / model / "cells").iterdir() if "__counterfactual" in d.name]
            a = (read_attribution(cell_dir) or {}).values()
            assert int(row.get_attribute("data-wrong")) == sum(x["correct"] is False for x in a)
            assert int(row.get_attribute("data-misled")) == sum(bool(x["followed_corruption"]) for x in a)
        assert page.locator("table.matrix-counts tbody tr").count() == 2
        assert visit.dialogs == [] and visit.errors == []
    assert [u for u in visit.blocked if not u.startswith("file:")] == []


def _instance_number(page: Any, instance_id: str) -> int:
    page.goto(page.url.split("#")[0])
    page.wait_for_selector("body[data-ready='1']")
    link = page.locator("li.instance a.open", has_text=instance_id)
    return int(link.get_attribute("href").split("=")[1])
