"""Label log-probabilities from an OpenAI-compatible ``/v1/completions`` server, the way
lm-evaluation-harness scores with such servers: send ``prompt + label`` with ``echo`` and ``logprobs``,
then sum the log-probs of the echoed tokens that belong to the label.

vLLM's server supports this; chat endpoints and OpenAI's current models do not, so the openai backend
uses it only with ``label_scoring: echo``.
"""

from __future__ import annotations

from typing import Any

from biorab.generation.base import continuation_text


def echo_body(model: str, prompt_text: str, label: str, extra: dict[str, Any]) -> dict[str, Any]:
    """The request that scores `label` after `prompt_text` (one generated token, which is ignored)."""
    return {
        "model": model,
        "prompt": prompt_text + continuation_text(prompt_text, label),
        "max_tokens": 1,
        "temperature": 0.0,
        "echo": True,
        "logprobs": 1,
        **extra,
    }


def label_logprob(payload: dict[str, Any], prompt_text: str, label: str) -> float:
    """Sum of the log-probs of the echoed tokens that start inside the label's characters.

    Raises:
        KeyError, IndexError, TypeError, ValueError: the payload lacks echoed log-probs (the caller
            treats that as a malformed response).
    """
    logprobs = payload["choices"][0]["logprobs"]
    offsets, values = logprobs["text_offset"], logprobs["token_logprobs"]
    start = len(prompt_text)
    end = start + len(continuation_text(prompt_text, label))
    picked = [v for offset, v in zip(offsets, values, strict=False) if start <= offset < end]
    if not picked or any(v is None for v in picked):
        raise ValueError(f"no echoed log-probs for the label {label!r}")
    return float(sum(picked))
