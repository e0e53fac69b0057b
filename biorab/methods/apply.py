"""Corpus methods on disk: where a transformed corpus is stored, how it is made when it is not stored yet
(`ensure_method_corpus`, the plug-in's `prepare`, which the RAL assembly calls), and the method's scores of
each cell (`method_outcomes`: the transform against the testbed's true ledger).

Transformed corpora are stored under ``<cache>/methods/<key>``, the key being the source corpus digest,
method, prompt version, backend spec and sampling, so a rerun (or another cell on the same testbed) reads
the folder instead of building a backend. The generations themselves go through the generation store under
the same cache, so an interrupted transform resumes from the batches already generated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biorab.caches import GenerationStore, default_store_paths
from biorab.generation.base import stable_digest
from biorab.methods.corpus_transform import transform_corpus, transform_sampling
from biorab.methods.prompts import PROMPT_VERSION
from biorab.methods.store import INFO_FILE, is_complete, read_transformed, write_transformed
from biorab.methods.transform_metrics import score_transform
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.parts.testbeds import testbed_corpus

if TYPE_CHECKING:
    from biorab.experiment import ExperimentConfig
    from biorab.ral.parts.assembly import RALParts
    from biorab.ral.parts.method_corpora import DeclaredBackend, MethodCorpora, MethodSetting


@dataclass(frozen=True)
class MethodOutcome:
    """One cell's transformed corpus and the method's scores against the true ledger."""

    folder: Path
    metrics: dict[str, dict[str, float | None]]
    info: dict[str, Any]


def method_folder(config: DeclaredBackend, method: str, source_digest: str, cache_root: Path) -> Path:
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


def ensure_method_corpus(setting: MethodSetting, methods: MethodCorpora) -> Path:
    """The folder of `setting`'s transformed corpus (`method_folder`), transformed now with `methods`'
    backend when it is not stored yet. Runs and Serve both come here through the assembly, so a served RAL
    indexes exactly the corpus an evaluated cell with the same blocks indexes."""
    r, declared = setting, methods.declared
    source, truth = testbed_corpus(r.testbed, setting.dataset, rate=r.rate, seed=setting.seed,
                                   data_dir=setting.data_dir)
    folder = method_folder(declared, r.method, source.digest, methods.cache_root)
    if not is_complete(folder):
        if methods.on_transform is not None:
            methods.on_transform()
        store = GenerationStore(default_store_paths(methods.cache_root)[1])
        generator = CachedGenerator(methods.backend(), store, name=declared.backend.name)
        corpus, ledger = transform_corpus(r.method, source, generator, declared.sampling,
                                          batch_size=methods.batch_size)
        write_transformed(folder, corpus, truth, ledger, {"source_digest": source.digest,
                                                          "prompt_version": PROMPT_VERSION,
                                                          "generator": generator.model_digest})
    return folder


def method_outcomes(parts: Mapping[str, RALParts], config: ExperimentConfig) -> dict[str, MethodOutcome]:
    """The method's scores of each cell whose parts index a transformed corpus (by cell id), each folder
    read and scored once."""
    by_folder: dict[str, MethodOutcome] = {}
    out: dict[str, MethodOutcome] = {}
    for cell_id, cell in parts.items():
        if cell.corpus_dir is None:
            continue
        if cell.corpus_dir not in by_folder:
            _corpus, truth, ledger, info = read_transformed(cell.corpus_dir)
            scores = score_transform(truth, ledger, n_boot=config.n_boot, seed=config.seed)
            by_folder[cell.corpus_dir] = MethodOutcome(Path(cell.corpus_dir),
                                                       {k: v.to_json() for k, v in scores.items()}, info)
        out[cell_id] = by_folder[cell.corpus_dir]
    return out


def add_method_results(results: Sequence[Any], outcomes: Mapping[str, MethodOutcome]) -> None:
    """Put each method cell's transform scores into its `CellResult` (metrics and a ``method`` block)."""
    for result in results:
        outcome = outcomes.get(result.plan.cell_id)
        if outcome is None:
            continue
        result.metrics.update(outcome.metrics)
        result.extra["method"] = {"name": outcome.info["method"], "corpus_digest": outcome.info["digest"],
                                  "source_digest": outcome.info["source_digest"],
                                  "counts": outcome.info["counts"], "corpus_dir": str(outcome.folder)}
