"""Graph consistency between a reference MoA and the MoA an LLM answered (spec §10).

1. Node matching: approximate name match (character 2-4-gram TF-IDF fitted on the reference names, as
   the original; or `rapidfuzz` token-set ratio as an option), threshold 0.5, greedy by descending score,
   types must agree (Protein and GeneFamily count as one); the roots and sinks are mapped to each other.
2. ``interior_node_match``: the share of reference interior nodes that are mapped.
3. Directional consistency: the reference is reduced to its mapped nodes (paths through unmapped nodes
   become edges); ``reduced_edge_match`` is the share of its distinct edges (u, v) whose images are
   connected by a directed path in the answer (or coincide); ``edge_match`` divides by all reference edges.

Deviation [I]: score ties follow (reference node order, target node order) instead of the original's
unstable argsort.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from biorab.drugmech.graph.moa import NODE_NAME, NODE_TYPE, MoA, reduce_graph
from biorab.drugmech.parsing.moa_answer import ParsedMoA
from biorab.drugmech.tfidf import TfidfMatcher

MIN_NODE_SCORE = 0.5
NODE_MATCHERS: tuple[str, ...] = ("tfidf", "rapidfuzz")
_EQUIVALENT_TYPES = frozenset({"Protein", "GeneFamily"})
_GREEK = str.maketrans(
    {
        "α": "alpha",
        "β": "beta",
        "γ": "gamma",
        "δ": "delta",
        "ε": "epsilon",
        "Α": "Alpha",
        "Β": "Beta",
        "Γ": "Gamma",
        "Δ": "Delta",
        "Ε": "Epsilon",
    }
)
_NON_WORD = re.compile(r"(?:\W|_)")


@dataclass(frozen=True)
class GraphMatch:
    """The consistency scores of one answer against its reference.

    `interior_node_match` is None when either graph lacks a root or a sink (means count it as 0).
    `mapping` maps reference node ids to answer node ids.
    """

    interior_node_match: float | None
    reduced_edge_match: float
    edge_match: float
    mapping: dict[str, str] = field(default_factory=dict)
    minimal_match: bool = False
    minimal_target: bool = False


def normalize_name(name: str) -> str:
    """Punctuation to spaces, Greek letters spelled out, casefolded, single-spaced.

    >>> normalize_name("α1A-Adrenergic_receptor")
    'alpha1a adrenergic receptor'
    """
    return " ".join(_NON_WORD.sub(" ", name).translate(_GREEK).casefold().split())


def _types_agree(t_type: str, r_type: str) -> bool:
    return t_type == r_type or {t_type, r_type} <= _EQUIVALENT_TYPES


def _scores(ref_names: list[str], target_names: list[str], matcher: str) -> list[list[float]]:
    """``S[t][r]``: similarity of target name t to reference name r."""
    if matcher == "rapidfuzz":
        from rapidfuzz import fuzz

        return [[fuzz.token_set_ratio(t, r) / 100.0 for r in ref_names] for t in target_names]
    tfidf = TfidfMatcher(ref_names, ngram_range=(2, 4))
    return [tfidf.similarities(t) for t in target_names]


def match_nodes(reference: MoA, target: ParsedMoA, *, matcher: str = "tfidf") -> dict[str, str]:
    """The injective, partial map reference node -> answer node (spec §10.1)."""
    if matcher not in NODE_MATCHERS:
        raise ValueError(f"unknown node matcher {matcher!r}; allowed: {', '.join(NODE_MATCHERS)}")
    ref_nodes, t_nodes = list(reference.graph.nodes), list(target.graph.nodes)
    mapping: dict[str, str] = {}
    if target.root is not None:
        mapping[reference.root] = target.root
    if target.sink is not None and reference.sink not in mapping and target.sink not in mapping.values():
        mapping[reference.sink] = target.sink
    if not t_nodes:
        return mapping
    ref_names = [normalize_name(reference.node_name(n)) for n in ref_nodes]
    t_names = [normalize_name(str(target.graph.nodes[n][NODE_NAME])) for n in t_nodes]
    scores = _scores(ref_names, t_names, matcher)
    pairs = [(scores[ti][ri], ri, ti) for ti in range(len(t_nodes)) for ri in range(len(ref_nodes))]
    pairs = sorted((p for p in pairs if p[0] >= MIN_NODE_SCORE), key=lambda p: (-p[0], p[1], p[2]))
    used = set(mapping.values())
    for _score, ri, ti in pairs:
        if len(used) == len(t_nodes):
            break
        r, t = ref_nodes[ri], t_nodes[ti]
        if r in mapping or t in used:
            continue
        if not _types_agree(str(target.graph.nodes[t][NODE_TYPE]), reference.node_type(r)):
            continue
        mapping[r] = t
        used.add(t)
    return mapping


def _closure(graph: nx.MultiDiGraph) -> nx.DiGraph:
    simple = nx.DiGraph(graph)
    if nx.is_directed_acyclic_graph(simple):
        return nx.transitive_closure_dag(simple)
    return nx.transitive_closure(simple, reflexive=False)


def _edge_scores(reference: MoA, target: ParsedMoA, mapping: dict[str, str]) -> tuple[float, float]:
    both_ends = target.root is not None and target.sink is not None
    if len(mapping) <= 1 or (both_ends and len(mapping) <= 2 < len(reference)):
        return 0.0, 0.0
    reduced = reduce_graph(reference.graph, mapping.keys())
    pairs = {(u, v) for u, v in reduced.edges()}
    closure = _closure(target.graph)
    consistent = sum(
        1 for u, v in pairs if mapping[u] == mapping[v] or closure.has_edge(mapping[u], mapping[v])
    )
    n_edges = reference.graph.number_of_edges()
    return (consistent / len(pairs) if pairs else 0.0), (consistent / n_edges if n_edges else 0.0)


def match_graphs(
    reference: MoA,
    target: ParsedMoA,
    *,
    prompt_ref_nodes: Sequence[str] = (),
    matcher: str = "tfidf",
) -> GraphMatch:
    """Score an answered MoA against its reference (spec §10.1-10.3).

    Args:
        reference: The DrugMechDB MoA (factual) or the composed MoA (Add-Link).
        target: The parsed answer graph.
        prompt_ref_nodes: Reference nodes the prompt named (for the "very different MoA" test).
        matcher: ``tfidf`` (the original) or ``rapidfuzz``.
    """
    mapping = match_nodes(reference, target, matcher=matcher)
    interior: float | None = None
    if target.root is not None and target.sink is not None:
        n_interior = len(reference) - 2
        inner = [r for r in mapping if r not in (reference.root, reference.sink)]
        interior = len(inner) / n_interior if n_interior > 0 else 0.0
    reduced, full = _edge_scores(reference, target, mapping)
    k = len(prompt_ref_nodes)
    k_matched = sum(1 for n in prompt_ref_nodes if n in mapping)
    n_target = target.graph.number_of_nodes()
    minimal = len(reference) > k + 2 and n_target > 0 and len(mapping) <= k_matched + 2
    return GraphMatch(
        interior_node_match=interior,
        reduced_edge_match=reduced,
        edge_match=full,
        mapping=mapping,
        minimal_match=minimal,
        minimal_target=minimal and len(set(mapping.values())) == n_target,
    )
