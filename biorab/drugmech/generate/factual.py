"""The factual (known-MoA) test set (spec §7): DrugMechDB positives, and negatives from the released file,
from a user's PrimeKG, or (no-relation only) from DrugMechDB itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from biorab.common.errors import ConfigError, DataError
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.graph.primekg import PrimeKG
from biorab.drugmech.queries.query_files import FactualQuery, load_release_file

NAMED_DISEASE = "NAMED_DISEASE"
DISEASE_MODES: tuple[str, ...] = ("ANONYMIZED_DISEASE", NAMED_DISEASE, "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS")

# spec §8.1.3: the in-context examples' MoAs and the negative example's pair, never used as test queries.
ICL_EXAMPLE_MOAS: tuple[str, ...] = (
    "DB00945_MESH_D010146_1", "DB11693_MESH_D014605_1", "DB00195_MESH_D006973_1", "DB09079_MESH_D000080203_1",
)
ICL_NEGATIVE_PAIR = ("MESH:D020110", "MESH:D013290")
ICL_NAME_PAIRS = frozenset({
    ("aspirin", "pain"), ("voclosporin", "noninfectious uveitis"),
    ("pinacidil", "streptococcus pyogenes infection"), ("betaxolol", "hypertensive disorder"),
    ("nintedanib", "hamman-rich syndrome"),
})


def icl_pairs(db: DrugMechDB) -> frozenset[tuple[str, str]]:
    """The (drug, disease) id pairs of the 5 in-context examples."""
    return frozenset({db[m].pair for m in ICL_EXAMPLE_MOAS if m in db} | {ICL_NEGATIVE_PAIR})


def has_disease_prompt(moa: MoA, mode: str) -> bool:
    """True when the disease sub-prompt of `moa` is non-empty in `mode` (Named mode always is)."""
    if mode not in DISEASE_MODES:
        raise ConfigError(f"unknown disease mode {mode!r}; choose one of {', '.join(DISEASE_MODES)}",
                          key="mode")
    if mode == NAMED_DISEASE:
        return True
    from biorab.drugmech.prompts.factual_associations import describe_disease

    return bool(describe_disease(moa, anonymized=mode == "ANONYMIZED_DISEASE")[0])


def eligible_positive(db: DrugMechDB, moa: MoA, icl: frozenset[tuple[str, str]]) -> bool:
    """More than 3 nodes, the only MoA of its pair, and not an in-context example pair (spec §7.1)."""
    return len(moa) > 3 and db.pair_count(moa) == 1 and moa.pair not in icl


def positive_query(moa: MoA) -> FactualQuery:
    """The released-schema record of a DrugMechDB positive."""
    return FactualQuery(False, "DRUG_MECH_DB", moa.moa_id, moa.root, moa.drug_name, moa.sink,
                        moa.disease_name)


def generate_factual_positives(
    db: DrugMechDB, *, n: int = 1000, seed: int = 42, mode: str = "ANONYMIZED_DISEASE"
) -> list[FactualQuery]:
    """`n` positives from the full DB in the order of ``numpy.random.default_rng(seed).permutation``,
    skipping ineligible MoAs and those whose disease prompt would be empty in `mode` (spec §7.1)."""
    import numpy as np

    icl = icl_pairs(db)
    out: list[FactualQuery] = []
    for i in np.random.default_rng(seed).permutation(len(db)):
        moa = db.moas[int(i)]
        if eligible_positive(db, moa, icl) and has_disease_prompt(moa, mode):
            out.append(positive_query(moa))
            if len(out) == n:
                return out
    raise DataError(f"only {len(out)} eligible factual positives; asked for {n}")


def released_negatives(n: int = 1000, *, release_dir: str | Path | None = None) -> list[FactualQuery]:
    """The paper's negatives: ``n/2`` contraindication pairs (rows 0–499) then ``n/2`` no-relation pairs
    (rows 500–999) of ``factuals_neg_r1k.json`` (spec §1.3)."""
    rows = load_release_file("factuals_neg_r1k", release_dir=release_dir).queries
    half = len(rows) // 2
    if n <= 0 or n % 2 or n // 2 > half:
        raise ConfigError(f"n must be even and at most {len(rows)}, got {n}", key="n")
    return [q for q in (*rows[: n // 2], *rows[half: half + n // 2]) if isinstance(q, FactualQuery)]


def _negative(kg: PrimeKG, drug: str, disease: str) -> FactualQuery:
    return FactualQuery(True, "PRIME_KG", None, drug, kg.drugs[drug], disease, kg.diseases[disease])


def _no_relation_pairs(kg: PrimeKG, rng: object, size: int) -> list[tuple[str, str]]:
    drugs, diseases = list(kg.drugs), list(kg.diseases)
    out: list[tuple[str, str]] = []
    rejections = 0
    while len(out) < size and rejections < 20 and drugs and diseases:  # spec §7.2's stopping rule
        pair = (drugs[int(rng.integers(len(drugs)))], diseases[int(rng.integers(len(diseases)))])  # type: ignore[attr-defined]
        if kg.drug_disease_relations(*pair):
            rejections += 1
        else:
            out.append(pair)
    return out


def primekg_negatives(
    kg: PrimeKG, *, n: int = 1000, seed: int = 42, keep: Callable[[FactualQuery], bool] | None = None
) -> list[FactualQuery]:
    """Fresh negatives from a PrimeKG (spec §7.2): ``n/2`` contraindications without an indication or
    off-label use, then ``n/2`` random no-relation pairs; in-context pairs (by name), duplicates and
    queries rejected by `keep` (e.g. an empty disease prompt) are skipped. May return fewer than `n`
    on a small graph."""
    import numpy as np

    half = n // 2
    rng = np.random.default_rng(seed)
    contra = [p for p in kg.pairs_with("contraindication")
              if kg.drug_disease_relations(*p) == {"contraindication"}]  # no indication, no off-label use
    size = min(len(contra), int(2.2 * half))
    picked = [contra[int(i)] for i in rng.choice(len(contra), size=size, replace=False)] if size else []
    no_rel = _no_relation_pairs(kg, rng, int(2.2 * half))
    return _take(kg, picked, half, keep) + _take(kg, no_rel, half, keep)


def _take(kg: PrimeKG, pairs: Iterable[tuple[str, str]], n: int,
          keep: Callable[[FactualQuery], bool] | None) -> list[FactualQuery]:
    out: list[FactualQuery] = []
    seen: set[tuple[str, str]] = set()
    for drug, disease in pairs:
        query = _negative(kg, drug, disease)
        names = (query.drug_name.casefold(), query.disease_name.casefold())
        if (drug, disease) in seen or names in ICL_NAME_PAIRS or (keep is not None and not keep(query)):
            continue
        seen.add((drug, disease))
        out.append(query)
        if len(out) == n:
            break
    return out


def drugmechdb_negatives(db: DrugMechDB, *, n: int = 1000, seed: int = 42) -> list[FactualQuery]:
    """`n` no-relation negatives drawn from DrugMechDB's own drugs and diseases: random pairs with no
    DrugMechDB MoA (spec §1.3 [I]). DrugMechDB has no contraindications, so there is no such half."""
    import numpy as np

    rng = np.random.default_rng(seed)
    drugs = {m.root: m.drug_name for m in db}
    diseases = {m.sink: m.disease_name for m in db}
    drug_ids, disease_ids = list(drugs), list(diseases)
    seen: set[tuple[str, str]] = set(db.by_pair) | icl_pairs(db)
    out: list[FactualQuery] = []
    for _ in range(100 * n):
        pair = (drug_ids[int(rng.integers(len(drug_ids)))], disease_ids[int(rng.integers(len(disease_ids)))])
        if pair in seen:
            continue
        seen.add(pair)
        drug, disease = pair
        out.append(FactualQuery(True, "DRUG_MECH_DB", None, drug, drugs[drug], disease, diseases[disease]))
        if len(out) == n:
            return out
    raise DataError(f"only {len(out)} no-relation DrugMechDB pairs found; asked for {n}")
