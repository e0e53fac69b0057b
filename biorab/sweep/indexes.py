"""The retrieval indexes of a sweep, built once per corpus and retriever before its first run, with their own
progress (indexes done, rate, ETA, and a line per index naming it).

Without this step the indexes were built inside the first batch of each run's retrieval actor, minutes
over the full corpora, shown as "0/330 rows, 0.0 rows/s". Each index is persisted under the cache dir by
(retriever index fingerprint, corpus content) (`biorab.retrieval.base`), so the runs' retrieval stages,
in-process or in Ray actors, load it instead of building it, and a later sweep loads it too.

Cells with a corpus method (``llm_label``, ``detect_correct``) index a corpus that the run transforms
first: their indexes are left to the run.

`index_cost` is what `biorab plan` says the indexes cost on the cluster: a dense (or hybrid) index passes
every corpus item through its encoder once, so its GPU time is the items' tokens over an encoder's
prefill rate on the sweep's GPU (`throughput`); BM25 indexes are built on CPUs and cost no GPU time.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.progress_lines import ProgressLines


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


#: The size (billions of parameters) the GPU-hour estimate of an encoder pass is read at: a BERT-base
#: encoder (Contriever, MedCPT, MiniLM: 0.02-0.11B). The throughput table's nearest larger entry is its
#: smallest decoder's prefill rate, which an encoder-only model of a tenth its size does not fall below,
#: so the GPU-hours are an upper bound.
ENCODER_SIZE_B = 0.11
#: Retrievers whose index embeds every corpus item with an encoder.
ENCODING_RETRIEVERS = frozenset({"dense", "hybrid"})


@dataclass(frozen=True)
class IndexCost:
    """What building a sweep's indexes costs: how many, how many embed their corpus (dense, hybrid),
    the items and tokens (characters / `CHARS_PER_TOKEN`) those encode, and their GPU-hours."""

    indexes: int
    encoded: int
    encoded_items: int
    encoded_tokens: int
    gpu_hours: float


def index_cost(jobs: Sequence[IndexJob], throughput: Any) -> IndexCost:
    """The cost of building `jobs` on the GPU of `throughput` (a `ThroughputSpec`; see the module
    docstring). Each encoding index's testbed corpus is built to count its items and characters (once
    per corpus and process, as the runs build it)."""
    from biorab.ral.parts.testbeds import testbed_corpus
    from biorab.retrieval.base import document_text
    from biorab.sweep.models import CHARS_PER_TOKEN
    from biorab.sweep.throughput import engine_rates

    encoded = items = chars = 0
    for job in jobs:
        if job.retriever not in ENCODING_RETRIEVERS:
            continue
        corpus, _ = testbed_corpus(job.testbed, job.dataset, rate=job.rate, seed=job.seed,
                                   data_dir=job.data_dir)
        fields = str(json.loads(job.build_json or "{}").get("params", {}).get("fields", "key"))
        encoded += 1
        items += len(corpus.items)
        chars += sum(len(document_text(item, fields)) for item in corpus.items)
    tokens = round(chars / CHARS_PER_TOKEN)
    prefill, _decode = engine_rates(throughput, ENCODER_SIZE_B)
    return IndexCost(len(jobs), encoded, items, tokens, round(tokens / prefill / 3600.0, 6))


@dataclass
class IndexStats:
    """What `build_indexes` did: indexes built now, loaded (built before), and the seconds spent."""

    built: int = 0
    loaded: int = 0
    seconds: float = 0.0


#: Seconds between the lines that say an index is still building (a dense index over a whole training
#: corpus takes minutes on a CPU).
HEARTBEAT_S = 10.0


def build_indexes(jobs: Sequence[IndexJob], *, echo: Callable[[str], None] | None = None,
                  every_s: float = HEARTBEAT_S) -> IndexStats:
    """Build (or load) each index of `jobs` once, saying which, how long, and the rate and ETA of all; a
    line every `every_s` while one builds."""
    from biorab.ral.parts.retriever import build_testbed_retriever
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
        with _still_building(f"  index {i}/{len(jobs)}: {job.describe()}", say, every_s):
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


@contextlib.contextmanager
def _still_building(what: str, say: Callable[[str], None], every_s: float) -> Iterator[None]:
    """Until the block ends, every `every_s` seconds: the items its encoder embedded, with their rate and
    ETA (``<what>: embedding: 1280/20000 items (6%), 45.1 items/s, eta 6m``), or, before any item is
    embedded (loading the encoder, building a BM25 index), ``<what>: building, 40 s so far``."""
    from biorab.retrieval.encoders import ENCODE_PROGRESS

    stop = threading.Event()
    began = time.monotonic()
    items: list[ProgressLines] = []  # made at the first batch: loading the encoder is not embedding time

    def embedded(n: int, total: int) -> None:
        if not items:
            items.append(ProgressLines("items", write=say, every_s=every_s, label=f"{what}: embedding"))
        items[0](n, total)

    def beat() -> None:
        while not stop.wait(every_s):
            if items:
                items[0].tick()
            else:
                say(f"{what}: building, {time.monotonic() - began:.0f} s so far")

    thread = threading.Thread(target=beat, name="biorab-index-progress", daemon=True)
    token = ENCODE_PROGRESS.set(embedded)
    thread.start()
    try:
        yield
    finally:
        ENCODE_PROGRESS.reset(token)
        stop.set()
        thread.join()
