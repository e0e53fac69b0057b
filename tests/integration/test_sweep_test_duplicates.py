"""A sweep with a retriever profile and its ``exclude_test_duplicates`` twin, run in-process on the fake
backend over Ade-corpus-v2 (full data), then `write_report`: Table 1 keeps the paper's cells, a second table
shows both side by side with their leak shares, and the leak-share table lists every retrieving cell."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep

pytestmark = pytest.mark.full_data


def test_report_pairs_the_paper_cell_with_its_excluded_twin(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "dups", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"f": {"backend": "fake", "params": {"mode": "fixed", "answer": "1"}}},
        "retrievers": {"bm25-cls": {"retriever": "bm25", "k": 3, "keep_ties": False, "template": "bm25"},
                       "bm25-cls-notestdups": {"retriever": "bm25", "k": 3, "keep_ties": False,
                                               "template": "bm25", "exclude_test_duplicates": True}},
        "matrix": [{"models": ["f"], "datasets": [{"name": "ade_corpus_v2", "limit": 100}],
                    "retrievers": ["none", "bm25-cls", "bm25-cls-notestdups"], "testbeds": ["labeled"]}],
        "sampling": {"max_tokens": 4}, "n_boot": 20, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    assert run_sweep(sweep, path=path).cells == 3
    report = write_report(sweep, path=path, track=False)[0].read_text(encoding="utf-8")
    table1 = report[report.index("### Table 1 shape"):report.index("### Table 1 with")]
    assert "| f / bm25-cls |" in table1 and "notestdups" not in table1
    assert "Headline metric per dataset: ade_corpus_v2: accuracy." in table1
    side = next(line for line in report.splitlines() if line.startswith("| f / bm25-cls / ade_corpus_v2 |"))
    # the fake answers "1" whatever the prompt: the same accuracy both ways (26 of the 100 are "1");
    # leak shares 12/100 as the paper ran it, 0 with the switch
    assert side == ("| f / bm25-cls / ade_corpus_v2 | **26.00 [15.9, 36.2]** | 12.0 | "
                    "**26.00 [15.9, 36.2]** | 0.0 |")
    leaks = report[report.index("### Leak share"):]
    assert "| f / bm25-cls / labeled | 12.0 |" in leaks
    assert "| f / bm25-cls-notestdups / labeled | 0.0 |" in leaks
    assert "micro-averaged precision, recall and F1 equal accuracy" in report
