"""A thinking model that names the lie (issue 43 item 5c): the copying fake (k = 1: it answers its one hit,
so it follows every misleading hit, misled_rate exactly 1) with reasoning that quotes its answer names the
corruption on every misleading instance; the same fake reasoning without the label names it on none; a
reply without reasoning leaves the columns null and the rates absent. The per-row flags are recomputed here
from the rows, their reasoning text and the ledger file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from biorab.attribution.cell_attribution import ATTRIBUTION_FILE
from biorab.runner import run_experiment
from tests.integration.test_run_attribution import _flags, _items, _ledger
from tests.support.attribution_runs import COPY_TOP, attribution_config


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def _quotes(reasoning: str, changed: set[str]) -> bool:
    """Written out here: some changed item's parts each occur in the lower-cased, space-collapsed reasoning
    as whole words."""
    text = " ".join(reasoning.lower().split())
    return any(all(re.search(r"(?<!\w)" + re.escape(" ".join(p.lower().split())) + r"(?!\w)", text)
                   for p in item.split("|")) for item in changed)


def _run(tmp_path: Path, data_dir: Path, think: str | None, name: str) -> list[tuple[Any, list[Any], Any]]:
    backend = {**COPY_TOP, **({"think": think, "thinking": {"split": True}} if think else {})}
    result = run_experiment(attribution_config(tmp_path, data_dir, backend, name=name))
    summary = {c["cell_id"]: c for c in json.loads((result.run_dir / "summary.json").read_text())["cells"]}
    out = []
    for cell in (c for c in result.cells if c.plan.retrieves):
        rows = pq.read_table(cell.predictions_path).to_pylist()
        attribution = {r["id"]: r for r in pq.read_table(result.run_dir / "cells" / cell.plan.cell_id
                                                           / ATTRIBUTION_FILE).to_pylist()}
        ledger = _ledger(tmp_path / name, data_dir, cell.plan.dataset)
        for row in rows:
            f = _flags(row, row, ledger)
            a = attribution[row["id"]]
            if not think or not f["misleading"]:
                assert (a["reasoning_quotes_corruption"], a["named_lie_followed"]) == (None, None)
                continue
            hits = json.loads(row["hits"])
            gold = _items(row["task"], row["label"])
            bad = [h for h in hits if h["doc_id"] in ledger and h["value"] != ledger[h["doc_id"]]["original"]]
            changed = {i for h in bad for i in (_items(row["task"], h["value"])
                                 - _items(row["task"], ledger[h["doc_id"]]["original"]) - gold)}
            quoted = _quotes(row["gen_reasoning"], changed)
            assert (a["reasoning_quotes_corruption"], a["named_lie_followed"]) == \
                (quoted, quoted and f["followed"]), (row["id"], row["gen_reasoning"], changed)
        out.append((cell, rows, summary[cell.plan.cell_id]))
    return out


def test_reasoning_that_quotes_its_copied_label_names_every_lie(tmp_path: Path, data_dir: Path) -> None:
    cells = _run(tmp_path, data_dir, "the evidence says {answer}", "named")
    report = (tmp_path / "runs" / "named" / "report.md").read_text(encoding="utf-8")
    assert "| R | quoted corruption | named the lie and followed it |" in report
    assert len(cells) == 3 and all(c.extra["attribution"]["with_misleading"] for c, _, _ in cells)
    for cell, _, summary in cells:
        extra = cell.extra["attribution"]
        # k = 1: the answer is the one (misleading) hit's label and the reasoning quotes it: 1 of 1
        assert cell.metrics["misled_rate"]["value"] == 1.0
        assert cell.metrics["named_lie_followed_rate"]["value"] == 1.0
        assert cell.metrics["quoted_corruption_rate"]["value"] == 1.0
        assert extra["reasoning"] == {"misleading_with_reasoning": extra["with_misleading"],
                                      "quoted_corruption": extra["with_misleading"],
                                      "named_lie_followed": extra["with_misleading"]}
        assert summary["metrics"]["named_lie_followed_rate"]["value"] == 1.0
        m = cell.metrics["named_lie_followed_rate"]
        assert (f"| {cell.plan.label} | {extra['with_misleading']} | "
                f"1.000 [{cell.metrics['quoted_corruption_rate']['ci_low']:.3f}") in report
        assert f"| 1.000 [{m['ci_low']:.3f}, {m['ci_high']:.3f}] |" in report


def test_reasoning_without_the_label_names_none_and_no_reasoning_has_no_rate(tmp_path: Path,
                                                                             data_dir: Path) -> None:
    seen = 0
    for cell, _, _ in _run(tmp_path, data_dir, "unsure here", "silent"):
        if cell.extra["attribution"]["with_misleading"]:
            seen += 1
            assert cell.metrics["named_lie_followed_rate"]["value"] == 0.0
            assert cell.metrics["quoted_corruption_rate"]["value"] == 0.0
    assert seen == 3  # every dataset's cell has misleading instances at rate 0.8
    for cell, _, _ in _run(tmp_path, data_dir, None, "plain"):
        assert "named_lie_followed_rate" not in cell.metrics and "reasoning" not in cell.extra["attribution"]
