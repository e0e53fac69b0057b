"""Delete-Link and Invert-Link ("change") generation (spec §5), seeded.

Positives are a uniform sample of editable links (surface or deep) from the reduced DB. Negatives take the
first ``n_neg_sources`` positives in order and, for each, ``negs_per_source`` copies whose target is a random
Protein of the full DB that is not in the positive's MoA. Delete and Invert share positives and negatives;
they differ only in ``query_type`` and ``new_relation``. Every positive is checked with the simulator: with
the link deleted the drug no longer reaches the disease, and with it inverted the disease rises (+1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from biorab.common.errors import ConfigError, DataError
from biorab.drugmech.generate.edit_link_candidates import EditableLink, editable_links, reduced_db
from biorab.drugmech.generate.sampling import sample_links
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.moa import MoA, display_name, type_name
from biorab.drugmech.graph.simulator import POSITIVE, simulate
from biorab.drugmech.queries.query_files import CHANGE_LINK, DELETE_LINK, CounterfactualQuery, EditLinkInfo

INCREASE = "an increase in levels of"
DECREASE = "a decrease in levels of"
DEPTHS: tuple[str, ...] = ("surface", "deep")


@dataclass(frozen=True)
class EditLinkSet:
    """A generated Delete/Invert set: positives, negatives (derived from the first positives) and the
    positives that failed simulator validation (only possible in ``faithful`` mode; flagged, not dropped,
    because the paper's pool contains them)."""

    positives: list[CounterfactualQuery]
    negatives: list[CounterfactualQuery]
    flagged: list[str] = field(default_factory=list)

    def queries(self, query_type: str, *, negative: bool) -> list[CounterfactualQuery]:
        """The samples as ``DELETE_LINK`` or ``CHANGE_LINK`` records (same links, same order)."""
        chosen = self.negatives if negative else self.positives
        return [as_query_type(q, query_type) for q in chosen]


def as_query_type(query: CounterfactualQuery, query_type: str) -> CounterfactualQuery:
    """Re-label a CHANGE_LINK sample as DELETE_LINK (``new_relation`` null) or keep it as CHANGE_LINK."""
    if query_type == CHANGE_LINK:
        return query
    if query_type != DELETE_LINK:
        raise ConfigError(f"expected {DELETE_LINK} or {CHANGE_LINK}, got {query_type!r}", key="query_type")
    info = query.edit_link_info
    new_info = EditLinkInfo(**{**info.__dict__, "new_relation": None})
    return CounterfactualQuery(**{**query.__dict__, "query_type": DELETE_LINK, "edit_link_info": new_info})


def link_query(link: EditableLink) -> CounterfactualQuery:
    """The CHANGE_LINK positive for one editable link (spec §5.3)."""
    moa, u, v = link.moa, link.source, link.target
    level = simulate(moa).get(u, 0)
    change = INCREASE if level == POSITIVE else DECREASE
    u_name = display_name(moa.node_type(u), moa.node_name(u))
    if moa.node_type(u) == "Drug":
        descr = "the drug " + moa.node_name(u)
    else:
        descr = f"{change} the {type_name(moa.node_type(u))} {u_name}"
    info = EditLinkInfo(
        source_moa_id=moa.moa_id, source_node=u, source_node_name=u_name, source_node_type=moa.node_type(u),
        target_moa_id=moa.moa_id, target_node=v,
        target_node_name=display_name(moa.node_type(v), moa.node_name(v)), target_node_type=moa.node_type(v),
        # the sentence's subject is the change event, so a decreased source keeps the original relation
        new_relation=link.inverse if level == POSITIVE else link.relation,
        original_relation=link.relation, source_change_descr=descr, source_node_level_change=change,
    )
    return CounterfactualQuery(False, CHANGE_LINK, moa.root, moa.sink, moa.drug_name, moa.disease_name, info)


def _edited(moa: MoA, link: EditableLink, relation: str | None) -> MoA:
    graph = moa.graph.copy()
    graph.remove_edge(link.source, link.target, key=link.relation)
    if relation is not None:
        graph.add_edge(link.source, link.target, key=relation)
    return MoA(moa.moa_id, graph, moa.root, moa.sink, dict(moa.attrs))


def validate_link(link: EditableLink) -> str | None:
    """None when the simulator confirms the positive (spec §5.5), else why not."""
    import networkx as nx

    deleted = _edited(link.moa, link, None)
    if nx.has_path(deleted.graph, deleted.root, deleted.sink):
        return "the drug still reaches the disease without the link"
    inverted = _edited(link.moa, link, link.inverse)
    level = simulate(inverted).get(inverted.sink, 0)
    if level != POSITIVE:
        return f"inverting the link gives disease level {level}, not +1"
    return None


def _random_protein(db: DrugMechDB, avoid: MoA, rng: random.Random) -> tuple[str, str]:
    """A uniform MoA, then a uniform Protein in it, redrawn while the protein is in `avoid` (spec §5.2)."""
    for _ in range(100_000):
        moa = rng.choice(db.moas)
        proteins = moa.nodes_of_type("Protein")
        if not proteins:
            continue
        prot = rng.choice(proteins)
        if prot not in avoid:
            return prot, moa.node_name(prot)
    raise DataError(f"no Protein outside MoA {avoid.moa_id} found in DrugMechDB")


def negative_query(pos: CounterfactualQuery, prot: str, name: str) -> CounterfactualQuery:
    """A negative: the positive with its target replaced by an unrelated Protein; other fields unchanged."""
    info = EditLinkInfo(**{**pos.edit_link_info.__dict__, "target_node": prot, "target_node_name": name,
                           "target_node_type": "Protein"})
    return CounterfactualQuery(**{**pos.__dict__, "is_negative_sample": True, "edit_link_info": info})


def generate_edit_links(
    db: DrugMechDB,
    *,
    depth: str,
    n_pos: int = 250,
    n_neg_sources: int = 125,
    negs_per_source: int = 2,
    seed: int = 42,
    mode: str = "exact",
    mix: str = "release",
) -> EditLinkSet:
    """Generate a Delete/Invert set from the full DrugMechDB `db` (spec §5).

    Args:
        db: the full DB; positives come from its reduced DB, negative proteins from all of it.
        depth: ``surface`` (the link starts at the drug) or ``deep``.
        n_pos: positives sampled without replacement, as `mix` says.
        n_neg_sources: how many of the first positives get negatives; ``negs_per_source`` each.
        seed: seeds one `random.Random` used for the positives and then the negatives.
        mode: cut-edge mode, ``exact`` (default) or ``faithful`` (the paper's pool).
        mix: ``release`` (default: stratified to the target-type mix of the paper's files), ``pool``
            (stratified in the pool's proportions) or ``uniform``; see `biorab.drugmech.generate.sampling`.

    Raises:
        ConfigError: bad depth or sizes. DataError: an ``exact`` positive fails validation (a bug).
    """
    if depth not in DEPTHS:
        raise ConfigError(f"unknown depth {depth!r}; choose one of {', '.join(DEPTHS)}", key="depth")
    red = reduced_db(db)
    pool = [x for x in editable_links(red, mode=mode) if x.is_surface == (depth == "surface")]
    if not 0 < n_pos <= len(pool) or not 0 <= n_neg_sources <= n_pos:
        # Name the pool's size and where it comes from: a DrugMechDB whose MoAs have cycles or relations
        # without a direction has few valid MoAs (simulatable, disease at -1), hence few editable links.
        raise ConfigError(
            f"n_pos must be in 1..{len(pool)} and n_neg_sources in 0..n_pos (got {n_pos}, {n_neg_sources}): "
            f"the {depth} pool has {len(pool)} editable links ({mode} mode) from the {len(red)} valid MoAs "
            f"of {len(db)}",
            key="n_pos",
        )
    rng = random.Random(seed)
    links = sample_links(pool, n_pos, rng, mix=mix, depth=depth, stratum=lambda x: x.moa.node_type(x.target))
    flagged = []
    for link in links:
        problem = validate_link(link)
        if problem is not None and mode == "exact":
            raise DataError(f"MoA {link.moa.moa_id}: link {link.source} -> {link.target}: {problem}")
        if problem is not None:
            flagged.append(f"{link.moa.moa_id}: {link.source} -> {link.target}: {problem}")
    positives = [link_query(x) for x in links]
    negatives = []
    for link, pos in zip(links[:n_neg_sources], positives, strict=False):
        for _ in range(negs_per_source):
            negatives.append(negative_query(pos, *_random_protein(db, link.moa, rng)))
    return EditLinkSet(positives, negatives, flagged)
