"""The five testbed corpora of the paper (section 4.2), each a seeded, deterministic builder.

Every builder takes a `TestbedSpec` and a loader (dataset name -> its training examples) and returns the
corpus plus its ledger. They are registered in `biorab.common.registry.CORPORA` under the kind names.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from biorab.common.errors import ConfigError, DataError
from biorab.common.records import CorpusItem, Example
from biorab.common.registry import CORPORA
from biorab.corpora.corpus import Corpus, Ledger, LedgerEntry
from biorab.corpora.counterfactual import label_space, wrong_label
from biorab.corpora.plausibility import Confusability, Plausibility, plausible_wrong_label

Loader = Callable[[str], Sequence[Example]]

# The datasets whose training sets make up the diverse pool (BioNLI is not obtainable, see the data README).
DIVERSE_POOL: tuple[str, ...] = (
    "ade", "chemprot", "git", "pharmkg", "hetionet", "ade_corpus_v2", "semclass", "medmcqa",
)  # fmt: skip


@dataclass(frozen=True)
class TestbedSpec:
    """What to build: the target dataset, the counterfactual rate, the seed and the diverse pool."""

    __test__ = False  # not a pytest test class despite the name

    dataset: str
    rate: float | None = None
    seed: int = 0
    pool: tuple[str, ...] = DIVERSE_POOL


def source_datasets(kind: str, spec: TestbedSpec) -> tuple[str, ...]:
    """The datasets whose training splits the `kind` corpus is built from (its `Corpus.sources`), known
    without building it: every kind reads the target's own, ``diverse`` the pool's others. A new kind that
    reads other datasets says so here (`tests/unit/corpora` checks this against every builder)."""
    if kind == "diverse":
        return tuple(name for name in spec.pool if name != spec.dataset)
    return (spec.dataset,)


def corrupted_count(rate: float, n: int) -> int:
    """round(rate * n) with halves rounded up (Python's `round` would round 0.5 to even)."""
    return math.floor(rate * n + 0.5)


def item_of(example: Example, value: str | None) -> CorpusItem:
    """The (key, value) corpus item of a training example."""
    return CorpusItem(
        id=example.id, key=example.text, value=value, dataset=example.dataset, task=example.task
    )


def _train(load: Loader, dataset: str) -> list[Example]:
    examples = list(load(dataset))
    if not examples:
        raise DataError(f"dataset {dataset!r} has no training items; a corpus cannot be empty")
    return examples


def _no_rate(kind: str, spec: TestbedSpec) -> None:
    if spec.rate is not None:
        raise ConfigError(
            f"the {kind} corpus takes no rate (got {spec.rate}); only counterfactual does", key="rate"
        )


@CORPORA.register("labeled")
def build_labeled(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The dataset's own training set, keys with their gold labels."""
    _no_rate("labeled", spec)
    items = [item_of(example, example.label) for example in _train(load, spec.dataset)]
    return Corpus("labeled", spec.dataset, items, seed=spec.seed, sources=(spec.dataset,)), Ledger()


@CORPORA.register("unlabeled")
def build_unlabeled(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The training keys without values; the ledger records every removed value."""
    _no_rate("unlabeled", spec)
    examples = _train(load, spec.dataset)
    items = [item_of(example, None) for example in examples]
    ledger = Ledger(tuple(LedgerEntry(e.id, e.label, None, "value_removed") for e in examples))
    return Corpus("unlabeled", spec.dataset, items, seed=spec.seed, sources=(spec.dataset,)), ledger


@CORPORA.register("counterfactual")
def build_counterfactual(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The training set with exactly round(rate * N) items relabelled wrongly (see `counterfactual`)."""
    if spec.rate is None:
        raise ConfigError("the counterfactual corpus needs a rate in [0, 1] (e.g. 0.2, 0.8, 1.0)", key="rate")
    return _corrupt("counterfactual", spec, spec.rate, load)


def _plausible(kind: str, which: Plausibility, spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    if spec.rate is None:
        raise ConfigError(f"the {kind} corpus needs a rate in [0, 1] (e.g. 0.2, 0.8, 1.0)", key="rate")
    return _corrupt(kind, spec, spec.rate, load, plausibility=which)


@CORPORA.register("counterfactual_near")
def build_counterfactual_near(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The counterfactual corpus's items at the same rate and seed (the same items corrupted), each lie the
    most confusable wrong label (`biorab.corpora.plausibility`)."""
    return _plausible("counterfactual_near", "near", spec, load)


@CORPORA.register("counterfactual_far")
def build_counterfactual_far(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """As ``counterfactual_near``, each lie the least confusable wrong label."""
    return _plausible("counterfactual_far", "far", spec, load)


@CORPORA.register("negative_awareness")
def build_negative_awareness(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The awareness-probe corpus: 100% counterfactual."""
    if spec.rate not in (None, 1.0):
        raise ConfigError(
            f"the negative_awareness corpus is 100% counterfactual; got rate {spec.rate}", key="rate"
        )
    return _corrupt("negative_awareness", spec, 1.0, load)


#: Testbeds whose corpus is another testbed's, item for item (kind -> (kind, rate)): the same digest, so the
#: same hits. A plan digests the other once (`biorab.sweep.prompts.CorpusDigests`); tests pin the equality.
SAME_CORPUS_AS: dict[str, tuple[str, float | None]] = {"negative_awareness": ("counterfactual", 1.0)}


@CORPORA.register("diverse")
def build_diverse(spec: TestbedSpec, load: Loader) -> tuple[Corpus, Ledger]:
    """The labeled training sets of the pool's other datasets (the target's own is excluded), in pool order:
    the items of their ``labeled`` corpora one after the other (a plan digests it from those)."""
    _no_rate("diverse", spec)
    sources = tuple(name for name in spec.pool if name != spec.dataset)
    if not sources:
        raise ConfigError(
            f"the diverse pool {list(spec.pool)} has no dataset besides {spec.dataset!r}", key="pool"
        )
    items = [item_of(example, example.label) for name in sources for example in _train(load, name)]
    return Corpus("diverse", spec.dataset, items, seed=spec.seed, sources=sources), Ledger()


def _corrupt(kind: str, spec: TestbedSpec, rate: float, load: Loader, *,
             plausibility: Plausibility | None = None) -> tuple[Corpus, Ledger]:
    """Corrupt round(rate * N) items drawn by `random.Random(seed)`: the same items whatever the
    `plausibility` (``None``: a uniform wrong label; near / far: the most / least confusable), so the
    plausibility testbeds differ from the counterfactual one only in the lies."""
    if not 0.0 <= rate <= 1.0 or math.isnan(rate):
        raise ConfigError(f"rate must be in [0, 1], got {rate}", key="rate")
    examples = _train(load, spec.dataset)
    space = label_space(spec.dataset, examples)
    rng = random.Random(spec.seed)
    chosen = set(rng.sample(range(len(examples)), corrupted_count(rate, len(examples))))
    conf = Confusability.of(examples) if plausibility is not None else None
    items, entries = [], []
    for index, example in enumerate(examples):
        value = example.label
        if index in chosen and conf is not None and plausibility is not None:
            value, how, score = plausible_wrong_label(example, space, conf, plausibility, rng)
            entries.append(LedgerEntry(example.id, example.label, value, how, plausibility, score))
        elif index in chosen:
            value, how = wrong_label(example, space, rng)
            entries.append(LedgerEntry(example.id, example.label, value, how))
        items.append(item_of(example, value))
    corpus = Corpus(kind, spec.dataset, items, rate=rate, seed=spec.seed, sources=(spec.dataset,))
    return corpus, Ledger(tuple(entries))
