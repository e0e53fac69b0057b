"""Finding the answer inside a model output.

Two readers: the original scripts' segment rule (`strict_lines`), and the robust one (`answer_regions`)
that strips prompt echoes, answer labels and markdown and cuts where the model starts a new example.
"""

from __future__ import annotations

import re

#: The header the original's decoded output starts with (`biorab.tasks.wrappers.inference_prompt` writes
#: it): the strict rule uses it to detect an echoed prompt.
INFERENCE_HEADER = "Below is an instruction that describes a task"

_RESPONSE_ECHO = re.compile(r"#+\s*Response\s*:[ \t]*\n?", re.IGNORECASE)
# Where a model that keeps writing starts a new example or section: the answer ends there.
_HARD_SECTION = re.compile(
    r"(?:^|(?<=\s))(?:#{2,}|exc?amples?\s*\d*\s*:|instruction\s*:|explanation\s*:|note\s*:)",
    re.IGNORECASE | re.MULTILINE,
)
# Restated inputs ("context: <sentence>", "Question: ..."): not the answer, but an answer label may follow.
_SOFT_SECTION = re.compile(
    r"(?:^|(?<=\s))(?:context\s*:|input\s*:|question\s*:|answers\s*:|choices\s*:|retrieved sentence\s*:)",
    re.IGNORECASE | re.MULTILINE,
)
# A label the model puts before its answer ("Response:", "**Answer**:", "Output -").
_ANSWER_LABEL = re.compile(
    r"^\s*[*_]*(?:final\s+)?(?:response|answer|output|label|prediction|result|relation|triples?|triplets?)"
    r"[*_]*(?:\s+is)?(?:\s*[:=]|\s+-)[*_]*\s*",
    re.IGNORECASE,
)
_LABEL_ANYWHERE = re.compile(r"\b(?:response|answer|output)\s*:", re.IGNORECASE)
_FENCE = re.compile(r"```[\w+-]*")
_BULLET = re.compile(r"^\s*(?:>\s*)?(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+|#{1,6}\s+)")


def strict_lines(text: str) -> list[str] | None:
    """The response lines as the original scripts saw them.

    A full decoded output (prompt + continuation, as the original stored it) is split on blank lines and
    segment 3 (``### Response: \\n<output>``) is taken without its first line; a bare continuation's
    segment is its text up to the first blank line. ``None`` when the original would have skipped it.

    >>> strict_lines("a|b|c\\n\\nExample 6: x|y|z")
    ['a|b|c']
    >>> strict_lines("Below is an instruction that describes a task, paired with an input.\\n\\n### "
    ...              "Instruction: \\nI\\n\\n### Input: \\nC\\n\\n### Response: \\na|b|c\\n\\nmore")
    ['a|b|c']
    """
    if text.startswith(INFERENCE_HEADER):
        segments = text.split("\n\n")
        if len(segments) < 4:
            return None
        return segments[3].split("\n")[1:]
    return text.split("\n\n")[0].split("\n")


def strict_response(text: str) -> str:
    """Everything after the first ``### Response:`` line of an echoed prompt, else `text` itself."""
    match = _RESPONSE_ECHO.search(text) if text.startswith(INFERENCE_HEADER) else None
    return text[match.end() :] if match else text


def answer_regions(text: str) -> list[str]:
    """Candidate answer regions of a model output, most likely first.

    The output is taken after any echoed ``### Response:`` and ends where the model starts a new example
    or section (``Example 6:``, ``### Instruction``, ``Explanation:``; a marker at the very start is the
    model answering in the example format and ends nothing). The first region is that text without a
    leading answer label, cut where it restates an input (``context:``, ``Question:``...); then, for
    outputs that imitate the example format (``context: ... response: a|b|c``), the text after each
    ``response:``/``answer:``/``output:``.

    >>> answer_regions(" **Answer:** participates\\n\\nExample: Context: x Response: binds")
    ['participates\\n\\n']
    >>> answer_regions("context: Aspirin caused rash. response: Aspirin|effect|rash")
    ['Aspirin|effect|rash']
    """
    body = _FENCE.sub("", text)
    echo = _RESPONSE_ECHO.search(body)
    if echo:
        body = body[echo.end() :]
    body = body.lstrip()
    end = next((m.start() for m in _HARD_SECTION.finditer(body) if m.start() > 0), len(body))
    body = body[:end]
    leading = _HARD_SECTION.match(body)
    first = body[leading.end() :] if leading else body
    regions = [_cut_at_input(_ANSWER_LABEL.sub("", first.lstrip(), count=1))]
    regions.extend(_cut_at_input(body[m.end() :]) for m in _LABEL_ANYWHERE.finditer(body))
    return list(dict.fromkeys(region for region in regions if region.strip()))


def _cut_at_input(text: str) -> str:
    text = text.lstrip(" \t\n*_")
    match = _SOFT_SECTION.search(text)
    return text[: match.start()] if match else text


def clean_line(line: str) -> str:
    """A line without markdown decoration: bullets, numbering, headings, bold/italic marks, backticks.

    >>> clean_line("  - **Aspirin** | effect | `rash`")
    'Aspirin | effect | rash'
    """
    line = _BULLET.sub("", line)
    line = line.replace("**", "").replace("__", "").replace("`", "")
    return _ANSWER_LABEL.sub("", line).strip()


def answer_lines(region: str) -> list[str]:
    """The non-empty cleaned lines of a region."""
    return [cleaned for cleaned in (clean_line(line) for line in region.splitlines()) if cleaned]
