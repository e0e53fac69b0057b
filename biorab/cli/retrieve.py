"""`biorab retrieve` (show hits, or score retrieval quality) and `biorab corpus build` (write a testbed
corpus). Heavy modules (bm25s, faiss, torch) load inside the commands only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from biorab.common.errors import ConfigError
from biorab.retrieval.selection import Selection

# One default for `biorab retrieve` and `biorab run` configs (`retrieval[].keep_ties`): the selection's.
KEEP_TIES_DEFAULT: bool = Selection.model_fields["keep_ties"].default

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="BioRAB data folder (default: the staged data).")
]
Dataset = Annotated[
    str, typer.Option("--dataset", "-d", help="Target dataset (ade, chemprot, ..., medmcqa).")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of every random choice.")]
Rate = Annotated[float | None, typer.Option("--rate", help="Counterfactual rate in [0, 1].")]
Pool = Annotated[str | None, typer.Option("--pool", help="Comma-separated diverse pool (default: all 8).")]


def register(app: typer.Typer) -> None:
    """Add `retrieve` and the `corpus` group to the `biorab` app."""
    app.command("retrieve")(retrieve)
    corpus_app = typer.Typer(
        help="Build and inspect retrieval corpora (the paper's testbeds).", no_args_is_help=True
    )
    corpus_app.command("build")(corpus_build)
    from biorab.cli.methods import corpus_transform

    corpus_app.command("transform")(corpus_transform)
    app.add_typer(corpus_app, name="corpus")


def retrieve(
    dataset: Dataset,
    testbed: Annotated[
        str, typer.Option("--testbed", help="a registered testbed corpus (biorab ls corpora)")
    ] = "labeled",
    rate: Rate = None,
    retriever: Annotated[
        str, typer.Option("--retriever", help="a registered retriever (biorab ls retrievers)")
    ] = "bm25",
    encoder: Annotated[
        str | None, typer.Option("--encoder", help="minilm (default)|contriever|medcpt (dense, hybrid)")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Encoder folder or hub id (overrides the preset).")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Hits per query.")] = 1,
    keep_ties: Annotated[
        bool,
        typer.Option("--keep-ties/--no-keep-ties", metavar="",
            help="Keep items tied with the k-th score (paper default: top-1 + ties; as run configs).",
        ),
    ] = KEEP_TIES_DEFAULT,
    exclude_test_duplicates: Annotated[
        bool,
        typer.Option("--exclude-test-duplicates/--keep-test-duplicates", metavar="",
            help="Never show a hit whose text is the query's own (exclude_test_duplicates in a run).",
        ),
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Queries to show (default 5) or evaluate (default all).")
    ] = None,
    split: Annotated[str, typer.Option("--split", help="Split whose inputs are the queries.")] = "test",
    seed: Seed = 0,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="", help="Print JSON.")] = False,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--eval",
            help="Score retrieval quality (recall@1/5/10/k, MRR) against --relevance judgements.",
        ),
    ] = False,
    relevance: Annotated[
        str,
        typer.Option(
            "--relevance",
            help="With --eval: known-item (each sampled corpus key is a query; its items are relevant) or "
            "original:<run> (the example the original prompt file holds; runs: hetionet bm25|contriever|"
            "instructor|random, ade/git container).",
        ),
    ] = "known-item",
    data_dir: DataDir = None,
    pool: Pool = None,
) -> None:
    """Show the hits (with scores) of a retriever on a testbed corpus, or score retrieval quality."""
    from biorab.ral import testbed_corpus

    if limit is not None and limit <= 0:
        raise ConfigError(f"--limit must be positive, got {limit}", key="--limit")
    if k <= 0:  # checked here: the hits are searched `tie_pool` deeper than k
        raise ConfigError(f"k must be a positive integer, got {k}", key="--k")
    # The corpus the RAL's retriever indexes below: built once in this process (`biorab.ral.testbed_corpus`).
    corpus, _ = testbed_corpus(testbed, dataset, rate=rate, seed=seed, data_dir=data_dir, pool=_pool(pool))
    params = _engine_params(retriever, encoder, model)
    if evaluate:  # retrieval quality of the engine itself, with its own tie rule (no RAL selection)
        engine = _build_engine(retriever, params, keep_ties)
        engine.index(corpus.items)
    else:  # the hits a run's prompt would get: the RAL's retriever, assembled as `biorab run` assembles it
        selection = {"k": k, "keep_ties": keep_ties, "exclude_test_duplicates": exclude_test_duplicates}
        ral_retriever = _assembled(dataset, testbed, rate, retriever, params, selection, seed, data_dir, pool)
        engine = ral_retriever.retriever
    header = {
        "dataset": dataset,
        "testbed": testbed,
        "rate": corpus.rate,
        "retriever": retriever,
        "corpus_digest": corpus.digest,
        "corpus_items": len(corpus.items),
        # States the tokenizer, stopwords, variant / encoder, pooling... that produced the hits.
        "retriever_params": engine.params.model_dump(mode="json"),
        "retriever_fingerprint": engine.fingerprint,
    }
    if evaluate:
        judgements = _judgements(relevance, dataset, corpus.items, limit, seed, data_dir)
        _print_eval(engine, judgements, corpus.items, k, {**header, "relevance": relevance}, as_json)
    else:
        shown = {**header, "keep_ties": keep_ties, "exclude_test_duplicates": exclude_test_duplicates}
        _print_hits(ral_retriever, dataset, split, data_dir, limit or 5, shown, as_json)


def corpus_build(
    dataset: Dataset,
    kind: Annotated[
        str, typer.Option("--kind", help="labeled|unlabeled|counterfactual|diverse|negative_awareness")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Folder to write corpus.jsonl, ledger.jsonl, manifest.json.")
    ],
    rate: Rate = None,
    seed: Seed = 0,
    data_dir: DataDir = None,
    pool: Pool = None,
) -> None:
    """Build a testbed corpus and write it (BEIR corpus.jsonl + ledger.jsonl + manifest.json)."""
    from biorab.corpora import build_corpus, write_corpus

    corpus, ledger = build_corpus(kind, dataset, rate=rate, seed=seed, data_dir=data_dir, pool=_pool(pool))
    folder = write_corpus(corpus, ledger, out)
    manifest = corpus.manifest(ledger)
    typer.echo(
        f"wrote {folder}: {len(corpus.items)} items, {len(ledger)} ledger entries, digest {corpus.digest}"
    )
    typer.echo(json.dumps(manifest["counts"], sort_keys=True))


def _pool(pool: str | None) -> list[str] | None:
    return [name.strip() for name in pool.split(",") if name.strip()] if pool else None


def _engine_params(retriever: str, encoder: str | None, model: str | None) -> dict[str, Any]:
    """The retriever's params for the --encoder/--model flags."""
    from biorab.common.registry import RETRIEVERS

    if retriever not in RETRIEVERS:
        return {}  # building it names the known retrievers
    # Each retriever declares what the flags mean for it (`encoder_params`; ``None``: it takes no encoder).
    params: dict[str, Any] | None = RETRIEVERS.get(retriever).encoder_params(encoder, model)
    if params is None and (encoder or model):
        # Silently ignoring them would show BM25 hits to a user who asked for an encoder.
        option = "--encoder" if encoder else "--model"
        takers = [name for name in RETRIEVERS.names() if RETRIEVERS.get(name).encoder_params(None, None)]
        raise ConfigError(
            f"{option} applies to the {' and '.join(takers)} retrievers only, not {retriever!r}", key=option
        )
    return params if params is not None else {}


def _build_engine(retriever: str, params: dict[str, Any], keep_ties: bool) -> Any:
    from biorab.retrieval import build_retriever

    return build_retriever(retriever, {**params, "keep_ties": keep_ties})


def _assembled(dataset: str, testbed: str, rate: float | None, retriever: str, params: dict[str, Any],
               selection: dict[str, Any], seed: int, data_dir: Path | None, pool: str | None) -> Any:
    """The RAL's retriever of the flags' setting, assembled as `biorab run` assembles a cell (the flags are a
    `biorab.ral.RetrievalSpec`, checked as a run config's retrieval entry is)."""
    from biorab.common.config_loading import validate_mapping
    from biorab.ral import RetrievalSpec, assemble

    entry = validate_mapping(RetrievalSpec, {"testbed": testbed, "rate": rate, "retriever": retriever,
                                             "params": params, **selection}, key_prefix="")
    parts = assemble(dataset=dataset, retrieval=entry, seed=seed, data_dir=data_dir)
    return parts.retriever(pool=_pool(pool))


def _print_hits(
    retriever: Any,
    dataset: str,
    split: str,
    data_dir: Path | None,
    limit: int,
    header: dict[str, Any],
    as_json: bool,
) -> None:
    from biorab.datasets import load_dataset

    examples = load_dataset(dataset, split, data_dir=data_dir)[:limit]
    found = retriever.search({e.id: e.text for e in examples})
    hits = {qid: list(r.hits) for qid, r in found.items()}
    k = retriever.selection.k
    if as_json:
        results = [
            {"id": e.id, "query": e.text, "label": e.label, "hits": [h.to_row() for h in hits[e.id]]}
            for e in examples
        ]
        typer.echo(json.dumps({**header, "k": k, "results": results}, ensure_ascii=False, indent=2))
        return
    _echo_header(header)
    for example in examples:
        typer.echo(f"\n{example.id}  gold={example.label!r}\n  query: {_short(example.text)}")
        for hit in hits[example.id] or []:
            typer.echo(f"  #{hit.rank} {hit.score:.4f} {hit.doc_id}  {_short(hit.key)}  -> {hit.value!r}")
        if not hits[example.id]:
            typer.echo("  (no hits)")


def _judgements(
    relevance: str, dataset: str, items: list[Any], limit: int | None, seed: int, data_dir: Path | None
) -> Any:
    from biorab.retrieval.quality import Judgements, self_judgements

    if relevance == "known-item":
        return self_judgements(items, limit=limit, seed=seed)
    if not relevance.startswith("original:"):
        raise ConfigError(
            f"unknown relevance {relevance!r}; use known-item or original:<run>", key="--relevance"
        )
    from biorab.datasets import load_dataset
    from biorab.retrieval.original import original_judgements

    tests = load_dataset(dataset, "test", data_dir=data_dir)
    judged = original_judgements(dataset, relevance.split(":", 1)[1], tests, items, data_dir=data_dir)
    kept = list(judged.queries)[:limit] if limit else list(judged.queries)
    return Judgements({q: judged.queries[q] for q in kept}, {q: judged.relevant[q] for q in kept})


def _print_eval(
    engine: Any, judgements: Any, items: list[Any], k: int, header: dict[str, Any], as_json: bool
) -> None:
    from biorab.retrieval.quality import evaluate

    ks = sorted({1, 5, 10, k})
    hits = engine.search(judgements.queries, max(ks))
    report = evaluate(hits, judgements, items, ks).to_json()
    if as_json:
        typer.echo(json.dumps({**header, **report}, indent=2))
        return
    _echo_header(header)
    typer.echo(
        " ".join(
            f"{name}={value:.4f}" if isinstance(value, float) else f"{name}={value}"
            for name, value in report.items()
        )
    )


def _echo_header(header: dict[str, Any]) -> None:
    """The scalar header fields as key=value, then the retriever params as one compact JSON line."""
    typer.echo(" ".join(f"{key}={value}" for key, value in header.items() if not isinstance(value, dict)))
    for key, value in header.items():
        if isinstance(value, dict):
            typer.echo(f"{key}: {json.dumps(value, sort_keys=True)}")


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
