"""The judge-free claim diagnostics: every metric on hand-computed instances, the cell means and their
bootstrap CIs, and each per-instance value against RAGChecker's published formulas (``computation.py``),
written here in its own matrix form (boolean check matrices, max over axes) as a second computation."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from biorab.diagnostics.cell_claims import claim_values, diagnosable
from biorab.diagnostics.claims import NAMES, InstanceClaims, claim_scores
from biorab.metrics.bootstrap import resample_weights

F = frozenset

#: Triples-like: gold {g1, g2, g3}; the answer {g1, g3, w1, w2, w3}; hits h1 {g1, w1} (relevant), h2 {w2},
#: h3 unlabeled, h4 {w1, x} (irrelevant); the twin answered g3.
RICH = InstanceClaims(F({"g1", "g2", "g3"}), F({"g1", "g3", "w1", "w2", "w3"}),
                      (F({"g1", "w1"}), F({"w2"}), F(), F({"w1", "x"})), twin=F({"g3"}))
#: Single label, right without support: gold A = answer, the only hit says B, the twin said B.
RIGHT_UNSUPPORTED = InstanceClaims(F({"A"}), F({"A"}), (F({"B"}),), twin=F({"B"}))
#: A parse failure (no answer items) whose hit holds the gold.
UNPARSED = InstanceClaims(F({"A"}), F(), (F({"A"}),), twin=F({"A"}))


def test_rich_instance_by_hand() -> None:
    s = claim_scores(RICH)
    # recalled gold items: g1 only (g2, g3 in no hit); relevant hits: h1 only.
    assert s["claim_recall"] == pytest.approx(1 / 3)
    assert s["context_precision"] == pytest.approx(1 / 4)
    assert s["context_utilization"] == 1.0  # the answer holds g1
    # answer items: g1 supported (relevant), w1 wrong in relevant h1, w2 wrong only in irrelevant h2,
    # g3 right and unsupported (the twin said it), w3 wrong and unsupported.
    assert s["noise_sensitivity_relevant"] == pytest.approx(1 / 5)
    assert s["noise_sensitivity_irrelevant"] == pytest.approx(1 / 5)
    assert s["hallucination"] == pytest.approx(1 / 5)
    assert s["self_knowledge"] == pytest.approx(1 / 5)
    assert s["self_knowledge_knew_it"] == pytest.approx(1 / 5)
    assert s["right_without_support"] == 0.0
    assert s["faithfulness"] == pytest.approx(3 / 5)


def test_single_label_and_parse_failure_by_hand() -> None:
    s = claim_scores(RIGHT_UNSUPPORTED)
    assert (s["claim_recall"], s["context_precision"], s["context_utilization"]) == (0.0, 0.0, None)
    assert (s["hallucination"], s["self_knowledge"], s["faithfulness"]) == (0.0, 1.0, 0.0)
    assert (s["self_knowledge_knew_it"], s["right_without_support"]) == (0.0, 1.0)
    u = claim_scores(UNPARSED)
    assert (u["claim_recall"], u["context_precision"], u["context_utilization"]) == (1.0, 1.0, 0.0)
    assert all(u[name] is None for name in NAMES[3:])  # no answer items: no generator metric


def test_without_a_twin_the_split_is_absent() -> None:
    s = claim_scores(InstanceClaims(RICH.gold, RICH.answer, RICH.hits, twin=None))
    assert s["self_knowledge"] == pytest.approx(1 / 5)
    assert s["self_knowledge_knew_it"] is None and s["right_without_support"] is None


def test_cell_means_by_hand() -> None:
    values = claim_values([claim_scores(c) for c in (RICH, RIGHT_UNSUPPORTED, UNPARSED)], n_boot=0, seed=0)
    expected = {  # means over the instances where each is defined
        "claim_recall": (1 / 3 + 0 + 1) / 3, "context_precision": (1 / 4 + 0 + 1) / 3,
        "context_utilization": (1 + 0) / 2, "noise_sensitivity_relevant": (1 / 5 + 0) / 2,
        "noise_sensitivity_irrelevant": (1 / 5 + 0) / 2, "hallucination": (1 / 5 + 0) / 2,
        "self_knowledge": (1 / 5 + 1) / 2, "self_knowledge_knew_it": (1 / 5 + 0) / 2,
        "right_without_support": (0 + 1) / 2, "faithfulness": (3 / 5 + 0) / 2,
    }
    assert {k: v["value"] for k, v in values.items()} == pytest.approx(expected)
    assert all(v["ci_low"] is None for v in values.values())


def test_cell_ci_is_the_percentile_of_the_resampled_means() -> None:
    scores = [claim_scores(c) for c in (RICH, RIGHT_UNSUPPORTED, UNPARSED)] * 3
    values = claim_values(scores, n_boot=200, seed=7)
    faith = np.array([s["faithfulness"] if s["faithfulness"] is not None else np.nan for s in scores])
    resampled = []
    for w in resample_weights(len(scores), 200, seed=7):  # the same seeded draws, means by hand
        keep = ~np.isnan(faith) & (w > 0)
        resampled.append((w[keep] * faith[keep]).sum() / w[keep].sum() if keep.any() else np.nan)
    low, high = np.nanpercentile(resampled, [2.5, 97.5])
    assert values["faithfulness"]["ci_low"] == pytest.approx(low)
    assert values["faithfulness"]["ci_high"] == pytest.approx(high)


def _ragchecker(c: InstanceClaims) -> dict[str, float]:
    """RAGChecker's per-query formulas (``ragchecker/computation.py``) on boolean check matrices built from
    set membership: retrieved2answer[a, k] (hit k holds gold claim a), retrieved2response[r, k],
    answer2response[r] (the gold holds response claim r), response2answer[a]."""
    gold, answer = sorted(c.gold), sorted(c.answer)
    r2a = np.array([[a in h for h in c.hits] for a in gold], dtype=bool).reshape(len(gold), len(c.hits))
    r2r = np.array([[r in h for h in c.hits] for r in answer], dtype=bool).reshape(len(answer), len(c.hits))
    a2r = np.array([r in c.gold for r in answer], dtype=bool)
    resp2a = np.array([a in c.answer for a in gold], dtype=bool)
    out: dict[str, float] = {}
    recalled = r2a.max(axis=1)  # evaluate_retrieval
    out["claim_recall"] = recalled.mean()
    out["context_precision"] = r2a.max(axis=0).mean()
    out["context_utilization"] = (recalled & resp2a).sum() / recalled.sum() if recalled.sum() else 0.0
    if len(answer):  # evaluate_noise_sensitivity, evaluate_unfaithfulness, evaluate_faithfulness
        relevant = r2a.max(axis=0, keepdims=True)
        relevant_faithful = (relevant & r2r).max(axis=1)
        irrelevant_faithful = (~relevant & r2r).max(axis=1) & ~relevant_faithful
        out["noise_sensitivity_relevant"] = (relevant_faithful & ~a2r).mean()
        out["noise_sensitivity_irrelevant"] = (irrelevant_faithful & ~a2r).mean()
        unfaithful = ~r2r.max(axis=1)
        out["hallucination"] = (unfaithful & ~a2r).mean()
        out["self_knowledge"] = (unfaithful & a2r).mean()
        out["faithfulness"] = r2r.max(axis=1).mean()
    else:  # RAGChecker scores a response without claims 0 on each
        out |= dict.fromkeys(("noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination",
                              "self_knowledge", "faithfulness"), 0.0)
    return out


def test_every_instance_value_matches_ragchecker_formulas() -> None:
    rng = random.Random(3)
    items = ["a", "b", "c", "d", "e"]
    undefined = 0
    for _ in range(400):
        gold = F(rng.sample(items, rng.randint(1, 3)))
        answer = F(rng.sample(items, rng.randint(0, 3)))
        hits = tuple(F(rng.sample(items, rng.randint(0, 2))) for _ in range(rng.randint(1, 4)))
        instance = InstanceClaims(gold, answer, hits)
        ours, theirs = claim_scores(instance), _ragchecker(instance)
        for name, value in theirs.items():
            if ours[name] is None:  # undefined here, scored 0 there (docs/DEVIATIONS.md)
                undefined += 1
                assert value == 0.0
            else:
                assert ours[name] == pytest.approx(value), (name, gold, answer, hits)
    assert undefined > 0  # both undefined cases (empty answer, nothing recalled) were drawn


def test_only_tasks_with_shared_items_are_diagnosed() -> None:
    assert diagnosable("classification") and diagnosable("triple_extraction") and diagnosable("nli")
    assert diagnosable("link_prediction") and diagnosable("multilabel_classification")
    assert not diagnosable("qa") and not diagnosable("no_such_task")


@pytest.mark.parametrize("name", ["biorab.diagnostics.claims", "biorab.diagnostics.cell_claims"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_rows_become_items_as_the_task_normalizes_them() -> None:
    from biorab.diagnostics.cell_claims import instance_claims

    row = {"id": "t1", "label": "Aspirin|causes|Bleeding", "pred_ok": True,
           "pred_label": "ASPIRIN|causes|bleeding\nfoo|bar|baz",
           "hits": json.dumps([{"value": "aspirin |causes|  bleeding\nx|y|z"}, {"value": None}])}
    failed = {**row, "id": "t2", "pred_ok": False}
    twin = {"t1": F({"aspirin|causes|bleeding"})}
    (_, claims), (_, unparsed) = instance_claims("triple_extraction", [row, failed], twin)
    assert claims.gold == F({"aspirin|causes|bleeding"}) and claims.twin == twin["t1"]
    assert claims.hits == (F({"aspirin|causes|bleeding", "x|y|z"}), F())
    s = claim_scores(claims)
    # the gold triple is held by hit 1 (relevant; hit 2 is unlabeled): recall 1, precision 1/2; the answer's
    # two triples: the gold one (supported) and foo|bar|baz (no hit holds it: a hallucination)
    assert (s["claim_recall"], s["context_precision"], s["context_utilization"]) == (1.0, 0.5, 1.0)
    assert (s["faithfulness"], s["hallucination"], s["self_knowledge"]) == (0.5, 0.5, 0.0)
    assert unparsed.answer == F() and unparsed.twin is None


def test_a_malformed_hit_label_is_one_item_of_its_own() -> None:
    # a corpus method (LLM labeling) can write a triple hit's value as a bare word: it holds no gold triple
    # and supports no answer triple, but it is a hit (in the precision's denominator), never an error
    from biorab.diagnostics.cell_claims import instance_claims

    row = {"id": "t1", "label": "a|r|b", "pred_ok": True, "pred_label": "a|r|b",
           "hits": json.dumps([{"value": "y"}, {"value": "a|r|b"}])}
    ((_, claims),) = instance_claims("triple_extraction", [row], None)
    assert claims.hits == (F({"y"}), F({"a|r|b"}))
    s = claim_scores(claims)
    # gold a|r|b held by hit 2 only: precision 1/2; the answer's one triple supported: faithfulness 1
    assert (s["claim_recall"], s["context_precision"], s["faithfulness"]) == (1.0, 0.5, 1.0)
