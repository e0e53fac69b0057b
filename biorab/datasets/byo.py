"""Bring-your-own datasets: JSONL, JSON or CSV/TSV files with a declared task and a field mapping.

This is how private sets (the paper's DS and SDoH sets) and BioNLI enter BioRAB::

    load_dataset("byo", "test", params={
        "name": "sdoh", "task": "classification",
        "files": {"train": "sdoh/train.csv", "test": "sdoh/test.csv"},
        "fields": {"text": "note", "label": "sdoh_label"},
        "labels": ["yes", "no"],
    })

Relative file paths are resolved against ``data_dir`` when one is given, else the current directory.
Every row is kept: nothing is deduplicated or skipped except blank JSONL lines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from biorab.common.errors import DataError
from biorab.common.params import Params
from biorab.common.registry import DATASETS, TASKS
from biorab.datasets.base import Converted, Dataset
from biorab.datasets.byo_tasks import FieldMap, RowConverter
from biorab.datasets.readers import SourceRow, read_delimited, read_json_records, read_jsonl

SplitName = Literal["train", "dev", "test"]
FileFormat = Literal["jsonl", "json", "csv", "tsv"]


def infer_format(path: Path) -> str:
    """The file format from the name: ``.jsonl``, ``.json``, ``.csv``, ``.tsv`` (optionally ``.gz``)."""
    suffixes = [s for s in path.suffixes if s != ".gz"]
    suffix = suffixes[-1].lstrip(".") if suffixes else ""
    if suffix not in ("jsonl", "json", "csv", "tsv"):
        raise DataError(
            "cannot tell the file format from the name; set 'format' (jsonl, json, csv, tsv)", path=path
        )
    return suffix


def read_records(path: Path, file_format: str | None) -> Iterator[SourceRow]:
    """Rows of a bring-your-own file in `file_format` (inferred from the name when ``None``)."""
    chosen = file_format or infer_format(path)
    if chosen == "jsonl":
        return read_jsonl(path)
    if chosen == "json":
        return read_json_records(path)
    return read_delimited(path, "\t" if chosen == "tsv" else ",")


@DATASETS.register("byo")
class ByoDataset(Dataset):
    """A dataset described entirely by its `Params` (task, files, field mapping, label set)."""

    class Params(Params):
        name: str = Field(default="byo", pattern=r"^[A-Za-z0-9_.-]+$")
        #: a registered task (`biorab.common.registry.TASKS`); its `row_form` says how a row becomes an
        #: instance.
        task: str
        files: dict[SplitName, str]
        format: FileFormat | None = None
        fields: FieldMap = FieldMap()
        labels: tuple[str, ...] | None = None
        label_map: dict[str, str] = {}

        @field_validator("task")
        @classmethod
        def _known_task(cls, task: str) -> str:
            if task not in TASKS:
                raise ValueError(f"unknown task {task!r}; use one of {', '.join(TASKS.names())}")
            return task

        @field_validator("files")
        @classmethod
        def _some_files(cls, files: dict[str, str]) -> dict[str, str]:
            if not files:
                raise ValueError("give at least one split file, e.g. {'test': 'test.jsonl'}")
            return files

    def __init__(self, params: ByoDataset.Params, *, data_dir: str | Path | None = None) -> None:
        super().__init__(data_dir=data_dir)
        self.params = params
        self.name = params.name
        self.task = params.task
        self._converter = RowConverter(
            params.task, params.fields, params.labels, params.label_map, params.name
        )

    @property
    def data_dir(self) -> Path:
        return Path(self._data_dir) if self._data_dir is not None else Path.cwd()

    def split_files(self) -> Mapping[str, str | Path]:
        return {str(split): path for split, path in self.params.files.items()}

    def missing_hint(self) -> str:
        return "check the 'files' paths (relative paths are resolved against the data dir or the cwd)"

    def read_file(self, path: Path) -> Iterator[SourceRow]:
        return read_records(path, self.params.format)

    def convert(self, row: SourceRow) -> Converted:
        return self._converter.convert(row)
