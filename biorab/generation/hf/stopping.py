"""Per-row stop strings for batched transformers generation.

`transformers`' own ``stop_strings`` applies one set to the whole batch; prompts in one batch may carry
different stops (`Prompt.stop`), so this criterion keeps one set per row and marks a row done as soon as
its decoded continuation contains one of its stop strings. Finished rows are then padded by `generate`,
which is why the step at which each row stopped is recorded: it gives exact completion token counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import StoppingCriteria


class RowStopStrings(StoppingCriteria):
    """Marks row ``i`` finished once its new text contains any of ``stops[i]``.

    Args:
        tokenizer: decodes the new tokens (special tokens skipped, as in the returned text).
        stops: one tuple of stop strings per row (may be empty).
        prompt_length: length of the (left-padded) prompt block; new tokens start there.
    """

    def __init__(self, tokenizer: Any, stops: Sequence[Sequence[str]], prompt_length: int) -> None:
        self.tokenizer = tokenizer
        self.stops = [tuple(s for s in row if s) for row in stops]
        self.prompt_length = prompt_length
        # Number of new tokens each row had generated when its stop string appeared (None: not stopped).
        self.stopped_after: list[int | None] = [None] * len(stops)

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        n_new = input_ids.shape[1] - self.prompt_length
        for row, stops in enumerate(self.stops):
            if self.stopped_after[row] is not None:
                done[row] = True
                continue
            if not stops:
                continue
            # Decoding the whole continuation (not just the last token) catches stop strings that span
            # token boundaries; continuations are short, so this is cheap next to a forward pass.
            text = self.tokenizer.decode(input_ids[row, self.prompt_length :], skip_special_tokens=True)
            if any(stop in text for stop in stops):
                self.stopped_after[row] = n_new
                done[row] = True
        return done  # type: ignore[return-value]
