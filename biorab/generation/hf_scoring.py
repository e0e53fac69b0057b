"""Label scoring with a causal LM: log P(label | prompt) for each label of a closed label set.

This gives `Generation.label_logprobs` (for AUROC/AUPRC) and constrained decoding for closed label sets
(the answer is the best-scoring label). Each label is scored as a continuation of the prompt: the label's
tokens are appended to the prompt's tokens, with one leading space when the prompt does not end in
whitespace (so ``"Answer:"`` + ``"y"`` is scored as ``"Answer: y"``, the way the model would write it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from biorab.generation.base import continuation_text


@dataclass(frozen=True)
class ScoringRequest:
    """One prompt's token ids, its text (to choose the separator) and the labels to score."""

    prompt_ids: list[int]
    prompt_text: str
    labels: tuple[str, ...]


def score_labels(
    model: Any, tokenizer: Any, requests: Sequence[ScoringRequest], *, batch_size: int, pad_id: int
) -> list[dict[str, float]]:
    """Sum of token log-probabilities of each label as a continuation of its prompt.

    Returns one ``{label: logprob}`` per request, in order. The values are unnormalised (they do not sum
    to 1 over the labels): a metric that needs probabilities normalises them over the label set.
    """
    pairs: list[tuple[int, str, list[int]]] = []
    for index, request in enumerate(requests):
        for label in request.labels:
            cont = tokenizer(continuation_text(request.prompt_text, label), add_special_tokens=False)
            pairs.append((index, label, list(cont["input_ids"])))
    results: list[dict[str, float]] = [{} for _ in requests]
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        sequences = [requests[i].prompt_ids + cont for i, _, cont in chunk]
        scores = _continuation_logprobs(model, sequences, [len(c) for _, _, c in chunk], pad_id)
        for (index, label, _), value in zip(chunk, scores, strict=True):
            results[index][label] = value
    return results


@torch.inference_mode()
def _continuation_logprobs(
    model: Any, sequences: list[list[int]], cont_lengths: list[int], pad_id: int
) -> list[float]:
    """Log-prob of the last `cont_lengths[i]` tokens of each sequence, in one left-padded forward pass.

    Left padding puts every continuation at the end, so only the last ``max(cont) + 1`` positions need
    logits (`logits_to_keep`), which keeps memory at batch x continuation x vocab, not x prompt length.
    """
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
        mask[row, width - len(seq) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    keep = max(cont_lengths) + 1
    device = next(model.parameters()).device
    logits = model(
        input_ids=ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        logits_to_keep=keep,
        use_cache=False,
    ).logits.float()
    logprobs = torch.log_softmax(logits[:, :-1, :], dim=-1)  # position t predicts token t + 1
    out = []
    for row, length in enumerate(cont_lengths):
        targets = ids[row, width - length :].to(device)
        predicted = logprobs[row, logprobs.shape[1] - length :, :]
        out.append(float(predicted.gather(-1, targets.unsqueeze(-1)).sum()))
    return out
