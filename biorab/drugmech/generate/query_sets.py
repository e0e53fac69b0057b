"""One entry point for every generator: a kind name in the released files' style -> a query set, written in
the released schema with a ``.meta.json`` sidecar that records the kind, parameters, seed and data digest.

Kinds: ``{addlink,delete,change}_{pos,neg}_{dpi,ppi}`` (``invert`` is an alias of ``change``; ``dpi`` =
surface, ``ppi`` = deep) and ``factuals_{pos,neg}``. The released files are bare JSON lists, so the
parameters go beside the file rather than into it; outside tools read the query file unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError
from biorab.drugmech.generate.stats import query_set_stats
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.queries.query_files import CHANGE_LINK, DELETE_LINK, Query, write_query_file

FAMILIES = {"addlink": "addlink", "delete": DELETE_LINK, "change": CHANGE_LINK, "invert": CHANGE_LINK}
DEPTH_TAGS = {"dpi": "surface", "ppi": "deep", "surface": "surface", "deep": "deep"}
NEGATIVE_SOURCES: tuple[str, ...] = ("release", "primekg", "drugmechdb")
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class GenerateOptions:
    """Generator parameters (all recorded in the sidecar).

    Attributes:
        n: samples in the file; default 250 for Delete/Invert, 1,000 otherwise. For Delete/Invert
            negatives the first ``n // 2`` of ``n`` positives get 2 negatives each, so a ``pos`` and a
            ``neg`` file made with the same ``n`` and seed line up as in the release.
        seed: the one seed of all random choices.
        mode: cut-edge mode for Delete/Invert, ``exact`` (default) or ``faithful`` (the paper's pool).
        mix: Delete/Invert positives: ``release`` (stratified to the paper's target-type mix), ``pool``
            (stratified like the pool) or ``uniform``.
        exclude_known_pairs: Add-Link: skip source drug / target disease pairs with a DrugMechDB MoA.
        negatives: factual negatives from ``release`` (the paper's file), ``primekg`` or ``drugmechdb``.
        disease_mode: factual: skip queries whose disease prompt would be empty in this mode.
        primekg: path of a PrimeKG ``kg.csv`` (for ``negatives="primekg"``).
        release_dir: the released query files' folder (for ``negatives="release"``).
    """

    n: int | None = None
    seed: int = 42
    mode: str = "exact"
    mix: str = "release"
    exclude_known_pairs: bool = True
    negatives: str = "release"
    disease_mode: str = "ANONYMIZED_DISEASE"
    primekg: str | None = None
    release_dir: str | None = None


@dataclass(frozen=True)
class GeneratedSet:
    """A generated query set with the metadata that goes into its sidecar."""

    kind: str
    queries: list[Query]
    options: GenerateOptions
    notes: dict[str, Any] = field(default_factory=dict)


def parse_kind(kind: str) -> tuple[str, bool, str | None]:
    """Split a kind: ``"delete_neg_ppi"`` -> ``("DELETE_LINK", True, "deep")``, ``"factuals_pos"`` ->
    ``("factual", False, None)``.

    Raises:
        ConfigError: the kind is not one of the documented forms.
    """
    parts = kind.lower().replace("-", "_").split("_")
    if len(parts) == 2 and parts[0] in ("factual", "factuals") and parts[1] in ("pos", "neg"):
        return "factual", parts[1] == "neg", None
    if len(parts) == 3 and parts[0] in FAMILIES and parts[1] in ("pos", "neg") and parts[2] in DEPTH_TAGS:
        return FAMILIES[parts[0]], parts[1] == "neg", DEPTH_TAGS[parts[2]]
    raise ConfigError(
        f"unknown kind {kind!r}; use {{addlink,delete,change}}_{{pos,neg}}_{{dpi,ppi}} "
        "or factuals_{pos,neg}",
        key="kind",
    )


def _edit_links(
    db: DrugMechDB, qtype: str, negative: bool, depth: str, opts: GenerateOptions
) -> GeneratedSet:
    from biorab.drugmech.generate.edit_link import generate_edit_links

    n = opts.n or 250
    sources = n // 2 if negative else 0
    if negative and n % 2:
        raise ConfigError(f"a negative Delete/Invert set has 2 samples per positive; n must be even, got {n}",
                          key="n")
    made = generate_edit_links(db, depth=depth, n_pos=n, n_neg_sources=sources, seed=opts.seed,
                               mode=opts.mode, mix=opts.mix)
    notes = {"flagged_positives": made.flagged} if made.flagged else {}
    return GeneratedSet("", list[Query](made.queries(qtype, negative=negative)), opts, notes)


def _add_links(db: DrugMechDB, negative: bool, depth: str, opts: GenerateOptions) -> GeneratedSet:
    from biorab.drugmech.generate.add_link import generate_add_links

    made = generate_add_links(db, depth=depth, n=opts.n or 1000, seed=opts.seed,
                              exclude_known_pairs=opts.exclude_known_pairs)
    notes = {"dropped_candidates": made.dropped} if made.dropped else {}
    return GeneratedSet("", list[Query](made.negatives if negative else made.positives), opts, notes)


def _factuals(db: DrugMechDB, negative: bool, opts: GenerateOptions) -> GeneratedSet:
    from biorab.drugmech.generate import factual

    n = opts.n or 1000
    if not negative:
        return GeneratedSet("", list(factual.generate_factual_positives(db, n=n, seed=opts.seed,
                                                                         mode=opts.disease_mode)), opts)
    if opts.negatives == "release":
        return GeneratedSet("", list(factual.released_negatives(n, release_dir=opts.release_dir)), opts)
    if opts.negatives == "drugmechdb":
        return GeneratedSet("", list(factual.drugmechdb_negatives(db, n=n, seed=opts.seed)), opts)
    if opts.negatives != "primekg":
        raise ConfigError(f"unknown negatives source {opts.negatives!r}; choose one of "
                          f"{', '.join(NEGATIVE_SOURCES)}", key="negatives")
    if not opts.primekg:
        raise ConfigError("negatives from PrimeKG need the path of its kg.csv", key="primekg")
    from biorab.drugmech.graph.primekg import load_primekg

    kg = load_primekg(opts.primekg)
    keep = None
    if opts.disease_mode != factual.NAMED_DISEASE:  # skip negatives whose disease description is empty
        from biorab.drugmech.prompts.factual_associations import describe_primekg_disease

        anonymized = opts.disease_mode == "ANONYMIZED_DISEASE"
        keep = lambda q: bool(describe_primekg_disease(  # noqa: E731
            q.disease_name, kg.disease_neighbours(q.disease_id), anonymized=anonymized))
    queries = factual.primekg_negatives(kg, n=n, seed=opts.seed, keep=keep)
    return GeneratedSet("", list(queries), opts, {"requested": n} if len(queries) < n else {})


def generate(kind: str, db: DrugMechDB, options: GenerateOptions | None = None) -> GeneratedSet:
    """Generate the query set `kind` from the full DrugMechDB `db` (see the module docstring for kinds)."""
    family, negative, depth = parse_kind(kind)
    opts = options or GenerateOptions()
    if opts.n is None:  # record the size actually used in the sidecar
        opts = replace(opts, n=250 if family in (DELETE_LINK, CHANGE_LINK) else 1000)
    if family == "factual":
        made = _factuals(db, negative, opts)
    elif family == "addlink":
        assert depth is not None  # parse_kind gives counterfactual kinds a depth
        made = _add_links(db, negative, depth, opts)
    else:
        assert depth is not None
        made = _edit_links(db, family, negative, depth, opts)
    return GeneratedSet(kind, made.queries, opts, {**made.notes, "drugmechdb_sha256": db.digest})


def meta_path(path: str | Path) -> Path:
    """The sidecar of a query file: ``x.json`` -> ``x.meta.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".meta.json")


def write_generated(path: str | Path, made: GeneratedSet) -> tuple[Path, Path]:
    """Write the query file (released schema) and its ``.meta.json`` sidecar; returns both paths."""
    out = write_query_file(path, made.queries)
    meta = {
        "generator": "biorab.drugmech.generate", "generator_version": GENERATOR_VERSION,
        "kind": made.kind,
        "seed": made.options.seed, "params": made.options.__dict__, "n_samples": len(made.queries),
        "stats": query_set_stats(made.queries), **made.notes,
    }
    sidecar = meta_path(out)
    sidecar.write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return out, sidecar
