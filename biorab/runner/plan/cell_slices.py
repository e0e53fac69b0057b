"""What a run has to do: the cells of a config, their dataset slices, and which instances are still pending.

A `CellPlan` is the small, picklable description of one cell that every stage (in-process or in a Ray
actor) receives; it never carries the whole config.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from biorab.common.records import Example
from biorab.experiment import Cell, ExperimentConfig
from biorab.ral import dataset_labels
from biorab.ral.specs.cell_records import CellPlan, CellSlice
from biorab.ral.specs.rows import example_row
from biorab.runner.store.instance_key import example_key, instance_key
from biorab.runner.store.shards import done_keys

if TYPE_CHECKING:
    from biorab.datasets.framing import FramingEntry


def sampling_seeds(plans: Mapping[str, CellPlan]) -> dict[str, int]:
    """Cell id → sampling seed, for the cells whose rows sample with their own seed (DrugMech runs)."""
    return {k: p.sampling_seed for k, p in plans.items() if p.sampling_seed is not None}


def load_slice(cell: Cell, data_dir: str | None, ledger: list[FramingEntry] | None = None) -> list[Example]:
    """The first `limit` examples of the cell's dataset split (all of them without a limit); with
    `resample`, the seeded positive:negative subset of at most `limit` examples; with `framing`, their
    queries reframed (its ledger entries appended to `ledger` when given)."""
    from biorab.datasets import load_dataset

    examples = load_dataset(cell.dataset.name, cell.dataset.split, data_dir=data_dir)
    spec = cell.dataset.resample
    if spec is not None:
        from biorab.datasets.resample import positive_label, resample

        examples = resample(examples, spec.parts, seed=spec.seed, limit=cell.dataset.limit,
                            positive=positive_label(cell.dataset.name, spec.positive))
    else:
        examples = examples[: cell.dataset.limit] if cell.dataset.limit else examples
    out, entries = framed(cell, examples, data_dir)
    if ledger is not None:
        ledger.extend(entries)
    return out


def framed(cell: Cell, examples: list[Example], data_dir: str | None
           ) -> tuple[list[Example], list[FramingEntry]]:
    """The slice's examples under the cell's query framing, and its ledger (`biorab.datasets.framing`,
    seeded by the run's seed; the leading framing draws its wrong labels from the training split's label
    space)."""
    if cell.dataset.framing == "none":
        return examples, []
    from biorab.datasets import load_dataset
    from biorab.datasets.framing import reframe

    train = load_dataset(cell.dataset.name, "train", data_dir=data_dir) \
        if cell.dataset.framing == "leading" else []
    return reframe(examples, cell.dataset.framing, seed=cell.config.seed, train=train)


def corpus_key(cell: Cell) -> str | None:
    """Digest of the files the cell's retrieval corpus is built from (``None`` when it retrieves nothing).

    It keys the cell's rows, not the cell: the cell id (the run folder of its rows, its MLflow child run)
    names a setting and stays the same when a corpus source is edited, while the rows computed from the
    old corpus stop counting (`biorab.runner.store.instance_key`). A cell with a corpus method transforms that
    same corpus; the transform's other inputs (backend, sampling) are in the cell id already.
    """
    r = cell.retrieval
    if not r.retrieves:
        return None
    from biorab.corpora import source_files
    from biorab.file_digests import files_digest

    files = source_files(r.testbed, cell.dataset.name, data_dir=cell.config.data_dir)
    return files_digest(files)[:16]


def make_plan(cell: Cell, examples: list[Example]) -> CellPlan:
    cfg = cell.config
    task = examples[0].task if examples else ""
    return CellPlan(
        cell_id=cell.cell_id,
        label=cell.label,
        dataset=cell.dataset.name,
        split=cell.dataset.split,
        framing=cell.dataset.framing,
        task=task,
        retrieval=cell.retrieval,
        seed=cfg.seed,
        data_dir=cfg.data_dir,
        parser=cfg.parser,
        labels=dataset_labels(cell.dataset.name),
        corpus_key=corpus_key(cell),
        slice_key=json.dumps(cell.dataset.fingerprint_json(), sort_keys=True),
    )


def plan_run(config: ExperimentConfig, cells_dir: Path) -> list[CellSlice]:
    """Every cell with its slice and its pending rows (instances without a successful row on disk whose
    content, and for retrieving cells corpus sources, are the current ones:
    `biorab.runner.store.instance_key`).

    Slices are loaded once per dataset spec, not once per retrieval setting.
    """
    loaded: dict[tuple[str, str, int | None, str], list[Example]] = {}
    ledgers: dict[tuple[str, str, int | None, str], list[FramingEntry]] = {}
    slices = []
    for cell in config.cells():
        resample = cell.dataset.resample.model_dump_json() if cell.dataset.resample else ""
        spec = (cell.dataset.name, cell.dataset.split, cell.dataset.limit, resample + cell.dataset.framing)
        entries: list[FramingEntry] = []
        if spec not in loaded:
            loaded[spec] = load_slice(cell, config.data_dir, entries)
            ledgers[spec] = entries
        examples = loaded[spec]
        plan = make_plan(cell, examples)
        if ledgers[spec]:  # the framing applied, per instance (pure: rewritten with the same bytes)
            from biorab.common.atomic_files import write_text_atomic
            from biorab.datasets.framing import FRAMING_LEDGER, ledger_bytes

            (cells_dir / plan.cell_id).mkdir(parents=True, exist_ok=True)
            write_text_atomic(cells_dir / plan.cell_id / FRAMING_LEDGER, ledger_bytes(ledgers[spec]).decode())
        done = done_keys(cells_dir / plan.cell_id, instance_key)  # by content: edited data is recomputed
        pending = [example_row(plan.cell_id, i, ex, plan.corpus_key) for i, ex in enumerate(examples)
                   if example_key(ex, plan.corpus_key) not in done]
        slices.append(CellSlice(plan, examples, pending))
    return slices
