"""The prompts of a cell as `biorab run` will render them, without running anything.

Zero-shot prompts are rendered exactly (`biorab.ral.render_prompt`). A retrieving cell's prompts need its
hits: their keys (`biorab.caches.hits_key`) are computed when the retriever's fingerprint is cheap (BM25:
no model to load) and looked up in the hit cache; instances whose hits are cached get exact prompts, the
others (and every instance of a dense retriever, whose fingerprint needs its encoder) get an *estimated*
prompt: a stand-in key per (cell setting, instance) and a length estimate. Every expensive piece (slices,
templates, corpus digests, rendered prompts) is computed once per plan; corpus digests are also kept on disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.caches import HitStore, hits_key
from biorab.experiment import Cell, RetrievalSpec
from biorab.generation.base import stable_digest
from biorab.records import Example, Hit, Prompt

#: Retrievers whose fingerprint needs no model (computed in the plan); others are estimated.
CHEAP_RETRIEVERS = frozenset({"bm25", "original"})


@dataclass
class CellPrompts:
    """A cell's planned prompts: exact ones (with their instance), and stand-ins for the rest.

    `estimated` maps a stand-in key (unique per cell setting and instance, shared by cells that would
    render the same prompt) to its estimated length in characters.
    """

    exact: list[Prompt] = field(default_factory=list)
    exact_hits: list[tuple[Example, tuple[Hit, ...]]] = field(default_factory=list)
    estimated: dict[str, int] = field(default_factory=dict)
    hit_keys: set[str] = field(default_factory=set)
    new_hit_keys: set[str] = field(default_factory=set)


class PromptPlanner:
    """Plans the prompts of cells, caching slices, templates, corpus digests and renders across cells."""

    def __init__(self, hit_store: HitStore | None, digest_cache: Path | None = None) -> None:
        self.hit_store = hit_store
        self._slices: dict[tuple[Any, ...], list[Example]] = {}
        self._templates: dict[tuple[str, str], Any] = {}
        self._fingerprints: dict[str, str | None] = {}
        self._rendered: dict[tuple[Any, ...], CellPrompts] = {}
        self._frames: dict[tuple[str, str], int] = {}
        self._digests = _DigestCache(digest_cache)

    def examples(self, cell: Cell) -> list[Example]:
        from biorab.runner.plan import load_slice

        resample = cell.dataset.resample.model_dump_json() if cell.dataset.resample else ""
        key = (cell.dataset.name, cell.dataset.split, cell.dataset.limit, resample, cell.config.data_dir)
        if key not in self._slices:
            self._slices[key] = load_slice(cell, cell.config.data_dir)
        return self._slices[key]

    def template(self, dataset: str, variant: str) -> Any:
        from biorab.tasks import get_template

        if (dataset, variant) not in self._templates:
            self._templates[(dataset, variant)] = get_template(dataset, variant=variant)
        return self._templates[(dataset, variant)]

    def cell(self, cell: Cell) -> CellPrompts:
        """The cell's prompts (shared by every model: prompts do not depend on the backend)."""
        r, cfg = cell.retrieval, cell.config
        key = (cell.dataset.model_dump_json(), r.model_dump_json(), cfg.seed, cfg.data_dir)
        if key not in self._rendered:
            self._rendered[key] = self._plan(cell)
        return self._rendered[key]

    def _plan(self, cell: Cell) -> CellPrompts:
        from biorab.ral import render_prompt

        examples = self.examples(cell)
        template = self.template(cell.dataset.name, cell.retrieval.template)
        out = CellPrompts()
        if not cell.retrieval.retrieves:
            out.exact = [render_prompt(template, ex, []) for ex in examples]
            out.exact_hits = [(ex, ()) for ex in examples]
            return out
        keys = self._hit_keys(cell, examples)
        found = self.hit_store.get_many(list(keys.values())) if keys and self.hit_store else {}
        setting = _setting_key(cell)
        frame = self._frame(cell.dataset.name, cell.retrieval.template, examples)
        for ex in examples:
            hit_key = keys.get(ex.id) or f"est:{setting}:{ex.text}"
            out.hit_keys.add(hit_key)
            if hit_key in found:
                out.exact.append(render_prompt(template, ex, found[hit_key]))
                out.exact_hits.append((ex, tuple(found[hit_key])))
            else:
                out.new_hit_keys.add(hit_key)
                out.estimated[f"{setting}:{ex.id}"] = frame + (cell.retrieval.k + 1) * (len(ex.text) + 40)
        return out

    def _frame(self, dataset: str, variant: str, examples: list[Example]) -> int:
        """Characters a zero-shot prompt of this template adds to the instance text (instruction and
        scaffolding), from the slice's first instance: a retrieving prompt is estimated as this frame
        plus the instance and `k` retrieved examples about as long as it."""
        from biorab.ral import render_prompt

        if (dataset, variant) not in self._frames:
            first = examples[0]
            zero_shot = render_prompt(self.template(dataset, variant), first, []).text
            self._frames[(dataset, variant)] = len(zero_shot) - len(first.text) - 40
        return self._frames[(dataset, variant)]

    def _hit_keys(self, cell: Cell, examples: list[Example]) -> dict[str, str]:
        """Instance id → hits key, or empty when the retriever's fingerprint is not cheap here."""
        r = cell.retrieval
        fingerprint = self._fingerprint(r)
        if fingerprint is None:
            return {}
        corpus = self._digests.get(r, cell.dataset.name, cell.config.seed, cell.config.data_dir)
        if r.method != "none":  # hits come from the transformed corpus: known once the transform is stored
            from biorab.methods.apply import method_folder, stored_digest
            from biorab.paths import cache_dir

            transformed = stored_digest(method_folder(cell.config, r.method, corpus, cache_dir()))
            if transformed is None:
                return {}
            corpus = transformed
        return {ex.id: hits_key(retriever=fingerprint, corpus=corpus, query=ex.text, k=r.k,
                                keep_ties=r.keep_ties, tie_pool=r.tie_pool, dedupe=r.dedupe)
                for ex in examples}

    def _fingerprint(self, r: RetrievalSpec) -> str | None:
        from biorab.retrieval import build_retriever

        key = json.dumps([r.retriever, r.retriever_params], sort_keys=True, default=str)
        if key not in self._fingerprints:
            cheap = r.retriever in CHEAP_RETRIEVERS
            built = build_retriever(r.retriever, r.retriever_params) if cheap else None
            self._fingerprints[key] = built.fingerprint if built is not None else None
        return self._fingerprints[key]

    def close(self) -> None:
        self._digests.save()


def _setting_key(cell: Cell) -> str:
    """What determines a retrieving cell's prompts besides the instance (the slice size excluded)."""
    r = cell.retrieval.fingerprint_json()
    cfg = cell.config
    return stable_digest([cell.dataset.name, cell.dataset.split, r, cfg.seed, cfg.data_dir])[:16]


class _DigestCache:
    """Corpus digests by (testbed, rate, dataset, seed, data dir, data files' sizes and mtimes), on disk,
    because building a corpus to digest it costs ~0.1 s and a paper grid has dozens."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, str] = {}
        if path is not None and path.is_file():
            try:
                self.data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:  # a torn write: the digests are recomputed
                self.data = {}
        self.dirty = False
        self._files: dict[Path, list[tuple[str, int, int]]] = {}

    def _signature(self, folder: Path) -> list[tuple[str, int, int]]:
        if folder not in self._files:
            self._files[folder] = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                                         for p in folder.rglob("*") if p.is_file())
        return self._files[folder]

    def get(self, r: RetrievalSpec, dataset: str, seed: int, data_dir: str | None) -> str:
        from biorab.corpora import build_corpus
        from biorab.paths import biorab_data_dir

        folder = biorab_data_dir(data_dir) / dataset
        key = stable_digest([r.testbed, r.rate, dataset, seed, str(folder), self._signature(folder)])
        if key not in self.data:
            corpus, _ledger = build_corpus(r.testbed, dataset, rate=r.rate, seed=seed, data_dir=data_dir)
            self.data[key] = corpus.digest
            self.dirty = True
        return self.data[key]

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data), encoding="utf-8")
        tmp.replace(self.path)
