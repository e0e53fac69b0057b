"""`transform_corpus`: a testbed corpus → a corrected (Detect-and-Correct) or labeled (LLM labeling) corpus
and the `TransformLedger` of what the model said about every item.

Generations go through a `CachedGenerator` (the run's backend behind the run's generation store), in
batches, so they are content-keyed: shared across cells and runs, and a killed transform resumes from the
batches already stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.errors import ConfigError
from biorab.common.records import CorpusItem, Generation, Prompt
from biorab.corpora.corpus import Corpus, canonical_line
from biorab.generation.base import SamplingParams
from biorab.methods.answers import read_label, read_verdict
from biorab.methods.prompts import detect_prompt, label_prompt
from biorab.ral.parts.generator import CachedGenerator

#: The corpus kinds each method applies to (Detect-and-Correct reviews labels; labeling needs none).
METHODS: dict[str, tuple[str, ...]] = {
    "detect_correct": ("labeled", "counterfactual", "negative_awareness"),
    "llm_label": ("unlabeled",),
}
#: The transform's generations need room for "incorrect: <label>" even when the task's own answers are
#: short (a classification run may sample 8 tokens).
MIN_MAX_TOKENS = 32


@dataclass(frozen=True)
class TransformEntry:
    """What the method did to one corpus item.

    Attributes:
        item_id: the corpus item.
        before: its value in the source corpus (``None`` in an unlabeled corpus).
        after: its value in the transformed corpus.
        flagged: Detect-and-Correct: the model said the label is incorrect; labeling: a label was assigned.
        ok: the model's answer could be read (a verdict, or a label of the label set).
        generation_key: the generation's key in the generation cache.
        answer: the model's raw answer.
    """

    item_id: str
    before: str | None
    after: str | None
    flagged: bool
    ok: bool
    generation_key: str
    answer: str

    def to_row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class TransformLedger:
    """Every item's `TransformEntry`, in corpus order, and how many generations came from the cache
    (not part of the ledger's bytes: it differs between a first run and a rerun)."""

    method: str
    entries: tuple[TransformEntry, ...]
    cached: int = 0

    def to_jsonl(self) -> bytes:
        return "".join(canonical_line(e.to_row()) for e in self.entries).encode("utf-8")

    def counts(self) -> dict[str, int]:
        return {
            "items": len(self.entries),
            "flagged": sum(e.flagged for e in self.entries),
            "changed": sum(e.after != e.before for e in self.entries),
            "unreadable": sum(not e.ok for e in self.entries),
        }


def check_method(method: str, kind: str) -> None:
    """A `ConfigError` unless `method` applies to corpora of `kind`."""
    if method not in METHODS:
        raise ConfigError(f"unknown method {method!r}; use one of {', '.join(METHODS)}", key="method")
    if kind not in METHODS[method]:
        raise ConfigError(f"method {method} applies to the {', '.join(METHODS[method])} testbed(s), "
                          f"not {kind}", key="method")


def transform_corpus(
    method: str,
    corpus: Corpus,
    generator: CachedGenerator,
    sampling: SamplingParams,
    *,
    batch_size: int = 64,
) -> tuple[Corpus, TransformLedger]:
    """Run `method` over every item of `corpus` (Detect-and-Correct reviews labeled items only).

    Returns the transformed corpus (kind ``<kind>+<method>``, same ids and keys) and its ledger.
    """
    from biorab.tasks import get_template

    check_method(method, corpus.kind)
    template = get_template(corpus.dataset)
    ask = detect_prompt if method == "detect_correct" else label_prompt
    todo = _reviewed(method, corpus)
    sampling = transform_sampling(sampling)
    decide = _decider(method, template.task, template.labels or None)
    entries: dict[str, TransformEntry] = {}
    cached = 0
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        results = generator.generate([ask(template, item) for item in batch], sampling)
        for item, res in zip(batch, results, strict=True):
            entries[item.id] = decide(item, res.generation, res.key)
            cached += res.cached
    items = [dataclasses.replace(item, value=entries[item.id].after) if item.id in entries else item
             for item in corpus.items]
    out = dataclasses.replace(corpus, kind=f"{corpus.kind}+{method}", items=items)
    ordered = tuple(entries[item.id] for item in corpus.items if item.id in entries)
    return out, TransformLedger(method, ordered, cached)


@dataclass(frozen=True)
class LiveTransform:
    """A corpus hook (`biorab.ral.CorpusHook`) that runs `method` with `generator`: what
    `biorab.ral.build_ral` uses when no transformed corpus was prepared (runs and Serve prepare one and use
    `StoredTransform`)."""

    method: str
    generator: CachedGenerator
    sampling: SamplingParams

    def __call__(self, corpus: Corpus, ledger: Any) -> Corpus:
        return transform_corpus(self.method, corpus, self.generator, self.sampling)[0]


def transform_sampling(sampling: SamplingParams) -> SamplingParams:
    """The run's sampling with room for a verdict and no label scoring (the answer is free text)."""
    return sampling.model_copy(update={"max_tokens": max(sampling.max_tokens, MIN_MAX_TOKENS),
                                       "score_labels": False})


Decide = Callable[[CorpusItem, Generation, str], TransformEntry]


def _decider(method: str, task: str, labels: Sequence[str] | None) -> Decide:
    """How one item's answer becomes its `TransformEntry` (a verdict, or a label)."""

    def detect(item: CorpusItem, gen: Generation, key: str) -> TransformEntry:
        verdict = read_verdict(task, gen, labels)
        after = verdict.label if verdict.flagged and verdict.label is not None else item.value
        return TransformEntry(item.id, item.value, after, verdict.flagged, verdict.ok, key, gen.text)

    def label(item: CorpusItem, gen: Generation, key: str) -> TransformEntry:
        found = None if gen.error is not None else read_label(task, gen.text, labels)
        return TransformEntry(item.id, item.value, found, found is not None, found is not None, key, gen.text)

    return detect if method == "detect_correct" else label


def method_prompts(method: str, corpus: Corpus) -> list[Prompt]:
    """The prompts `transform_corpus` asks (for inspection and the docs)."""
    from biorab.tasks import get_template

    template = get_template(corpus.dataset)
    ask = detect_prompt if method == "detect_correct" else label_prompt
    return [ask(template, item) for item in _reviewed(method, corpus)]


def _reviewed(method: str, corpus: Corpus) -> list[CorpusItem]:
    """The items a method asks about: labeled ones for Detect-and-Correct, unlabeled ones for labeling."""
    return [item for item in corpus.items if (item.value is not None) == (method == "detect_correct")]
