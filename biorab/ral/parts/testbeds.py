"""The testbed corpora of one process, each built once.

A retriever indexes its testbed corpus, a corpus method transforms it, training draws its examples and
negatives from it and `biorab retrieve` prints its digest: all ask `testbed_corpus`, so a process that does
several of these builds each corpus once (`biorab.corpora.build_corpus` is deterministic in its arguments).
The memo keeps the last `KEPT` corpora; the data folder (the argument, or ``$BIORAB_DATA_DIR`` and the
working directory it is resolved from when none is given) is part of the key.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from biorab.corpora.corpus import Corpus, Ledger

#: How many corpora one process keeps (a sweep's driver visits many testbeds; a run's processes few).
KEPT = 8
_built: OrderedDict[tuple[object, ...], tuple[Corpus, Ledger]] = OrderedDict()


def testbed_corpus(testbed: str, dataset: str, *, rate: float | None = None, seed: int = 0,
                   data_dir: str | Path | None = None, pool: Sequence[str] | None = None
                   ) -> tuple[Corpus, Ledger]:
    """The `testbed` corpus of `dataset` and its ledger (`biorab.corpora.build_corpus`), built on the first
    call with these arguments in this process and returned again afterwards."""
    resolved_from = (None, os.environ.get("BIORAB_DATA_DIR"), os.getcwd())
    where = (str(data_dir),) if data_dir is not None else resolved_from
    key = (testbed, dataset, rate, seed, where, tuple(pool) if pool else None)
    if key in _built:
        _built.move_to_end(key)
        return _built[key]
    from biorab.corpora import build_corpus

    _built[key] = build_corpus(testbed, dataset, rate=rate, seed=seed, data_dir=data_dir, pool=pool)
    while len(_built) > KEPT:
        _built.popitem(last=False)
    return _built[key]


def forget_testbeds() -> None:
    """Drop every kept corpus (for a process that rewrites its data folder in place)."""
    _built.clear()
