"""Delete/Invert-Link answers: which of the four response options the model chose (spec §9.4, §9.5).

Two modes:

* ``strict_original`` reproduces the original parser, including its known failure: an answer that gives
  only the option key ("Summary: Partially Blocked") is shorter than the options, so the heading is
  skipped and the explanation is matched instead, which can pick the wrong option.
* ``robust`` (default) first looks for an explicit option key ("Partially Blocked", "Contraindicated", ...)
  on the first line of the last "Summary" section (or in a short answer); only when there is exactly one
  does it take it, otherwise it falls back to the original procedure.

An answer no option matches (TF-IDF cosine < 0.4) gives ``None``: unparsed, and wrong in every score.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from biorab.drugmech.prompts.edit_link import editlink_options
from biorab.drugmech.prompts.moa_text import OPTION_WRAP_WIDTH
from biorab.drugmech.tfidf import TfidfMatcher

STRICT_ORIGINAL = "strict_original"
ROBUST = "robust"
PARSER_MODES: tuple[str, ...] = (STRICT_ORIGINAL, ROBUST)
MIN_SCORE = 0.4

_SUMMARY = re.compile(r"^#*\s*[*]*\s*Summary[*]*:?", re.IGNORECASE | re.MULTILINE)
_LEAD_STARS = re.compile(r"^[*\s]*\*+\s*")
_TRAIL_STARS = re.compile(r"\s*\*+$")
# Explicit key mentions for the robust mode; separators vary ("Contra-indicated", "Contraindicated").
_KEY_PATTERNS: dict[str, re.Pattern[str]] = {
    "No Effect": re.compile(r"\bno[\s_-]*effect\b", re.IGNORECASE),
    "Partially Blocked": re.compile(r"\bpartially[\s_-]*blocked\b", re.IGNORECASE),
    "Fully Blocked": re.compile(r"\bfully[\s_-]*blocked\b", re.IGNORECASE),
    "Contra-indicated": re.compile(r"\bcontra[\s_-]*indicated\b", re.IGNORECASE),
    "Unknown": re.compile(r"\bunknown\b", re.IGNORECASE),
}


@dataclass(frozen=True)
class OptionChoice:
    """The parsed option: its key (None when unparsed), the matched paragraph and the TF-IDF score."""

    option: str | None
    para: str
    score: float


def option_match(
    text: str, options: Mapping[str, str], *, min_score: float = MIN_SCORE
) -> tuple[str | None, float]:
    """The option whose text is most similar to `text` (char 2-5-gram TF-IDF over casefolded texts).

    Returns ``(key, score)``, or ``(None, best score)`` if the best score is below `min_score`; on ties the
    option listed first wins.

    >>> option_match("yes.", {"YES": "YES.", "NO": "NO supporting beneficial Mechanism of Action found."})
    ('YES', 1.0)
    """
    keys = list(options)
    matcher = TfidfMatcher([options[k].casefold() for k in keys], ngram_range=(2, 5))
    scores = matcher.similarities(text.casefold())
    best = max(range(len(keys)), key=lambda i: (scores[i], -i))
    score = round(scores[best], 12)  # hide float noise in exact matches
    return (keys[best] if score >= min_score else None), score


def wrapped_options(*, with_unknown: bool = False) -> dict[str, str]:
    """The option texts as the prompt renders them: wrapped at 90 columns, without the ``"* "`` bullet."""
    return {
        k: "\n".join(textwrap.wrap(v, width=OPTION_WRAP_WIDTH))
        for k, v in editlink_options(with_unknown=with_unknown).items()
    }


def _last_paragraph(text: str, min_len: int) -> str:
    """Walk lines from the end, accumulating length, and stop at an empty line once past `min_len`."""
    kept: list[str] = []
    total = 0
    for line in reversed(text.splitlines()):
        if not line.strip() and total > min_len:
            break
        kept.append(line)
        total += len(line.strip())
    return "\n".join(reversed(kept))


def extract_option_para(text: str, options: Mapping[str, str]) -> str:
    """The paragraph of an answer that states the chosen option (the original's procedure)."""
    min_len = int(0.8 * min(len(o) for o in options.values()))
    max_len = int(1.4 * max(len(o) for o in options.values()))
    if len(text) < min_len:
        return text
    para = None
    for m in reversed(list(_SUMMARY.finditer(text))):
        if len(text) - m.end() >= min_len:
            para = text[m.end() + 1 :].strip()  # +1 skips one character after the heading, as the original
            break
    if para is None:
        para = _last_paragraph(text, min_len)
    lines = [line.strip() for line in para.splitlines() if line.strip()]
    para = "\n".join(_TRAIL_STARS.sub("", _LEAD_STARS.sub("", line)) for line in lines)[:max_len]
    starts = [o for o in options.values() if para.lower().startswith(o.lower())]
    if starts:
        para = para[: max(len(o) for o in starts)]
    return para


def explicit_key(text: str, keys: list[str]) -> str | None:
    """The one option key named on the first line of the last Summary section (or anywhere in a short
    answer without one); None when there is none or more than one."""
    heads = list(_SUMMARY.finditer(text))
    if heads:
        rest = text[heads[-1].end() :]
        lines = [line for line in rest.splitlines() if line.strip(" \t*#:-")]
        scope = lines[0] if lines else ""
    else:
        scope = text
    found = [k for k in keys if k in _KEY_PATTERNS and _KEY_PATTERNS[k].search(scope)]
    return found[0] if len(found) == 1 else None


def parse_option(text: str, *, mode: str = ROBUST, with_unknown: bool = False) -> OptionChoice:
    """Parse a Delete/Invert-Link answer into one of the option keys.

    Args:
        text: The model's answer (message content).
        mode: ``strict_original`` or ``robust``.
        with_unknown: The prompt offered the 5th "Unknown" option.

    Never raises on model output; an answer that matches nothing gives ``option=None``.
    """
    if mode not in PARSER_MODES:
        raise ValueError(f"unknown parser mode {mode!r}; allowed: {', '.join(PARSER_MODES)}")
    options = wrapped_options(with_unknown=with_unknown)
    if mode == ROBUST:
        key = explicit_key(text, list(options))
        short = len(text) < int(0.8 * min(len(o) for o in options.values()))
        if key is not None and (short or _SUMMARY.search(text)):
            return OptionChoice(key, text, 1.0)
    para = extract_option_para(text, options)
    option, score = option_match(para, options)
    return OptionChoice(option, para, score)
