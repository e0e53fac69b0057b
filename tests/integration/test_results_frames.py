"""`biorab.results` on a folder of two fake-backend runs (a sweep's layout: runs one level down): a "base"
model that copies the top hit (so it follows corruptions) and a "tuned" one that answers the gold. Every
frame is checked against the files read here directly (summary.json, the predictions and attribution
Parquet files), the per-instance claim diagnostics against a recomputation from the rows' hits (single
label, written out here) and against the cell means in summary.json, and `compare` against the attribution
verdicts and scipy's exact binomial test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from scipy.stats import binomtest

from biorab.results import open_results
from biorab.runner import run_experiment
from tests.support.attribution_runs import COPY_TOP, attribution_config, gold_answers


@pytest.fixture
def folder(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    run_experiment(attribution_config(tmp_path, data_dir, COPY_TOP, name="base"))
    run_experiment(attribution_config(tmp_path, data_dir, {"mode": "map", "answers": gold_answers(data_dir)},
                                      name="tuned"))
    return tmp_path / "runs"


def _summary(folder: Path) -> dict[str, dict[str, Any]]:
    return {f"{run}/{c['cell_id']}": c for run in ("base", "tuned")
            for c in json.loads((folder / run / "summary.json").read_text(encoding="utf-8"))["cells"]}


def _parquet(folder: Path, key: str, name: str) -> dict[str, dict[str, Any]]:
    run, cell_id = key.split("/")
    path = folder / run / ("predictions" if name == "rows" else "cells") / (
        f"{cell_id}.parquet" if name == "rows" else f"{cell_id}/attribution.parquet")
    return {r["id"]: r for r in pq.read_table(path).to_pylist()}


def test_frames_equal_the_files(folder: Path) -> None:
    results = open_results(folder)
    summary = _summary(folder)
    cells = results.cells().set_index("key")
    assert sorted(cells.index) == sorted(summary) and len(summary) == 12
    for key, entry in summary.items():
        for name, value in entry["metrics"].items():
            got = cells.loc[key, name]
            assert (got != got and value["value"] is None) or got == pytest.approx(value["value"]), name
            if value["ci_low"] is not None:
                assert cells.loc[key, f"ci_low/{name}"] == pytest.approx(value["ci_low"])
        assert cells.loc[key, "n"] == entry["n"] and cells.loc[key, "task"] == entry["task"]

    rows = results.rows()
    attribution = results.attribution()
    samples = results.samples()
    assert len(rows) == len(samples) == len(attribution) == sum(c["n"] for c in summary.values())
    for key in summary:
        on_disk = _parquet(folder, key, "rows")
        mine = rows[rows.key == key].set_index("id")
        assert sorted(mine.index) == sorted(on_disk)
        for i, row in on_disk.items():
            assert (mine.loc[i, "label"], mine.loc[i, "hits"]) == (row["label"], row["hits"])
            assert mine.loc[i, "pred_label"] == row["pred_label"] or row["pred_label"] is None
        truth = _parquet(folder, key, "attribution")
        attr = attribution[attribution.key == key].set_index("id")
        both = samples[samples.key == key].set_index("id")
        for i, row in truth.items():
            for column in ("followed_corruption", "has_corrupted", "copied_evidence", "parse_failed"):
                assert attr.loc[i, column] == row[column] == both.loc[i, column]
            assert attr.loc[i, "flip"] == row["flip"] or row["flip"] is None
            assert attr.loc[i, "hit_tags"] == json.loads(row["hit_tags"])
            assert both.loc[i, "correct"] == row["correct"] or row["correct"] is None


def _by_hand(row: dict[str, Any], twin_pred: str | None) -> dict[str, float | None]:
    """A single-label instance's claim diagnostics, from the row's hits, written out here."""
    gold, pred = row["label"], row["pred_label"] if row["pred_ok"] else None
    labels = [h["value"] for h in json.loads(row["hits"])]
    out: dict[str, float | None] = {"claim_recall": float(gold in labels),
                                    "context_precision": sum(v == gold for v in labels) / len(labels),
                                    "context_utilization": float(pred == gold) if gold in labels else None}
    if pred is None:
        return out | dict.fromkeys(("hallucination", "self_knowledge", "faithfulness",
                                    "noise_sensitivity_irrelevant", "noise_sensitivity_relevant"))
    supported = pred in labels
    return out | {"faithfulness": float(supported), "hallucination": float(not supported and pred != gold),
                  "self_knowledge": float(not supported and pred == gold),
                  "self_knowledge_knew_it": float(not supported and pred == gold and twin_pred == pred),
                  "noise_sensitivity_irrelevant": float(supported and pred != gold),
                  "noise_sensitivity_relevant": 0.0}  # one label per hit: never gold and wrong at once


def _triples(label: str | None) -> set[str]:
    """Triples as items, written out here: each line's parts lower-cased with their spaces collapsed."""
    lines = (label or "").split("\n")
    return {"|".join(" ".join(p.lower().split()) for p in line.split("|")) for line in lines if line.strip()}


def _triples_by_hand(row: dict[str, Any]) -> dict[str, float | None]:
    gold, answer = _triples(row["label"]), _triples(row["pred_label"]) if row["pred_ok"] else set()
    hits = [_triples(h["value"]) for h in json.loads(row["hits"])]
    held = set().union(*hits)
    out: dict[str, float | None] = {"claim_recall": len(gold & held) / len(gold) if gold else None}
    if answer:
        out["faithfulness"] = len(answer & held) / len(answer)
        out["hallucination"] = len(answer - held - gold) / len(answer)
        out["self_knowledge"] = len((answer - held) & gold) / len(answer)
    return out


def test_claims_frame_by_hand_and_equal_to_the_summary(folder: Path) -> None:
    results = open_results(folder)
    claims = results.claims()
    summary = _summary(folder)
    diagnosed = {k for k, c in summary.items() if c["testbed"] != "none" and c["task"] != "qa"}
    assert set(claims.key) == diagnosed and len(diagnosed) == 4  # two runs × (ADE corpus v2, ADE triples)
    for key in diagnosed:
        mine = claims[claims.key == key].set_index("id")
        means = {name[len("claims/"):]: v["value"] for name, v in summary[key]["metrics"].items()
                 if name.startswith("claims/")}
        assert means and means == pytest.approx(mine[list(means)].mean().to_dict())
        if summary[key]["task"] == "triple_extraction":
            for i, row in _parquet(folder, key, "rows").items():
                for name, value in _triples_by_hand(row).items():
                    got = mine.loc[i, name]
                    assert (value is None and got != got) or got == pytest.approx(value), (key, i, name)
            continue
        twin = _parquet(folder, f"{key.split('/')[0]}/{summary[key]['attribution']['twin_cell_id']}", "rows")
        for i, row in _parquet(folder, key, "rows").items():
            t = twin[i]
            expected = _by_hand(row, t["pred_label"] if t["pred_ok"] else None)
            for name, value in expected.items():
                got = mine.loc[i, name]
                assert (value is None and got != got) or got == value, (key, i, name)


def test_compare_on_a_filtered_subset(folder: Path) -> None:
    results = open_results(folder)
    cells = results.cells()
    base, tuned = (cells[(cells.run == run) & (cells.dataset == "ade_corpus_v2")
                         & (cells.testbed == "counterfactual")].key.item() for run in ("base", "tuned"))
    a, b = _parquet(folder, base, "attribution"), _parquet(folder, tuned, "attribution")
    misled = sorted(i for i, r in a.items() if r["followed_corruption"])
    c = results.compare(base, tuned, ids=misled, n_boot=500, seed=3)
    right_a = [a[i]["correct"] is True for i in misled]
    right_b = [b[i]["correct"] is True for i in misled]
    only_a = sum(x and not y for x, y in zip(right_a, right_b, strict=True))
    only_b = sum(y and not x for x, y in zip(right_a, right_b, strict=True))
    assert (c.n, c.only_a, c.only_b) == (len(misled), only_a, only_b) and c.n > 0
    assert c.delta == pytest.approx((sum(right_b) - sum(right_a)) / len(misled))
    assert c.mcnemar_p == pytest.approx(binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue)
    assert c.ci_low is not None and c.ci_high is not None and c.delta is not None
    assert c.ci_low <= c.delta <= c.ci_high
    assert results.compare(base, tuned, ids=misled, n_boot=500, seed=3) == c  # reproducible
    whole = results.compare(base, tuned)
    assert whole.n == len(a) and whole.n > c.n
    # against the no-retrieval twin: the flips summary.json counts (the copying fake's twin sees no hit, so
    # it fails to parse every answer, and a parse failure is wrong: correct is false)
    entry = _summary(folder)[base]["attribution"]
    twin = f"base/{entry['twin_cell_id']}"
    assert all(r["correct"] is False for r in _parquet(folder, twin, "attribution").values())
    flips = results.compare(twin, base)
    assert (flips.only_a, flips.only_b, flips.mcnemar_p) == (entry["hurt"], entry["helped"],
                                                             entry["mcnemar"]["p_value"])
    with pytest.raises(Exception, match="no cell"):
        results.compare(base, "tuned/nope")
