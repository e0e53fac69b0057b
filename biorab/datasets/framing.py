"""Query framing: the same instance asked another way (docs/datasets.md § Query framing).

A dataset slice's ``framing:`` rewrites each instance's text before it is retrieved for and rendered, as
a user would have typed it. It follows the query-perturbation studies of medical QA (abbreviated clinical
wording; typos, as in HELM's robustness perturbations; leading questions that suggest an answer, as in the
sycophancy and RARE work). Each perturbation is a pure function of (instance, seed): the same seed gives
the same texts and the same ledger, byte for byte.

- ``abbreviations``: the phrases of `ABBREVIATIONS` replaced by their clinical abbreviation (whole words,
  case-insensitive, longest phrase first; the seed plays no part);
- ``typos``: in ``max(1, round(0.1 * w))`` of the instance's ``w`` words of four or more letters, chosen
  with ``random.Random(sha256(seed, id))``, one edit each drawn from the same generator: two adjacent
  letters swapped, a letter dropped or a letter doubled (an instance without such a word is unchanged);
- ``leading``: the sentence ``I think the answer is {wrong}.`` appended, `wrong` a wrong label of the same
  dataset for this instance, drawn by the task's corruption rule (`biorab.corpora.counterfactual`, the one
  the counterfactual testbeds use) with the same generator.

The perturbation is applied to the instance's text (what is retrieved for) and, with a generator seeded
afresh the same way, to its `QUERY_FIELDS` (what the dataset's template shows: MedMCQA's ``question``,
the ``sentence`` of the sentence datasets), so the retrieved-for text and the prompt's question change
alike. The ledger (`FramingEntry`, one per instance) records the framing, the original and the new text
and what changed in it (the replacements, the edits, or the suggested wrong label).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from biorab.common.records import Example

#: The framings (the config's `biorab.experiment.Framing`, which a test pins equal; not imported here: the
#: config module sits above the datasets package).
FRAMINGS: tuple[str, ...] = ("none", "abbreviations", "typos", "leading")

#: Clinical abbreviations (phrase → abbreviation), from common clinical usage; a phrase is replaced only as
#: whole words. Kept small and documented: each entry is one a clinician writes in notes.
ABBREVIATIONS: dict[str, str] = {
    "adverse drug reaction": "ADR", "blood pressure": "BP", "chronic obstructive pulmonary disease": "COPD",
    "congestive heart failure": "CHF", "coronary artery disease": "CAD", "diabetes mellitus": "DM",
    "diagnosis": "dx", "heart failure": "HF", "history": "hx", "hypertension": "HTN", "intravenous": "IV",
    "intramuscular": "IM", "myocardial infarction": "MI", "patient": "pt", "patients": "pts",
    "prescription": "Rx", "shortness of breath": "SOB", "symptoms": "sx", "treatment": "tx",
    "twice daily": "BID", "urinary tract infection": "UTI", "with": "w/", "without": "w/o",
}  # fmt: skip
LEADING = "I think the answer is {wrong}."
#: The fields a template shows the query in (besides the text): perturbed the same way.
QUERY_FIELDS: tuple[str, ...] = ("question", "sentence")
#: The framing ledger of a cell, in its cell folder.
FRAMING_LEDGER = "framing_ledger.jsonl"
TYPO_SHARE = 0.1
_PHRASES = re.compile(r"\b(" + "|".join(re.escape(p) for p in sorted(ABBREVIATIONS, key=len, reverse=True))
                      + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]{4,}")


@dataclass(frozen=True)
class FramingEntry:
    """How one instance's text was reframed (a line of the framing ledger)."""

    id: str
    framing: str
    original: str
    text: str
    changes: tuple[Any, ...]

    def to_line(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def instance_rng(seed: int, item_id: str) -> random.Random:
    """The instance's generator: seeded by the first 8 bytes of ``sha256(f"{seed}\\x1f{id}")``."""
    return random.Random(int.from_bytes(hashlib.sha256(f"{seed}\x1f{item_id}".encode()).digest()[:8], "big"))


def abbreviate(text: str) -> tuple[str, tuple[Any, ...]]:
    """`text` with the table's phrases abbreviated, and the (phrase as written, abbreviation) pairs.

    >>> text, changes = abbreviate("Patient with Myocardial infarction and hypertension.")
    >>> text
    'pt w/ MI and HTN.'
    >>> changes[2]
    ('Myocardial infarction', 'MI')
    """
    changes: list[tuple[str, str]] = []

    def swap(match: re.Match[str]) -> str:
        short = ABBREVIATIONS[match.group(0).lower()]
        changes.append((match.group(0), short))
        return short

    return _PHRASES.sub(swap, text), tuple(changes)


def add_typos(text: str, rng: random.Random) -> tuple[str, tuple[Any, ...]]:
    """`text` with one edit in each of ``max(1, round(0.1 * w))`` words of four or more letters, and the
    (word start, word, edit, new word) of each."""
    words = list(_WORD.finditer(text))
    if not words:
        return text, ()
    chosen = sorted(rng.sample(range(len(words)), max(1, round(TYPO_SHARE * len(words)))))
    out, changes, last = [], [], 0
    for index in chosen:
        match = words[index]
        word = match.group(0)
        edit = rng.choice(("swap", "drop", "double"))
        at = rng.randrange(len(word) - 1)
        if edit == "swap":
            new = word[:at] + word[at + 1] + word[at] + word[at + 2:]
        elif edit == "drop":
            new = word[:at] + word[at + 1:]
        else:
            new = word[:at + 1] + word[at] + word[at + 1:]
        out.append(text[last:match.start()] + new)
        last = match.end()
        changes.append((match.start(), word, edit, new))
    return "".join(out) + text[last:], tuple(changes)


def reframe(examples: Sequence[Example], framing: str, *, seed: int, train: Sequence[Example] = ()
            ) -> tuple[list[Example], list[FramingEntry]]:
    """`examples` with their texts reframed, and the ledger (`train`: the dataset's training split, whose
    label space the leading framing's wrong labels come from)."""
    if framing == "none":
        return list(examples), []
    if framing not in FRAMINGS:
        raise ValueError(f"unknown framing {framing!r} (one of {', '.join(FRAMINGS)})")
    space = None
    if framing == "leading" and examples:
        from biorab.tasks import get_task  # the task's corruption rule (`biorab.corpora.counterfactual`)

        space = get_task(examples[0].task).label_space(examples[0].dataset, train or examples)
    out, ledger = [], []
    for ex in examples:
        wrong = ""
        if framing == "leading":
            from biorab.tasks import get_task

            assert space is not None
            wrong = get_task(ex.task).wrong_label(ex, space, instance_rng(seed, ex.id))[0]

        def apply(value: str, ex: Example = ex, wrong: str = wrong) -> tuple[str, tuple[Any, ...]]:
            if framing == "abbreviations":
                return abbreviate(value)
            if framing == "typos":
                return add_typos(value, instance_rng(seed, ex.id))
            return f"{value} {LEADING.format(wrong=wrong)}", (wrong,)

        text, changes = apply(ex.text)
        fields = {k: apply(v)[0] if k in QUERY_FIELDS and isinstance(v, str) else v
                  for k, v in ex.fields.items()}
        out.append(replace(ex, text=text, fields=fields))
        ledger.append(FramingEntry(ex.id, framing, ex.text, text, changes))
    return out, ledger


def ledger_bytes(entries: Sequence[FramingEntry]) -> bytes:
    return "".join(e.to_line() for e in entries).encode("utf-8")
