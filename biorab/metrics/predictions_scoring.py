"""Score a predictions file (what `biorab score` does): read rows, parse generations, score.

The label set of a single-label task is the dataset's (``dataset=``), else the given ``labels``, else the
sorted set of gold labels in the file. For triple extraction the dataset's relation set (or ``labels``) is
handed to the parser only. Golds are checked here, where line numbers are known.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

from biorab.common.errors import ConfigError, DataError, UnknownNameError
from biorab.common.labels import dataset_labels
from biorab.common.records import Prediction
from biorab.common.registry import DATASETS, dataset_task
from biorab.metrics.paired import PairedComparison, compare
from biorab.metrics.predictions_reader import ScoreRow, read_score_rows
from biorab.metrics.score_records import ScoreReport
from biorab.metrics.tables import ScoredTask
from biorab.metrics.task_scoring import score

PARSER_MODES: tuple[str, ...] = ("strict_original", "robust")


def triple_matching_for(parser: str) -> str:
    """``original`` (``5_metrics.py``'s element comparison) with the ``strict_original`` parser, else
    ``normalized``: the strict mode reproduces the original triple score end to end."""
    return "original" if parser == "strict_original" else "normalized"


def label_set(
    task: ScoredTask, rows: Sequence[ScoreRow], *, dataset: str | None = None,
    labels: Sequence[str] | None = None,
) -> tuple[str, ...] | None:
    """The label set used for parsing and scoring (see the module docstring); ``None`` for triples
    without a dataset or labels."""
    if dataset is not None and labels is not None:
        raise ConfigError("give either --dataset or --labels, not both", key="labels")
    if dataset is not None:
        tasks = _dataset_tasks()
        if dataset not in tasks:
            raise UnknownNameError("dataset", dataset, tasks)
        if tasks[dataset] != task.name:
            raise ConfigError(f"dataset {dataset!r} is a {tasks[dataset]} dataset, not {task.name}",
                              key="dataset")
        return dataset_labels(dataset)
    if labels is not None:
        cleaned = tuple(label.strip() for label in labels if label.strip())
        if not cleaned:
            raise ConfigError("--labels is empty", key="labels")
        return cleaned
    return tuple(sorted({row.gold for row in rows})) if task.closed else None


def _dataset_tasks() -> dict[str, str]:
    """The task of each registered dataset that declares one (all but ``byo``, whose task is a parameter)."""
    declared = {name: dataset_task(name) for name in DATASETS.names()}
    return {name: task for name, task in declared.items() if task is not None}


def check_golds(path: Path, task: ScoredTask, rows: Sequence[ScoreRow],
                labels: tuple[str, ...] | None) -> None:
    """Raise `DataError` (file, line, field ``gold``) for a gold the task cannot score (a malformed triple,
    a label outside the set: `TaskType.gold_error`)."""
    for row in rows:
        error = task.gold_error(row.gold, labels)
        if error is not None:
            raise DataError(error, path=path, line=row.line, field="gold")


def parse_rows(
    task: ScoredTask, rows: Sequence[ScoreRow], *, parser: str, labels: Sequence[str] | None
) -> list[Prediction]:
    """Parse each row's generation with its task type (`TaskType.parse`), attaching the row's scores if
    any."""
    if parser not in PARSER_MODES:
        raise ConfigError(
            f"unknown parser mode {parser!r}; use one of {', '.join(PARSER_MODES)}", key="parser"
        )
    predictions = []
    for row in rows:
        prediction = task.parse(row.generation, mode=parser, labels=labels, options=row.options)
        predictions.append(replace(prediction, scores=row.scores) if row.scores is not None else prediction)
    return predictions


def load_and_parse(
    path: str | Path,
    *,
    task: ScoredTask,
    known_tasks: Collection[str],
    parser: str = "robust",
    dataset: str | None = None,
    labels: Sequence[str] | None = None,
) -> tuple[list[ScoreRow], list[Prediction], tuple[str, ...] | None]:
    """Read `path`, check its golds and parse its generations; returns rows, predictions and label set
    (`task`: the task type of `--task`; `known_tasks`: every registered task, for the rows' check)."""
    rows = read_score_rows(path, task=task.name, known_tasks=known_tasks)
    resolved = label_set(task, rows, dataset=dataset, labels=labels)
    check_golds(Path(path), task, rows, resolved)
    # A task whose labels vary per instance (QA) without a declared label set: the parser accepts every
    # option letter (A-E), so an answer letter that no gold of the file happens to use is a wrong answer,
    # not a parse failure.
    parse_labels = None if not task.labels_fixed and dataset is None and labels is None else resolved
    return rows, parse_rows(task, rows, parser=parser, labels=parse_labels), resolved


def score_file(
    path: str | Path,
    *,
    task: ScoredTask,
    known_tasks: Collection[str],
    parser: str = "robust",
    dataset: str | None = None,
    labels: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> ScoreReport:
    """Score a predictions file (JSONL rows ``{"id", "task", "gold", "generation"}``).

    Raises:
        DataError: a bad row (file and line named); ConfigError: contradictory options.
    """
    rows, predictions, resolved = load_and_parse(
        path, task=task, known_tasks=known_tasks, parser=parser, dataset=dataset, labels=labels
    )
    golds = [row.gold for row in rows]
    scoring_labels = resolved if task.closed else None
    return score(
        task,
        golds,
        predictions,
        labels=scoring_labels,
        n_boot=n_boot,
        seed=seed,
        triple_matching=triple_matching_for(parser),
    )


def compare_files(
    path_a: str | Path,
    path_b: str | Path,
    *,
    task: ScoredTask,
    known_tasks: Collection[str],
    parser: str = "robust",
    dataset: str | None = None,
    labels: Sequence[str] | None = None,
    metric: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> PairedComparison:
    """Paired comparison of two predictions files over the same ids with the same golds (B minus A)."""
    rows_a, preds_a, labels_a = load_and_parse(
        path_a, task=task, known_tasks=known_tasks, parser=parser, dataset=dataset, labels=labels
    )
    rows_b, preds_b, _ = load_and_parse(path_b, task=task, known_tasks=known_tasks, parser=parser,
                                        dataset=dataset, labels=labels)
    by_id = {row.id: (row, pred) for row, pred in zip(rows_b, preds_b, strict=True)}
    missing = [row.id for row in rows_a if row.id not in by_id]
    if missing or len(rows_a) != len(rows_b):
        extra = sorted(set(by_id) - {row.id for row in rows_a})
        raise DataError(
            f"the files hold different ids: only in A {missing[:5]}, only in B {extra[:5]}", path=path_b
        )
    aligned_b = []
    for row in rows_a:
        other, prediction = by_id[row.id]
        if other.gold != row.gold:
            raise DataError(f"id {row.id!r}: gold differs from line {row.line} of {path_a}", path=path_b,
                            line=other.line, field="gold")  # fmt: skip
        aligned_b.append(prediction)
    golds = [row.gold for row in rows_a]
    # Same golds, so both files resolve to the same label set.
    scoring_labels = labels_a if task.closed else None
    return compare(
        task,
        golds,
        preds_a,
        aligned_b,
        metric=metric,
        labels=scoring_labels,
        n_boot=n_boot,
        seed=seed,
        triple_matching=triple_matching_for(parser),
    )
