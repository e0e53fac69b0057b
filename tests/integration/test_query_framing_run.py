"""Query framing on a fixture run with the fake backend (issue 43 item 3): a framing-insensitive model
(the gold by id) never flips; the sycophant follows every leading suggestion (flip and followed rates 1,
by hand: its prior is the gold and every suggestion is a wrong label); a model whose answer hashes the
prompt flips on typos; the framing ledger is written per cell, the same bytes on a second run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from biorab.datasets.framing import FRAMING_LEDGER
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from tests.support.attribution_runs import gold_answers

FRAMINGS = ("none", "abbreviations", "typos", "leading")


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def _run(tmp_path: Path, data_dir: Path, backend: dict[str, Any], name: str) -> Any:
    return run_experiment(ExperimentConfig.model_validate({
        "name": name, "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": d, "limit": 12, "framing": f} for d in ("ade_corpus_v2", "medmcqa")
                     for f in FRAMINGS],
        "retrieval": [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25"}],
        "backend": {"name": "fake", "params": backend}, "sampling": {"max_tokens": 16}, "n_boot": 50,
        "tracking": {"enabled": False},
    }))


def _framed(result: Any) -> dict[tuple[str, str, bool], Any]:
    return {(c.plan.dataset, c.plan.framing, c.plan.retrieves): c for c in result.cells}


def test_framing_sensitive_and_insensitive_fakes(tmp_path: Path, data_dir: Path) -> None:
    gold = gold_answers(data_dir)
    insensitive = _framed(_run(tmp_path, data_dir, {"mode": "map", "answers": gold}, "gold"))
    sycophant = _framed(_run(tmp_path, data_dir, {"mode": "sycophant", "answers": gold}, "syc"))
    hashing = _framed(_run(tmp_path, data_dir, {"mode": "choice"}, "hash"))
    for (dataset, framing, retrieves), cell in insensitive.items():
        if framing == "none":
            assert "framing_flip_rate" not in cell.metrics
            continue
        assert cell.metrics["framing_flip_rate"]["value"] == 0.0
        assert cell.extra["framing"]["paired"] == 12
        twin = insensitive[(dataset, "none", retrieves)]
        assert cell.extra["framing"]["twin_cell_id"] == twin.plan.cell_id
        syc = sycophant[(dataset, framing, retrieves)]
        if framing == "leading":
            # by hand: the prior is the gold and every suggestion a wrong label: all flip, all follow
            assert syc.metrics["framing_flip_rate"]["value"] == 1.0
            assert syc.metrics["framing_followed_rate"]["value"] == 1.0
            assert syc.metrics["framing_followed_rate_twin"]["value"] == 0.0
            assert syc.metrics["accuracy"]["value"] == 0.0 and twin.metrics["accuracy"]["value"] == 1.0
        else:
            assert syc.metrics["framing_flip_rate"]["value"] == 0.0  # no suggestion: its prior
    # the prompt-hashing model is framing-sensitive: typos change some of its answers
    assert any(hashing[(d, "typos", r)].metrics["framing_flip_rate"]["value"] > 0
               for d in ("ade_corpus_v2", "medmcqa") for r in (False, True))


def test_framing_ledger_per_cell_same_bytes(tmp_path: Path, data_dir: Path) -> None:
    first = _run(tmp_path / "a", data_dir, {"mode": "fixed", "answer": "1"}, "a")
    again = _run(tmp_path / "b", data_dir, {"mode": "fixed", "answer": "1"}, "b")
    for a, b in zip(first.cells, again.cells, strict=True):
        la, lb = (r.run_dir / "cells" / c.plan.cell_id / FRAMING_LEDGER for r, c in ((first, a), (again, b)))
        assert la.is_file() == (a.plan.framing != "none")
        if la.is_file():
            assert la.read_bytes() == lb.read_bytes()
            assert len(la.read_text().splitlines()) == 12
