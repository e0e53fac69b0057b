"""Reference counts of DrugMechDB and its derived pools (spec §1.1, §3.3, §4.2, §6.1, §13), and the
per-file node-type statistics of a query set (the shape of ``release/DataStats.txt``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from biorab.drugmech.generate.add_link_candidates import add_link_targets
from biorab.drugmech.generate.edit_link_candidates import editable_links, reduced_db
from biorab.drugmech.graph.cut_edges import CUT_EDGE_MODES
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.simulator import is_simulatable, simulate
from biorab.drugmech.queries.query_files import CounterfactualQuery, Query


def _editable_counts(db: DrugMechDB, mode: str) -> dict[str, int]:
    links = list(editable_links(db, mode=mode))
    surface = sum(x.is_surface for x in links)
    return {"links": len(links), "surface": surface, "deep": len(links) - surface,
            "moas": len({x.moa.moa_id for x in links})}


def drugmechdb_stats(db: DrugMechDB) -> dict[str, Any]:
    """Every reference count of spec §13 checks 1–2, computed from `db` (the full DrugMechDB).

    Returns:
        ``{"moas", "pairs", "pairs_with_several_moas", "drugs", "diseases", "simulatable", "valid",
        "sink_levels": {"-1", "0", "1"}, "editable_links": {mode: {"reduced_db": {...}, "full_db": {...}}},
        "add_link_targets": {"triples", "moas"}}``.
    """
    simulatable = [m for m in db if is_simulatable(m)]
    levels = Counter(simulate(m).get(m.sink, 0) for m in simulatable)
    red = reduced_db(db)
    targets = add_link_targets(red)
    return {
        "moas": len(db),
        "pairs": len(db.by_pair),
        "pairs_with_several_moas": sum(len(v) > 1 for v in db.by_pair.values()),
        "drugs": len(db.by_drug),
        "diseases": len(db.by_disease),
        "simulatable": len(simulatable),
        "valid": len(red),
        "sink_levels": {str(k): levels.get(k, 0) for k in (-1, 0, 1)},
        "editable_links": {
            mode: {"reduced_db": _editable_counts(red, mode), "full_db": _editable_counts(db, mode)}
            for mode in CUT_EDGE_MODES
        },
        "add_link_targets": {"triples": len(targets), "moas": len({t.moa.moa_id for t in targets})},
    }


def _mix(types: Sequence[str]) -> dict[str, dict[str, float]]:
    counts = Counter(types)
    n = len(types) or 1
    return {t: {"count": c, "pct": round(100.0 * c / n, 1)} for t, c in sorted(counts.items())}


def query_set_stats(queries: Sequence[Query]) -> dict[str, Any]:
    """Sample count and source/target node-type mixes of a counterfactual set (as in ``DataStats.txt``);
    factual sets get their sample count and negative share only."""
    edits = [q for q in queries if isinstance(q, CounterfactualQuery)]
    out: dict[str, Any] = {"n_samples": len(queries),
                           "negatives": sum(bool(q.is_negative_sample) for q in queries)}
    if edits:
        out["query_type"] = edits[0].query_type
        out["is_surface_level"] = all(q.edit_link_info.source_node == q.drug_id for q in edits)
        out["source_node_types"] = _mix([q.edit_link_info.source_node_type for q in edits])
        out["target_node_types"] = _mix([q.edit_link_info.target_node_type for q in edits])
    return out
