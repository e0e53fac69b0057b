"""The explorer at a sweep's scale, in headless Chromium from disk with the network off, on a 42-cell
synthetic sweep (2 models × 21 retrieval settings on Ade-corpus-v2, 40 instances; `tests.support.
explorer_sweep`: real configs, cell ids, row and attribution files, answers drawn from a seeded generator),
built once for the module:

- an instance's 42 cells as a table with their axes; sorted by verdict; grouped by testbed with identical
  answers folded; a copied URL reopens the same filtered, chosen, grouped view;
- the matrix: which instances each model gets wrong under 100% counterfactual evidence, its counts equal
  to the attribution files';
- the pinned baseline: on a filtered subset, n, Δ accuracy, its paired bootstrap CI and McNemar's p equal
  `biorab.explorer.compare` on the same subset, computed here from the attribution files.

Screenshots are kept (``$BIORAB_SCREENSHOT_DIR``, else the test's tmp dir; docs/img/ has the ones of
docs/explorer.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from biorab.explorer import write_explorer
from biorab.explorer.attribution_file import read_attribution
from biorab.explorer.compare import paired_accuracy
from tests.support.browser import browser_page, require_chromium, screenshot_dir
from tests.support.explorer_sweep import SETTINGS_42, write_sweep

pytestmark = pytest.mark.slow
MODELS = {"credulous": (0.6, 0.9), "sceptic": (0.7, 0.3)}  # (skill, credulity)
N = 40


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sweep(tmp_path_factory.mktemp("views"), models=MODELS, datasets={"ade_corpus_v2": N},
                       settings=SETTINGS_42, seed=3)


@pytest.fixture(scope="module")
def index(sweep: Path) -> Path:
    built = write_explorer(sweep)
    assert (built.cells, built.rows, built.instances, built.attributed_cells) == (42, 42 * N, N, 42)
    return built.index_html


@pytest.fixture()
def visit(index: Path) -> Iterator[Any]:
    require_chromium()
    with browser_page(allow=("file://",)) as v:
        yield v
        assert v.errors == [] and v.dialogs == []
    assert [u for u in v.blocked if not u.startswith("file:")] == []


def _cells(sweep: Path) -> list[dict[str, Any]]:
    """Every cell with its run, id, retrieval setting (the one of `SETTINGS_42` its id names) and
    attribution."""
    out = []
    for run in sorted(p for p in sweep.iterdir() if (p / "summary.json").is_file()):
        for cell_dir in sorted((run / "cells").iterdir()):
            [setting] = [s for s in SETTINGS_42 if _label_of(s) in cell_dir.name]
            out.append({"run": run.name, "cell_id": cell_dir.name, "setting": setting,
                        "attribution": read_attribution(cell_dir)})
    return out


def _label_of(s: dict[str, Any]) -> str:
    """The retrieval part of a cell id, written out by hand from the setting (e.g. ``__counterfactual-1-
    bm25-k1__``), to tell the cells apart independently of the explorer's axes."""
    if s["testbed"] == "none":
        return "__none__"
    rate = f"-{s['rate']:g}" if s.get("rate") is not None else ""
    method = f"-{s['method']}" if s.get("method", "none") != "none" else ""
    template = f"__{s['template']}" if s.get("template", "default") != "default" else ""
    return f"__{s['testbed']}{rate}-{s['retriever']}-k{s['k']}{method}{template}__"


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)


def test_instance_table_sorted_grouped_and_reopened_from_its_url(index: Path, sweep: Path,
                                                                  visit: Any) -> None:
    page, shots = visit.page, screenshot_dir(sweep.parent)
    _open(page, index.as_uri())
    # the list draws the items in view only; scrolled to its end, the last instance is drawn
    drawn = page.locator("li.instance").count()
    assert 0 < drawn < N, drawn
    page.eval_on_selector("#list-scroll", "box => { box.scrollTop = box.scrollHeight; }")
    page.wait_for_selector(f"li.instance a.open:text-is('ade_corpus_v2/test/{N - 1}')", timeout=10_000)
    page.eval_on_selector("#list-scroll", "box => { box.scrollTop = 0; }")
    page.wait_for_selector("li.instance a.open:text-is('ade_corpus_v2/test/0')", timeout=10_000)
    page.locator("li.instance a.open").nth(5).click()
    page.wait_for_selector("table.cells", timeout=30_000)
    rows = page.locator("table.cells tr.cell-row")
    assert rows.count() == 42  # one row per cell: more than a handful, so a table, not side by side
    assert page.locator(".cell-column").count() == 0
    heads = page.locator("table.cells th").all_text_contents()
    assert heads[:8] == ["model", "slice", "testbed", "rate", "retriever", "k", "method", "template"], heads
    # the axes come from each run's config: the model column holds the two runs, k and rate their values
    column = {h: i for i, h in enumerate(heads)}
    table = [r.locator("td").all_text_contents() for r in rows.all()]
    assert sorted({r[column["model"]] for r in table}) == sorted(MODELS)
    expected_axes = sorted((c["run"], c["setting"]["testbed"], str(c["setting"].get("k", "—")),
                            f"{c['setting']['rate']:g}" if "rate" in c["setting"] else "—")
                           for c in _cells(sweep))
    assert sorted((r[column["model"]], r[column["testbed"]], r[column["k"]], r[column["rate"]])
                  for r in table) == expected_axes

    # sort by verdict: the column reads in order; again: descending
    page.click("table.cells th[data-key=verdict]")
    verdicts = page.locator("table.cells td.c-verdict").all_text_contents()
    assert verdicts == sorted(verdicts) and len(set(verdicts)) >= 2, verdicts
    page.click("table.cells th[data-key=verdict]")
    assert page.locator("table.cells td.c-verdict").all_text_contents() == sorted(verdicts, reverse=True)
    page.click("table.cells th[data-key=verdict]")

    # group by testbed: one header per testbed with its cell count; identical answers folded with a count
    page.select_option("#group", "testbed")
    groups = page.locator("table.cells tr.group").all_text_contents()
    per_testbed: dict[str, int] = {}
    for c in _cells(sweep):
        per_testbed[c["setting"]["testbed"]] = per_testbed.get(c["setting"]["testbed"], 0) + 1
    assert [g.split(" · ")[:2] for g in groups] == [[f"testbed = {t}", f"{n} cell{'s' * (n > 1)}"]
                                                    for t, n in sorted(per_testbed.items())], groups
    folded = sum(int(f.get_attribute("data-count")) for f in page.locator("table.cells tr.fold").all())
    assert folded + page.locator("table.cells tr.cell-row").count() == 42 and folded > 0
    before = page.locator("table.cells tr.cell-row").count()
    fold = page.locator("table.cells tr.fold").first
    members = int(fold.get_attribute("data-count"))
    fold.click()  # unfolds into its rows
    assert page.locator("table.cells tr.cell-row").count() == before + members
    page.locator("table.cells tr.cell-row").first.click()  # a row expands into the cell's card
    assert page.locator("table.cells tr.card-row .cell-column .evidence").count() == 1
    page.screenshot(path=str(shots / "explorer-instance-table.png"), full_page=True)

    # a filtered, chosen, grouped view: its URL reopens it exactly in a fresh page
    page.click("#back")
    page.check("input[name=misled]")
    page.uncheck("#axes input[data-axis=model][value=sceptic]")
    counts = page.text_content("#counts")
    listed = page.locator("li.instance a.open").all_text_contents()
    page.locator("li.instance a.open").first.click()
    page.wait_for_selector("table.cells", timeout=30_000)
    shown = page.locator("table.cells").inner_text()
    url = page.url
    assert "group=testbed" in url and "f.misled=1" in url and "a.model=credulous" in url, url
    other = page.context.new_page()
    _open(other, url)
    other.wait_for_selector("table.cells", timeout=30_000)
    assert other.locator("table.cells").inner_text() == shown
    assert other.eval_on_selector("#group", "s => s.value") == "testbed"
    other.click("#back")
    other.wait_for_selector("#list-view:not([hidden])")
    assert other.text_content("#counts") == counts
    assert other.locator("li.instance a.open").all_text_contents() == listed
    assert other.is_checked("input[name=misled]") and not other.is_checked("#axes input[value=sceptic]")


def test_matrix_marks_what_each_model_gets_wrong_under_counterfactual_evidence(index: Path, sweep: Path,
                                                                               visit: Any) -> None:
    page, shots = visit.page, screenshot_dir(sweep.parent)
    # 100% counterfactual, BM25, k=1: one cell per model, one column per model
    chosen = "&".join(["a.testbed=counterfactual", "a.rate=1", "a.retriever=bm25", "a.k=1", "a.method=none"])
    _open(page, index.as_uri() + "#v=matrix&mx=model&" + chosen)
    page.wait_for_selector("#matrix-grid .mrow[data-instance]", timeout=30_000)
    assert page.text_content("#chosen") == "2 of 42 cells chosen"
    cells = [c for c in _cells(sweep) if c["setting"] == {"testbed": "counterfactual", "rate": 1.0,
                                                           "retriever": "bm25", "k": 1}]
    assert len(cells) == 2
    columns = page.locator("table.matrix-counts tbody tr")
    assert columns.count() == 2
    for k, cell in enumerate(sorted(cells, key=lambda c: c["run"])):
        row = columns.nth(k)
        a = cell["attribution"].values()
        assert row.locator("td").nth(1).text_content() == f"model = {cell['run']}"
        assert int(row.get_attribute("data-wrong")) == sum(x["correct"] is False for x in a)
        assert int(row.get_attribute("data-misled")) == sum(bool(x["followed_corruption"]) for x in a)
        assert int(row.get_attribute("data-right")) == sum(x["correct"] is True for x in a)
    # the glyphs of one instance are its cells' verdicts
    first = page.locator("#matrix-grid .mrow[data-instance]").first
    instance = first.locator("a.open").text_content()
    glyphs = first.locator("span.g").all_text_contents()
    for glyph, cell in zip(glyphs, sorted(cells, key=lambda c: c["run"]), strict=True):
        x = cell["attribution"][instance]
        assert glyph == ("!" if x["followed_corruption"] else "✓" if x["correct"] else
                         "?" if x["parse_failed"] else "✗" if x["correct"] is False else "–"), (glyph, x)
    page.screenshot(path=str(shots / "explorer-matrix.png"))

    # every counterfactual cell as a column, only the instances with a wrong row listed
    page.select_option("#matrix-axis", "")
    page.select_option("select[name=verdict]", "2")
    for box in ("rate", "retriever", "k"):
        for v in page.locator(f"#axes input[data-axis={box}]").all():
            v.check()
    counterfactual = [c for c in _cells(sweep) if c["setting"]["testbed"] == "counterfactual"
                      and c["setting"].get("method", "none") == "none"]
    assert page.text_content("#chosen") == f"{len(counterfactual)} of 42 cells chosen"
    wrong_ids = {i for c in counterfactual for i, x in c["attribution"].items() if x["correct"] is False}
    assert page.text_content("#counts").startswith(f"{len(wrong_ids)} instances")
    by_cell = {r.get_attribute("data-cells"): r for r in page.locator("table.matrix-counts tbody tr").all()}
    assert len(by_cell) == len(counterfactual)
    ids = page.evaluate("() => Array.from(document.querySelectorAll('#baseline option')).map(o => o.text)")
    for cell in counterfactual:
        number = ids.index(f"{cell['run']} · {_summary_label(sweep, cell)}") - 1
        row = by_cell[str(number)]
        listed = [x for i, x in cell["attribution"].items() if i in wrong_ids]
        assert int(row.get_attribute("data-wrong")) == sum(x["correct"] is False for x in listed)
        assert int(row.get_attribute("data-misled")) == sum(bool(x["followed_corruption"]) for x in listed)
    # the matrix draws the rows in view only, and a click opens the instance
    assert page.locator("#matrix-grid .mrow").count() <= len(wrong_ids)
    page.locator("#matrix-grid .mrow[data-instance] a.open").first.click()
    page.wait_for_selector("table.cells", timeout=30_000)
    assert page.locator("table.cells tr.cell-row").count() == len(counterfactual)


def _summary_label(sweep: Path, cell: dict[str, Any]) -> str:
    import json

    summary = json.loads((sweep / cell["run"] / "summary.json").read_text(encoding="utf-8"))
    return next(c["cell"] for c in summary["cells"] if c["cell_id"] == cell["cell_id"])


def test_baseline_statistics_on_the_filtered_subset_equal_python(index: Path, sweep: Path,
                                                                  visit: Any) -> None:
    page, shots = visit.page, screenshot_dir(sweep.parent)
    cells = _cells(sweep)
    base = next(c for c in cells if c["run"] == "sceptic" and c["setting"]["testbed"] == "none")
    _open(page, index.as_uri())
    page.select_option("#baseline", label=f"sceptic · {_summary_label(sweep, base)}")
    # the chosen cells: the credulous model's at 20% corruption; the listed instances: those whose
    # evidence holds a corrupted item in one of them
    page.uncheck("#axes input[data-axis=model][value=sceptic]")
    for rate in page.locator("#axes input[data-axis=rate]").all():
        if rate.get_attribute("value") != "0.2":
            rate.uncheck()
    page.check("input[name=corrupted]")
    page.wait_for_selector("#baseline-panel:not([data-done='0'])", timeout=60_000)
    chosen = [c for c in cells if c["run"] == "credulous" and c["setting"].get("rate") == 0.2]
    assert len(chosen) == 4
    subset = {i for c in chosen for i, x in c["attribution"].items() if x["has_corrupted"]}
    assert 0 < len(subset) < N
    assert page.text_content("#counts").startswith(f"{len(subset)} instances")
    rows = {r.get_attribute("data-cell-id"): r for r in page.locator("tr.baseline-row").all()}
    assert set(rows) == {c["cell_id"] for c in chosen}
    b = base["attribution"]
    for cell in chosen:
        pairs = sorted(i for i in subset if i in cell["attribution"] and i in b)
        want = paired_accuracy([b[i]["correct"] is True for i in pairs],
                               [cell["attribution"][i]["correct"] is True for i in pairs])
        row = rows[cell["cell_id"]]
        got = {k: row.get_attribute(f"data-{k}")
               for k in ("n", "gained", "lost", "delta", "low", "high", "p")}
        assert (int(got["n"]), int(got["gained"]), int(got["lost"])) == (want.n, want.gained, want.lost)
        assert float(got["delta"]) == want.delta
        assert (float(got["low"]), float(got["high"])) == (want.ci_low, want.ci_high), (cell["cell_id"], got)
        assert math.isclose(float(got["p"]), want.mcnemar_p, rel_tol=1e-9), (got["p"], want.mcnemar_p)
    page.screenshot(path=str(shots / "explorer-baseline.png"))
    # the page's functions on a grid, both McNemar branches (exact below 25 discordant pairs, chi-square)
    grid = [(n, g, lost) for n in (1, 7, 60, 400) for g in (0, 1, 5, 13, 40) for lost in (0, 2, 11, 30)
            if g + lost <= n]
    page_values = page.evaluate("""grid => grid.map(([n, g, l]) => [window.BIORAB_STATS.mcnemarP(l, g),
        window.BIORAB_STATS.bootstrapDelta(n, g, l)])""", grid)
    for (n, g, lost), (p, (low, high)) in zip(grid, page_values, strict=True):
        want = paired_accuracy([True] * lost + [False] * g + [False] * (n - g - lost),
                               [False] * lost + [True] * g + [False] * (n - g - lost))
        assert math.isclose(p, want.mcnemar_p, rel_tol=1e-9), (n, g, lost, p, want.mcnemar_p)
        assert (low, high) == (want.ci_low, want.ci_high), (n, g, lost)
    # per instance: each chosen cell gained or lost against the baseline
    page.locator("li.instance a.open").first.click()
    page.wait_for_selector(".cell-column", timeout=30_000)  # 4 cells: side by side, unless asked for a table
    page.click("#as-table")
    page.wait_for_selector("table.cells", timeout=30_000)
    assert page.locator("table.cells tr.cell-row").count() == 4
    instance = page.text_content("#instance-head h2")
    for row in page.locator("table.cells tr.cell-row").all():
        cell = next(c for c in chosen if c["cell_id"] == row.get_attribute("data-cell-id"))
        x, y = b[instance]["correct"] is True, cell["attribution"][instance]["correct"] is True
        assert row.locator("td.c-versus").text_content() == ("gained" if y and not x else
                                                             "lost" if x and not y else "same")
