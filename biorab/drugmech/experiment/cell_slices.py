"""DrugMech cells of a run: one per (query file × world, or × disease mode for factual files, × run).

Their rows are the runner's rows (`biorab.ral.specs.rows.ROW_SCHEMA`) with the prompt already rendered by
`biorab.drugmech.prompts.render.render_prompt` and no retrieval, so they flow through the same generation
stage, generation store, shards and resume as BioRAB rows. Prompts are rendered for pending rows only, so a
run with nothing pending loads neither DrugMechDB nor PrimeKG.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.drugmech.experiment.spec import DRUGMECH_TASK, DrugMechCellInfo, DrugMechSpec, drugmech_info
from biorab.experiment import ExperimentConfig
from biorab.generation.base import stable_digest
from biorab.ral.specs.cell_records import CellPlan, CellSlice
from biorab.ral.specs.rows import example_row
from biorab.runner.store.shards import done_ids


@dataclass(frozen=True)
class LoadedFile:
    """A query file as a run names it: `name` is the released stem or the file's absolute path."""

    name: str
    stem: str
    qfile: Any  # biorab.drugmech.queries.query_files.QueryFile
    digest: str


def load_query_entry(entry: str, release_dir: str | None) -> LoadedFile:
    """Load one ``drugmech.query_files`` entry: a released stem/file name, or a ``.json`` path.

    Raises:
        DataError: for an unknown released name, a missing file or a malformed file.
    """
    from biorab.drugmech.queries.query_files import RELEASE_FILES
    from biorab.drugmech.queries.resolver import resolve_query_file

    stem = entry[:-5] if entry.endswith(".json") else entry
    released = stem in RELEASE_FILES and "/" not in entry and "\\" not in entry
    name = stem if released else str(Path(entry).expanduser().resolve())
    qfile = resolve_query_file(name if released else entry, base=Path.cwd(), release_dir=release_dir)
    digest = hashlib.sha256(Path(qfile.path).read_bytes()).hexdigest()
    return LoadedFile(name, Path(name).stem if not released else stem, qfile, digest)


def cell_infos(spec: DrugMechSpec, loaded: LoadedFile) -> list[DrugMechCellInfo]:
    """The file's cells: each world (counterfactual) or disease mode (factual) × each run."""
    from biorab.drugmech.queries.query_files import KNOWN_MOA

    qtype = loaded.qfile.query_type
    settings: list[tuple[str | None, str | None]] = (
        [(None, m) for m in spec.factual_modes(loaded.qfile.is_negative)] if qtype == KNOWN_MOA
        else [(w, None) for w in spec.worlds])
    return [DrugMechCellInfo(loaded.name, qtype, world, mode, run)
            for world, mode in settings for run in range(spec.runs)]


def make_drugmech_plan(config: ExperimentConfig, loaded: LoadedFile, info: DrugMechCellInfo) -> CellPlan:
    """The cell's plan; its id digests everything that determines its rows except `limit` (so a larger
    limit resumes a smaller run) and the parser/matcher (they act on the rows when scoring)."""
    spec = config.drugmech
    assert spec is not None
    seed = config.sampling.seed + info.run
    fingerprint = stable_digest({
        "drugmech": loaded.name, "content": loaded.digest, "world": info.world, "mode": info.mode,
        "run": info.run, "backend": config.backend.model_dump(mode="json"),
        "sampling": config.sampling.model_copy(update={"seed": seed}).model_dump(mode="json"),
        "data": [spec.release_dir, spec.drugmechdb_dir, spec.primekg],
        # rows with an answer constraint are other rows; named only when on, so other cells keep their ids
        **({"answer_constraint": True} if spec.answer_constraint else {}),
    })[:10]
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"dm-{loaded.stem}__{info.setting}__run{info.run}")
    return CellPlan(cell_id=f"{label}__{fingerprint}", label=label, task=DRUGMECH_TASK, seed=config.seed,
                    parser=spec.parser, labels=None, renders=False, parses=False, sampling_seed=seed,
                    source="drugmech", info=info)


def _examples(loaded: LoadedFile, info: DrugMechCellInfo, limit: int | None) -> list[Example]:
    # The rows' dataset/split columns name the query file and the world or mode (as they always have:
    # row contents, and so resume, stay as they were).
    queries = loaded.qfile.queries[:limit] if limit else loaded.qfile.queries
    return [Example(id=f"{loaded.stem}/{i}", task=DRUGMECH_TASK, dataset=loaded.stem, split=info.setting,
                    text="", label="", fields={"query_file": loaded.name, "index": i}, source_line=i + 1)
            for i in range(len(queries))]


class _Renderer:
    """Renders prompts, loading DrugMechDB and PrimeKG once and only when a pending prompt needs them."""

    def __init__(self, spec: DrugMechSpec) -> None:
        self.spec = spec
        self._moas: Any = None
        self._kg: Any = None
        self._done: dict[tuple[str, str | None, str | None, int], str] = {}

    def __call__(self, loaded: LoadedFile, info: DrugMechCellInfo, index: int) -> str:
        from biorab.drugmech.prompts.render import NAMED, OPEN_WORLD, needs_drugmechdb, render_prompt

        key = (loaded.name, info.world, info.mode, index)
        if key not in self._done:
            world, mode = info.world or OPEN_WORLD, info.mode or NAMED
            if needs_drugmechdb(info.query_type, world=world, mode=mode) and self._moas is None:
                from biorab.drugmech.graph.drugmechdb import load_drugmechdb

                self._moas = load_drugmechdb(self.spec.drugmechdb_dir)
            if self.spec.primekg and info.mode not in (None, NAMED) and self._kg is None:
                from biorab.drugmech.graph.primekg import load_primekg

                self._kg = load_primekg(self.spec.primekg)
            try:
                self._done[key] = render_prompt(loaded.qfile.queries[index], world=world, mode=mode,
                                                moas=self._moas, primekg=self._kg)
            except DataError as e:  # name the query file and row, whatever the inner error named
                raise DataError(f"row {index}: {e}", path=loaded.qfile.path) from e
        return self._done[key]


def drugmech_cells(config: ExperimentConfig) -> list[tuple[LoadedFile, CellPlan]]:
    """Every DrugMech cell of `config` with its query file, in config order (files × settings × runs)."""
    spec = config.drugmech
    if spec is None:
        return []
    out = []
    for entry in spec.query_files:
        loaded = load_query_entry(entry, spec.release_dir)
        out += [(loaded, make_drugmech_plan(config, loaded, info)) for info in cell_infos(spec, loaded)]
    return out


def plan_drugmech(config: ExperimentConfig, cells_dir: Path) -> list[CellSlice]:
    """Every DrugMech cell with its slice and its pending rows (prompts rendered), in config order."""
    if config.drugmech is None:
        return []
    from biorab.drugmech.parsing.answer_options import answer_constraint
    from biorab.drugmech.prompts.factual import NAMED

    render = _Renderer(config.drugmech)
    slices = []
    for loaded, plan in drugmech_cells(config):
        info = drugmech_info(plan)
        examples = _examples(loaded, info, config.drugmech.limit)
        done = done_ids(cells_dir / plan.cell_id)
        pending = []
        for i, ex in enumerate(examples):
            if ex.id not in done:
                row = example_row(plan.cell_id, i, ex)
                row.update(prompt=render(loaded, info, i), hits="[]")
                if config.drugmech.answer_constraint:  # the rehearsal's fake draws its answers from it
                    row["constraint"] = answer_constraint(loaded.qfile.queries[i],
                                                          mode=info.mode or NAMED).to_json()
                pending.append(row)
        slices.append(CellSlice(plan, examples, pending))
    return slices
