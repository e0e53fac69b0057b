"""Robust parsing of one label from a closed list (link prediction, classification, NLI, the probe).

Matching ignores case, ``-``/``_``/``/`` and surrounding punctuation. In order: the whole first line is a
label; an explicit "the label is X"; the first line starts with a label; the first word is a synonym
(binary sets only: yes/true/positive... for the positive label, no/false/negative... for the negative one);
the earliest label mentioned anywhere in the answer; then the earliest synonym of four letters or more
("contradicts", "false"; short words such as "no" are too common in prose). An answer that names three or
more labels (an echo of the instruction's label tuple) is a failure, not its first label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from biorab.parsing.segments import answer_lines, answer_regions

POSITIVE_WORDS = frozenset({
    "1", "y", "yes", "true", "positive", "entailment", "entailed", "entails", "supported", "consistent",
})  # fmt: skip
NEGATIVE_WORDS = frozenset({
    "0", "n", "no", "false", "negative", "contradiction", "contradicts", "contradicted", "contradictory",
    "not entailed", "unsupported", "inconsistent", "adversarial",
})  # fmt: skip
_EXPLICIT = re.compile(
    r"\b(?:label|answer|relation|relationship|output|prediction|class)\s+(?:is|should be|would be|=)\s*:?\s*"
    r"(.+)",
    re.IGNORECASE,
)


def normalize(text: str) -> str:
    """Lowercase, separators as spaces, punctuation at the edges removed, whitespace collapsed.

    >>> normalize("**Disease_Gene.**")
    'disease gene'
    """
    text = re.sub(r"[\-_/\u2013\u2014]+", " ", text.lower())
    text = re.sub(r"[^\w\s]+", " ", text)
    return " ".join(text.split()).strip()


def parse_label(text: str, labels: Sequence[str]) -> str | None:
    """The label the model answered, spelled as in `labels`, or ``None``.

    >>> parse_label("Participates.\\n\\nExample: Context: a Response: binds", ["binds", "participates"])
    'participates'
    >>> parse_label("True-The retrieved example is not a negative example", ["True", "False"])
    'True'
    >>> parse_label("No, it does not.", ["y", "n"])
    'n'
    """
    by_norm = {normalize(label): label for label in labels}
    synonyms = _synonyms(by_norm)
    for region in answer_regions(text):
        answer = _label_in_region(region, by_norm, synonyms)
        if answer is not None:
            return answer
    return None


def _label_in_region(region: str, by_norm: dict[str, str], synonyms: dict[str, str]) -> str | None:
    lines = answer_lines(region)
    if not lines:
        return None
    first = normalize(lines[0])
    if first in by_norm:
        return by_norm[first]
    text = normalize(" ".join(lines))
    if len(_positions(text, by_norm)) >= 3:
        return None  # an echo of the instruction's label list, not an answer
    explicit = _EXPLICIT.search(lines[0])
    if explicit:
        found = _prefix_label(normalize(explicit.group(1)), by_norm, synonyms)
        if found:
            return found
    found = _prefix_label(first, by_norm, synonyms)
    if found:
        return found
    long_synonyms = {word: label for word, label in synonyms.items() if len(word) >= 4}
    return _earliest(text, by_norm) or _earliest(text, long_synonyms)


def _prefix_label(words: str, by_norm: dict[str, str], synonyms: dict[str, str]) -> str | None:
    # Longest label first, so "upregulates" is not read as a shorter label it does not start with anyway,
    # and "not entailed" wins over "not".
    for norm in sorted(by_norm, key=len, reverse=True):
        if norm and (words == norm or words.startswith(norm + " ")):
            return by_norm[norm]
    for word in sorted(synonyms, key=len, reverse=True):
        if words == word or words.startswith(word + " "):
            return synonyms[word]
    return None


def _positions(text: str, words: dict[str, str]) -> dict[str, int]:
    """label -> where its earliest word of `words` occurs in `text` (as a whole word)."""
    positions: dict[str, int] = {}
    for word, label in words.items():
        match = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) if word else None
        if match:
            positions[label] = min(match.start(), positions.get(label, match.start()))
    return positions


def _earliest(text: str, words: dict[str, str]) -> str | None:
    positions = _positions(text, words)
    if not positions:
        return None
    return min(positions, key=lambda label: (positions[label], -len(label)))


def _synonyms(by_norm: dict[str, str]) -> dict[str, str]:
    """Synonym -> label for a binary set with one positive-like and one negative-like label (with a third
    label such as "no relation", "no" would be ambiguous)."""
    if len(by_norm) != 2:
        return {}
    positive = [label for norm, label in by_norm.items() if norm in POSITIVE_WORDS]
    negative = [label for norm, label in by_norm.items() if norm in NEGATIVE_WORDS]
    if len(positive) != 1 or len(negative) != 1:
        return {}
    mapping = dict.fromkeys(POSITIVE_WORDS, positive[0])
    mapping.update(dict.fromkeys(NEGATIVE_WORDS, negative[0]))
    return mapping


def open_answer(text: str, *, first_word: bool) -> str | None:
    """Without a label set: the first line (or its first word) of the answer, trimmed of punctuation."""
    for region in answer_regions(text):
        lines = answer_lines(region)
        if lines:
            answer = lines[0].split()[0] if first_word else lines[0]
            answer = answer.strip(" .,;:!?\"'")
            if answer:
                return answer
    return None
