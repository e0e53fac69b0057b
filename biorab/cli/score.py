"""``biorab score`` (every metric of a predictions file, with 95% bootstrap CIs) and ``biorab compare``
(paired bootstrap and McNemar between two predictions files).

Only typer and the standard library are imported at module level; the metrics, the parsers and rich are
imported inside the commands, so ``import biorab.cli.main`` stays light.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from biorab.metrics import PairedComparison, ScoreReport

TaskOption = Annotated[
    str, typer.Option("--task", help="A registered task, as `biorab ls tasks` lists them.")
]
ParserOption = Annotated[
    str, typer.Option("--parser", help="Parser mode: strict_original (the original scripts) or robust.")
]
DatasetOption = Annotated[
    str | None,
    typer.Option("--dataset", help="Take the label (or relation) set of this dataset, e.g. semclass."),
]
LabelsOption = Annotated[
    str | None, typer.Option("--labels", help="Comma-separated label set (default: the sorted gold labels).")
]
JsonOption = Annotated[bool, typer.Option("--json/--no-json", metavar="",
    help="Print JSON instead of a table.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
NBootOption = Annotated[int, typer.Option("--n-boot", min=0, help="Bootstrap resamples (0: no intervals).")]


def _labels(raw: str | None) -> list[str] | None:
    return None if raw is None else raw.split(",")


def score_command(
    file: Annotated[
        Path, typer.Argument(help="JSONL predictions: one {id, task, gold, generation} per line.")
    ],
    task: TaskOption,
    parser: ParserOption = "robust",
    dataset: DatasetOption = None,
    labels: LabelsOption = None,
    as_json: JsonOption = False,
    seed: SeedOption = 0,
    n_boot: NBootOption = 1000,
) -> None:
    """Parse every generation of FILE and print every metric of the task with its 95% bootstrap CI.

    A row may add "scores" (label -> probability or log-probability) to get AUROC and AUPRC.
    """
    from biorab.metrics.predictions_scoring import score_file
    from biorab.tasks import get_task, task_names

    report = score_file(
        file, task=get_task(task), known_tasks=task_names(), parser=parser, dataset=dataset,
        labels=_labels(labels), n_boot=n_boot, seed=seed,
    )
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
        return
    _print_report(report, f"{file} ({task}, parser {parser}, {n_boot} resamples, seed {seed})")


def compare_command(
    file_a: Annotated[Path, typer.Argument(help="Baseline predictions (JSONL, as for `biorab score`).")],
    file_b: Annotated[
        Path, typer.Argument(help="Predictions to compare with the baseline, same ids and golds.")
    ],
    task: TaskOption,
    metric: Annotated[
        str | None, typer.Option("--metric", help="Metric to compare (default: the task's headline metric).")
    ] = None,
    parser: ParserOption = "robust",
    dataset: DatasetOption = None,
    labels: LabelsOption = None,
    as_json: JsonOption = False,
    seed: SeedOption = 0,
    n_boot: NBootOption = 1000,
) -> None:
    """Paired comparison of FILE_B against FILE_A: delta (B - A) with paired bootstrap CI and p-value,
    and McNemar's test on per-instance correctness."""
    from biorab.metrics.predictions_scoring import compare_files
    from biorab.tasks import get_task, task_names

    result = compare_files(
        file_a,
        file_b,
        task=get_task(task),
        known_tasks=task_names(),
        parser=parser,
        dataset=dataset,
        labels=_labels(labels),
        metric=metric,
        n_boot=n_boot,
        seed=seed,
    )
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
        return
    _print_comparison(result, str(file_a), str(file_b))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _print_report(report: ScoreReport, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, caption=f"n = {report.n}, parse failures = {report.parse_failures}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    for name, value in report.metrics.items():
        table.add_row(name, _number(value.value), f"[{_number(value.ci_low)}, {_number(value.ci_high)}]")
    console = Console()
    console.print(table)
    for name, reason in report.skipped.items():
        console.print(f"skipped {name}: {reason}")


def _print_comparison(result: PairedComparison, name_a: str, name_b: str) -> None:
    from rich.console import Console
    from rich.table import Table

    m = result.mcnemar
    table = Table(title=f"{result.metric}, n = {result.n}", show_header=False)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for quantity, value in (
        (f"A: {name_a}", _number(result.value_a)),
        (f"B: {name_b}", _number(result.value_b)),
        ("delta (B - A)", _number(result.delta)),
        ("paired bootstrap 95% CI", f"[{_number(result.ci_low)}, {_number(result.ci_high)}]"),
        (f"paired bootstrap p ({result.n_boot} resamples)", _number(result.p_value)),
        ("McNemar: only A right / only B right", f"{m.only_a} / {m.only_b}"),
        (f"McNemar p ({m.method})", _number(m.p_value)),
    ):
        table.add_row(quantity, value)
    Console().print(table)


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``compare`` to the ``biorab`` app."""
    app.command("score")(score_command)
    app.command("compare")(compare_command)
