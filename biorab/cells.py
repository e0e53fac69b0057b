"""The records a run passes between its layers: a cell's plan, its slice of rows, and its scored result.

They live here, beside `biorab.records`, and not in the runner, so that the stages, the executors
(`biorab.runner.local`, `pipelines.ral`), the experiment sources and tracking (`biorab.tracking`) share
them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biorab.experiment import RetrievalSpec
    from biorab.records import Example


@dataclass(frozen=True)
class CellPlan:
    """One cell as the stages see it: small and picklable, never the whole config.

    Attributes:
        dataset, split: where the cell's instances come from, as reported (a dataset and its split; an
            experiment source may name its own input and setting here, e.g. a query file and a world).
        renders: the render stage fills the prompt from the task template; ``False`` when the experiment
            source put a rendered prompt on each row when planning.
        parses: the parse stage fills ``pred_*``; ``False`` when the experiment source scores the
            generations from disk itself.
        sampling_seed: the seed this cell's rows sample with (``None``: the run's sampling seed).
        corpus_dir: for cells with a corpus method, the transformed corpus to index (else ``None``).
        source: the name of the experiment source that planned the cell; `info` is that source's own
            description of the cell (opaque to generic code).
    """

    cell_id: str
    label: str
    dataset: str
    split: str
    task: str
    retrieval: RetrievalSpec
    seed: int
    data_dir: str | None
    parser: str
    labels: tuple[str, ...] | None
    renders: bool = True
    parses: bool = True
    sampling_seed: int | None = None
    source: str = "biorab"
    info: Any = None
    # Cells with a corpus method: the folder of the transformed corpus the retrieval stage indexes instead
    # of the testbed corpus (set by `biorab.methods.apply.prepare_method_corpora` before execution).
    corpus_dir: str | None = None
    # Retrieving cells: the digest of the files their corpus is built from (`biorab.runner.plan.corpus_key`);
    # a row is reused only when it was computed with the same (`biorab.runner.instance_key`).
    corpus_key: str | None = None

    @property
    def retrieves(self) -> bool:
        return self.retrieval.retrieves


@dataclass
class CellSlice:
    """A cell's plan, its whole slice of examples and the rows still to compute."""

    plan: CellPlan
    examples: list[Example]
    pending: list[dict[str, Any]]


@dataclass
class CellResult:
    """A cell's final numbers and where its consolidated predictions are."""

    plan: CellPlan
    n: int
    metrics: dict[str, dict[str, float | None]]
    parse_failures: int
    generation_failures: int
    predictions_path: Path
    extra: dict[str, Any] = field(default_factory=dict)
    # MLflow tags that say what the cell is, when its source has its own (None: dataset/retrieval tags).
    tags: dict[str, str] | None = None

    @property
    def incomplete(self) -> bool:
        """Some rows failed (their generation errored): the metrics are over a partial cell, not a score;
        the next run retries those rows."""
        return self.generation_failures > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "cell_id": self.plan.cell_id,
            "cell": self.plan.label,
            "dataset": self.plan.dataset,
            "split": self.plan.split,
            "task": self.plan.task,
            "testbed": self.plan.retrieval.testbed,
            "retriever": self.plan.retrieval.retriever if self.plan.retrieves else None,
            "n": self.n,
            "metrics": self.metrics,
            "parse_failures": self.parse_failures,
            "generation_failures": self.generation_failures,
            "incomplete": self.incomplete,
            "predictions": str(self.predictions_path),
            **self.extra,
        }
