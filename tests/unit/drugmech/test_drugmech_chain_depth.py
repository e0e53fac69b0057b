"""The reasoning-chain-length analysis (spec §12.3) on fixtures with a known answer.

The 2 × 2 design below has proportions correct whose log-odds are exactly additive in d_drug and d_disease
(0, ln 3, ln 3, 2 ln 3), so the maximum-likelihood logit reproduces them: intercept -2 ln 3 and both slopes
ln 3. The standard errors are checked against the inverse Fisher information computed here by hand."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from biorab.drugmech.queries.query_files import ADD_LINK, DELETE_LINK
from biorab.drugmech.scoring.chain_depth import (
    ChainSample,
    chain_depth_report,
    chain_samples,
    link_distances,
    render_chain_depth,
)

# (d_drug, d_disease) -> (answers, correct)
DESIGN = {(1, 1): (20, 10), (2, 1): (20, 15), (1, 2): (20, 15), (2, 2): (20, 18)}


def _samples() -> list[ChainSample]:
    out = []
    for (d_drug, d_disease), (n, k) in DESIGN.items():
        out += [ChainSample(d_drug, d_disease, i < k) for i in range(n)]
    return out


def test_accuracy_by_length_and_distance() -> None:
    report = chain_depth_report(_samples())
    assert report["by_moa_length"] == [
        {"moa_length": 2, "n": 20, "correct": 10, "accuracy": 0.5},
        {"moa_length": 3, "n": 40, "correct": 30, "accuracy": 0.75},
        {"moa_length": 4, "n": 20, "correct": 18, "accuracy": 0.9},
    ]
    assert report["by_d_drug"] == [{"d_drug": 1, "n": 40, "correct": 25, "accuracy": 0.625},
                                   {"d_drug": 2, "n": 40, "correct": 33, "accuracy": 0.825}]


def test_logistic_regression_known_answer() -> None:
    fit = chain_depth_report(_samples())["logistic"]
    assert fit["features"] == ["d_drug", "d_disease"] and fit["dropped"] == ["moa_length"]  # collinear
    assert fit["n"] == 80 and fit["converged"]
    coef = {c["name"]: c for c in fit["coefficients"]}
    ln3 = math.log(3)
    assert coef["intercept"]["coef"] == pytest.approx(-2 * ln3, abs=1e-6)
    assert coef["d_drug"]["coef"] == pytest.approx(ln3, abs=1e-6)
    assert coef["d_disease"]["coef"] == pytest.approx(ln3, abs=1e-6)
    # Wald: SE from the inverse Fisher information X'WX, W = p(1 - p) at the fitted (= observed) p
    rows = [(1.0, a, b, n, k / n) for (a, b), (n, k) in DESIGN.items()]
    info = sum(n * p * (1 - p) * np.outer([c, a, b], [c, a, b]) for c, a, b, n, p in rows)
    se = np.sqrt(np.diag(np.linalg.inv(info)))
    for i, name in enumerate(("intercept", "d_drug", "d_disease")):
        c = coef[name]
        assert c["ci_high"] - c["ci_low"] == pytest.approx(2 * 1.959964 * se[i], rel=1e-4)
        z = c["coef"] / se[i]
        assert c["p_value"] == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), rel=1e-4)
    assert coef["d_drug"]["p_value"] == pytest.approx(0.0441, abs=1e-4)  # pinned: z = 2.01


def test_three_features_when_not_collinear_and_unfittable_inputs() -> None:
    base = _samples()
    # a link off the shortest route: its chain is longer than the two distances say (not a sum any more)
    extra = [ChainSample(1, 1, i % 3 == 0) for i in range(12)]
    off_path = [SimpleNamespace(d_drug=s.d_drug, d_disease=s.d_disease, moa_length=s.moa_length + 1,
                                correct=s.correct) for s in extra]
    fit = chain_depth_report([*base, *off_path])["logistic"]  # type: ignore[list-item]
    assert fit["features"] == ["d_drug", "d_disease", "moa_length"] and fit["dropped"] == []
    assert chain_depth_report([ChainSample(1, 1, True)] * 10)["logistic"]["error"].startswith("too few")
    text = render_chain_depth(chain_depth_report(_samples()))
    assert "| 3 | 40 | 0.750 |" in text and "| d_drug | 1.099 |" in text


@dataclass
class _Moa:
    graph: nx.MultiDiGraph
    root: str
    sink: str


def test_samples_from_scored_rows() -> None:
    g = nx.MultiDiGraph()
    g.add_edges_from([("drug", "p1", "inhibits"), ("p1", "p2", "increases"), ("p2", "dis", "causes"),
                      ("drug", "p2", "binds")])
    moa = _Moa(g, "drug", "dis")
    assert link_distances(g, "drug", "dis", "p1") == (1, 2)

    def row(node: str, *, world: str = "open", negative: bool = False, link: str = "ppi",
            qtype: str = DELETE_LINK, incomplete: bool = False, correct: bool = True) -> SimpleNamespace:
        query = SimpleNamespace(edit_link_info=SimpleNamespace(source_moa_id="M1", source_node=node))
        return SimpleNamespace(query_type=qtype, is_negative=negative, link=link, query=query,
                               response=SimpleNamespace(world=world),
                               score=SimpleNamespace(incomplete=incomplete, correct_strict=correct))

    rows = [row("p1"), row("p2", correct=False), row("p1", world="closed"), row("p1", negative=True),
            row("p1", link="dpi"), row("p1", qtype=ADD_LINK), row("p1", incomplete=True), row("elsewhere")]
    samples, skipped = chain_samples(rows, lambda moa_id: moa)
    assert samples == [ChainSample(1, 2, True), ChainSample(1, 1, False)] and skipped == 1
