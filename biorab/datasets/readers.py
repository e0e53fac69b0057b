"""Readers for the source files of datasets: JSON Lines, JSON arrays and CSV/TSV, optionally gzipped.

Every reader yields `SourceRow`s that remember the file and the 1-based line they came from, so a loader
can raise a `DataError` naming file, line and field. Blank lines of a JSONL file are not rows; nothing
else is skipped. Malformed input (truncated JSON, bad gzip, non-UTF-8 bytes, a row that is not an object)
is a `DataError`, never a silently shorter dataset.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.file_sniffing import json_error_text

# Errors that gzip/zlib raise on a corrupt or truncated archive.
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


@dataclass(frozen=True)
class SourceRow:
    """One record of a source file with its position, for precise error messages.

    Attributes:
        data: the parsed record (a JSON object or a CSV row).
        path: the file it came from.
        line: 1-based physical line where the record starts.
        item: 1-based item index inside a JSON array, ``None`` for line-based formats.
    """

    data: Mapping[str, Any]
    path: Path
    line: int
    item: int | None = None

    @property
    def position(self) -> int:
        """The row's position for `Example.source_line`: the item index of an array, else the line."""
        return self.item if self.item is not None else self.line

    def error(self, message: str, field: str | None = None) -> DataError:
        """A `DataError` located at this row (arrays also name the item, as all items may share a line)."""
        where = f"item {self.item}: " if self.item is not None else ""
        return DataError(f"{where}{message}", path=self.path, line=self.line, field=field)

    def value(self, field: str) -> Any:
        """The raw value of `field`; a missing field (or a CSV cell that is absent) is an error."""
        if field not in self.data or self.data[field] is None:
            raise self.error("missing field", field)
        return self.data[field]

    def string(self, field: str) -> str:
        """`field` as a non-blank string (text is returned byte for byte, never stripped)."""
        value = self.value(field)
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {type(value).__name__} {value!r}", field)
        if not value.strip():
            raise self.error("empty value", field)
        return value


def _open_bytes(path: Path) -> io.BufferedIOBase:
    if not path.is_file():
        raise DataError("file not found", path=path)
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - the callers close it


def _decode(raw: bytes, path: Path, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 ({e.reason} at byte {e.start})", path=path, line=line) from e


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, decoded line)``; bad gzip and bad UTF-8 become `DataError`s.

    A UTF-8 byte-order mark at the start of the file (spreadsheet exports write one) is dropped, so it
    does not become part of the first CSV header or break the first JSON line.
    """
    number = 0
    with _open_bytes(path) as handle:
        try:
            for number, raw in enumerate(handle, start=1):  # noqa: B007 - `number` is read in except
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                yield number, _decode(raw, path, number)
        except _GZIP_ERRORS as e:
            raise DataError(f"not a valid gzip file ({e})", path=path, line=number + 1) from e


def read_text(path: Path) -> str:
    """The whole file as text (gunzipped when it ends in ``.gz``)."""
    return "".join(line for _, line in iter_lines(path))


def read_jsonl(path: Path) -> Iterator[SourceRow]:
    """Yield one `SourceRow` per non-blank line; each line must be one JSON object."""
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(
                f"invalid JSON ({json_error_text(e)}); is the line truncated?", path=path, line=number
            ) from e
        if not isinstance(data, dict):
            raise DataError(f"expected a JSON object, got {type(data).__name__}", path=path, line=number)
        yield SourceRow(data, path, number)


def read_json_array(path: Path) -> Iterator[SourceRow]:
    """Yield the objects of a file holding one JSON array, each with its line and 1-based item index."""
    text = read_text(path)
    decoder = json.JSONDecoder()
    lines = _LineCounter(text)
    pos = _skip_space(text, 0)
    if not text.startswith("[", pos):
        raise DataError("expected a JSON array ('[')", path=path, line=lines.at(pos))
    pos = _skip_space(text, pos + 1)
    item = 0
    while not text.startswith("]", pos):
        item += 1
        try:
            data, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise DataError(
                f"item {item}: invalid JSON ({json_error_text(e)}); is the file truncated?",
                path=path,
                line=e.lineno,
            ) from e
        row = SourceRow(data, path, lines.at(pos), item)
        if not isinstance(data, dict):
            raise row.error(f"expected a JSON object, got {type(data).__name__}")
        yield row
        pos = _skip_space(text, end)
        if text.startswith(",", pos):
            pos = _skip_space(text, pos + 1)
        elif not text.startswith("]", pos):
            raise DataError(
                f"item {item}: expected ',' or ']' after the item; is the file truncated?",
                path=path,
                line=lines.at(pos),
            )
    if text[pos + 1 :].strip():
        raise DataError("unexpected data after the JSON array", path=path, line=lines.at(pos + 1))


def read_json_records(path: Path) -> Iterator[SourceRow]:
    """A ``.json`` file that is either one JSON array or JSON Lines (decided by its first character)."""
    with _open_bytes(path) as handle:
        try:
            head = handle.read(4096).removeprefix(codecs.BOM_UTF8).lstrip()
        except _GZIP_ERRORS as e:
            raise DataError(f"not a valid gzip file ({e})", path=path, line=1) from e
    return read_json_array(path) if head.startswith(b"[") else read_jsonl(path)


def read_delimited(path: Path, delimiter: str = ",") -> Iterator[SourceRow]:
    """Yield one `SourceRow` per CSV/TSV record (header row required); ragged rows are errors.

    Blank lines are not rows; `SourceRow.line` is the first line of the record even when a quoted cell
    spans several lines.
    """
    reader = csv.reader((line for _, line in iter_lines(path)), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    consumed = 0
    try:
        for cells in reader:
            start, consumed = consumed + 1, reader.line_num
            if not cells:
                continue
            if header is None:
                header = cells
                continue
            yield _delimited_row(path, header, cells, start)
    except csv.Error as e:
        raise DataError(f"malformed CSV ({e})", path=path, line=reader.line_num) from e
    if header is None:
        raise DataError("empty file: a header row is required", path=path, line=1)


def _delimited_row(path: Path, header: list[str], cells: list[str], line: int) -> SourceRow:
    row = SourceRow(dict(zip(header, cells, strict=False)), path, line)
    if len(cells) > len(header):
        raise row.error(f"{len(cells)} cells, but the header has {len(header)}")
    if len(cells) < len(header):
        raise row.error(f"row has fewer cells than the header ({len(header)})", header[len(cells)])
    return row


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class _LineCounter:
    """Line numbers of increasing offsets in one text, counted incrementally (a one-line file of 4,000
    items would otherwise be rescanned for every item)."""

    def __init__(self, text: str) -> None:
        self._text, self._pos, self._line = text, 0, 1

    def at(self, pos: int) -> int:
        if pos < self._pos:
            return self._text.count("\n", 0, pos) + 1
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line
