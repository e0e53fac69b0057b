"""What the runner does for cells with a corpus method: build each distinct source corpus once, transform
it (or read the stored transform back), point the cell's plan at the transformed corpus, and score the
transform against the testbed's true ledger.

Transformed corpora are stored under ``<cache>/methods/<key>``, the key being the source corpus digest,
method, prompt version, backend spec and sampling, so a rerun (or another cell on the same testbed) reads
the folder instead of building a backend. The generations themselves go through the run's generation store,
so an interrupted transform resumes from the batches already generated.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore
from biorab.cells import CellSlice
from biorab.experiment import ExperimentConfig
from biorab.generation.base import stable_digest
from biorab.methods.corpus_transform import transform_corpus, transform_sampling
from biorab.methods.prompts import PROMPT_VERSION
from biorab.methods.scoring import score_transform
from biorab.methods.store import INFO_FILE, is_complete, read_transformed, write_transformed
from biorab.ral.generator import CachedGenerator


@dataclass(frozen=True)
class MethodOutcome:
    """One cell's transformed corpus and the method's scores against the true ledger."""

    folder: Path
    metrics: dict[str, dict[str, float | None]]
    info: dict[str, Any]


class _LazyBackend:
    """The run's backend, built on first use only (a rerun whose transforms are stored needs none)."""

    def __init__(self, config: ExperimentConfig, backend: Any) -> None:
        self.config, self.given = config, backend
        self.built: Any = None

    def get(self) -> Any:
        if self.given is not None:
            return self.given
        if self.built is None:
            from biorab.generation import build_backend
            from biorab.generation.prepare import prepare_for_backend

            prepare_for_backend(self.config.backend.name, self.config.backend.params)
            self.built = build_backend(self.config.backend.name, self.config.backend.params)
        return self.built

    def close(self) -> None:
        if self.built is not None:  # free the model (GPU memory) before the pipeline starts its own
            self.built.close()


def prepare_method_corpora(
    config: ExperimentConfig, slices: Sequence[CellSlice], *, generations_store: Path, cache_root: Path,
    backend: Any = None,
) -> dict[str, MethodOutcome]:
    """Transform the corpus of every cell with a method; set its plan's ``corpus_dir``; return the outcomes
    by cell id (cells without a method are left out and untouched)."""
    lazy = _LazyBackend(config, backend)
    done: dict[str, MethodOutcome] = {}
    out: dict[str, MethodOutcome] = {}
    try:
        for s in slices:
            if s.plan.corpus_method == "none":
                continue
            dataset, r = s.plan.dataset_setting()
            spec = stable_digest([r.testbed, r.rate, r.method, dataset, s.plan.seed, s.plan.data_dir])
            if spec not in done:
                done[spec] = _prepare_one(config, s, lazy, generations_store, cache_root)
            out[s.plan.cell_id] = done[spec]
            s.plan = dataclasses.replace(s.plan, corpus_dir=str(done[spec].folder))
    finally:
        lazy.close()
    return out


def method_folder(config: ExperimentConfig, method: str, source_digest: str, cache_root: Path) -> Path:
    """Where the transform of the corpus `source_digest` by `method` with the run's backend and sampling is
    stored (``biorab plan`` reads a finished one's digest from it to key the cell's hits exactly)."""
    key = stable_digest(["method-corpus/v1", method, PROMPT_VERSION, source_digest,
                         config.backend.model_dump(mode="json"),
                         transform_sampling(config.sampling).model_dump(mode="json")])
    return cache_root / "methods" / key[:16]


def stored_digest(folder: Path) -> str | None:
    """The digest of a finished transformed corpus (``None`` while it is not stored)."""
    if not is_complete(folder):
        return None
    return str(json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))["digest"])


def _prepare_one(config: ExperimentConfig, s: CellSlice, lazy: _LazyBackend, generations_store: Path,
                 cache_root: Path) -> MethodOutcome:
    from biorab.corpora import build_corpus

    plan = s.plan
    dataset, r = plan.dataset_setting()
    source, truth = build_corpus(r.testbed, dataset, rate=r.rate, seed=plan.seed, data_dir=plan.data_dir)
    folder = method_folder(config, r.method, source.digest, cache_root)
    if not is_complete(folder):
        generator = CachedGenerator(lazy.get(), GenerationStore(generations_store), name=config.backend.name)
        corpus, ledger = transform_corpus(r.method, source, generator, config.sampling,
                                          batch_size=max(config.resources.llm.batch_size, 64))
        write_transformed(folder, corpus, truth, ledger, {"source_digest": source.digest,
                                                          "prompt_version": PROMPT_VERSION,
                                                          "generator": generator.model_digest})
    _corpus, truth, ledger, info = read_transformed(folder)
    scores = score_transform(truth, ledger, n_boot=config.n_boot, seed=config.seed)
    return MethodOutcome(folder, {k: v.to_json() for k, v in scores.items()}, info)


def add_method_results(results: Sequence[Any], outcomes: dict[str, MethodOutcome]) -> None:
    """Put each method cell's transform scores into its `CellResult` (metrics and a ``method`` block)."""
    for result in results:
        outcome = outcomes.get(result.plan.cell_id)
        if outcome is None:
            continue
        result.metrics.update(outcome.metrics)
        result.extra["method"] = {"name": outcome.info["method"], "corpus_digest": outcome.info["digest"],
                                  "source_digest": outcome.info["source_digest"],
                                  "counts": outcome.info["counts"], "corpus_dir": str(outcome.folder)}
