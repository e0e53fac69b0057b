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
from typing import TYPE_CHECKING, Any

from biorab.caches import HitStore
from biorab.common.records import Example, Hit, Prompt
from biorab.experiment import Cell
from biorab.generation.base import stable_digest
from biorab.ral.specs.evidence_order import HitOrder
from biorab.ral.specs.retrieval_spec import RetrievalSpec
from biorab.sweep.keys import hits_keys

if TYPE_CHECKING:
    from biorab.corpora.corpus import LineMemo
    from biorab.corpora.testbeds import Loader

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
        self._templates: dict[tuple[str, str, str | None], Any] = {}
        self._fingerprints: dict[str, str | None] = {}
        self._rendered: dict[tuple[Any, ...], CellPrompts] = {}
        self._frames: dict[tuple[str, str], int] = {}
        self._digests = CorpusDigests(digest_cache)

    def examples(self, cell: Cell) -> list[Example]:
        from biorab.runner.plan.cell_slices import load_slice

        resample = cell.dataset.resample.model_dump_json() if cell.dataset.resample else ""
        key = (cell.dataset.name, cell.dataset.split, cell.dataset.limit, resample, cell.dataset.framing,
               cell.config.data_dir)
        if key not in self._slices:
            self._slices[key] = load_slice(cell, cell.config.data_dir)
        return self._slices[key]

    def template(self, cell: Cell, examples: list[Example]) -> Any:
        """The template the cell's run renders with: its assembly's (`RALParts.template`: the entry's
        variant, for the task of the slice's instances, as `biorab.runner.plan.cell_slices.make_plan`
        gives it), once per (dataset, variant, task)."""
        from biorab.ral.parts.assembly import assemble

        task = examples[0].task if examples else None
        key = (cell.dataset.name, cell.retrieval.template, task)
        if key not in self._templates:
            self._templates[key] = assemble(dataset=cell.dataset.name, retrieval=cell.retrieval, task=task,
                                            seed=cell.config.seed, data_dir=cell.config.data_dir).template
        return self._templates[key]

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
        template = self.template(cell, examples)
        out = CellPrompts()
        if not cell.retrieval.retrieves:
            out.exact = [render_prompt(template, ex, []) for ex in examples]
            out.exact_hits = [(ex, ()) for ex in examples]
            return out
        keys = self._hit_keys(cell, examples)
        found = self.hit_store.get_many(list(keys.values())) if keys and self.hit_store else {}
        setting = _setting_key(cell)
        frame = self._frame(cell.dataset.name, cell.retrieval.template, template, examples)
        order = self._order(cell) if found else None
        for ex in examples:
            hit_key = keys.get(ex.id) or f"est:{setting}:{ex.text}"
            out.hit_keys.add(hit_key)
            if hit_key in found:
                hits = found[hit_key] if order is None else order.apply(ex.text, found[hit_key])
                out.exact.append(render_prompt(template, ex, hits))
                out.exact_hits.append((ex, tuple(hits)))
            else:
                out.new_hit_keys.add(hit_key)
                out.estimated[f"{setting}:{ex.id}"] = frame + (cell.retrieval.k + 1) * (len(ex.text) + 40)
        return out

    def _order(self, cell: Cell) -> HitOrder | None:
        """The cell's evidence order as its run applies it (`RALParts.hit_order`: the hit cache holds the
        retrieved order; ``None``: shown as retrieved)."""
        if cell.retrieval.order == "retrieved":
            return None
        from biorab.ral.parts.assembly import assemble

        cfg = cell.config
        return assemble(dataset=cell.dataset.name, retrieval=cell.retrieval, seed=cfg.seed,
                        data_dir=cfg.data_dir).hit_order()

    def _frame(self, dataset: str, variant: str, template: Any, examples: list[Example]) -> int:
        """Characters a zero-shot prompt of this template adds to the instance text (instruction and
        scaffolding), from the slice's first instance: a retrieving prompt is estimated as this frame
        plus the instance and `k` retrieved examples about as long as it."""
        from biorab.ral import render_prompt

        if (dataset, variant) not in self._frames:
            first = examples[0]
            zero_shot = render_prompt(template, first, []).text
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
            from biorab.common.paths import cache_dir
            from biorab.methods.apply import method_folder, stored_digest

            transformed = stored_digest(method_folder(cell.config, r.method, corpus, cache_dir()))
            if transformed is None:
                return {}
            corpus = transformed
        keys = hits_keys([ex.text for ex in examples], retriever=fingerprint, corpus=corpus, **r.key_fields())
        return {ex.id: key for ex, key in zip(examples, keys, strict=True)}

    def _fingerprint(self, r: RetrievalSpec) -> str | None:
        from biorab.common.registry import RETRIEVERS
        from biorab.retrieval import build_retriever

        key = json.dumps([r.retriever, r.retriever_params], sort_keys=True, default=str)
        if key not in self._fingerprints:
            # The retriever declares whether its fingerprint needs no model (`cheap_fingerprint`).
            cheap = r.retriever in RETRIEVERS and bool(
                RETRIEVERS.attribute_of(r.retriever, "cheap_fingerprint"))
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


class CorpusDigests:
    """Corpus digests (`Corpus.digest`, part of every hits key), kept on disk across plans.

    The runner keys hits by the digest of the corpus's content, so a plan must know it exactly: a digest of
    the source files would not do. A cold plan therefore builds the testbed corpora, sharing what they
    share: each training split is loaded once per plan, each item's canonical line encoded once (a diverse
    corpus repeats its sources' labeled items), and a testbed that is another's item for item
    (`SAME_CORPUS_AS`: negative awareness is counterfactual at 100%) not built twice. The digest is stored
    under the build's parameters (testbed, rate, dataset, seed, data folder) with the stat signature (name,
    size, mtime) of every file of the datasets the build read (recorded while building: the target's own,
    the diverse pool's others), and reused while those signatures hold.
    """

    FORMAT = 2

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, dict[str, Any]] = {}
        if path is not None and path.is_file():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:  # a torn write: the digests are recomputed
                stored = None
            if isinstance(stored, dict) and stored.get("format") == self.FORMAT:
                self.data = stored["entries"]
        self.dirty = False
        self._signatures: dict[Path, list[list[Any]]] = {}
        self._splits: dict[tuple[str, str], list[Example]] = {}
        self._lines: LineMemo = {}

    def _signature(self, folder: Path) -> list[list[Any]]:
        """[relative name, size, mtime_ns] of every file under `folder` (lists: they round-trip JSON)."""
        if folder not in self._signatures:
            files = sorted(p for p in folder.rglob("*") if p.is_file())
            stats = [(p.relative_to(folder).as_posix(), p.stat()) for p in files]
            self._signatures[folder] = [[name, st.st_size, st.st_mtime_ns] for name, st in stats]
        return self._signatures[folder]

    def _train(self, root: Path, data_dir: str | None, name: str) -> list[Example]:
        """The training split of `name`, loaded once per plan (every testbed of a dataset, and every diverse
        corpus of the pool, reads it)."""
        from biorab.datasets import load_dataset

        key = (str(root), name)
        if key not in self._splits:
            self._splits[key] = load_dataset(name, "train", data_dir=data_dir)
        return self._splits[key]

    def get(self, r: RetrievalSpec, dataset: str, seed: int, data_dir: str | None) -> str:
        from biorab.common.paths import biorab_data_dir
        from biorab.corpora.testbeds import SAME_CORPUS_AS

        root = biorab_data_dir(data_dir)
        kind, rate = SAME_CORPUS_AS.get(r.testbed, (r.testbed, r.rate))
        key = stable_digest(["corpus", kind, rate, dataset, seed, str(root)])
        entry = self.data.get(key)
        if entry is not None and all(self._signature(root / name) == sig
                                     for name, sig in entry["sources"].items()):
            return str(entry["digest"])
        sources: dict[str, list[list[Any]]] = {}

        def load(name: str) -> list[Example]:
            sources[name] = self._signature(root / name)  # before reading: a later edit invalidates
            return self._train(root, data_dir, name)

        digest = self._digest(kind, rate, dataset, seed, load)
        self.data[key] = {"digest": digest, "sources": sources}
        self.dirty = True
        return digest

    def _digest(self, kind: str, rate: float | None, dataset: str, seed: int, load: Loader) -> str:
        """`build_corpus(...)[0]`'s digest: the corpus built by its owner (`biorab.corpora.build_corpus`, what
        `biorab.ral.parts.testbeds.testbed_corpus` builds for the run) from the plan's shared training
        splits, each item's canonical line encoded once per plan (a diverse corpus repeats the pool's
        labeled items)."""
        from biorab.corpora import build_corpus, corpus_digest

        corpus, _ledger = build_corpus(kind, dataset, rate=rate, seed=seed, loader=load)
        return corpus_digest(corpus.items, self._lines)

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        from biorab.common.atomic_files import write_text_atomic

        write_text_atomic(self.path, json.dumps({"format": self.FORMAT, "entries": self.data}))
