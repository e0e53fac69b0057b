"""``robust`` (the default): recover the answer from realistic model output.

Handles extra prose, markdown (bullets, bold, tables, code fences), casing, several triples, echoed
``### Response:`` / ``Response:`` prefixes, a model that goes on to write the next example, option text
instead of a letter, and True/False/yes/no synonyms mapped onto the dataset's labels. Canonical forms:
triples ``h|r|t`` lines (trimmed, single-spaced, original casing), QA ``(A)``, other tasks the label
string from `labels`. Without `labels`, a closed-label task returns the cleaned first word (link
prediction) or first line (classification, NLI) of the answer. Each task type owns its rule
(`parse_robust` of its `biorab.tasks` module), built from the readers of this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biorab.common.records import Prediction
from biorab.common.registry import PARSERS
from biorab.parsing.base import TaskRules


@PARSERS.register("robust")
class RobustParser:
    """Recovers the answer from realistic output (see the module docstring) with the task's robust rule."""

    def parse(
        self,
        rules: TaskRules,
        text: str,
        *,
        labels: Sequence[str] | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Prediction:
        return rules.parse_robust(text, labels, options)
