"""The records that flow between stages (one record type per arrow of ARCHITECTURE.md).

All records are frozen dataclasses with `to_row()` / `from_row()` that use flat primitives only, so they
travel through Arrow/Parquet and Ray Data unchanged. Mappings are stored as JSON strings in rows.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

SPLITS: tuple[str, ...] = ("train", "dev", "test")


def _dump(mapping: dict[str, Any] | None) -> str | None:
    return None if mapping is None else json.dumps(mapping, sort_keys=True, ensure_ascii=False)


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None or text == "" else json.loads(text)


def _values(cls: type, row: dict[str, Any]) -> dict[str, Any]:
    """The row's values for the dataclass fields of `cls` (absent optional columns read as None)."""
    return {f.name: row.get(f.name) for f in fields(cls)}


@dataclass(frozen=True)
class Example:
    """One instance of a dataset.

    Attributes:
        id: stable id, unique within (dataset, split), e.g. ``"ade/test/17"``.
        task: a registered task type (`biorab.common.registry.TASKS`).
        dataset: registry name of the dataset (``"ade"``, ``"medmcqa"``...).
        split: ``train``, ``dev`` or ``test``.
        text: the instance's input as one string; this is the retrieval *key* for training items and the
            retrieval *query* for test items, so it never contains the gold label.
        label: the gold label in the task's canonical form: triples ``head|relation|tail`` (several joined
            by ``\\n``), link prediction the relation name, classification the dataset's label string,
            QA ``(A)``..``(E)``, NLI the label name.
        fields: structured inputs the templates need (``sentence``, ``head``, ``tail``, ``relation``,
            ``question``, ``options`` as ``{"A": ...}``, ``premise``, ``hypothesis``...).
        source_line: 1-based line (or item index) in the source file, for error messages and audits.
    """

    id: str
    task: str
    dataset: str
    split: str
    text: str
    label: str
    fields: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    source_line: int | None = None

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["fields"] = _dump(self.fields)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Example:
        values = _values(cls, row)
        values["fields"] = _load(row.get("fields")) or {}
        return cls(**values)


@dataclass(frozen=True)
class CorpusItem:
    """One (key, value) item of a retrieval corpus (the paper's Figure 2).

    `value` is the label as written into prompts; it is ``None`` for an unlabeled corpus.
    """

    id: str
    key: str
    value: str | None
    dataset: str
    task: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CorpusItem:
        return cls(**_values(cls, row))


@dataclass(frozen=True)
class Hit:
    """One retrieved corpus item for a query, best first (`rank` 0 is the top hit)."""

    doc_id: str
    score: float
    rank: int
    key: str
    value: str | None
    dataset: str = ""

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Hit:
        return cls(**_values(cls, row))


@dataclass(frozen=True)
class OutputConstraint:
    """What the answer must look like, for backends that support structured outputs.

    Exactly one of `choices` (a closed label list) or `regex` (e.g. for ``head|relation|tail``) is set.
    """

    choices: tuple[str, ...] | None = None
    regex: str | None = None

    def to_json(self) -> str:
        return json.dumps({"choices": list(self.choices) if self.choices else None, "regex": self.regex})

    @classmethod
    def from_json(cls, text: str | None) -> OutputConstraint | None:
        if not text:
            return None
        raw = json.loads(text)
        choices = tuple(raw["choices"]) if raw.get("choices") else None
        return cls(choices=choices, regex=raw.get("regex"))


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt for one example: what is sent to the LLM and how to stop it."""

    example_id: str
    text: str
    stop: tuple[str, ...] = ()
    constraint: OutputConstraint | None = None

    def to_row(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "text": self.text,
            "stop": json.dumps(list(self.stop)),
            "constraint": self.constraint.to_json() if self.constraint else None,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Prompt:
        return cls(
            example_id=row["example_id"],
            text=row["text"],
            stop=tuple(json.loads(row.get("stop") or "[]")),
            constraint=OutputConstraint.from_json(row.get("constraint")),
        )


@dataclass(frozen=True)
class Generation:
    """What a backend returned for one prompt.

    `label_logprobs` maps each label of a closed label set to its log-probability when the backend can
    score them (used for AUROC/AUPRC). `error` is set, and `text` empty, when the call failed for good.
    `batch_size` is how many sequences shared the forward passes that produced it (None when unknown):
    greedy outputs can depend on it (padding and kernel choice change the float rounding), so it is
    recorded to explain a difference, and is deliberately not part of the generation cache key.
    A thinking model's reasoning (``<think>…</think>``, or a server's ``reasoning_content``) is kept apart in
    `reasoning`, so `text` is the answer alone (what the parsers read); `reasoning_tokens` is the number of
    reasoning tokens the server reported (OpenAI's ``completion_tokens_details``), part of
    `completion_tokens`, None when unknown.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    label_logprobs: dict[str, float] | None = None
    error: str | None = None
    batch_size: int | None = None
    reasoning: str | None = None
    reasoning_tokens: int | None = None

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["label_logprobs"] = _dump(self.label_logprobs)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Generation:
        values = _values(cls, row)
        values["label_logprobs"] = _load(row.get("label_logprobs"))
        return cls(**values)


@dataclass(frozen=True)
class Prediction:
    """A parsed answer.

    `label` is the answer in the task's canonical form (see `Example.label`), ``None`` when parsing
    failed (`ok` is then False). `raw` is the text that was parsed. `scores` optionally maps labels to
    scores (probabilities or log-probabilities) for ranking metrics.
    """

    label: str | None
    raw: str
    ok: bool
    scores: dict[str, float] | None = None

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["scores"] = _dump(self.scores)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Prediction:
        values = _values(cls, row)
        values["scores"] = _load(row.get("scores"))
        return cls(**values)
