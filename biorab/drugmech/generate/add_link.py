"""Add-Link generation (spec §6.6): seeded sampling of (source MoA, target) combinations into query records.

The loop draws a random target, then a random source MoA for it, skips a combination already used, and
emits one sample (surface) or one group with a sample per eligible Protein of the source MoA (deep, cut to
fill the quota exactly). Candidates whose composed MoA fails the simulator are dropped (spec §6.5).
Negatives are the positives, index-aligned, with ``new_relation`` inverted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from biorab.common.errors import ConfigError, DataError
from biorab.drugmech.generate.add_link_candidates import (
    AddLinkCandidate,
    SourceIndex,
    Target,
    add_link_targets,
    candidates,
    validate_candidate,
)
from biorab.drugmech.generate.edit_link_candidates import reduced_db
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.simulator import INVERSE_RELATIONS
from biorab.drugmech.queries.query_files import ADD_LINK, CounterfactualQuery, EditLinkInfo


@dataclass(frozen=True)
class AddLinkSet:
    """A generated Add-Link set: positives and their index-aligned negatives, plus the candidates dropped
    because their composed MoA failed validation (``moa id: reason``)."""

    positives: list[CounterfactualQuery]
    negatives: list[CounterfactualQuery]
    dropped: list[str]


def addlink_query(cand: AddLinkCandidate, *, negative: bool = False) -> CounterfactualQuery:
    """The released-schema record of a candidate (raw DrugMechDB names and types, spec §6.6)."""
    sm, tm, p, s = cand.source_moa, cand.target.moa, cand.target.protein, cand.source_node
    relation = INVERSE_RELATIONS[cand.new_relation] if negative else cand.new_relation
    info = EditLinkInfo(
        source_moa_id=sm.moa_id, source_node=s, source_node_name=sm.node_name(s),
        source_node_type=sm.node_type(s), target_moa_id=tm.moa_id, target_node=p,
        target_node_name=tm.node_name(p), target_node_type=tm.node_type(p), new_relation=relation,
    )
    return CounterfactualQuery(negative, ADD_LINK, sm.root, tm.sink, sm.drug_name, tm.disease_name, info)


def known_pairs(db: DrugMechDB) -> frozenset[tuple[str, str]]:
    """Every (drug, disease) pair with a MoA in `db`: the stand-in ``has_indication`` filter."""
    return frozenset(db.by_pair)


def find_candidate(index: SourceIndex, db: DrugMechDB, query: CounterfactualQuery) -> AddLinkCandidate | None:
    """The pool member that reproduces a released Add-Link positive, or None (spec §13 check 3).

    Tries every in-relation of the target protein, as the released files do not store it.
    """
    e = query.edit_link_info
    if e.source_moa_id not in db or e.target_moa_id not in db:
        return None
    sm, tm = db[e.source_moa_id], db[e.target_moa_id]
    deep = e.source_node != sm.root
    for target in (t for t in add_link_targets(db.subset([tm])) if t.protein == e.target_node):
        if not index.is_source(sm, target):
            continue
        for cand in candidates(sm, target, deep=deep):
            if cand.source_node == e.source_node and addlink_query(cand) == query:
                return cand
    return None


def _draw_group(
    rng: random.Random, targets: list[Target], index: SourceIndex, deep: bool, used: set[tuple[str, int]]
) -> tuple[list[AddLinkCandidate], list[str]]:
    ti = rng.randrange(len(targets))
    target = targets[ti]
    sources = index.sources(target)
    if not sources:
        return [], []
    sm = rng.choice(sources)
    if (sm.moa_id, ti) in used:
        return [], []
    used.add((sm.moa_id, ti))
    kept, dropped = [], []
    for cand in candidates(sm, target, deep=deep):
        problem = validate_candidate(cand)
        if problem is None:
            kept.append(cand)
        else:
            edge = f"{sm.moa_id} {cand.source_node} -> {target.moa.moa_id} {target.protein}"
            dropped.append(f"{edge}: {problem}")
    return kept, dropped


def generate_add_links(
    db: DrugMechDB, *, depth: str, n: int = 1000, seed: int = 42, exclude_known_pairs: bool = True,
    max_draws: int = 1_000_000,
) -> AddLinkSet:
    """Generate an Add-Link set from the full DrugMechDB `db` (spec §6).

    Args:
        db: the full DB (sources and targets come from its reduced DB; known pairs from all of it).
        depth: ``surface`` (source node = the source drug) or ``deep`` (source nodes = Proteins).
        n: positives (and negatives) to emit.
        seed: seeds the `random.Random` (``f"addlink-{depth}-{seed}"``) that draws targets and sources.
        exclude_known_pairs: skip a source drug and target disease that already have a DrugMechDB MoA
            (our stand-in for the paper's unreleased ``has_indication`` filter).
        max_draws: give up (DataError) after this many draws, so an impossible quota cannot loop forever.
    """
    if depth not in ("surface", "deep"):
        raise ConfigError(f"unknown depth {depth!r}; choose surface or deep", key="depth")
    if n <= 0:
        raise ConfigError(f"n must be positive, got {n}", key="n")
    red = reduced_db(db)
    index = SourceIndex(red, known_pairs(db) if exclude_known_pairs else frozenset())
    targets = add_link_targets(red)
    if not targets:  # e.g. every MoA has a cycle or a relation without a direction
        raise DataError(
            f"no Add-Link targets (a Protein with an invertible in-link) in the {len(red)} valid MoAs of "
            f"{len(db)}; cannot generate {depth} Add-Link samples"
        )
    # One stream per depth: with a shared stream, surface and deep sets made with the same seed would draw
    # the same (source MoA, target) combinations, whereas the paper's two files share none (spec §6.6).
    rng = random.Random(f"addlink-{depth}-{seed}")
    used: set[tuple[str, int]] = set()
    chosen: list[AddLinkCandidate] = []
    dropped: list[str] = []
    for _ in range(max_draws):
        if len(chosen) >= n:
            break
        kept, lost = _draw_group(rng, targets, index, depth == "deep", used)
        chosen.extend(kept)
        dropped.extend(lost)
    else:
        raise DataError(f"only {len(chosen)} of {n} Add-Link samples found in {max_draws} draws")
    chosen = chosen[:n]  # the last deep group is cut so the file has exactly n rows
    return AddLinkSet([addlink_query(c) for c in chosen], [addlink_query(c, negative=True) for c in chosen],
                      dropped)
