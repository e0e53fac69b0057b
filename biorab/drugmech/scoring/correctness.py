"""Per-sample correctness of Drug Mechanisms answers (spec §5.4, §10, §11).

| query | correct |
|---|---|
| factual / Add-Link positive | the answer is YES (graph scores are reported beside it, they do not gate it) |
| factual negative | the answer is NO |
| Add-Link negative | NO's best match beats YES's (§9.3) |
| Delete / Invert | the option table below, strict and relaxed |

An unparsed or incomplete answer is wrong in every case and is counted separately by the aggregates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from biorab.drugmech.generate.add_link_candidates import AddLinkCandidate, Target, compose_moa
from biorab.drugmech.graph.moa import MoA, capitalize_words
from biorab.drugmech.parsing.moa_answer import parse_moa_answer
from biorab.drugmech.parsing.option_answer import ROBUST, STRICT_ORIGINAL, parse_option
from biorab.drugmech.parsing.yes_no_answer import decide_yes_no
from biorab.drugmech.prompts.factual import ANONYMIZED, NAMED, factual_prompt_nodes
from biorab.drugmech.prompts.moa_text import MoaLookup, lookup_moa
from biorab.drugmech.queries.query_files import (
    ADD_LINK,
    CHANGE_LINK,
    DELETE_LINK,
    CounterfactualQuery,
    FactualQuery,
    Query,
)
from biorab.drugmech.scoring.graph_matching import NODE_MATCHERS, match_graphs

# (query type, is negative) -> (strict, relaxed) sets of correct options (spec §5.4).
CORRECT_OPTIONS: dict[tuple[str, bool], tuple[frozenset[str], frozenset[str]]] = {
    (DELETE_LINK, False): (frozenset({"Fully Blocked"}), frozenset({"Fully Blocked", "Partially Blocked"})),
    (DELETE_LINK, True): (frozenset({"No Effect"}), frozenset({"No Effect"})),
    (CHANGE_LINK, False): (
        frozenset({"Contra-indicated", "Fully Blocked"}),
        frozenset({"Contra-indicated", "Fully Blocked", "Partially Blocked"}),
    ),
    (CHANGE_LINK, True): (frozenset({"No Effect"}), frozenset({"No Effect"})),
}


@dataclass(frozen=True)
class SampleScore:
    """The verdict on one answer. Fields that do not apply to the query type are None."""

    parsed: bool
    option: str | None
    yes_no: str | None
    interior_node_match: float | None
    reduced_edge_match: float | None
    correct_strict: bool
    correct_relaxed: bool | None
    incomplete: bool = False


def incomplete_score(query_type: str) -> SampleScore:
    """The verdict on a response cut off before its end (``finish_reason`` not "stop"): wrong, flagged."""
    relaxed = False if query_type in (DELETE_LINK, CHANGE_LINK) else None
    return SampleScore(False, None, None, None, None, False, relaxed, incomplete=True)


def addlink_reference(query: CounterfactualQuery, moas: MoaLookup | None) -> MoA:
    """The composed reference MoA of an Add-Link sample (spec §6.4), built from its two DrugMechDB MoAs."""
    info = query.edit_link_info
    source = lookup_moa(moas, info.source_moa_id, needed_for="the Add-Link reference MoA")
    target = lookup_moa(moas, info.target_moa_id, needed_for="the Add-Link reference MoA")
    assert info.new_relation is not None  # checked when the query file was loaded
    cand = AddLinkCandidate(source, info.source_node, Target(target, info.target_node, ""), info.new_relation)
    return compose_moa(cand)


def _score_option(query: CounterfactualQuery, text: str, parser: str) -> SampleScore:
    choice = parse_option(text, mode=parser)
    strict, relaxed = CORRECT_OPTIONS[(query.query_type, query.is_negative_sample)]
    return SampleScore(
        parsed=choice.option is not None,
        option=choice.option,
        yes_no=None,
        interior_node_match=None,
        reduced_edge_match=None,
        correct_strict=choice.option in strict,
        correct_relaxed=choice.option in relaxed,
    )


# Builds the reference MoA and the prompt's reference nodes; called only when the answer has a graph, so a
# NO answer to a positive never needs DrugMechDB.
ReferenceFactory = Callable[[], tuple[MoA, list[str]]]


def _score_graph_answer(
    text: str,
    reference: ReferenceFactory | None,
    *,
    drug: str,
    disease: str,
    anonymized: bool,
    parser: str,
    matcher: str,
) -> SampleScore:
    answer = parse_moa_answer(text, drug_name=drug, disease_name=disease, anonymized=anonymized, mode=parser)
    interior: float | None = None
    reduced: float | None = None
    if reference is not None and answer.moa is not None:
        moa, ref_nodes = reference()
        match = match_graphs(moa, answer.moa, prompt_ref_nodes=ref_nodes, matcher=matcher)
        interior, reduced = match.interior_node_match, match.reduced_edge_match
    elif reference is not None and parser == STRICT_ORIGINAL:
        # Spec §10.2: the original matched an empty candidate graph, so no node maps ("|mapped| <= 1:
        # edge scores 0") and the interior score is undefined (no root or sink). Robust leaves both unset.
        reduced = 0.0
    return SampleScore(answer.parsed, None, answer.yes_no, interior, reduced, answer.yes_no == "YES", None)


def _score_addlink(
    query: CounterfactualQuery, text: str, parser: str, moas: MoaLookup | None, matcher: str
) -> SampleScore:
    if query.is_negative_sample:
        decision = decide_yes_no(text, mode=parser)
        correct = decision.answer == "NO"
        return SampleScore(decision.answer is not None, None, decision.answer, None, None, correct, None)
    info = query.edit_link_info
    ref_nodes = (
        [info.target_node] if info.source_node == query.drug_id else [info.source_node, info.target_node]
    )
    return _score_graph_answer(
        text,
        lambda: (addlink_reference(query, moas), ref_nodes),
        drug=capitalize_words(query.drug_name),
        disease=capitalize_words(query.disease_name),
        anonymized=False,
        parser=parser,
        matcher=matcher,
    )


def _score_factual(
    query: FactualQuery, text: str, parser: str, mode: str, moas: MoaLookup | None, matcher: str
) -> SampleScore:
    reference: ReferenceFactory | None = None
    if not query.is_negative_sample and query.moa_id is not None:
        moa_id = query.moa_id

        def reference() -> tuple[MoA, list[str]]:
            moa = lookup_moa(moas, moa_id, needed_for="scoring a factual positive's MoA")
            return moa, factual_prompt_nodes(query, mode=mode, moas=moas)[1]

    disease = query.disease_name if mode == NAMED else capitalize_words(query.disease_name)
    score = _score_graph_answer(
        text,
        reference,
        drug=capitalize_words(query.drug_name),
        disease=disease,
        anonymized=mode == ANONYMIZED,
        parser=parser,
        matcher=matcher,
    )
    if query.is_negative_sample:
        return SampleScore(score.parsed, None, score.yes_no, None, None, score.yes_no == "NO", None)
    return score


def score_answer(
    query: Query,
    text: str,
    *,
    parser: str = ROBUST,
    mode: str = NAMED,
    moas: MoaLookup | None = None,
    matcher: str = "tfidf",
) -> SampleScore:
    """Score one complete answer to one sample.

    Args:
        query: The sample the answer responds to.
        text: The model's message content.
        parser: ``robust`` (default) or ``strict_original``.
        mode: The factual disease mode the prompt used (factual samples only).
        moas: DrugMechDB; needed for the graph scores of Add-Link and factual positives.
        matcher: The node-name matcher of the graph scores: ``tfidf`` (the original) or ``rapidfuzz``.

    Raises:
        DataError: If the reference MoA a positive needs is not available. Model output never raises.
    """
    if matcher not in NODE_MATCHERS:  # checked up front: a NO answer would never reach the matcher
        raise ValueError(f"unknown node matcher {matcher!r}; allowed: {', '.join(NODE_MATCHERS)}")
    if isinstance(query, FactualQuery):
        return _score_factual(query, text, parser, mode, moas, matcher)
    if query.query_type == ADD_LINK:
        return _score_addlink(query, text, parser, moas, matcher)
    return _score_option(query, text, parser)
