"""OpenAI chat completion bodies (plain and server-sent-event chunks) for a RAL answer."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from biorab.ral import Answer


def chat_completion(answer: Answer, model: str, rid: str, extension: dict[str, Any]) -> dict[str, Any]:
    """The ``chat.completion`` object; `extension` goes into the ``biorab`` field."""
    gen = answer.generation
    message = {"role": "assistant", "content": gen.text}
    if gen.reasoning is not None:  # a split thinking reply: the reasoning as vLLM's server returns it
        message["reasoning_content"] = gen.reasoning
    return {"id": f"chatcmpl-{rid}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish_reason(gen.finish_reason), "logprobs": None}],
            "usage": usage(answer), "biorab": extension}


def chat_chunk(answer: Answer, model: str, rid: str, extension: dict[str, Any]) -> Iterator[str]:
    """The answer as ``chat.completion.chunk`` events, then ``[DONE]``. The backends return whole
    generations, so the text is sent in word pieces once complete (the protocol, not token latency);
    the last chunk carries the finish reason, usage and the ``biorab`` extension."""
    base = {"id": f"chatcmpl-{rid}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(data)}\n\n"

    yield event({"role": "assistant", "content": ""})
    for piece in pieces(answer.generation.text):
        yield event({"content": piece})
    yield event({}, finish_reason(answer.generation.finish_reason), usage=usage(answer), biorab=extension)
    yield "data: [DONE]\n\n"


def finish_reason(reason: str | None) -> str:
    return "length" if reason == "length" else "stop"


def usage(answer: Answer) -> dict[str, int]:
    g = answer.generation
    return {"prompt_tokens": g.prompt_tokens, "completion_tokens": g.completion_tokens,
            "total_tokens": g.prompt_tokens + g.completion_tokens}


def pieces(text: str) -> list[str]:
    """Words with their following whitespace, so that the pieces concatenate back to `text` exactly.

    >>> pieces(" a b\\n")
    [' ', 'a ', 'b\\n']
    """
    return re.findall(r"\S+\s*|\s+", text)
