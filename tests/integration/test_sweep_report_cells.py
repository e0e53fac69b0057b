"""Every number in `biorab report`'s tables is the summary.json value of the cell its row and column name.

A fake-backend sweep over the fixture Ade-corpus-v2 with one model on counterfactual 20% three times: the
plain cell at 30 rows, the same plain setting at 8 rows (another block, another dataset limit) and a
Detect-and-Correct cell at 4 rows, beside counterfactual 80%/100%, labeled and no retrieval. Keyed by a few
axes, these three shared the row "fake / bm25 / counterfactual (20%)" of Table 2 and the last one written
won (issue 36: the method cell's 4-row number shown, and marked best, as the plain cell's). Each table of
the report is compared whole with the one built here from the runs' summary.json files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.run import run_sweep

REPO = Path(__file__).resolve().parents[2]
Table = dict[str, dict[str, str]]


def sweep_file(tmp_path: Path, data_dir: Path) -> Path:
    def block(limit: int, testbeds: list[str], rates: list[float], **more: Any) -> dict[str, Any]:
        return {"models": ["fake"], "datasets": [{"name": "ade_corpus_v2", "limit": limit}],
                "testbeds": testbeds, "rates": rates, **more}

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "cells", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"fake": {"backend": "fake", "params": {"mode": "choice"}}},
        "retrievers": {"bm25": {"retriever": "bm25", "k": 1}},
        "matrix": [block(30, ["labeled", "counterfactual"], [0.2, 0.8, 1.0], retrievers=["none", "bm25"]),
                   block(8, ["counterfactual"], [0.2], retrievers=["bm25"]),
                   block(4, ["counterfactual"], [0.2], retrievers=["bm25"], methods=["detect_correct"])],
        "sampling": {"max_tokens": 4}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    return path


def report_tables(text: str) -> dict[str, Table]:
    """Each ``### title`` of the markdown → row label → column → cell text, without the best and
    significance marks (``**``, ``*``)."""
    out: dict[str, Table] = {}
    for part in text.split("\n### ")[1:]:
        part = part.split("\n## ")[0]  # a level-2 section after the last table (token use) is no part of it
        lines = [line for line in part.splitlines() if line.startswith("|")]
        columns = [c.strip() for c in lines[0].strip("|").split("|")][1:]
        rows: Table = {}
        for line in lines[2:]:
            label, *cells = [c.strip() for c in line.strip("|").split("|")]
            assert label not in rows, f"row {label!r} twice in {part.splitlines()[0]!r}"
            rows[label] = {col: cell.replace("*", "") for col, cell in zip(columns, cells, strict=True)}
        out[part.splitlines()[0].split(":")[0]] = rows
    return out


def summaries(run_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Every cell of the sweep's summary.json files by (cell label, rows): the cell label leaves the
    dataset limit out, the row count tells the three counterfactual-20% cells apart."""
    cells = {}
    for path in sorted(run_dir.glob("*/summary.json")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            key = (cell["cell"], cell["n"])
            assert key not in cells
            cells[key] = cell
    return cells


def shown(cell: dict[str, Any], metric: str = "micro_f1") -> str:
    v = cell["metrics"][metric]
    if v["value"] is None:
        return "n/a"
    return f"{v['value'] * 100:.2f} [{v['ci_low'] * 100:.1f}, {v['ci_high'] * 100:.1f}]"


def rate(cell: dict[str, Any], metric: str) -> str:
    """An attribution rate as the report writes it: ×100, one decimal, its CI (McNemar's p as is)."""
    v = cell["metrics"].get(metric)
    if v is None or v["value"] is None:
        return "n/a"
    if metric == "flip_mcnemar_p":
        return f"{v['value']:.3f}"
    return f"{v['value'] * 100:.1f} [{v['ci_low'] * 100:.1f}, {v['ci_high'] * 100:.1f}]"


ATTRIBUTION_COLUMNS = {"misled": "misled_rate", "misled share": "misled_share", "resisted": "resisted_rate",
                       "agrees with gold": "corruption_agrees_with_gold", "copy (clean)": "copy_rate_clean",
                       "copy (corrupted)": "copy_rate_corrupted", "helped": "helped_rate",
                       "hurt": "hurt_rate", "McNemar p": "flip_mcnemar_p"}
TWIN_COLUMNS = {"misled (twin)": "misled_rate_twin", "misled excess": "misled_excess",
                "switched to evidence": "switched_to_evidence",
                "switched to corruption": "switched_to_corruption",
                "copy clean (twin)": "copy_rate_clean_twin", "copy clean excess": "copy_rate_clean_excess",
                "copy corrupted (twin)": "copy_rate_corrupted_twin",
                "copy corrupted excess": "copy_rate_corrupted_excess"}
BINS = ("margin_lt_1", "margin_1_to_3", "margin_ge_3", "twin_wrong", "twin_right")
LABELS = {"margin_lt_1": "prior margin < 1", "margin_1_to_3": "prior margin 1-3",
          "margin_ge_3": "prior margin ≥ 3", "twin_wrong": "prior: twin wrong",
          "twin_right": "prior: twin right"}


def position_columns(cells: list[dict[str, Any]]) -> dict[str, str]:
    """The position and prior table's columns: the three ranks, then each prior bin some cell has."""
    bins = [b for b in BINS if any(f"misled_by_prior/{b}" in c["metrics"] for c in cells)]
    return {"first misleading at 1": "misled_by_rank/1", "at 2": "misled_by_rank/2",
            "at ≥ 3": "misled_by_rank/3_or_more",
            **{LABELS[b]: f"misled_by_prior/{b}" for b in bins}}


def holm_shown(cells: list[dict[str, Any]]) -> list[str]:
    """The cells' McNemar p Holm-adjusted over all of them, by statsmodels (a second computation)."""
    from statsmodels.stats.multitest import multipletests

    return [f"{p:.3f}" for p in multipletests([c["metrics"]["flip_mcnemar_p"]["value"] for c in cells],
                                               method="holm")[1]]


CLAIM_COLUMNS = {"claim recall": "claim_recall", "context precision": "context_precision",
                 "context utilization": "context_utilization",
                 "noise (relevant)": "noise_sensitivity_relevant",
                 "noise (irrelevant)": "noise_sensitivity_irrelevant", "hallucination": "hallucination",
                 "self-knowledge": "self_knowledge", "knew it": "self_knowledge_knew_it",
                 "right without support": "right_without_support", "faithfulness": "faithfulness"}


def test_every_report_number_is_its_cells_summary_value(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = sweep_file(tmp_path, data_dir)
    assert run_sweep(load_sweep(path), path=path).cells == 7
    out = subprocess.run([sys.executable, "-m", "biorab.cli.main", "report", str(path), "--no-track"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = report_tables((tmp_path / "runs/cells/report/report.md").read_text(encoding="utf-8"))

    s = summaries(tmp_path / "runs/cells")
    cf20 = "ade_corpus_v2-test__counterfactual-0.2-bm25-k1"
    plain, twin, method = s[(cf20, 30)], s[(cf20, 8)], s[(cf20 + "-detect_correct", 4)]
    cf80 = s[("ade_corpus_v2-test__counterfactual-0.8-bm25-k1", 30)]
    cf100 = s[("ade_corpus_v2-test__counterfactual-1-bm25-k1", 30)]
    labeled = s[("ade_corpus_v2-test__labeled-bm25-k1", 30)]
    none = s[("ade_corpus_v2-test__none__noexample", 30)]
    # the three cells the old keying mixed up hold different numbers, so a swap cannot pass unnoticed
    assert len({shown(plain), shown(twin), shown(method)}) == 3

    def leak(cell: dict[str, Any]) -> str:
        return f"{cell['leak_share']['value'] * 100:.1f}"

    ade = "ade_corpus_v2"
    rated = [(f"fake / bm25 / counterfactual (20%) / {ade} / 30 rows", plain),
             (f"fake / bm25 / counterfactual (20%) / {ade} / 8 rows", twin),
             (f"fake / bm25 / counterfactual (80%) / {ade}", cf80),
             (f"fake / bm25 / counterfactual (100%) / {ade}", cf100),
             (f"fake / bm25 / labeled / {ade}", labeled),
             (f"fake / bm25 / counterfactual (20%) / detect_correct / {ade}", method)]
    scores = ("detection_precision", "detection_recall", "detection_f1", "correction_accuracy",
              "corpus_accuracy_before", "corpus_accuracy_after")
    want = {
        "Table 1 shape": {"fake / bm25": {ade: shown(labeled)}, "fake / none": {ade: shown(none)}},
        "Leak share ×100": {
            "fake / bm25 / counterfactual (20%) / 30 rows": {ade: leak(plain)},
            "fake / bm25 / counterfactual (20%) / 8 rows": {ade: leak(twin)},
            "fake / bm25 / counterfactual (80%)": {ade: leak(cf80)},
            "fake / bm25 / counterfactual (100%)": {ade: leak(cf100)},
            "fake / bm25 / labeled": {ade: leak(labeled)},
            "fake / bm25 / counterfactual (20%) / detect_correct": {ade: leak(method)}},
        "Table 2 shape": {
            "fake / bm25 / counterfactual (20%) / 30 rows": {ade: shown(plain)},
            "fake / bm25 / counterfactual (20%) / 8 rows": {ade: shown(twin)},
            "fake / bm25 / counterfactual (20%) / detect_correct / 4 rows": {ade: shown(method)},
            "fake / bm25 / counterfactual (80%)": {ade: shown(cf80)},
            "fake / bm25 / counterfactual (100%)": {ade: shown(cf100)},
            "fake / bm25 / labeled": {ade: shown(labeled)},
            "fake / none / none": {ade: shown(none)}},
        "Tables 4-5 shape": {"fake / detect_correct / counterfactual (20%)": {ade: shown(method)}},
        "Tables 4-5": {"fake / detect_correct / counterfactual (20%) / ade_corpus_v2": {
            m.replace("_", " "): shown(method, m) for m in scores}},
        # every retrieving cell (the no-retrieval cell has no attribution rate); the 8-row and method
        # cells have their twin in another run (block): the 30-row no-retrieval cell holds their instances
        "Evidence attribution, rate ×100 [95% CI]": {
            label: {**{col: rate(cell, m) for col, m in ATTRIBUTION_COLUMNS.items()}, "Holm p": holm}
            for (label, cell), holm in zip(rated, holm_shown([c for _, c in rated]), strict=True)},
        "Against the same model without evidence (no-retrieval twin), rate ×100 [95% CI]": {
            label: {col: rate(cell, m) for col, m in TWIN_COLUMNS.items()} for label, cell in rated},
        "Misled by position and prior, rate ×100 [95% CI]": {
            label: {col: rate(cell, m) for col, m in position_columns([c for _, c in rated]).items()}
            for label, cell in rated},
    }
    # the claim diagnostics: the same rows (every retrieving cell), one column per metric
    want["Claim diagnostics (judge-free RAGChecker metrics), ×100 [95% CI]"] = {
        label: {col: rate(cell, "claims/" + m) for col, m in CLAIM_COLUMNS.items()}
        for label, cell in rated}
    assert got == want
    # the 8-row and 4-row (method) cells are paired on all their instances with the 30-row no-retrieval
    # cell of the first block's run (docs/metrics.md: a twin from another run covers the cell's instances)
    for cell in (twin, method):
        assert (cell["attribution"]["twin_cell_id"], cell["attribution"]["paired"]) == (none["cell_id"],
                                                                                        cell["n"])
        assert cell["metrics"]["helped_rate"]["value"] is not None
    counts = [(c["attribution"]["helped"], c["attribution"]["hurt"]) for c in (twin, method)]
    assert counts == [(1, 5), (1, 2)]

    # the 8-row cell's instances are the 30-row cell's first 8, with the same answers: the same flips
    def flips(cell: dict[str, Any]) -> dict[str, str]:
        run_dir = Path(cell["predictions"]).parents[1]
        rows = pq.read_table(run_dir / "cells" / cell["cell_id"] / "attribution.parquet").to_pylist()
        return {r["id"]: r["flip"] for r in rows}

    assert flips(twin) == {k: v for k, v in flips(plain).items() if k in flips(twin)}
    # the token table: the model's usage summed over its runs (one per matrix block here)
    usage = {k: sum(json.loads(p.read_text(encoding="utf-8"))["usage"][k]
                    for p in (tmp_path / "runs/cells").glob("*/summary.json"))
             for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    text = (tmp_path / "runs/cells/report/report.md").read_text(encoding="utf-8")
    assert (f"| fake | {usage['prompt_tokens']:,} | {usage['completion_tokens']:,} | "
            f"{usage['reasoning_tokens']:,} | - |") in text
