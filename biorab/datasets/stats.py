"""Per-split statistics of datasets, for ``biorab data stats``: rows, label counts and duplicates.

A duplicate is a row whose ``(text, label)`` exactly repeats an earlier row of the same split; for the
staged files this is the same as repeating the whole source record (checked for ChemProt, GIT, ADE,
SemClass), so the counts match the data README (ADE test 13 / train 108, ChemProt 92/37/66, GIT test
465). For triple extraction, `labels` counts relations (each gold triple once).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.common.records import Example
from biorab.tasks import get_task


@dataclass(frozen=True)
class SplitStats:
    """Counts of one split."""

    rows: int
    labels: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0

    def to_json(self) -> dict[str, object]:
        return {"rows": self.rows, "labels": dict(self.labels), "duplicates": self.duplicates}


def label_counts(examples: Iterable[Example]) -> dict[str, int]:
    """Label frequencies, most frequent first (ties by label); what counts is the task's
    (`TaskType.label_names`: triples count their relations)."""
    counts: Counter[str] = Counter()
    for example in examples:
        counts.update(get_task(example.task).label_names(example.label))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def count_duplicates(examples: Iterable[Example]) -> int:
    """Rows whose (text, label) exactly repeats an earlier row."""
    seen: set[tuple[str, str]] = set()
    duplicates = 0
    for example in examples:
        key = (example.text, example.label)
        duplicates += key in seen
        seen.add(key)
    return duplicates


def split_stats(examples: Sequence[Example]) -> SplitStats:
    """Rows, label counts and duplicates of one split."""
    return SplitStats(
        rows=len(examples), labels=label_counts(examples), duplicates=count_duplicates(examples)
    )


def dataset_stats(
    names: Sequence[str],
    *,
    data_dir: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, SplitStats]]:
    """``{dataset: {split: SplitStats}}`` for every split of each dataset in `names` (`params`: the
    loader params, for ``byo``/``bionli``)."""
    from biorab.datasets import get_dataset

    result: dict[str, dict[str, SplitStats]] = {}
    for name in names:
        dataset = get_dataset(name, data_dir=data_dir, params=params)
        result[dataset.name] = {split: split_stats(dataset.load(split)) for split in dataset.splits()}
    return result
