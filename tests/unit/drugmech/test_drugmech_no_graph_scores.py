"""Spec §10.2 for an answer without a usable graph (a NO, or nothing parsed) to a positive that has a
reference MoA: in `strict_original` mode the original matched an empty graph, so the reduced-edge score is
0 and the interior score undefined (None); `robust` leaves both unset."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.queries.query_files import load_release_file
from biorab.drugmech.scoring.correctness import score_answer

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


@pytest.mark.parametrize("text", ["NO supporting beneficial Mechanism of Action found.", "no idea"])
def test_no_graph_edge_scores_are_zero_in_strict_original(
    text: str, drugmechcf_dir: Path, drugmechdb: DrugMechDB
) -> None:
    positive = load_release_file("AddLink_pos_ppi_r1k", release_dir=drugmechcf_dir).queries[1]
    strict = score_answer(positive, text, parser="strict_original", moas=drugmechdb)
    scores = (strict.interior_node_match, strict.reduced_edge_match, strict.correct_strict)
    assert scores == (None, 0.0, False)
    robust = score_answer(positive, text, parser="robust", moas=drugmechdb)
    assert (robust.interior_node_match, robust.reduced_edge_match) == (None, None)
