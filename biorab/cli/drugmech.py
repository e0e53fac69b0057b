"""``biorab drugmech``: Drug Mechanisms Counterfactuals (``stats``, ``generate``; ``prompts`` and ``score``
come from `biorab.cli.drugmech_eval` when it is present).

Only typer and the standard library are imported at module level; the library is imported inside commands.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from biorab.drugmech.graph.drugmechdb import DrugMechDB

drugmech_app = typer.Typer(
    help="Drug Mechanisms Counterfactuals: DrugMechDB statistics, query-set generation, prompts, model "
    "responses, scoring.",
    no_args_is_help=True,
)

DrugMechDBOption = Annotated[
    Path | None,
    typer.Option("--drugmechdb-dir", help="DrugMechDB folder or indication_paths.yaml "
                 "(default: $BIORAB_DRUGMECHDB_DIR, else ../shared/data/drugmechdb)."),
]


def _load_db(path: Path | None) -> DrugMechDB:
    from biorab.common.paths import drugmechdb_dir
    from biorab.drugmech.graph.drugmechdb import load_drugmechdb

    if path is not None and path.is_file():
        return load_drugmechdb(path)
    return load_drugmechdb(drugmechdb_dir(path))


@drugmech_app.command("stats")
def stats(
    drugmechdb: DrugMechDBOption = None,
    query_file: Annotated[
        list[Path] | None,
        typer.Option("--file", "-f", help="Also report node-type mixes of this query file (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="", help="Print JSON.")] = False,
) -> None:
    """Reference counts of DrugMechDB (MoAs, pairs, drugs, diseases, simulatable, valid, editable links,
    Add-Link targets).

    Editable links are counted with both cut-edge modes (faithful, exact) on the reduced and the full DB. With
    --file, also the source/target node-type mixes of query files (as in the release's DataStats.txt).
    """
    from biorab.drugmech.generate.stats import drugmechdb_stats, query_set_stats
    from biorab.drugmech.queries.query_files import load_query_file

    result: dict[str, Any] = {"drugmechdb": drugmechdb_stats(_load_db(drugmechdb))}
    if query_file:
        result["files"] = {str(p): query_set_stats(load_query_file(p).queries) for p in query_file}
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    _print_stats(result)


def _print_stats(result: dict[str, Any]) -> None:
    db = result["drugmechdb"]
    for key in ("moas", "pairs", "pairs_with_several_moas", "drugs", "diseases", "simulatable", "valid"):
        typer.echo(f"{key:<28}{db[key]:>8,}")
    typer.echo(f"{'sink levels (-1/0/+1)':<28}{db['sink_levels']['-1']:>8,} {db['sink_levels']['0']:,} "
               f"{db['sink_levels']['1']:,}")
    for mode, scopes in db["editable_links"].items():
        for scope, c in scopes.items():
            typer.echo(f"editable links {mode:<8} {scope:<10} {c['links']:>6,} "
                       f"(surface {c['surface']:,}, deep {c['deep']:,}; {c['moas']:,} MoAs)")
    t = db["add_link_targets"]
    typer.echo(f"{'add-link targets':<28}{t['triples']:>8,} in {t['moas']:,} MoAs")
    for name, s in result.get("files", {}).items():
        typer.echo(f"\n{name}: {s['n_samples']:,} samples, {s['negatives']:,} negatives")
        for side in ("source_node_types", "target_node_types"):
            mix = ", ".join(f"{k} {v['count']} ({v['pct']}%)" for k, v in s.get(side, {}).items())
            if mix:
                typer.echo(f"  {side}: {mix}")


@drugmech_app.command("generate")
def generate(
    kind: Annotated[str, typer.Option("--kind", "-k", help="{addlink,delete,change}_{pos,neg}_{dpi,ppi} "
                                      "or factuals_{pos,neg}, e.g. delete_pos_ppi.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Query file to write (a .meta.json sidecar "
                                      "with kind, parameters and seed is written beside it).")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random choice.")] = 42,
    n: Annotated[int | None, typer.Option("--n", min=1, help="Samples (default 250 for delete/change, "
                                          "1000 otherwise).")] = None,
    mode: Annotated[str, typer.Option("--mode", help="Cut-edge mode for delete/change: exact or "
                                      "faithful (the paper's pool).")] = "exact",
    mix: Annotated[str, typer.Option(
        "--mix", help="Delete/change positives: release (stratified to the paper's target-type mix), "
        "pool (like the pool) or uniform.")] = "release",
    keep_known_pairs: Annotated[bool, typer.Option("--keep-known-pairs/--no-keep-known-pairs", metavar="",
        help="Add-Link: allow source drug / target disease pairs with a MoA.")] = False,
    negatives: Annotated[str, typer.Option("--negatives", help="factuals_neg source: release, primekg "
                                           "or drugmechdb.")] = "release",
    primekg: Annotated[Path | None, typer.Option("--primekg", help="PrimeKG kg.csv (for --negatives "
                                                 "primekg).")] = None,
    disease_mode: Annotated[str, typer.Option("--disease-mode", help="Factual: skip queries whose disease "
                                              "prompt is empty in this mode.")] = "ANONYMIZED_DISEASE",
    drugmechdb: DrugMechDBOption = None,
    drugmechcf_dir: Annotated[Path | None, typer.Option("--drugmechcf-dir", help="Release folder (for "
                                                        "--negatives release).")] = None,
) -> None:
    """Generate a query set in the released files' schema."""
    from biorab.common.errors import ConfigError
    from biorab.drugmech.generate.query_sets import GenerateOptions, parse_kind, write_generated
    from biorab.drugmech.generate.query_sets import generate as run_generate

    parse_kind(kind)  # fail on a bad kind before loading DrugMechDB
    if mode not in ("exact", "faithful"):
        raise ConfigError(f"unknown cut-edge mode {mode!r}; choose exact or faithful", key="--mode")
    opts = GenerateOptions(
        n=n, seed=seed, mode=mode, mix=mix, exclude_known_pairs=not keep_known_pairs, negatives=negatives,
        disease_mode=disease_mode, primekg=str(primekg) if primekg else None,
        release_dir=str(drugmechcf_dir) if drugmechcf_dir else None,
    )
    made = run_generate(kind, _load_db(drugmechdb), opts)
    path, sidecar = write_generated(out, made)
    typer.echo(f"wrote {len(made.queries):,} samples to {path} (parameters in {sidecar})")


def register(app: typer.Typer) -> None:
    """Add the ``drugmech`` group (and part B's ``prompts``/``score`` when present) to the main app."""
    try:
        evaluation = importlib.import_module("biorab.cli.drugmech_eval")
    except ModuleNotFoundError as e:
        if e.name != "biorab.cli.drugmech_eval":
            raise
    else:
        evaluation.add_commands(drugmech_app)
    app.add_typer(drugmech_app, name="drugmech")
