"""Add-Link candidates and composed reference MoAs (spec §6.1–6.5).

A *target* is (target MoA, Protein P, relation r) where some drug/protein/chemical acts on P through an
invertible relation r. A *source* MoA contributes a node s (its drug for surface samples, one of its
Proteins for deep ones) that is linked to P by a new relation chosen so the composed MoA
``drug(sm) -> ... -> s -> P -> ... -> disease(tm)`` reduces the disease. The negative inverts that relation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import networkx as nx

from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.graph.simulator import (
    INVERSE_RELATIONS,
    NEGATIVE,
    POSITIVE,
    direction,
    is_simulatable,
    simulate,
)

REQUIRED_SOURCE_TYPES = frozenset({"Drug", "Protein", "ChemicalSubstance"})


@dataclass(frozen=True, eq=False)
class Target:
    """A target triple: the target MoA, its Protein node and the invertible relation entering it."""

    moa: MoA
    protein: str
    relation: str


@dataclass(frozen=True, eq=False)
class AddLinkCandidate:
    """One Add-Link positive: source MoA and node, target, and the new relation ``source -> protein``."""

    source_moa: MoA
    source_node: str
    target: Target
    new_relation: str

    @property
    def is_surface(self) -> bool:
        return self.source_node == self.source_moa.root


def add_link_targets(db: DrugMechDB) -> list[Target]:
    """All target triples of `db` (spec §6.1); on the reduced DB: 5,201 in 2,473 MoAs."""
    targets: list[Target] = []
    for moa in db:
        for protein in moa.nodes_of_type("Protein"):
            relations: dict[str, None] = {}  # ordered set: first occurrence order
            for u, _, rel in moa.graph.in_edges(protein, keys=True):
                if moa.node_type(u) in REQUIRED_SOURCE_TYPES and rel in INVERSE_RELATIONS:
                    relations.setdefault(rel, None)
            targets.extend(Target(moa, protein, rel) for rel in relations)
    return targets


class SourceIndex:
    """Fast `sources(target)` over one DB: node sets are computed once (spec §6.2).

    Args:
        db: the reduced DB the sources come from.
        known_pairs: drug–disease pairs to exclude as (source drug, target disease); the deviation that
            stands in for the unreleased ``has_indication`` filter (spec §1.3). Empty disables it.
    """

    def __init__(self, db: DrugMechDB, known_pairs: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.moas = db.moas
        self.nodes = {m.moa_id: frozenset(m.graph.nodes) for m in db.moas}
        self.known_pairs = known_pairs
        # inverted indexes, so that a query excludes MoAs by lookup instead of scanning all of them
        self._position = {m.moa_id: i for i, m in enumerate(db.moas)}
        self._by_root: dict[str, list[int]] = defaultdict(list)
        self._by_sink: dict[str, list[int]] = defaultdict(list)
        self._by_node: dict[str, list[int]] = defaultdict(list)
        for i, m in enumerate(db.moas):
            self._by_root[m.root].append(i)
            self._by_sink[m.sink].append(i)
            for node in m.graph.nodes:
                self._by_node[node].append(i)
        self._known_drugs: dict[str, set[str]] = defaultdict(set)
        for drug, disease in known_pairs:
            self._known_drugs[disease].add(drug)

    def sources(self, target: Target) -> list[MoA]:
        """The source MoAs allowed for `target`, in DB order."""
        tm = target.moa
        excluded: set[int] = set(self._by_sink.get(tm.sink, ())) | set(self._by_node.get(target.protein, ()))
        if tm.moa_id in self._position:
            excluded.add(self._position[tm.moa_id])
        for drug in (*tm.graph.nodes, *self._known_drugs.get(tm.sink, ())):
            excluded.update(self._by_root.get(drug, ()))
        return [sm for i, sm in enumerate(self.moas) if i not in excluded]

    def is_source(self, sm: MoA, target: Target) -> bool:
        """Whether `sm` may be the source MoA of `target` (spec §6.2)."""
        tm, p = target.moa, target.protein
        tm_nodes = self.nodes.get(tm.moa_id) or frozenset(tm.graph.nodes)
        sm_nodes = self.nodes.get(sm.moa_id) or frozenset(sm.graph.nodes)
        return (sm is not tm and sm.root not in tm_nodes and sm.sink != tm.sink and p not in sm_nodes
                and (sm.root, tm.sink) not in self.known_pairs)


def new_relation(relation: str, source_level: int, target_level: int) -> str:
    """`relation` if its direction equals ``source_level * target_level``, else its inverse (spec §6.3)."""
    wanted = source_level * target_level
    return relation if direction(relation) == wanted else INVERSE_RELATIONS[relation]


def candidates(source_moa: MoA, target: Target, *, deep: bool) -> Iterator[AddLinkCandidate]:
    """The positives one (source MoA, target) combination yields: its drug (surface), or each of its
    Protein nodes that is not in the target MoA and has a ±1 level (deep), in node order."""
    target_level = simulate(target.moa).get(target.protein, 0)
    if target_level not in (POSITIVE, NEGATIVE):
        return
    if not deep:
        yield AddLinkCandidate(source_moa, source_moa.root, target,
                               new_relation(target.relation, POSITIVE, target_level))
        return
    levels = simulate(source_moa)
    for s in source_moa.nodes_of_type("Protein"):
        level = levels.get(s, 0)
        if s in target.moa or level not in (POSITIVE, NEGATIVE):
            continue
        yield AddLinkCandidate(source_moa, s, target, new_relation(target.relation, level, target_level))


def _add_paths(new: nx.MultiDiGraph, moa: MoA, start: str, end: str) -> None:
    """Copy every node and keyed edge on the simple paths ``start -> end`` of `moa` (first attrs win)."""
    for path in nx.all_simple_paths(moa.graph, start, end):
        for node in path:
            if node not in new:
                new.add_node(node, **moa.graph.nodes[node])
        for a, b in zip(path, path[1:], strict=False):
            for key in moa.graph[a][b]:
                if not new.has_edge(a, b, key=key):
                    new.add_edge(a, b, key=key)


def compose_moa(cand: AddLinkCandidate, *, relation: str | None = None) -> MoA:
    """The reference MoA of a positive (spec §6.4), or of its negative with ``relation=INV[new]``."""
    sm, tm, p = cand.source_moa, cand.target.moa, cand.target.protein
    new = nx.MultiDiGraph()
    if cand.source_node == sm.root:
        new.add_node(sm.root, **sm.graph.nodes[sm.root])
    else:
        _add_paths(new, sm, sm.root, cand.source_node)
    _add_paths(new, tm, p, tm.sink)
    new.add_edge(cand.source_node, p, key=relation or cand.new_relation)
    attrs = {"_id": f"{sm.root}_{tm.sink}_AddLink", "source_moa": sm.moa_id,
             "source_node": cand.source_node, "target_moa": tm.moa_id, "target_protein": p}
    new.graph.update(attrs)
    return MoA(str(attrs["_id"]), new, sm.root, tm.sink, attrs)


def validate_candidate(cand: AddLinkCandidate) -> str | None:
    """None when the composed MoA is acyclic, simulates to -1, and its negative to +1 (spec §6.5)."""
    positive = compose_moa(cand)
    if not is_simulatable(positive):
        return "the composed MoA cannot be simulated (a cycle)"
    if simulate(positive).get(positive.sink, 0) != NEGATIVE:
        return "the composed MoA does not reduce the disease"
    negative = compose_moa(cand, relation=INVERSE_RELATIONS[cand.new_relation])
    if simulate(negative).get(negative.sink, 0) != POSITIVE:
        return "the negative's composed MoA does not raise the disease"
    return None

