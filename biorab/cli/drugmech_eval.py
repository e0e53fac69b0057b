"""``biorab drugmech prompts`` and ``biorab drugmech score``: render prompts for a query file, and score a
responses file. The ``drugmech`` group (biorab/cli/drugmech.py) calls `add_commands`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from biorab.common.errors import ConfigError, DataError

_RELEASE_HELP = "Folder of the released query files (or the drugmechcf folder above it)."
_PRIMEKG_HELP = "PrimeKG kg.csv: describes the diseases of factual negatives outside NAMED_DISEASE."
_DMDB_HELP = "DrugMechDB folder (indication_paths.yaml); needed for closed-world and graph scores."


def add_commands(group: typer.Typer) -> None:
    """Add ``prompts`` and ``score`` to the ``drugmech`` command group."""
    group.command("prompts")(prompts)
    group.command("respond")(respond)
    group.command("score")(score)


def _query_file(file: str, release_dir: Path | None) -> Any:
    from biorab.drugmech.queries.resolver import resolve_query_file

    return resolve_query_file(file, base=Path.cwd(), release_dir=release_dir)


def _primekg(path: Path | None) -> Any:
    if path is None:
        return None
    from biorab.drugmech.graph.primekg import load_primekg

    return load_primekg(path)


def _moas(drugmechdb_dir: Path | None) -> Any:
    from biorab.drugmech.graph.drugmechdb import load_drugmechdb

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
    primekg: Annotated[Path | None, typer.Option(help=_PRIMEKG_HELP)] = None,
) -> None:
    """Render the prompts of a query file: JSONL rows {query_file, index, world|mode, prompt}."""
    from biorab.drugmech.prompts.render import DISEASE_MODES, WORLDS, needs_drugmechdb, render_prompt

    if world not in WORLDS:
        raise ConfigError(f"unknown world {world!r}; allowed: {', '.join(WORLDS)}", key="--world")
    if mode not in DISEASE_MODES:
        raise ConfigError(f"unknown mode {mode!r}; allowed: {', '.join(DISEASE_MODES)}", key="--mode")
    qfile = _query_file(file, release_dir)
    if index is not None and not 0 <= index < len(qfile.queries):
        raise ConfigError(f"index {index} is out of range ({len(qfile.queries)} rows)", key="--index")
    moas = _moas(drugmechdb_dir) if needs_drugmechdb(qfile.query_type, world=world, mode=mode) else None
    kg = _primekg(primekg)

    def render(i: int) -> str:
        try:
            return render_prompt(qfile.queries[i], world=world, mode=mode, moas=moas, primekg=kg)
        except DataError as e:  # name the query file and row, whatever the inner error named
            raise DataError(f"row {i}: {e}", path=qfile.path) from e

    if index is not None:
        sys.stdout.write(render(index))
        return
    setting = {"mode": mode} if qfile.query_type == "known_moa" else {"world": world}
    # --out goes to a temporary file renamed at the end, so an error mid-file leaves no partial file.
    partial = out.with_name(out.name + ".partial") if out is not None else None
    sink = partial.open("w", encoding="utf-8") if partial is not None else sys.stdout
    try:
        for i in range(len(qfile.queries)):
            prompt = render(i)
            sink.write(json.dumps({"query_file": qfile.name, "index": i, **setting, "prompt": prompt}) + "\n")
    except BaseException:
        if partial is not None:
            sink.close()
            partial.unlink(missing_ok=True)
        raise
    if out is not None and partial is not None:
        sink.close()
        partial.replace(out)
        typer.echo(f"wrote {len(qfile.queries)} prompts to {out}", err=True)


def _backend_params(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    raw = text
    if not text.lstrip().startswith("{"):  # a file holding the JSON object
        try:
            raw = Path(text).read_text(encoding="utf-8")
        except OSError as e:
            message = f"not a JSON object and not a readable file: {e}"
            raise ConfigError(message, key="--backend-params") from e
    try:
        params = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ConfigError(f"not valid JSON: {e.msg}", key="--backend-params") from e
    if not isinstance(params, dict):
        raise ConfigError("expected a JSON object", key="--backend-params")
    return params


def respond(
    file: Annotated[str, typer.Argument(help="A released query file (stem) or a .json query file path.")],
    out: Annotated[Path, typer.Option(help="Responses JSONL to write (the input of `score`).")],
    backend: Annotated[str, typer.Option(help="Generation backend: transformers, vllm, openai or fake.")],
    backend_params: Annotated[
        str | None,
        typer.Option(
            help="The backend's params as a JSON object, or a JSON file; transformers, vllm and openai "
            'default to {"chat": true} (one user message, as the paper).'
        ),
    ] = None,
    world: Annotated[str, typer.Option(help="open or closed (counterfactual files).")] = "open",
    mode: Annotated[str, typer.Option(help="Factual disease mode (factual files).")] = "NAMED_DISEASE",
    runs: Annotated[int, typer.Option(help="Independent runs; run r samples with seed + r.")] = 1,
    max_tokens: Annotated[int, typer.Option(help="Maximum new tokens per answer.")] = 4096,
    temperature: Annotated[float, typer.Option(help="Sampling temperature (the paper: 1.0).")] = 1.0,
    seed: Annotated[int, typer.Option(help="Sampling seed of run 0 (the paper: 42).")] = 42,
    batch_size: Annotated[int, typer.Option(help="Prompts per backend call.")] = 32,
    release_dir: Annotated[Path | None, typer.Option(help=_RELEASE_HELP)] = None,
    drugmechdb_dir: Annotated[Path | None, typer.Option(help=_DMDB_HELP)] = None,
    primekg: Annotated[Path | None, typer.Option(help=_PRIMEKG_HELP)] = None,
) -> None:
    """Ask a model every query of a file through a generation backend; writes the responses JSONL that
    `biorab drugmech score` reads (one single-user-message prompt per query, spec §8-9.1).

    Runs through `biorab run`'s machinery (a DrugMech cell per run, the generation cache, resume): the run
    is kept in ``OUT.run/`` beside the responses file, so a rerun computes only what is missing."""
    from biorab.drugmech.experiment.responses_export import backend_errors, response_rows, write_responses
    from biorab.drugmech.prompts.render import DISEASE_MODES, WORLDS
    from biorab.runner import run_experiment
    from biorab.runner.executors.local import LocalExecutor

    if world not in WORLDS or mode not in DISEASE_MODES:
        raise ConfigError(f"unknown world {world!r} or mode {mode!r}", key="--world/--mode")
    if runs < 1 or batch_size < 1:
        raise ConfigError("--runs and --batch-size must be at least 1", key="--runs")
    config = _respond_config(file, out, backend, _backend_params(backend_params), world=world, mode=mode,
                             runs=runs, sampling={"max_tokens": max_tokens, "temperature": temperature,
                                                  "seed": seed}, batch_size=batch_size,
                             data=(release_dir, drugmechdb_dir, primekg))
    result = run_experiment(config, executor=LocalExecutor(), track=False)
    rows = response_rows(result.cells)
    write_responses(rows, out)
    typer.echo(f"wrote {len(rows)} responses to {out}", err=True)
    errors = backend_errors(result.cells)
    if errors:  # kept as incomplete rows; say why here, since the responses file has no error field
        typer.echo(f"warning: {len(errors)} backend calls failed (first: {errors[0]})", err=True)


def _respond_config(file: str, out: Path, backend: str, params: dict[str, Any], *, world: str, mode: str,
                    runs: int, sampling: dict[str, Any], batch_size: int,
                    data: tuple[Path | None, Path | None, Path | None]) -> Any:
    """The experiment config of one ``respond``: the file's DrugMech cells only, untracked."""
    import re

    from biorab.drugmech.experiment.spec import takes_chat
    from biorab.experiment import ExperimentConfig

    if takes_chat(backend):  # the paper sent each prompt as one user message (spec §8, §9.1)
        params.setdefault("chat", True)
    release, dmdb, kg = (str(p) if p is not None else None for p in data)
    return ExperimentConfig.model_validate({
        "name": re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{out.name}.run").lstrip("._") or "responses.run",
        "output_dir": str(out.parent),
        "drugmech": {"query_files": [file], "worlds": [world], "modes": [mode], "runs": runs,
                     "release_dir": release, "drugmechdb_dir": dmdb, "primekg": kg, "n_resamples": 2},
        "backend": {"name": backend, "params": params},
        "sampling": sampling,
        "resources": {"llm": {"batch_size": batch_size}},
        "tracking": {"enabled": False},
    })


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
    matcher: Annotated[
        str, typer.Option(help="Node-name matcher of the graph scores: tfidf (the original) or rapidfuzz.")
    ] = "tfidf",
    json_out: Annotated[bool, typer.Option("--json/--no-json", metavar="",
        help="Print {rows, accuracy} as JSON.")] = False,
    release_dir: Annotated[Path | None, typer.Option(help=_RELEASE_HELP)] = None,
    drugmechdb_dir: Annotated[Path | None, typer.Option(help=_DMDB_HELP)] = None,
    n_resamples: Annotated[int, typer.Option(help="Bootstrap resamples for grouped CIs.")] = 9999,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 42,
) -> None:
    """Score model responses against their query files (row verdicts, per-file and grouped accuracy)."""
    from biorab.drugmech.parsing.option_answer import PARSER_MODES
    from biorab.drugmech.scoring.accuracy_tables import accuracy_report
    from biorab.drugmech.scoring.graph_matching import NODE_MATCHERS
    from biorab.drugmech.scoring.responses import read_responses, score_responses

    if parser not in PARSER_MODES:
        raise ConfigError(f"unknown parser {parser!r}; allowed: {', '.join(PARSER_MODES)}", key="--parser")
    if matcher not in NODE_MATCHERS:
        allowed = ", ".join(NODE_MATCHERS)
        raise ConfigError(f"unknown matcher {matcher!r}; allowed: {allowed}", key="--matcher")
    if n_resamples < 2:
        raise ConfigError("need at least 2 resamples", key="--n-resamples")
    rows = score_responses(
        read_responses(responses),
        path=responses,
        parser=parser,
        release_dir=release_dir,
        moas_factory=lambda: _moas(drugmechdb_dir),
        matcher=matcher,
    )
    report = accuracy_report(rows, n_resamples=n_resamples, seed=seed)
    if json_out:
        # The exact shape {"rows": [...], "accuracy": {...}}; parser and matcher go into accuracy.
        settings = {"parser": parser, "matcher": matcher}
        payload = {"rows": [r.to_json() for r in rows], "accuracy": {**settings, **report}}
        typer.echo(json.dumps(payload))
    else:
        _print_table(report)
