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

from biorab.params import Params
from biorab.records import Generation


class ThinkingParams(Params):
    """How a backend treats a thinking model's output.

    Attributes:
        split: split ``<think>…</think>`` reasoning from the answer (off: the text is kept whole).
        open_marker / close_marker: the model's markers.

    On these backends the thinking is bounded only by `SamplingParams.max_tokens` (reasoning and answer
    together); a separate budget exists only through a vLLM server (the openai backend's
    `thinking_token_budget`).
    """

    split: bool = False
    open_marker: str = "<think>"
    close_marker: str = "</think>"


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


def apply_split(gen: Generation, thinking: ThinkingParams) -> Generation:
    """`gen` with its reasoning moved out of `text` (unchanged when splitting is off, or the backend
    already filled `reasoning`, or the row failed)."""
    if not thinking.split or gen.error is not None or gen.reasoning is not None:
        return gen
    reasoning, answer = split_reasoning(gen.text, thinking.open_marker, thinking.close_marker)
    if reasoning is None:
        return gen
    return replace(gen, text=answer, reasoning=reasoning)
