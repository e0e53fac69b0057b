"""The thinking budget (`ThinkingParams.token_budget`) on the offline vLLM engine, in two passes as on
transformers: every generation request runs up to the budget; a reply cut there with its reasoning still
open gets the close marker appended and a second request on the extended prompt (its own `max_tokens`,
the answer budget); a reply that closed its reasoning and was cut in its answer continues for what is left
of `max_tokens`. Rows under structured outputs (the grammar decides the whole reply) run in one pass.

vLLM 0.29 also has a per-request ``SamplingParams.thinking_token_budget``, but the engine refuses it unless
it was started with a reasoning parser that knows the model's thinking tokens (``reasoning_config``), which
the packaged SmolLM2 has none of; the two passes work for any model and match the transformers backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from biorab.generation.reasoning import ThinkingParams, continuation


def budgeted_outputs(generate: Callable[[list[dict[str, list[int]]], list[Any]], Sequence[Any]],
                     prompts: Sequence[dict[str, list[int]]], sampling: Callable[[int, int], Any],
                     max_tokens: int, guided: Sequence[bool], thinking: ThinkingParams,
                     tokenizer: Any) -> list[Any]:
    """The engine outputs (`RequestOutput`-shaped: ``prompt_token_ids`` and ``outputs[0]`` with ``text``,
    ``token_ids``, ``finish_reason``) of `prompts`, with the thinking budget.

    `generate(prompts, sampling)` is the engine call (``LLM.generate``); `sampling(row, limit)` the row's
    vLLM ``SamplingParams`` with ``max_tokens=limit``; `guided`: the rows under structured outputs. A
    merged output's text is the decoded reply (reasoning, marker, answer), its tokens all of them, the
    forced marker included."""
    budget = thinking.token_budget
    assert budget is not None
    first = generate(list(prompts), [sampling(i, max_tokens if guided[i] else budget)
                                     for i in range(len(prompts))])
    todo: dict[int, tuple[list[int], int]] = {}  # row -> (reply so far, answer tokens it may add)
    for i, out in enumerate(first):
        done = out.outputs[0]
        if not guided[i] and done.finish_reason == "length":
            more = continuation(list(done.token_ids), done.text, max_tokens, thinking, tokenizer)
            if more is not None:
                todo[i] = more
    if not todo:
        return list(first)
    rows = list(todo)
    second = generate([{"prompt_token_ids": list(prompts[i]["prompt_token_ids"]) + todo[i][0]} for i in rows],
                      [sampling(i, todo[i][1]) for i in rows])
    merged = list(first)
    for i, out in zip(rows, second, strict=True):
        ids = todo[i][0] + list(out.outputs[0].token_ids)
        completion = SimpleNamespace(text=tokenizer.decode(ids, skip_special_tokens=True), token_ids=ids,
                                     finish_reason=out.outputs[0].finish_reason)
        merged[i] = SimpleNamespace(prompt_token_ids=first[i].prompt_token_ids, outputs=[completion])
    return merged
