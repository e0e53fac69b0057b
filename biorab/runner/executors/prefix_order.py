"""Rows in prompt-prefix order, so that prompts sharing a prefix reach the LLM in the same batches.

A retrieving prompt starts with the instruction (the dataset's template) and then the retrieved examples;
the instance comes last. Cells are already ordered by template (`biorab.sweep.expand.prefix_key`), but
within the rows of one instruction, two instances that retrieved the same example share a much longer
prefix (instruction + example), which vLLM's prefix cache reuses only when they run close together. So,
after retrieval and before batching, the rows of each instruction are sorted by their retrieved examples
(key and value, best hit first); rows of the same examples from different cells (the labeled and a
counterfactual corpus retrieve the same keys) end up side by side.

Only the order changes: the same rows are computed with the same prompts and generation keys, and
written to their own cells (`order` keeps each row's place in its slice). Rows that retrieve nothing keep
their relative order.

It is on by default only where it pays: a backend with a prefix cache (vLLM), see
`biorab.execution.ExecutionRequest.prefix_ordered`; the runner hands `order_by_prefix` to the executors as
the request's `order`. Executors take ``prefix_order=True/False`` to force it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from biorab.ral.specs.cell_records import CellPlan
from biorab.ral.specs.rows import row_hits

Examples = tuple[tuple[str, str], ...]


def order_by_prefix(rows: Sequence[dict[str, Any]], plans: Mapping[str, CellPlan]) -> list[dict[str, Any]]:
    """`rows` (with their ``hits`` filled) grouped by instruction in first-seen order, and within an
    instruction sorted by retrieved examples; ties and non-retrieving rows keep their input order."""
    instructions: dict[tuple[str, str], int] = {}
    keyed: list[tuple[int, Examples, int, dict[str, Any]]] = []
    for i, row in enumerate(rows):
        plan = plans[row["cell_id"]]
        group = instructions.setdefault(instruction_of(plan), len(instructions))
        keyed.append((group, retrieved_examples(row) if plan.retrieves else (), i, row))
    keyed.sort(key=lambda item: item[:3])
    return [row for *_, row in keyed]


def instruction_of(plan: CellPlan) -> tuple[str, str]:
    """What a cell's prompts start with: a dataset slice's template; a cell whose source renders its own
    prompts (``renders=False``) is a group of its own."""
    if plan.dataset is None or plan.retrieval is None:
        return (plan.source, plan.cell_id)
    return (plan.dataset, plan.retrieval.template)


def retrieved_examples(row: dict[str, Any]) -> Examples:
    """The row's retrieved examples as they enter the prompt: (key, value) of each hit, best first."""
    return tuple((h.key, h.value or "") for h in row_hits(row))
