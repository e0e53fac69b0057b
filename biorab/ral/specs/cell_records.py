"""The records a run passes between its layers: a cell's plan, its slice of rows, and its scored result.

They live in the RAL's floor, beside the retrieval setting a plan holds (`retrieval_spec`), and not in the
runner, so that the executors (`biorab.runner.executors.local`, `pipelines.ray_executor`), the experiment
sources and tracking (`biorab.tracking`) share them without importing one another. The RAL's batch stages
read a plan through `biorab.ral.specs.stage_plan.StagePlan`, which `CellPlan` fills.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from biorab.common.errors import BioRABError

if TYPE_CHECKING:
    from biorab.common.records import Example
    from biorab.ral.specs.retrieval_spec import RetrievalSpec


class CellInfo(Protocol):
    """An experiment source's own description of a cell that is not a dataset slice (e.g. DrugMech's
    `DrugMechCellInfo`: query file, query type, world or disease mode, run)."""

    def columns(self) -> dict[str, Any]:
        """What the cell is, as ``summary.json`` and the MLflow params show it (values: str, int or None)."""
        ...


@dataclass(frozen=True)
class CellPlan:
    """One cell as the stages see it: small and picklable, never the whole config.

    A cell is either a dataset slice under a retrieval setting (`dataset`, `split`, `retrieval`,
    `data_dir` set: BioRAB cells) or described by its source's own `info` (those four unset).

    Attributes:
        task: the task of the cell's rows (a `biorab.tasks` task, or the source's own, e.g. ``drugmech``).
        dataset, split: the dataset and split the instances come from; ``None`` for other cells.
        retrieval: the retrieval setting (its testbed may be ``none``: a zero-shot cell of a dataset);
            ``None`` for cells that never retrieve.
        data_dir: the BioRAB data root of the dataset (``None``: the default, or no dataset).
        renders: the render stage fills the prompt from the task template; ``False`` when the experiment
            source put a rendered prompt on each row when planning.
        parses: the parse stage fills ``pred_*``; ``False`` when the experiment source scores the
            generations from disk itself.
        sampling_seed: the seed this cell's rows sample with (``None``: the run's sampling seed).
        source: the name of the experiment source that planned the cell; `info` is that source's own
            description of the cell (`CellInfo`), ``None`` for dataset slices.
    """

    cell_id: str
    label: str
    task: str
    seed: int
    parser: str
    labels: tuple[str, ...] | None
    dataset: str | None = None
    split: str | None = None
    retrieval: RetrievalSpec | None = None
    data_dir: str | None = None
    renders: bool = True
    parses: bool = True
    sampling_seed: int | None = None
    source: str = "biorab"
    info: CellInfo | None = None
    # A dataset slice's identity without its size (`biorab.experiment.DatasetSpec.fingerprint_json`: name,
    # split, resample), so a no-retrieval twin is looked for on the same slice (a 1:5 resample is not a 1:1).
    slice_key: str | None = None
    # Retrieving cells: the digest of the files their corpus is built from
    # (`biorab.runner.plan.cell_slices.corpus_key`); a row is reused only when it was computed with the same
    # (`biorab.runner.store.instance_key`).
    corpus_key: str | None = None
    #: The query framing of a dataset slice (`biorab.datasets.framing`; ``none``: as written).
    framing: str = "none"

    @property
    def retrieves(self) -> bool:
        return self.retrieval is not None and self.retrieval.retrieves

    @property
    def probes(self) -> bool:
        """Whether the awareness probe runs on this cell's rows."""
        return self.retrieval is not None and self.retrieval.probes

    @property
    def corpus_method(self) -> str:
        """The retrieval setting's corpus method (``none`` without one, or without retrieval)."""
        return self.retrieval.method if self.retrieval is not None else "none"

    def dataset_setting(self) -> tuple[str, RetrievalSpec]:
        """The dataset and the retrieval setting of a dataset-slice cell, for the code that only such cells
        reach (rendering from a task template, retrieval, task scoring)."""
        if self.dataset is None or self.retrieval is None:
            raise BioRABError(f"cell {self.cell_id} (from {self.source}) is not a dataset slice")
        return self.dataset, self.retrieval

    def columns(self) -> dict[str, Any]:
        """What the cell is, as ``summary.json`` shows it: a dataset slice's dataset, split, task, testbed
        and retriever, or the task and the source's own description (`info`)."""
        if self.info is not None:
            return {"task": self.task, **self.info.columns()}
        r = self.retrieval
        return {"dataset": self.dataset, "split": self.split, "task": self.task,
                "testbed": r.testbed if r is not None else "none",
                "retriever": r.retriever if r is not None and self.retrieves else None}


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

    @property
    def incomplete(self) -> bool:
        """Some rows failed (their generation errored): the metrics are over a partial cell, not a score;
        the next run retries those rows."""
        return self.generation_failures > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "cell_id": self.plan.cell_id,
            "cell": self.plan.label,
            **self.plan.columns(),
            "n": self.n,
            "metrics": self.metrics,
            "parse_failures": self.parse_failures,
            "generation_failures": self.generation_failures,
            "incomplete": self.incomplete,
            "predictions": str(self.predictions_path),
            **self.extra,
        }
