"""The one rule every local engine answers a closed label list by: the best-scoring label.

Both in-process engines (transformers, vLLM) score each label as a continuation of its prompt (summed
token log-probs, `biorab.generation.base.continuation_text`) and, for a constrained prompt answered by
``choices_via: score``, return the argmax label as the answer, so the two pick a label alike; only the
numerics of the two engines (kernels, batch shapes) can still tell them apart.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from biorab.common.records import Generation


def best_label(logprobs: dict[str, float]) -> str:
    """The label with the highest log-prob; the first label wins a tie (label order).

    >>> best_label({"y": -1.0, "n": -1.0, "maybe": -3.0})
    'y'
    """
    return max(logprobs, key=logprobs.__getitem__)


def with_label_scores(
    gen: Generation | None,
    logprobs: dict[str, float],
    *,
    constrained: bool,
    tokenizer: Any,
    prompt_tokens: int,
    batch_size: int | None,
) -> Generation:
    """Attach label log-probs; for argmax rows (`constrained`, or no generation) the answer is the best
    label (`batch_size` is then the scoring pass's, which also shapes the numerics)."""
    if constrained or gen is None:
        best = best_label(logprobs)
        completion = len(tokenizer(best, add_special_tokens=False)["input_ids"])
        return Generation(text=best, prompt_tokens=prompt_tokens, completion_tokens=completion,
                          finish_reason="stop", label_logprobs=logprobs, batch_size=batch_size)  # fmt: skip
    return dataclasses.replace(gen, label_logprobs=logprobs)
