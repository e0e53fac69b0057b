"""How a bring-your-own row becomes an `Example`, by the row form its task declares (`TaskType.row_form`).

A `FieldMap` names the source field of each role; a role left unset reads the field of the same name
(``premise`` reads ``"premise"``), and ``text`` defaults to ``"text"``. The `Example.text` each form builds:

- ``triples`` (triple extraction): the sentence; label ``head|relation|tail`` (several joined by
  ``\\n``), from the label field (a string, or a list of ``[head, relation, tail]``) or from mapped
  head/relation/tail fields;
- ``pair`` (link prediction): ``"What is the relationship between <head> and <tail> ?"`` (or a mapped text
  field);
- ``text`` (classification): the text field;
- ``choices`` (QA): ``"Question: <q>\\n Choices: (A) ..; (B) .."`` with the label ``"(A)"``.. (``"A"`` is
  accepted);
- ``premise_hypothesis`` (NLI): ``"Premise: <premise>\\nHypothesis: <hypothesis>"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from biorab.common.labels import QA_OPTION_LETTERS
from biorab.common.params import Params
from biorab.datasets.base import Converted, check_label
from biorab.datasets.linkprediction import question_text
from biorab.datasets.medmcqa import qa_text
from biorab.datasets.readers import SourceRow
from biorab.tasks import get_task


class FieldMap(Params):
    """Source field for each role (``None``: the field named like the role)."""

    text: str | None = None
    label: str | None = None
    sentence: str | None = None
    head: str | None = None
    relation: str | None = None
    tail: str | None = None
    question: str | None = None
    #: one field holding ``{"A": ...}`` or a list (or its JSON text), or one field per option, in order.
    options: str | list[str] | None = None
    premise: str | None = None
    hypothesis: str | None = None
    subject: str | None = None
    id: str | None = None

    def source(self, role: str) -> str:
        """The source field that holds `role`."""
        mapped = getattr(self, role)
        return mapped if isinstance(mapped, str) else role


class RowConverter:
    """Converts rows of one bring-your-own dataset (task, field map, label set, label aliases)."""

    def __init__(
        self,
        task: str,
        fields: FieldMap,
        labels: Sequence[str] | None,
        label_map: Mapping[str, str],
        name: str,
    ) -> None:
        self.task, self.map, self.labels, self.label_map, self.name = task, fields, labels, label_map, name
        self.kind = get_task(task)
        forms: dict[str, Callable[[SourceRow], Converted]] = {
            "triples": self._triples,
            "pair": self._link,
            "text": self._classification,
            "choices": self._qa,
            "premise_hypothesis": self._nli,
        }
        form = self.kind.row_form
        if form not in forms:
            raise ValueError(f"task {task!r} declares row form {form!r}; known forms: {', '.join(forms)}")
        self.convert = forms[form]

    def _label(self, row: SourceRow, allowed: Sequence[str] | None = None) -> str:
        field = self.map.source("label")
        raw = row.value(field)
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            raise row.error(f"expected a string label, got {type(raw).__name__} {raw!r}", field)
        label = self.label_map.get(str(raw), str(raw))
        if not label.strip():
            raise row.error("empty value", field)
        allowed = allowed if allowed is not None else self.labels
        if allowed is not None:
            for name in self.kind.label_names(label):  # each label a (multi-label) answer names
                check_label(row, field, name, allowed, self.name)
        return label

    def _extras(self, row: SourceRow, roles: Sequence[str]) -> dict[str, Any]:
        # Optional roles: copied when mapped explicitly or present under their own name.
        extras = {}
        for role in roles:
            value = row.data.get(self.map.source(role))
            if value is not None:
                extras["source_id" if role == "id" else role] = value
        return extras

    def _triples(self, row: SourceRow) -> Converted:
        sentence = row.string(self.map.sentence or self.map.source("text"))
        if all(getattr(self.map, role) for role in ("head", "relation", "tail")):
            parts = [row.string(self.map.source(role)) for role in ("head", "relation", "tail")]
            label = self._triple(row, self.map.source("relation"), parts)
        else:
            label = "\n".join(self._triple(row, self.map.source("label"), p) for p in self._triple_list(row))
        return Converted(sentence, label, {"sentence": sentence, **self._extras(row, ("id",))})

    def _triple_list(self, row: SourceRow) -> list[list[str]]:
        field = self.map.source("label")
        raw = row.value(field)
        if isinstance(raw, str):
            return [line.split("|") for line in raw.split("\n") if line.strip()] or [[]]
        if isinstance(raw, list) and raw and all(isinstance(t, list | str) for t in raw):
            return [t.split("|") if isinstance(t, str) else t for t in raw]
        raise row.error(f"expected 'head|relation|tail' or a list of triples, got {raw!r}", field)

    def _triple(self, row: SourceRow, field: str, parts: Sequence[Any]) -> str:
        if len(parts) != 3 or not all(isinstance(p, str) and p.strip() and "|" not in p for p in parts):
            raise row.error(
                f"expected a triple [head, relation, tail] of non-empty strings, got {parts!r}", field
            )
        if self.labels is not None:
            check_label(row, field, parts[1], self.labels, self.name)
        return "|".join(parts)

    def _link(self, row: SourceRow) -> Converted:
        head, tail = row.string(self.map.source("head")), row.string(self.map.source("tail"))
        text = row.string(self.map.source("text")) if self.map.text else question_text(head, tail)
        return Converted(text, self._label(row), {"head": head, "tail": tail, **self._extras(row, ("id",))})

    def _classification(self, row: SourceRow) -> Converted:
        text = row.string(self.map.source("text"))
        extras = self._extras(row, ("sentence", "head", "relation", "tail", "id"))
        return Converted(text, self._label(row), {"sentence": text, **extras})

    def _qa(self, row: SourceRow) -> Converted:
        question = row.string(self.map.source("question"))
        options = self._options(row)
        letters = [f"({letter})" for letter in options]
        label = self._label(row, allowed=None)
        label = label if label.startswith("(") else f"({label})"
        if self.labels is not None:
            check_label(row, self.map.source("label"), label, self.labels, self.name)
        if label not in letters:
            raise row.error(
                f"answer {label} is not one of the row's options {', '.join(letters)}",
                self.map.source("label"),
            )
        fields = {"question": question, "options": options, **self._extras(row, ("subject", "id"))}
        fields.setdefault("subject", None)
        return Converted(qa_text(question, options), label, fields)

    def _options(self, row: SourceRow) -> dict[str, str]:
        spec = self.map.options or "options"
        if isinstance(spec, list):
            values: Any = [row.value(field) for field in spec]
            field = ",".join(spec)
        else:
            values, field = row.value(spec), spec
            if isinstance(values, str):
                values = _json_or_error(row, spec, values)
        if isinstance(values, dict):
            values = [values.get(letter) for letter in QA_OPTION_LETTERS[: len(values)]]
        if not isinstance(values, list) or not 2 <= len(values) <= len(QA_OPTION_LETTERS):
            raise row.error(
                f"expected 2-{len(QA_OPTION_LETTERS)} options (a list or {{'A': ...}}), got {values!r}", field
            )
        if not all(isinstance(v, str) for v in values):
            raise row.error(f"options must be strings keyed A, B, ... in order, got {values!r}", field)
        return dict(zip(QA_OPTION_LETTERS, values, strict=False))

    def _nli(self, row: SourceRow) -> Converted:
        premise = row.string(self.map.source("premise"))
        hypothesis = row.string(self.map.source("hypothesis"))
        fields = {"premise": premise, "hypothesis": hypothesis, **self._extras(row, ("id",))}
        return Converted(f"Premise: {premise}\nHypothesis: {hypothesis}", self._label(row), fields)


def _json_or_error(row: SourceRow, field: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise row.error(f"expected JSON options (a list or {{'A': ...}}), got {text!r}", field) from e
