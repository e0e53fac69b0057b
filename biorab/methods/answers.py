"""Reading the model's answers to the method prompts: a verdict (Detect-and-Correct) or a label.

Both never raise on model output: an answer that cannot be read is reported as not ``ok`` and leaves the
item's value as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from biorab.common.records import Generation

# "incorrect" must be tested before "correct" (it contains it); "not correct" and "wrong" also flag.
_FLAG = re.compile(r"^\W*(incorrect|not\s+correct|wrong|false|no)\b", re.IGNORECASE)
_KEEP = re.compile(r"^\W*(correct|right|true|yes)\b", re.IGNORECASE)
# What may stand between the verdict and the label: "incorrect, the right label is 0", "incorrect: 0".
_LEAD = re.compile(
    r"^[\s:;,.\-–]*(?:(?:the\s+)?(?:correct|right|true)\s+(?:label|answer)\s*(?:is|should\s+be)?\s*[:\-]?\s*)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """One Detect-and-Correct answer: whether the item was flagged, its new label (``None``: none given or
    unreadable), and whether the verdict itself could be read."""

    flagged: bool
    label: str | None
    ok: bool


def read_verdict(task: str, generation: Generation, labels: Sequence[str] | None) -> Verdict:
    """The verdict of ``correct`` / ``incorrect: <label>``; anything else is unreadable (not flagged)."""
    text = generation.text.strip()
    if generation.error is not None:
        return Verdict(False, None, False)
    flag = _FLAG.match(text)
    if flag is None:
        return Verdict(False, None, _KEEP.match(text) is not None)
    rest = _LEAD.sub("", text[flag.end():], count=1)
    return Verdict(True, read_label(task, rest, labels), True)


def read_label(task: str, text: str, labels: Sequence[str] | None) -> str | None:
    """The canonical label in `text` (the task's robust parser), ``None`` when there is none."""
    from biorab.tasks import parse

    if not text.strip():
        return None
    pred = parse(task, text, mode="robust", labels=labels)
    return pred.label if pred.ok else None
