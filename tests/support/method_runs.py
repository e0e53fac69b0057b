"""Scripted fake-backend answers for runs with a corpus method (shared by the in-process and Ray tests)."""

from __future__ import annotations

from pathlib import Path

from biorab.corpora import build_corpus
from biorab.datasets import load_dataset

N = 6


def answers(data_dir: Path) -> dict[str, str]:
    """Gold answers for the test slice; for the corpus review, "incorrect: <gold>" for exactly the items the
    counterfactual testbed corrupted (every other item gets the default "correct")."""
    out = {ex.id: ex.label for ex in load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:N]}
    _, ledger = build_corpus("counterfactual", "ade_corpus_v2", rate=0.8, seed=0, data_dir=data_dir)
    out.update({f"{e.item_id}/detect": f"incorrect: {e.original}" for e in ledger.entries})
    return out
