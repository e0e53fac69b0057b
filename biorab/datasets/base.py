"""The shape every dataset loader shares: split → source file → `SourceRow`s → `Example`s.

A loader declares its task, its split files (relative to the data root) and how one source row becomes
``(text, label, fields)``; this base class does the rest (split checks, ids ``"{dataset}/{split}/{i}"``,
source lines). Loaders are registered in `biorab.common.registry.DATASETS` and built with
`biorab.common.build.build`,
so a loader with options declares a nested ``Params`` model and takes it as its first argument.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from biorab.common.errors import ConfigError, DataError
from biorab.common.paths import biorab_data_dir
from biorab.common.records import SPLITS, Example
from biorab.datasets.readers import SourceRow, read_json_array, read_jsonl


class Converted(NamedTuple):
    """What a loader makes of one source row."""

    text: str
    label: str
    fields: dict[str, Any]


class Dataset(ABC):
    """Base class of all loaders: subclasses set `name`, `task`, `files` and implement `convert`."""

    # Plain (not ClassVar) so that configurable loaders (bring-your-own) can set them per instance.
    name: str
    task: str
    #: split -> file path relative to the data root (only the splits the source has).
    files: ClassVar[Mapping[str, str]] = {}
    #: "jsonl" (one object per line) or "json_array" (one JSON array of objects).
    file_format: ClassVar[str] = "jsonl"

    def __init__(self, *, data_dir: str | Path | None = None) -> None:
        self._data_dir = data_dir

    @property
    def data_dir(self) -> Path:
        """The data root (resolved on use, so listing splits never touches the disk)."""
        return biorab_data_dir(self._data_dir)

    def splits(self) -> tuple[str, ...]:
        """The splits this dataset has, in train/dev/test order."""
        return tuple(split for split in SPLITS if split in self.split_files())

    def split_files(self) -> Mapping[str, str | Path]:
        """split -> source file (relative to the data root, or absolute)."""
        return dict(self.files)

    def path(self, split: str) -> Path:
        """The source file of `split`; an unknown split is a `ConfigError` naming the available ones."""
        files = self.split_files()
        if split not in files:
            raise ConfigError(
                f"dataset {self.name!r} has no split {split!r} (the source has none); "
                f"available: {', '.join(self.splits())}",
                key="split",
            )
        return self.data_dir / files[split]

    def source_files(self, split: str) -> tuple[Path, ...]:
        """Every file `load(split)` reads (its split file; loaders that read more say so): what keys the
        resume of cells whose retrieval corpus is built from this split (`biorab.corpora.source_files`)."""
        return (self.path(split),)

    def rows(self, split: str) -> Iterator[SourceRow]:
        """The raw rows of `split`, in file order."""
        path = self.path(split)
        if not path.is_file():
            raise DataError(
                f"file of the {self.name} {split} split not found; {self.missing_hint()}", path=path
            )
        return self.read_file(path)

    def read_file(self, path: Path) -> Iterator[SourceRow]:
        """The rows of an existing source file in `file_format` (loaders with other formats override it)."""
        return read_json_array(path) if self.file_format == "json_array" else read_jsonl(path)

    def missing_hint(self) -> str:
        """What to do when a split file is missing (overridden by datasets users supply themselves)."""
        return "see the data README for the expected layout, or pass --data-dir / set $BIORAB_DATA_DIR"

    def load(self, split: str) -> list[Example]:
        """All examples of `split`, in source order, nothing dropped or deduplicated."""
        convert = self.converter(split)
        return [self.example(split, index, row, convert) for index, row in enumerate(self.rows(split))]

    def converter(self, split: str) -> Callable[[SourceRow], Converted]:
        """The row converter of `split` (`convert`, unless a dataset's splits have different formats)."""
        return self.convert

    def example(
        self, split: str, index: int, row: SourceRow, convert: Callable[[SourceRow], Converted] | None = None
    ) -> Example:
        """The `Example` for the `index`-th (0-based) row of `split`."""
        converted = (convert or self.converter(split))(row)
        return Example(
            id=f"{self.name}/{split}/{index}",
            task=self.task,
            dataset=self.name,
            split=split,
            text=converted.text,
            label=converted.label,
            fields=converted.fields,
            source_line=row.position,
        )

    @abstractmethod
    def convert(self, row: SourceRow) -> Converted:
        """Turn one source row into ``(text, label, fields)``; raise ``row.error(...)`` on bad input."""


def check_label(row: SourceRow, field: str, label: str, allowed: Sequence[str], dataset: str) -> str:
    """Return `label` if it is in `allowed`, else raise a `DataError` listing the allowed labels."""
    if label not in allowed:
        raise row.error(f"label {label!r} is not in the {dataset} label set ({', '.join(allowed)})", field)
    return label
