"""The generation protocol every backend implements, and the sampling parameters they all take.

A backend turns rendered `Prompt`s into `Generation`s, one per prompt and in the same order. It exposes a
`model_digest` (base model + adapter) that, together with `SamplingParams.digest()`, the prompt and its
constraint, keys the generation cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import Field

from biorab.common.params import Params
from biorab.common.records import Generation, Prompt


class SamplingParams(Params):
    """How to decode; recorded with every run and part of every generation cache key.

    Attributes:
        max_tokens: maximum number of new tokens per prompt.
        temperature: 0 means greedy decoding; above 0 samples (seeded by `seed`).
        top_p: nucleus sampling mass (only used when sampling).
        seed: seed of the sampler (and of the fake backend's choices).
        stop: stop strings for every prompt; each prompt's own `Prompt.stop` is added (see `stops_for`).
            The output is cut before the first stop string, which is not included.
        score_labels: for prompts whose constraint has `choices`, also return each label's
            log-probability as a continuation of the prompt (`Generation.label_logprobs`).
        constrained: for prompts with a constraint, restrict the answer to it (guided decoding: the
            argmax label or a grammar for `choices`, a grammar for a regex; vLLM's structured outputs).
            On by default; ``false`` generates freely (the switch that turns guided decoding off).
    """

    max_tokens: int = Field(default=64, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0
    stop: tuple[str, ...] = ()
    score_labels: bool = False
    constrained: bool = True

    def stops_for(self, prompt: Prompt) -> tuple[str, ...]:
        """The stop strings for `prompt`: the global ones, then the prompt's own, without duplicates
        or empty strings (an empty stop string would cut every output to nothing)."""
        merged: dict[str, None] = {}
        for stop in (*self.stop, *prompt.stop):
            if stop:
                merged[stop] = None
        return tuple(merged)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def digest(self) -> str:
        """A stable content digest of these params (for cache keys)."""
        return stable_digest(self.model_dump(mode="json"))


@runtime_checkable
class Backend(Protocol):
    """A generation backend: `generate` returns one `Generation` per prompt, in order."""

    @property
    def model_digest(self) -> str:
        """Digest of what determines the outputs besides the prompt: model weights id, adapter, dtype."""
        ...

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """Generate for every prompt. Failures of single rows are returned as `Generation(error=...)`;
        an exception means the backend itself is unusable."""
        ...

    def close(self) -> None:
        """Free the model, threads and connections. Calling it twice is harmless."""
        ...


def stable_digest(obj: Any) -> str:
    """sha256 hex digest of `obj` as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def continuation_text(prompt_text: str, label: str) -> str:
    """The text appended to a prompt when scoring `label` as its continuation: one leading space unless
    the prompt ends in whitespace, the way a model writes ``"Answer: y"``.

    >>> continuation_text("Answer:", "y"), continuation_text("Answer: ", "y")
    (' y', 'y')
    """
    return label if not prompt_text or prompt_text[-1].isspace() else f" {label}"


def model_input_text(prompt: Prompt, tokenizer: Any, *, chat: bool) -> str:
    """The text a local backend feeds its model: the prompt itself, or (``chat``) the prompt as one user
    message wrapped in the tokenizer's chat template, ending with the assistant's turn."""
    if not chat:
        return prompt.text
    messages = [{"role": "user", "content": prompt.text}]
    text: str = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return text


def truncate_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """Cut `text` before the earliest occurrence of any stop string.

    Returns:
        The (possibly) truncated text and whether a stop string was found.

    >>> truncate_at_stop("a|b\\nExample 2", ["\\n"])
    ('a|b', True)
    >>> truncate_at_stop("abc", ["x"])
    ('abc', False)
    """
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
