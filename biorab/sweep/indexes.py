"""The retrieval indexes of a sweep, built once per corpus and retriever before its first run, with their own
progress (indexes done, rate, ETA, and a line per index naming it).

Without this step the indexes were built inside the first batch of each run's retrieval actor, minutes
over the full corpora, shown as "0/330 rows, 0.0 rows/s". Each index is persisted under the cache dir by
(retriever index fingerprint, corpus content) (`biorab.retrieval.base`), so the runs' retrieval stages,
in-process or in Ray actors, load it instead of building it, and a later sweep loads it too.

Cells with a corpus method (``llm_label``, ``detect_correct``) index a corpus that the run transforms
first: their indexes are left to the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from biorab.progress_lines import ProgressLines


@dataclass(frozen=True)
class IndexJob:
    """One index: a testbed corpus (testbed, rate, dataset, seed, data) and a retriever with its index
    params (the selection's, `Selection.index_params`)."""

    testbed: str
    rate: float | None
    dataset: str
    seed: int
    data_dir: str | None
    retriever: str
    params_json: str  # the index params (`Selection.index_params`): what identifies the index
    build_json: str = ""  # the entry's own params and selection, to build it as the run does

    def describe(self) -> str:
        params = json.loads(self.params_json)
        encoder = params.get("stand_in_for") or params.get("encoder")
        name = f"{self.retriever} ({encoder})" if encoder else self.retriever
        corpus = self.testbed if self.rate is None else f"{self.testbed} {self.rate:g}"
        return f"{name} over {self.dataset} {corpus}"


def index_jobs(configs: Sequence[Any]) -> list[IndexJob]:
    """The distinct indexes the retrieving cells of `configs` (`ExperimentConfig`s) read, in first-use
    order; cells with a corpus method are left out (see the module docstring)."""
    jobs: dict[tuple[Any, ...], IndexJob] = {}
    for config in configs:
        for spec in config.retrieval:
            if not spec.retrieves or spec.method != "none":
                continue
            params = json.dumps(spec.selection.index_params(spec.params), sort_keys=True)
            build = json.dumps({"params": spec.params, "selection": spec.selection.model_dump(mode="json")},
                               sort_keys=True)
            for ds in config.datasets:
                job = IndexJob(spec.testbed, spec.rate, ds.name, config.seed, config.data_dir, spec.retriever,
                               params, build)
                jobs.setdefault((*_identity(job),), job)
    return list(jobs.values())


def _identity(job: IndexJob) -> tuple[Any, ...]:
    return (job.testbed, job.rate, job.dataset, job.seed, job.data_dir, job.retriever, job.params_json)


@dataclass
class IndexStats:
    """What `build_indexes` did: indexes built now, loaded (built before), and the seconds spent."""

    built: int = 0
    loaded: int = 0
    seconds: float = 0.0


def build_indexes(jobs: Sequence[IndexJob], *, echo: Callable[[str], None] | None = None) -> IndexStats:
    """Build (or load) each index of `jobs` once, saying which, how long, and the rate and ETA of all."""
    from biorab.ral.retriever import build_testbed_retriever
    from biorab.retrieval.selection import Selection

    say = echo or (lambda _m: None)
    stats = IndexStats()
    if not jobs:
        return stats
    lines = ProgressLines("indexes", write=say, every_s=0.0, label="indexes")
    start = time.monotonic()
    for i, job in enumerate(jobs, 1):
        say(f"  index {i}/{len(jobs)}: {job.describe()} ...")
        began = time.monotonic()
        entry = json.loads(job.build_json)
        built = build_testbed_retriever(testbed=job.testbed, dataset=job.dataset, retriever=job.retriever,
                                        params=entry["params"], rate=job.rate, seed=job.seed,
                                        data_dir=job.data_dir,
                                        selection=Selection.model_validate(entry["selection"]))
        loaded = bool(getattr(built.retriever, "loaded_from_cache", False))
        stats.loaded += loaded
        stats.built += not loaded
        items = len(getattr(built.retriever, "_items", ()) or ())
        how = "loaded (built before)" if loaded else "built"
        say(f"  index {i}/{len(jobs)}: {job.describe()}: {items:,} items, {how} in "
            f"{time.monotonic() - began:.1f} s")
        lines(1, len(jobs))
    stats.seconds = round(time.monotonic() - start, 3)
    return stats
