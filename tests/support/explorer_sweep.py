"""A synthetic sweep folder in the layout `biorab sweep` writes, for the explorer's browser test and its
bench at the paper grid's size: per model a run folder with its resolved ``config.yaml`` (a real
`ExperimentConfig`, so cell ids and axes are the ones a run would have), ``summary.json``,
``predictions/<cell id>.parquet`` (`ROW_SCHEMA` rows) and ``cells/<cell id>/attribution.parquet``.

No model, corpus or retriever runs: answers are drawn from a seeded generator. Per model a skill (the
chance to know the gold without evidence) and a credulity (the chance to copy a corrupted top hit). A
retrieving cell's one hit carries the gold, or, with the cell's corruption rate (counterfactual testbeds),
the flipped label, tagged corrupted. 3% of answers fail to parse, 0.5% of generations fail. The attribution
is the one these rules imply (the explorer reads it, it computes none of it), with each cell's flip
against the no-retrieval cell of its model and slice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from biorab.experiment import ExperimentConfig
from biorab.explorer.attribution_file import ATTRIBUTION_FILE
from biorab.explorer.attribution_file import COLUMNS as ATTRIBUTION_COLUMNS
from biorab.ral.specs.rows import COLUMNS, ROW_SCHEMA

LABELS = ("0", "1")
PARSE_FAIL, GEN_FAIL = 0.03, 0.005
# The 21 retrieval settings of the browser test's run (with 2 models: 42 cells).
SETTINGS_42: list[dict[str, Any]] = [
    {"testbed": "none"},
    *({"testbed": "labeled", "retriever": r, "k": k} for r in ("bm25", "dense") for k in (1, 3)),
    *({"testbed": "counterfactual", "rate": rate, "retriever": r, "k": k}
      for rate in (0.2, 0.8, 1.0) for r in ("bm25", "dense") for k in (1, 3)),
    {"testbed": "unlabeled", "retriever": "bm25", "k": 1},
    {"testbed": "diverse", "retriever": "bm25", "k": 1},
    {"testbed": "negative_awareness", "retriever": "bm25", "k": 1, "template": "negative_awareness"},
    {"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25", "k": 1, "method": "detect_correct"},
]
# 13 settings: with 5 models and 5 datasets, the paper grid's 325 cells.
SETTINGS_13: list[dict[str, Any]] = [
    {"testbed": "none"},
    {"testbed": "labeled", "retriever": "bm25", "k": 1},
    {"testbed": "labeled", "retriever": "dense", "k": 1},
    {"testbed": "unlabeled", "retriever": "bm25", "k": 1},
    *({"testbed": "counterfactual", "rate": rate, "retriever": "bm25", "k": 1} for rate in (0.2, 0.8, 1.0)),
    {"testbed": "counterfactual", "rate": 1.0, "retriever": "bm25", "k": 3},
    {"testbed": "counterfactual", "rate": 1.0, "retriever": "dense", "k": 1},
    {"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25", "k": 1, "method": "detect_correct"},
    {"testbed": "unlabeled", "retriever": "bm25", "k": 1, "method": "llm_label"},
    {"testbed": "diverse", "retriever": "bm25", "k": 1},
    {"testbed": "negative_awareness", "retriever": "bm25", "k": 1, "template": "negative_awareness"},
]


def write_sweep(root: Path, *, models: dict[str, tuple[float, float]], datasets: dict[str, int],
                settings: Sequence[dict[str, Any]], seed: int = 0, total_rows: int | None = None) -> Path:
    """Write the sweep folder ``root/<name>`` and return it. `models`: name → (skill, credulity);
    `datasets`: name → instances (test split); `total_rows`: drop rows from the last cells to that total
    (an unfinished cell, as a sweep can have)."""
    sweep = root / "synthetic"
    planned = len(models) * len(settings) * sum(datasets.values())
    drop = 0 if total_rows is None else planned - total_rows
    if drop < 0:
        raise ValueError(f"{total_rows} rows asked for, the grid holds {planned}")
    rng = np.random.default_rng(seed)
    golds = {d: rng.integers(0, 2, n) for d, n in datasets.items()}
    configs = {name: ExperimentConfig.model_validate({
        "name": name, "output_dir": str(sweep), "seed": seed,
        "datasets": [{"name": d} for d in datasets], "retrieval": list(settings),
        "backend": {"name": "fake"}, "tracking": {"enabled": False}}) for name in models}
    sizes = {(name, cell.cell_id): datasets[cell.dataset.name] for name in models
             for cell in configs[name].cells()}
    for key in reversed(list(sizes)):  # the rows dropped come off the last cells
        cut = min(drop, sizes[key])
        sizes[key] -= cut
        drop -= cut
    for name, (skill, credulity) in models.items():
        config = configs[name]
        run = sweep / name
        (run / "predictions").mkdir(parents=True)
        (run / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False),
                                         encoding="utf-8")
        knows = {d: rng.random(n) < skill for d, n in datasets.items()}
        twins: dict[str, tuple[str, np.ndarray]] = {}
        summary = []
        for cell in config.cells():
            d = cell.dataset.name
            n = sizes[(name, cell.cell_id)]
            zero_shot = np.where(knows[d][:n], golds[d][:n], 1 - golds[d][:n])
            correct = _write_cell(run, cell, n, golds[d][:n], zero_shot, credulity, rng, twins)
            summary.append({"cell_id": cell.cell_id, "cell": cell.label, "dataset": d, "split": "test",
                            "task": "classification", "testbed": cell.retrieval.testbed,
                            "retriever": cell.retrieval.retriever if cell.retrieval.retrieves else None,
                            "n": n, "metrics": {"accuracy": {"value": float(np.mean(correct))}},
                            "predictions": str(run / "predictions" / f"{cell.cell_id}.parquet")})
        (run / "summary.json").write_text(json.dumps({"cells": summary, "complete": True}), encoding="utf-8")
    return sweep


def _write_cell(run: Path, cell: Any, n: int, gold: np.ndarray, zero_shot: np.ndarray, credulity: float,
                rng: np.random.Generator, twins: dict[str, tuple[str, np.ndarray]]) -> np.ndarray:
    r, d = cell.retrieval, cell.dataset.name
    retrieves = r.retrieves
    counterfactual = retrieves and r.testbed == "counterfactual"
    corrupted = rng.random(n) < (r.rate or 0.0) if counterfactual else np.zeros(n, bool)
    hit_label = np.where(corrupted, 1 - gold, gold)
    copies = retrieves & (rng.random(n) < np.where(corrupted, credulity, credulity / 2))
    answer = np.where(copies, hit_label, zero_shot)
    gen_fail = rng.random(n) < GEN_FAIL
    parse_fail = ~gen_fail & (rng.random(n) < PARSE_FAIL)
    answered = ~gen_fail & ~parse_fail
    correct = answered & (answer == gold)
    cols: dict[str, list[Any]] = {c: [None] * n for c in COLUMNS}
    att: dict[str, list[Any]] = {c: [] for c in ATTRIBUTION_COLUMNS}
    twin = twins.get(d) if retrieves else None
    for i in range(n):
        rid = f"{d}/test/{i}"
        text = f"synthetic {d} instance {i}: drug X{i % 97} and reaction Y{i % 89}"
        label = LABELS[gold[i]]
        hit = {"doc_id": f"{d}/train/{(i * 7) % 1009}", "rank": 0, "score": round(10 - (i % 13) * 0.37, 2),
               "key": f"train text {(i * 7) % 1009} of {d}", "value": LABELS[hit_label[i]], "dataset": d}
        said = LABELS[answer[i]] if answered[i] else ("(no)" if parse_fail[i] else None)
        cols["cell_id"][i], cols["order"][i], cols["id"][i] = cell.cell_id, i, rid
        cols["task"][i], cols["dataset"][i], cols["split"][i] = "classification", d, "test"
        cols["text"][i], cols["label"][i] = text, label
        cols["hits"][i] = json.dumps([hit] if retrieves else [])
        evidence = f"\nEvidence: {hit['key']} -> {hit['value']}" if retrieves else ""
        cols["prompt"][i] = f"Is there an adverse drug event? {text}{evidence}"
        cols["gen_error"][i] = "synthetic generation failure" if gen_fail[i] else None
        cols["gen_text"][i] = None if gen_fail[i] else f"Answer: {said}"
        cols["gen_finish_reason"][i] = None if gen_fail[i] else "stop"
        cols["pred_label"][i] = LABELS[answer[i]] if answered[i] else None
        cols["pred_ok"][i] = bool(answered[i])
        followed = bool(answered[i] and corrupted[i] and answer[i] == hit_label[i])
        att["id"].append(rid)
        att["correct"].append(bool(correct[i]) if answered[i] else None)
        att["parse_failed"].append(bool(parse_fail[i]))
        att["has_corrupted"].append(bool(corrupted[i]))
        att["followed_corruption"].append(followed)
        att["copied_evidence"].append(bool(retrieves and answered[i] and answer[i] == hit_label[i]))
        att["copied_corrupted"].append(followed)
        att["leaked_evidence"].append(False)
        att["flip"].append(None if twin is None else _flip(bool(twin[1][i]) if i < len(twin[1]) else None,
                                                           bool(correct[i])))
        att["twin_cell_id"].append(None if twin is None else twin[0])
        att["error_types"].append(None)
        tags = {"doc_id": hit["doc_id"], "corrupted": bool(corrupted[i]),
                "how": "label" if corrupted[i] else None,
                "original_label": label if corrupted[i] else None,
                "corrupted_label": LABELS[hit_label[i]] if corrupted[i] else None, "leaked": False,
                "diverse": r.testbed == "diverse", "source": "chemprot" if r.testbed == "diverse" else None,
                "unlabeled": r.testbed == "unlabeled"}
        att["hit_tags"].append(json.dumps([tags]) if retrieves else None)
    pq.write_table(pa.table(cols, schema=ROW_SCHEMA), run / "predictions" / f"{cell.cell_id}.parquet")
    (run / "cells" / cell.cell_id).mkdir(parents=True)
    pq.write_table(pa.table(att, schema=pa.schema(list(ATTRIBUTION_COLUMNS.items()))),
                   run / "cells" / cell.cell_id / ATTRIBUTION_FILE)
    if not retrieves:
        twins[d] = (cell.cell_id, correct)
    return correct


def _flip(twin_correct: bool | None, correct: bool) -> str | None:
    if twin_correct is None:
        return None
    if correct != twin_correct:
        return "helped" if correct else "hurt"
    return "unchanged"
