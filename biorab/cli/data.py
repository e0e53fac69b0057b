"""``biorab data``: inspect datasets (``stats``, ``show``; ``leakage`` and ``fetch`` in their own modules).

Only typer and the standard library are imported at module level; the loaders and rich are imported
inside the commands, so ``import biorab.cli.main`` stays light.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biorab.cli.data_options import DataDirOption

if TYPE_CHECKING:
    from biorab.common.records import Example
    from biorab.datasets.stats import SplitStats

data_app = typer.Typer(
    help="Inspect the datasets: row counts, labels, duplicates, examples.", no_args_is_help=True
)


@data_app.command("stats")
def stats(
    data_dir: DataDirOption = None,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="",
        help="Print JSON instead of a table.")] = False,
    dataset: Annotated[
        list[str] | None,
        typer.Option("--dataset", "-d", help="Only this dataset (repeatable); default: all 8."),
    ] = None,
    params: Annotated[
        Path | None,
        typer.Option("--params", help="YAML/JSON file with the params of one --dataset (byo, bionli)."),
    ] = None,
) -> None:
    """Rows, label counts and exact duplicates per split of the staged datasets (or, with --params, of
    one bring-your-own dataset).

    A duplicate is a row whose (text, label) repeats an earlier row of the same split; for triple
    extraction the label counts are relation counts.
    """
    from biorab.common.errors import ConfigError
    from biorab.common.paths import biorab_data_dir
    from biorab.datasets import STAGED_DATASETS
    from biorab.datasets.stats import dataset_stats

    if params is not None:
        if not dataset or len(dataset) != 1:
            raise ConfigError("--params needs exactly one --dataset (e.g. -d byo)", key="--params")
        # As for `show`: a byo dataset's relative paths resolve against --data-dir, else the cwd.
        loader_params = _loader_params(dataset[0], params)
        result = dataset_stats(tuple(dataset), data_dir=data_dir, params=loader_params)
        root = data_dir or Path.cwd()
    else:
        root = biorab_data_dir(data_dir)
        result = dataset_stats(tuple(dataset or STAGED_DATASETS), data_dir=root)
    if as_json:
        payload = {
            name: {split: s.to_json() for split, s in by_split.items()} for name, by_split in result.items()
        }
        typer.echo(json.dumps({"datasets": payload}, indent=2, ensure_ascii=False))
        return
    _print_stats_table(result, root)


def _loader_params(name: str, path: Path) -> dict[str, Any]:
    """The params file of loader `name`, validated here so that an error names the file and the key."""
    from biorab.common.build import build_params
    from biorab.common.config_loading import read_yaml
    from biorab.common.registry import DATASETS

    validated = build_params(DATASETS, name, read_yaml(path), path=path)
    return validated.model_dump() if validated is not None else {}


def _print_stats_table(result: dict[str, dict[str, SplitStats]], root: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"BioRAB datasets in {root}", show_lines=False)
    for column, justify in (
        ("dataset", "left"),
        ("split", "left"),
        ("rows", "right"),
        ("duplicates", "right"),
        ("labels", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for name, splits in result.items():
        for index, (split, s) in enumerate(splits.items()):
            labels = ", ".join(f"{label} {count}" for label, count in s.labels.items())
            table.add_row(
                name if index == 0 else "",
                split,
                str(s.rows),
                str(s.duplicates),
                labels,
                end_section=index == len(splits) - 1,
            )
    Console().print(table)


@data_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Dataset name (ade, chemprot, ..., byo, bionli).")],
    split: Annotated[str, typer.Option("--split", "-s", help="train, dev or test.")] = "test",
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, help="How many examples.")] = 5,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many examples first.")] = 0,
    data_dir: DataDirOption = None,
    params: Annotated[
        Path | None, typer.Option("--params", help="YAML/JSON file with the loader's params (byo, bionli).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="",
        help="Print one JSON row per example.")] = False,
) -> None:
    """Print examples of one split: id, text (the retrieval key/query), gold label and fields."""
    from biorab.datasets import load_dataset

    loader_params = _loader_params(name, params) if params is not None else None
    examples = load_dataset(name, split, data_dir=data_dir, params=loader_params)[offset : offset + limit]
    if as_json:
        for example in examples:
            row = example.to_row()
            row["fields"] = example.fields
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    _print_examples(examples)


def _print_examples(examples: list[Example]) -> None:
    from rich.console import Console
    from rich.panel import Panel
    from rich.text import Text

    console = Console()
    for example in examples:
        # Text objects, not markup: sentences such as "[Action of ...]" must print verbatim.
        body = Text()
        body.append("text:   ", style="bold").append(example.text + "\n")
        body.append("label:  ", style="bold").append(example.label + "\n")
        body.append("fields: ", style="bold").append(json.dumps(example.fields, ensure_ascii=False))
        title = Text(f"{example.id}  ({example.task}, source line {example.source_line})")
        console.print(Panel(body, title=title, title_align="left"))


def register(app: typer.Typer) -> None:
    """Attach the ``data`` command group (with ``fetch`` from its own module) to the main app."""
    from biorab.cli.data_fetch import fetch
    from biorab.cli.data_leakage import leakage

    data_app.command("fetch")(fetch)
    data_app.command("leakage")(leakage)
    app.add_typer(data_app, name="data")
