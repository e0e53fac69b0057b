"""``biorab data leakage``: test instances whose text sits in a corpus their cells retrieve from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from biorab.cli.data_options import DataDirOption

if TYPE_CHECKING:
    from biorab.corpora.leakage import Overlap


def leakage(
    names: Annotated[list[str] | None, typer.Argument(help="Datasets (default: all staged).")] = None,
    data_dir: DataDirOption = None,
    rate: Annotated[list[float] | None, typer.Option("--rate", help="Counterfactual rates (repeatable; "
        "default the paper's 0.2, 0.8, 1).")] = None,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="",
        help="Print JSON instead of a table.")] = False,
) -> None:
    """Per dataset and corpus (labeled, unlabeled, counterfactual per rate, diverse): the test instances,
    those whose text is in the corpus (lower-cased, whitespace collapsed), and of those the ones with a
    corpus item of the same label (triples: the same triples). Cached by corpus digest under the cache dir.

    A run excludes such hits with ``exclude_test_duplicates: true`` on its retrieval entries.
    """
    from biorab.common.paths import biorab_data_dir, cache_dir
    from biorab.corpora.leakage import PAPER_RATES, leakage_audit
    from biorab.datasets import STAGED_DATASETS

    root = biorab_data_dir(data_dir)
    result = leakage_audit(tuple(names or STAGED_DATASETS), data_dir=root,
                           rates=tuple(rate or PAPER_RATES), cache=cache_dir() / "leakage")
    if as_json:
        payload = {name: {corpus: o.to_json() for corpus, o in by_corpus.items()}
                   for name, by_corpus in result.items()}
        typer.echo(json.dumps({"datasets": payload}, indent=2))
        return
    _print_table(result, root)


def _print_table(result: dict[str, dict[str, Overlap]], root: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Test instances found in retrieval corpora ({root})")
    for column in ("dataset", "corpus", "test", "in corpus", "same label"):
        table.add_column(column, justify="left" if column in ("dataset", "corpus") else "right")
    for name, by_corpus in result.items():
        for index, (corpus, o) in enumerate(by_corpus.items()):
            counts = (str(o.test), str(o.in_corpus), str(o.same_label))
            last = index == len(by_corpus) - 1
            table.add_row(name if index == 0 else "", corpus, *counts, end_section=last)
    Console().print(table)
