"""``biorab drugmech prompts`` and ``biorab drugmech score``: render prompts for a query file, and score a
responses file. The ``drugmech`` group (biorab/cli/drugmech.py) calls `add_commands`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from biorab.errors import ConfigError

_RELEASE_HELP = "Folder of the released query files (or the drugmechcf folder above it)."
_DMDB_HELP = "DrugMechDB folder (indication_paths.yaml); needed for closed-world and graph scores."


def add_commands(group: typer.Typer) -> None:
    """Add ``prompts`` and ``score`` to the ``drugmech`` command group."""
    group.command("prompts")(prompts)
    group.command("score")(score)


def _query_file(file: str, release_dir: Path | None) -> Any:
    from biorab.drugmech.queryfiles import load_query_file, load_release_file

    path = Path(file)
    if path.suffix == ".json" and path.is_file():
        return load_query_file(path)
    return load_release_file(file, release_dir=release_dir)


def _moas(drugmechdb_dir: Path | None) -> Any:
    from biorab.drugmech.drugmechdb import load_drugmechdb

    return load_drugmechdb(drugmechdb_dir)


def prompts(
    file: Annotated[
        str, typer.Argument(help="A released query file (e.g. delete_pos_ppi_r250) or a .json path.")
    ],
    world: Annotated[str, typer.Option(help="open or closed (counterfactual files).")] = "open",
    mode: Annotated[
        str,
        typer.Option(
            help="Factual disease mode: ANONYMIZED_DISEASE, NAMED_DISEASE or "
            "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS."
        ),
    ] = "NAMED_DISEASE",
    out: Annotated[Path | None, typer.Option(help="Write JSONL here instead of stdout.")] = None,
    index: Annotated[int | None, typer.Option(help="Print only this row's prompt, as plain text.")] = None,
    release_dir: Annotated[Path | None, typer.Option(help=_RELEASE_HELP)] = None,
    drugmechdb_dir: Annotated[Path | None, typer.Option(help=_DMDB_HELP)] = None,
    primekg: Annotated[
        Path | None,
        typer.Option(
            help="PrimeKG kg.csv: describes the diseases of factual negatives outside NAMED_DISEASE."
        ),
    ] = None,
) -> None:
    """Render the prompts of a query file: JSONL rows {query_file, index, world|mode, prompt}."""
    from biorab.drugmech.prompts import DISEASE_MODES, WORLDS, needs_drugmechdb, render_prompt

    if world not in WORLDS:
        raise ConfigError(f"unknown world {world!r}; allowed: {', '.join(WORLDS)}", key="--world")
    if mode not in DISEASE_MODES:
        raise ConfigError(f"unknown mode {mode!r}; allowed: {', '.join(DISEASE_MODES)}", key="--mode")
    qfile = _query_file(file, release_dir)
    if index is not None and not 0 <= index < len(qfile.queries):
        raise ConfigError(f"index {index} is out of range ({len(qfile.queries)} rows)", key="--index")
    moas = _moas(drugmechdb_dir) if needs_drugmechdb(qfile.query_type, world=world, mode=mode) else None
    kg = None
    if primekg is not None:
        from biorab.drugmech.primekg import load_primekg

        kg = load_primekg(primekg)
    if index is not None:
        sys.stdout.write(render_prompt(qfile.queries[index], world=world, mode=mode, moas=moas, primekg=kg))
        return
    setting = {"mode": mode} if qfile.query_type == "known_moa" else {"world": world}
    sink = out.open("w", encoding="utf-8") if out is not None else sys.stdout
    try:
        for i, query in enumerate(qfile.queries):
            prompt = render_prompt(query, world=world, mode=mode, moas=moas, primekg=kg)
            sink.write(json.dumps({"query_file": qfile.name, "index": i, **setting, "prompt": prompt}) + "\n")
    finally:
        if out is not None:
            sink.close()
    if out is not None:
        typer.echo(f"wrote {len(qfile.queries)} prompts to {out}", err=True)


def _pct(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "-"
    text = f"{stats['mean']:.3f}"
    return text + (f" ± {stats['std']:.3f}" if stats["runs"] > 1 else "")


def _print_table(report: dict[str, Any]) -> None:
    typer.echo(
        f"{report['n']} responses, {report['n_unparsed']} unparsed, {report['n_incomplete']} incomplete"
    )
    typer.echo(
        f"{'query file':<22} {'world/mode':<36} {'n':>5} {'strict':>14} {'relaxed':>14} unparsed incomplete"
    )
    for c in report["cells"]:
        setting = c["world"] or c["mode"]
        typer.echo(
            f"{c['query_file']:<22} {setting:<36} {c['n']:>5} {_pct(c['accuracy_strict']):>14} "
            f"{_pct(c['accuracy_relaxed']):>14} {c['n_unparsed']:>8} {c['n_incomplete']:>10}"
        )
    if report["groups"]:
        typer.echo("\ngroup (strict, stratified BCa bootstrap, 90% CI)")
        for g in report["groups"]:
            typer.echo(
                f"{g['group']:<36} {g['mean']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]  n={g['n']}"
            )


def score(
    responses: Annotated[Path, typer.Argument(help="JSONL rows {query_file, index, response}.")],
    parser: Annotated[str, typer.Option(help="strict_original or robust.")] = "robust",
    json_out: Annotated[bool, typer.Option("--json", help="Print {rows, accuracy} as JSON.")] = False,
    release_dir: Annotated[Path | None, typer.Option(help=_RELEASE_HELP)] = None,
    drugmechdb_dir: Annotated[Path | None, typer.Option(help=_DMDB_HELP)] = None,
    n_resamples: Annotated[int, typer.Option(help="Bootstrap resamples for grouped CIs.")] = 9999,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 42,
) -> None:
    """Score model responses against the released queries (row verdicts, per-file and grouped accuracy)."""
    from biorab.drugmech.aggregate_report import accuracy_report
    from biorab.drugmech.parsing_options import PARSER_MODES
    from biorab.drugmech.scoring_responses import read_responses, score_responses

    if parser not in PARSER_MODES:
        raise ConfigError(f"unknown parser {parser!r}; allowed: {', '.join(PARSER_MODES)}", key="--parser")
    if n_resamples < 2:
        raise ConfigError("need at least 2 resamples", key="--n-resamples")
    rows = score_responses(
        read_responses(responses),
        path=responses,
        parser=parser,
        release_dir=release_dir,
        moas_factory=lambda: _moas(drugmechdb_dir),
    )
    report = accuracy_report(rows, n_resamples=n_resamples, seed=seed)
    if json_out:
        typer.echo(json.dumps({"parser": parser, "rows": [r.to_json() for r in rows], "accuracy": report}))
    else:
        _print_table(report)
