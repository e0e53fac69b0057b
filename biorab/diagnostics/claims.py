"""RAGChecker's per-query metrics for one instance, with no judge: the claims are the task's answer items
(`biorab.tasks.TaskType.answer_items`) and "a hit entails an item" is "the hit's label holds the item".

RAGChecker (Ru et al. 2024; ``ragchecker/computation.py``) checks four relations with an LLM: gold claims
in the response (``response2answer``), response claims in the gold (``answer2response``), gold claims in
each retrieved chunk (``retrieved2answer``) and response claims in each chunk (``retrieved2response``).
Here each one is set membership on exact items, so every value below is exact. Each metric is a ratio with
a per-instance denominator; an instance whose denominator is empty has no value (``None``) and is left out
of the cell's mean (RAGChecker scores it 0: docs/DEVIATIONS.md, "Claim diagnostics").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The metrics in report order (docs/metrics.md, "Claim diagnostics").
CLAIM_RECALL = "claim_recall"
CONTEXT_PRECISION = "context_precision"
CONTEXT_UTILIZATION = "context_utilization"
NOISE_RELEVANT = "noise_sensitivity_relevant"
NOISE_IRRELEVANT = "noise_sensitivity_irrelevant"
HALLUCINATION = "hallucination"
SELF_KNOWLEDGE = "self_knowledge"
KNEW_IT = "self_knowledge_knew_it"
WITHOUT_SUPPORT = "right_without_support"
FAITHFULNESS = "faithfulness"
NAMES: tuple[str, ...] = (CLAIM_RECALL, CONTEXT_PRECISION, CONTEXT_UTILIZATION, NOISE_RELEVANT,
                          NOISE_IRRELEVANT, HALLUCINATION, SELF_KNOWLEDGE, KNEW_IT, WITHOUT_SUPPORT,
                          FAITHFULNESS)


@dataclass(frozen=True)
class InstanceClaims:
    """One instance's items: the gold's, the answer's (empty for a parse failure), each retrieved hit's
    label's (empty for an unlabeled hit), in rank order, and the no-retrieval twin's answer (``None``: the
    instance has no twin row)."""

    gold: frozenset[str]
    answer: frozenset[str]
    hits: tuple[frozenset[str], ...]
    twin: frozenset[str] | None = None


def claim_scores(claims: InstanceClaims) -> dict[str, float | None]:
    """Every metric of `NAMES` on one instance (``None`` where its denominator is empty).

    Retriever side, over the gold items (RAGChecker's ``evaluate_retrieval``,
    ``evaluate_context_utilization``):

    - claim_recall: gold items some hit holds / gold items;
    - context_precision: hits holding some gold item (*relevant* hits) / hits (needs gold items);
    - context_utilization: gold items some hit holds and the answer holds / gold items some hit holds.

    Generator side, over the answer's items (``evaluate_noise_sensitivity``, ``evaluate_unfaithfulness``,
    ``evaluate_faithfulness``); an item is *correct* when the gold holds it, *supported* when a hit holds it:

    - noise_sensitivity_relevant: wrong items some relevant hit holds / answer items;
    - noise_sensitivity_irrelevant: wrong items no relevant hit but some irrelevant hit holds / answer items;
    - hallucination: wrong unsupported items / answer items;
    - self_knowledge: correct unsupported items / answer items, split by the twin's answer into
      self_knowledge_knew_it (the twin's answer holds the item too) and right_without_support (it does not;
      both ``None`` without a twin row);
    - faithfulness: supported items / answer items (so faithfulness + hallucination + self_knowledge = 1).

    >>> s = claim_scores(InstanceClaims(frozenset({"A"}), frozenset({"B"}), (frozenset({"B"}),)))
    >>> s["claim_recall"], s["context_precision"], s["noise_sensitivity_irrelevant"], s["faithfulness"]
    (0.0, 0.0, 1.0, 1.0)
    """
    gold, answer, hits = claims.gold, claims.answer, claims.hits
    relevant = [bool(h & gold) for h in hits]
    recalled = {a for a in gold if any(a in h for h in hits)}
    out: dict[str, float | None] = dict.fromkeys(NAMES)
    if gold:
        out[CLAIM_RECALL] = len(recalled) / len(gold)
        out[CONTEXT_PRECISION] = sum(relevant) / len(hits) if hits else None
    if recalled:
        out[CONTEXT_UTILIZATION] = len(recalled & answer) / len(recalled)
    if not answer:
        return out
    counts = dict.fromkeys(NAMES[3:], 0)
    for item in answer:
        in_relevant = _held(item, hits, relevant, True)
        in_irrelevant = not in_relevant and _held(item, hits, relevant, False)
        correct = item in gold
        supported = in_relevant or in_irrelevant
        counts[NOISE_RELEVANT] += in_relevant and not correct
        counts[NOISE_IRRELEVANT] += in_irrelevant and not correct
        counts[HALLUCINATION] += not supported and not correct
        counts[SELF_KNOWLEDGE] += not supported and correct
        counts[FAITHFULNESS] += supported
        if claims.twin is not None and correct and not supported:
            counts[KNEW_IT if item in claims.twin else WITHOUT_SUPPORT] += 1
    for name, count in counts.items():
        if name not in (KNEW_IT, WITHOUT_SUPPORT) or claims.twin is not None:
            out[name] = count / len(answer)
    return out


def _held(item: str, hits: Sequence[frozenset[str]], relevant: Sequence[bool], which: bool) -> bool:
    """Whether a hit whose relevance is `which` holds `item`."""
    return any(item in h for h, r in zip(hits, relevant, strict=True) if r is which)
