"""A thinking model's reasoning, split from its answer by the model's own markers (``<think>…</think>``),
the one rule every backend applies (transformers, vLLM offline, the openai backend when the server has no
reasoning parser), so the parsers read the answer alone.

Qwen3 thinking models open ``<think>`` in the chat template, so their output often holds only the closing
marker; a reply cut before the closing marker (a thinking budget or ``max_tokens`` reached) is all
reasoning and no answer. Stop strings of a prompt apply to the whole reply on the local backends (the
engine stops on them), so a thinking model's prompts should not stop on text its reasoning may contain.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from biorab.common.params import Params
from biorab.common.records import Generation


class ThinkingParams(Params):
    """How a backend treats a thinking model's output.

    Attributes:
        split: split ``<think>…</think>`` reasoning from the answer (off: the text is kept whole).
        open_marker / close_marker: the model's markers.
        token_budget: the most tokens the reasoning may take (None: no budget, `SamplingParams.max_tokens`
            bounds reasoning and answer together). A reply still open after `token_budget` tokens gets
            `close_marker` appended and is continued for the answer, which `max_tokens` then bounds
            (transformers and vLLM offline: a second generate call on the extended prompt; the fake
            backend: its `think` cut to `token_budget` words). Independent of `split`. Through a vLLM
            server the same budget is the openai backend's `thinking_token_budget`.
    """

    split: bool = False
    open_marker: str = "<think>"
    close_marker: str = "</think>"
    token_budget: int | None = Field(default=None, ge=1)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # without a budget the dump is the one from before the budget existed: cache digests that hash
        # these params (fake backend, split thinking) stay as they were
        out: dict[str, Any] = handler(self)
        if out.get("token_budget") is None:
            out.pop("token_budget", None)
        return out

    @property
    def keys_reply(self) -> bool:
        """Whether these params change a stored reply (so the generation cache key must hold them)."""
        return self.split or self.token_budget is not None


def split_reasoning(text: str, open_marker: str = "<think>", close_marker: str = "</think>"
                    ) -> tuple[str | None, str]:
    """(reasoning, answer) of a reply; reasoning is None when the reply has no marker.

    >>> split_reasoning("<think>a drug binds</think>\\n\\nYES. Drug: x")
    ('a drug binds', 'YES. Drug: x')
    >>> split_reasoning("it binds</think>NO")      # the template opened <think>
    ('it binds', 'NO')
    >>> split_reasoning("<think>still thinking")   # cut before the end of the reasoning: no answer
    ('still thinking', '')
    >>> split_reasoning("YES.")
    (None, 'YES.')
    """
    end = text.find(close_marker)
    if end >= 0:
        head, answer = text[:end], text[end + len(close_marker):]
        start = head.find(open_marker)
        reasoning = head[start + len(open_marker):] if start >= 0 else head
        return reasoning.strip(), answer.strip()
    start = text.find(open_marker)
    if start >= 0 and not text[:start].strip():
        return text[start + len(open_marker):].strip(), ""
    return None, text


def continuation(tokens: list[int], text: str, max_tokens: int, thinking: ThinkingParams,
                 tokenizer: Any) -> tuple[list[int], int] | None:
    """What a reply cut at the thinking budget (`tokens`, decoded `text`) still needs: (the reply to
    continue from, the answer tokens it may add), or None (its answer already took `max_tokens`).

    Still in its reasoning (no `close_marker`): the marker's tokens are appended and the whole answer
    budget is left; reasoning closed within the budget and the answer begun: what is left of it."""
    if thinking.close_marker not in text:
        marker = list(tokenizer(thinking.close_marker, add_special_tokens=False)["input_ids"])
        return tokens + marker, max_tokens
    left = max_tokens - (len(tokens) - tokens_through(tokens, thinking.close_marker, tokenizer))
    return (tokens, left) if left > 0 else None


def tokens_through(tokens: list[int], marker: str, tokenizer: Any) -> int:
    """How many of `tokens` it takes for their text to hold `marker` (their whole text holds it): the
    reply's reasoning, marker included, in tokens. A binary search (holding it is monotone in the length)."""
    lo, hi = 1, len(tokens)
    while lo < hi:
        mid = (lo + hi) // 2
        if marker in tokenizer.decode(tokens[:mid], skip_special_tokens=True):
            hi = mid
        else:
            lo = mid + 1
    return lo


def apply_split(gen: Generation, thinking: ThinkingParams) -> Generation:
    """`gen` with its reasoning moved out of `text` (unchanged when splitting is off, or the backend
    already filled `reasoning`, or the row failed)."""
    if not thinking.split or gen.error is not None or gen.reasoning is not None:
        return gen
    reasoning, answer = split_reasoning(gen.text, thinking.open_marker, thinking.close_marker)
    if reasoning is None:
        return gen
    return replace(gen, text=answer, reasoning=reasoning)


def thinking_key(params: object) -> str | None:
    """The config key that makes a backend's validated `params` a thinking configuration, or None: params
    with their own rule say it (``thinking_key()``, the openai client's reasoning settings); else their
    ``thinking`` block, when it splits or budgets the reasoning (transformers, vllm, fake)."""
    own = getattr(params, "thinking_key", None)
    if callable(own):
        found = own()
        return None if found is None else str(found)
    thinking = getattr(params, "thinking", None)
    return "backend.params.thinking" if isinstance(thinking, ThinkingParams) and thinking.keys_reply else None
