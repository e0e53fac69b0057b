"""The YES/NO decision of Add-Link negatives (spec §9.3).

Every line (last first) that starts with YES or NO is matched against the two canonical answers, "YES."
and "NO supporting beneficial Mechanism of Action found."; the best score per answer is kept, and the
answer is NO when NO's best score beats YES's. The two parser modes differ as in `parsing_moa`: robust
strips markdown first and needs YES/NO as a whole word ("Note: ..." is not a NO).
"""

from __future__ import annotations

from dataclasses import dataclass

from biorab.drugmech.parsing.moa_answer import clean_line, yes_no_of
from biorab.drugmech.parsing.option_answer import MIN_SCORE, PARSER_MODES, ROBUST, option_match
from biorab.drugmech.prompts.texts import AL_NEGATIVE_RESPONSE

YES_NO_OPTIONS: dict[str, str] = {"YES": "YES.", "NO": AL_NEGATIVE_RESPONSE}


@dataclass(frozen=True)
class YesNoDecision:
    """`answer` is ``"NO"`` (no MoA found), ``"YES"``, or None when no line matched (unparsed)."""

    answer: str | None
    best_yes: float
    best_no: float


def decide_yes_no(text: str, *, mode: str = ROBUST) -> YesNoDecision:
    """Decide an Add-Link negative's answer.

    >>> decide_yes_no("Some reasoning.\\nNO supporting beneficial Mechanism of Action found.").answer
    'NO'
    """
    if mode not in PARSER_MODES:
        raise ValueError(f"unknown parser mode {mode!r}; allowed: {', '.join(PARSER_MODES)}")
    best = {"YES": 0.0, "NO": 0.0}
    for line in reversed(text.strip().splitlines()):
        if yes_no_of(line, mode) is None:
            continue
        key, score = option_match(clean_line(line, mode), YES_NO_OPTIONS, min_score=MIN_SCORE)
        if key is not None:
            best[key] = max(best[key], score)
    if best["NO"] > best["YES"]:
        answer: str | None = "NO"
    elif best["YES"] > 0:
        answer = "YES"
    else:
        answer = None
    return YesNoDecision(answer, best["YES"], best["NO"])
