"""The leakage audit: which test instances sit, as text, in a corpus their cells retrieve from.

For each dataset and each testbed corpus (labeled, unlabeled, counterfactual at each rate, diverse): the
test instances (`test`), those whose normalized text (`biorab.corpora.text_identity.normalized_text`) is the
key of some corpus item (`in_corpus`), and of those the ones where such an item carries the instance's own
label (`same_label`; for triples the same set of triples). Counts are cached by (corpus digest, test split
digest), so a second audit of unchanged data reads them back.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from biorab.common.atomic_files import write_text_atomic
from biorab.common.records import Example
from biorab.corpora.corpus import Corpus, LineMemo, corpus_digest
from biorab.corpora.text_identity import normalized_text
from biorab.generation.base import stable_digest
from biorab.tasks import get_task

#: The paper's counterfactual rates (Table 2), the default of the audit.
PAPER_RATES: tuple[float, ...] = (0.2, 0.8, 1.0)


@dataclass(frozen=True)
class Overlap:
    """Test instances, those whose text is in the corpus, and those with an item of the same label."""

    test: int
    in_corpus: int
    same_label: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def label_identity(task: str, label: str | None) -> object:
    """What "the same label" compares: for a closed-label task the label, for an open one (triples) the set
    of its normalized lines.

    >>> label_identity("classification", " 1 ") == label_identity("classification", "1")
    True
    >>> label_identity("classification", "1") == label_identity("classification", "0")
    False
    """
    if label is None:
        return None
    if not get_task(task).closed:
        return frozenset(normalized_text(line) for line in label.split("\n") if line.strip())
    return label.strip()


def overlap(tests: Sequence[Example], corpus: Corpus) -> Overlap:
    """The `Overlap` of the `tests` with the items of `corpus`."""
    values: dict[str, set[object]] = {}
    for item in corpus.items:
        values.setdefault(normalized_text(item.key), set()).add(label_identity(item.task, item.value))
    in_corpus = same = 0
    for example in tests:
        found = values.get(normalized_text(example.text))
        if found is not None:
            in_corpus += 1
            same += label_identity(example.task, example.label) in found
    return Overlap(len(tests), in_corpus, same)


def corpus_settings(rates: Iterable[float] = PAPER_RATES) -> list[tuple[str, str, float | None]]:
    """(name in the report, testbed kind, rate) of every corpus a cell can retrieve from."""
    counterfactual = [(f"counterfactual-{rate:g}", "counterfactual", rate) for rate in rates]
    return [("labeled", "labeled", None), ("unlabeled", "unlabeled", None), *counterfactual,
            ("diverse", "diverse", None)]


def leakage_audit(
    datasets: Sequence[str], *, data_dir: str | Path | None = None, rates: Iterable[float] = PAPER_RATES,
    cache: Path | None = None,
) -> dict[str, dict[str, Overlap]]:
    """Dataset → corpus name → `Overlap`, over every corpus of `corpus_settings(rates)`.

    Training splits are loaded once for all corpora (a diverse corpus is the others' training sets), and
    each corpus is digested with one shared line memo; `cache` (a folder) keeps the counts by digest."""
    from biorab.corpora import build_corpus, train_loader
    from biorab.datasets import load_dataset

    load = functools.lru_cache(maxsize=None)(lambda name: tuple(train_loader(data_dir)(name)))
    lines: LineMemo = {}
    out: dict[str, dict[str, Overlap]] = {}
    for name in datasets:
        tests = load_dataset(name, "test", data_dir=data_dir)
        tests_digest = stable_digest([[e.text, e.label] for e in tests])
        out[name] = {}
        for shown, kind, rate in corpus_settings(rates):
            corpus, _ = build_corpus(kind, name, rate=rate, loader=load)
            key = stable_digest(["leakage/v1", corpus_digest(corpus.items, lines), tests_digest])
            out[name][shown] = _cached(cache, key) or _stored(cache, key, overlap(tests, corpus))
    return out


def _cached(cache: Path | None, key: str) -> Overlap | None:
    path = cache / f"{key}.json" if cache is not None else None
    if path is None or not path.is_file():
        return None
    return Overlap(**json.loads(path.read_text(encoding="utf-8")))


def _stored(cache: Path | None, key: str, found: Overlap) -> Overlap:
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache / f"{key}.json", json.dumps(found.to_json()))
    return found
