"""Disease descriptions ("associated with ...") for the factual prompts (spec §8.1.2, §8.1.4).

Deviation [I]: within one entity type the original iterates a Python set, whose order changes between
processes; here names are sorted (casefolded, then as written) so the prompt is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from biorab.drugmech.graph.moa import MoA, capitalize_words, display_name, type_name
from biorab.drugmech.tfidf import TfidfMatcher

ANATOMY = "GrossAnatomicalStructure"
PHENOTYPE = "PhenotypicFeature"
_NOT_ASSOCIATIONS = frozenset({"Drug", "Disease"})
_ANATOMY_CAUSES = frozenset({"BiologicalProcess", PHENOTYPE})
# A phenotype too similar to the disease name would give the disease away in the anonymized mode.
PHENOTYPE_MAX_SIMILARITY = 0.2

# PrimeKG neighbour types and how the prompt introduces them (singular, plural) (spec §8.1.4).
PRIMEKG_TYPES: dict[str, tuple[str, str]] = {
    "effect/phenotype": ("the Phenotype", "the Phenotypes"),
    "exposure": ("Exposure to", "Exposure to"),
    "gene/protein": ("the Protein", "the Proteins"),
}


def english_join(items: Sequence[str]) -> str:
    """``[a]`` -> ``a``; ``[a, b, c]`` -> ``a, b and c``.

    >>> english_join(["x", "y", "z"])
    'x, y and z'
    """
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _sorted_by_name(moa: MoA, nodes: Sequence[str]) -> list[str]:
    return sorted(nodes, key=lambda n: (moa.node_name(n).casefold(), moa.node_name(n), n))


def _grouped_neighbours(moa: MoA) -> dict[str, list[str]]:
    """Non-drug, non-disease neighbours of the disease, grouped by type in order of first appearance."""
    graph = moa.graph
    seen: dict[str, None] = {}
    for node in [*graph.predecessors(moa.sink), *graph.successors(moa.sink)]:
        if node != moa.sink and moa.node_type(node) not in _NOT_ASSOCIATIONS:
            seen.setdefault(node)
    groups: dict[str, list[str]] = {}
    for node in seen:
        groups.setdefault(moa.node_type(node), []).append(node)
    return groups


def _dissimilar(disease_name: str, names: Sequence[str]) -> list[bool]:
    matcher = TfidfMatcher([disease_name, *names], ngram_range=(2, 4), analyzer="char_wb", lowercase=True)
    reference = matcher.vectors[0]
    return [
        sum(w * reference.get(t, 0.0) for t, w in vec.items()) <= PHENOTYPE_MAX_SIMILARITY
        for vec in matcher.vectors[1:]
    ]


def _label(moa: MoA, node: str) -> str:
    return display_name(moa.node_type(node), moa.node_name(node))


def describe_disease(moa: MoA, *, anonymized: bool) -> tuple[str, list[str]]:
    """The association text of a MoA's disease and the node ids it names, in the order named.

    Anatomical structures come first, each with the biological processes and phenotypes that lead to it;
    then one part per other neighbour type. In the anonymized mode, phenotypes similar to the disease
    name (TF-IDF cosine > 0.2) are left out. Returns ``("", [])`` when nothing is left.
    """
    groups = _grouped_neighbours(moa)
    parts: list[str] = []
    used: list[str] = []
    for anatomy in _sorted_by_name(moa, groups.get(ANATOMY, [])):
        causes = _sorted_by_name(
            moa, [p for p in moa.graph.predecessors(anatomy) if moa.node_type(p) in _ANATOMY_CAUSES]
        )
        where = f"the {type_name(ANATOMY)}: {_label(moa, anatomy)}"
        parts.append(f"{english_join([_label(moa, c) for c in causes])} in {where}" if causes else where)
        used += [anatomy, *causes]
    for node_type, nodes in groups.items():
        if node_type == ANATOMY:
            continue
        kept = _sorted_by_name(moa, nodes)
        if node_type == PHENOTYPE and anonymized:
            keep = _dissimilar(moa.disease_name, [moa.node_name(n) for n in kept])
            kept = [n for n, k in zip(kept, keep, strict=True) if k]
        if not kept:
            continue
        parts.append(
            f"the {type_name(node_type, plural=len(nodes) > 1)}: " + ", ".join(_label(moa, n) for n in kept)
        )
        used += kept
    return "; and ".join(parts), used


def describe_primekg_disease(
    disease_name: str, neighbours: Sequence[tuple[str, str]], *, anonymized: bool
) -> str:
    """The association text of a PrimeKG disease from its ``(type, name)`` neighbours (spec §8.1.4).

    Only phenotype, exposure and gene/protein neighbours are used; protein names keep their case.
    """
    groups: dict[str, list[str]] = {}
    for node_type, name in neighbours:
        if node_type in PRIMEKG_TYPES and name not in groups.get(node_type, []):
            groups.setdefault(node_type, []).append(name)
    parts = []
    for node_type, names in groups.items():
        kept = sorted(names, key=lambda n: (n.casefold(), n))
        if node_type == "effect/phenotype" and anonymized:
            kept = [n for n, k in zip(kept, _dissimilar(disease_name, kept), strict=True) if k]
        if not kept:
            continue
        shown = kept if node_type == "gene/protein" else [capitalize_words(n) for n in kept]
        parts.append(f"{PRIMEKG_TYPES[node_type][len(names) > 1]}: " + ", ".join(shown))
    return "; and ".join(parts)
