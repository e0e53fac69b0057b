"""The corpus and ledger records of the testbeds, and their canonical bytes.

A corpus is serialised in BEIR's ``corpus.jsonl`` shape (``_id``, ``title``, ``text``, ``metadata``); the
canonical form (sorted keys, compact separators, UTF-8, one item per line) is both what is written to
disk and what the digest is taken over, so ``sha256sum corpus.jsonl`` equals `Corpus.digest`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from json.encoder import encode_basestring
from typing import Any

from biorab.common.records import CorpusItem

KINDS: tuple[str, ...] = ("labeled", "unlabeled", "counterfactual", "diverse", "negative_awareness",
                          "counterfactual_near", "counterfactual_far")

#: Canonical lines by item fields (id, key, value, dataset, task), shared across `canonical_jsonl` calls.
LineMemo = dict[tuple[str, str, "str | None", str, str], str]


def canonical_line(row: dict[str, Any]) -> str:
    """One JSON line with sorted keys and compact separators (stable across runs and machines)."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def beir_row(item: CorpusItem) -> dict[str, Any]:
    """The BEIR ``corpus.jsonl`` row of an item; the value, dataset and task travel in ``metadata``."""
    return {
        "_id": item.id,
        "title": "",
        "text": item.key,
        "metadata": {"value": item.value, "dataset": item.dataset, "task": item.task},
    }


def _beir_line(item: CorpusItem) -> str:
    """`canonical_line(beir_row(item))`, written out: the keys in sorted order and each string encoded by
    the function `json.dumps` itself uses (``ensure_ascii=False``): ~3x faster. A plan digests every
    testbed corpus of a grid (~300k items for the paper's), where the generic encoder dominated.
    Items with a non-string field (not built by the testbeds) take the generic path."""
    i, k, v, d, t = item.id, item.key, item.value, item.dataset, item.task
    if not (
        type(i) is str
        and type(k) is str
        and type(d) is str
        and type(t) is str
        and (v is None or type(v) is str)
    ):
        return canonical_line(beir_row(item))
    enc = encode_basestring
    value = "null" if v is None else enc(v)
    return (
        f'{{"_id":{enc(i)},"metadata":{{"dataset":{enc(d)},"task":{enc(t)},"value":{value}}},'
        f'"text":{enc(k)},"title":""}}\n'
    )


def canonical_jsonl(items: Iterable[CorpusItem], lines: LineMemo | None = None) -> bytes:
    """The canonical ``corpus.jsonl`` bytes of `items`, in order (`canonical_line` of each `beir_row`).

    `lines`, when given, remembers each item's line across calls: digesting many corpora that share items
    (every diverse corpus repeats the labeled training sets of the pool) encodes each item once."""
    if lines is None:
        return "".join(map(_beir_line, items)).encode("utf-8")
    out = []
    for item in items:
        key = (item.id, item.key, item.value, item.dataset, item.task)
        line = lines.get(key)
        if line is None:
            line = lines[key] = _beir_line(item)
        out.append(line)
    return "".join(out).encode("utf-8")


def corpus_digest(items: Iterable[CorpusItem], lines: LineMemo | None = None) -> str:
    """sha256 (hex) of the canonical ``corpus.jsonl`` bytes (`lines`: see `canonical_jsonl`)."""
    return hashlib.sha256(canonical_jsonl(items, lines)).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    """How one corpus item differs from the dataset's own training item.

    Attributes:
        item_id: the corpus item id (the training example id).
        original: the gold label of the training example.
        corrupted: the value the corpus holds instead (``None`` when the value was removed).
        how: ``relation`` / ``tail`` (triples), ``label`` (link prediction), ``other_class``
            (classification, NLI), ``option`` (QA), another task's own (its `wrong_label`: ``swap`` /
            ``drop`` for multi-label) or ``value_removed`` (unlabeled).
        plausibility: ``near`` / ``far`` for the lies of the ``counterfactual_near`` / ``_far`` testbeds
            (`biorab.corpora.plausibility`), with the chosen label's `confusability`; ``None`` otherwise
            (and then left out of the ledger file, which stays byte for byte what it was).
    """

    item_id: str
    original: str
    corrupted: str | None
    how: str
    plausibility: str | None = None
    confusability: float | None = None

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        if self.plausibility is None:
            del row["plausibility"], row["confusability"]
        return row


@dataclass(frozen=True)
class Ledger:
    """Every corruption applied while building a corpus, in corpus order."""

    entries: tuple[LedgerEntry, ...] = ()

    def __len__(self) -> int:
        return len(self.entries)

    def by_id(self) -> dict[str, LedgerEntry]:
        return {entry.item_id: entry for entry in self.entries}

    def counts(self) -> dict[str, int]:
        """Number of entries per ``how``, sorted by name."""
        return dict(sorted(Counter(entry.how for entry in self.entries).items()))

    def to_jsonl(self) -> bytes:
        return "".join(canonical_line(entry.to_row()) for entry in self.entries).encode("utf-8")


@dataclass(frozen=True)
class Corpus:
    """A retrieval corpus of (key, value) items built for one testbed.

    Attributes:
        kind: one of `KINDS`.
        dataset: the target dataset the corpus was built for.
        items: the items, in a deterministic order.
        rate: the counterfactual rate (``None`` for kinds without corruption).
        seed: the seed every random choice was drawn from.
        sources: the datasets the items come from (several for ``diverse``).
    """

    kind: str
    dataset: str
    items: list[CorpusItem] = field(hash=False)
    rate: float | None = None
    seed: int = 0
    sources: tuple[str, ...] = ()

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical ``corpus.jsonl`` bytes (see `canonical_jsonl`)."""
        return corpus_digest(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def counts(self) -> dict[str, int]:
        """Items per source dataset, plus ``labeled``/``unlabeled`` totals."""
        per_source = Counter(item.dataset for item in self.items)
        labeled = sum(1 for item in self.items if item.value is not None)
        return {
            "items": len(self.items),
            "labeled": labeled,
            "unlabeled": len(self.items) - labeled,
            **{f"from:{name}": n for name, n in sorted(per_source.items())},
        }

    def manifest(self, ledger: Ledger) -> dict[str, Any]:
        """The ``manifest.json`` content: what was built, from what, and its digest."""
        return {
            "kind": self.kind,
            "dataset": self.dataset,
            "rate": self.rate,
            "seed": self.seed,
            "sources": list(self.sources),
            "digest": self.digest,
            "ledger_digest": hashlib.sha256(ledger.to_jsonl()).hexdigest(),
            "counts": {
                **self.counts(),
                "ledger": len(ledger),
                **{f"how:{k}": v for k, v in ledger.counts().items()},
            },
        }


def items_from_rows(rows: Sequence[dict[str, Any]]) -> list[CorpusItem]:
    """Rebuild items from BEIR rows already validated by the reader."""
    return [
        CorpusItem(
            id=row["_id"],
            key=row["text"],
            value=row["metadata"]["value"],
            dataset=row["metadata"]["dataset"],
            task=row["metadata"]["task"],
        )
        for row in rows
    ]
