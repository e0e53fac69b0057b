"""The ``openai`` backend's params, the model profile (does this model reason?), the sampling checks a
reasoning model needs, and the exact request body: all pure, so `biorab validate`/`plan` and the tests use
them without the ``openai`` package.

OpenAI's reasoning models (the o1, o3 and o4 families and gpt-5, by name, or ``reasoning: true``) refuse
``max_tokens`` (they take ``max_completion_tokens``, which also bounds the hidden reasoning tokens), refuse a
temperature or top_p other than 1, and take ``reasoning_effort``. Other models never get ``reasoning_effort``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from biorab.common.errors import ConfigError
from biorab.common.params import Params
from biorab.common.records import Prompt
from biorab.generation.base import SamplingParams, stable_digest

#: OpenAI model names that reason: o1/o3/o4 (``o3-mini-2025-01-31``, ``o4-mini``) and the gpt-5 family.
_REASONING_NAME = re.compile(r"^(?:[\w.-]+/)?(?:o1|o3|o4)(?:$|-)|^(?:[\w.-]+/)?gpt-5(?:$|[-.])")


class Price(Params):
    """US dollars per million tokens; reasoning tokens are billed as output (OpenAI counts them in
    ``completion_tokens``). Put the tier's price here (the flex tier is cheaper than the default one)."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class OpenAIParams(Params):
    """Params of the ``openai`` backend (documented on `biorab.generation.openai.client.OpenAIBackend`)."""

    base_url: str = "https://api.openai.com/v1"
    model: str
    chat: bool = False
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    backoff_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=20.0, ge=0)
    backoff_jitter_s: float | None = Field(default=None, ge=0)
    retry_after_max_s: float = Field(default=120.0, ge=0)
    concurrency: int = Field(default=8, ge=1, le=256)
    structured_outputs: Literal["off", "vllm", "vllm_legacy"] = "off"
    label_scoring: Literal["off", "echo"] = "off"
    extra_body: dict[str, Any] = Field(default_factory=dict)
    model_revision: str | None = None
    reasoning: bool | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    service_tier: Literal["auto", "default", "flex", "priority"] | None = None
    token_limit: Literal["send", "omit"] = "send"
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    think_split: bool = False
    thinking_token_budget: int | None = Field(default=None, ge=0)
    price: Price | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)

    @property
    def reasons(self) -> bool:
        """Whether the model is an OpenAI reasoning model (the flag, else its name)."""
        return self.reasoning if self.reasoning is not None else is_reasoning_model(self.model)

    def check_sampling(self, sampling: SamplingParams, *, path: str | Path | None = None) -> None:
        """`check_sampling` of these params (`biorab.runner.checks.validate` asks every backend's params)."""
        check_sampling(self, sampling, path=path)

    def thinking_key(self) -> str | None:
        """The key that makes this a thinking configuration (`biorab.generation.reasoning.thinking_key`):
        a split or budget of the server's reasoning, else a reasoning model (by flag or name)."""
        for key in ("think_split", "thinking_token_budget"):
            if getattr(self, key) not in (None, False):
                return f"backend.params.{key}"
        return "backend.params.model" if self.reasons else None


def params_digest(p: OpenAIParams) -> str:
    """The cache digest of an openai client with params `p`: the server's model, and what changes the
    stored reply (a reasoning model's effort; replies stored with their thinking split off)."""
    extra: dict[str, Any] = {}
    if p.reasons and p.reasoning_effort:
        extra["reasoning_effort"] = p.reasoning_effort
    if p.think_split:  # replies are stored split
        extra["think_split"] = True
    return stable_digest({"backend": "openai", "base_url": p.base_url, "model": p.model,
                          "revision": p.model_revision, "chat": p.chat, **extra})  # fmt: skip


def is_reasoning_model(model: str) -> bool:
    """OpenAI reasoning models by name.

    >>> [is_reasoning_model(m) for m in ("o3-mini-2025-01-31", "o4-mini", "gpt-5.1", "gpt-4o", "o3")]
    [True, True, True, False, True]
    """
    return bool(_REASONING_NAME.match(model))


def check_sampling(params: OpenAIParams, sampling: SamplingParams, *, path: str | Path | None = None) -> None:
    """Refuse, before any work, what the API would refuse on every row: a reasoning model takes no
    temperature or top_p other than 1, and needs the chat endpoint."""
    if not params.reasons:  # `reasoning_effort` is simply not sent (the paper's sweep sets it for all)
        return
    if not params.chat:
        raise ConfigError(f"{params.model} is a reasoning model: it answers only on the chat endpoint; set "
                          "chat: true", key="backend.params.chat", path=path)
    if sampling.temperature != 1.0:
        raise ConfigError(f"{params.model} is a reasoning model and refuses temperature "
                          f"{sampling.temperature}; set it to 1.0", key="sampling.temperature", path=path)
    if sampling.top_p != 1.0:
        raise ConfigError(f"{params.model} is a reasoning model and refuses top_p {sampling.top_p}; set it "
                          "to 1.0", key="sampling.top_p", path=path)
    if params.label_scoring != "off":
        raise ConfigError(f"{params.model} is a reasoning model: no echoed log-probs to score labels with",
                          key="backend.params.label_scoring", path=path)


def request_body(params: OpenAIParams, prompt: Prompt, sampling: SamplingParams) -> dict[str, Any]:
    """The JSON body sent for `prompt` (chat or completions), exactly as it goes on the wire."""
    body: dict[str, Any] = {"model": params.model}
    if params.chat:
        body["messages"] = [{"role": "user", "content": prompt.text}]
    else:
        body["prompt"] = prompt.text
    if params.token_limit == "send":
        body["max_completion_tokens" if params.reasons else "max_tokens"] = sampling.max_tokens
    body["temperature"] = sampling.temperature
    if not params.reasons:
        body["top_p"] = sampling.top_p
    body["seed"] = sampling.seed
    if params.presence_penalty is not None:
        body["presence_penalty"] = params.presence_penalty
    stops = sampling.stops_for(prompt)
    if stops and not params.reasons:  # reasoning models refuse `stop`: the stops are applied to the answer
        body["stop"] = list(stops)
    if params.reasons and params.reasoning_effort is not None:
        body["reasoning_effort"] = params.reasoning_effort
    if params.service_tier is not None:
        body["service_tier"] = params.service_tier
    if params.thinking_token_budget is not None:  # vLLM >= 0.29 servers started with a reasoning parser
        body["thinking_token_budget"] = params.thinking_token_budget
    if sampling.constrained and prompt.constraint is not None:
        body.update(structured_fields(params.structured_outputs, prompt))
    body.update(params.extra_body)
    return body


def structured_fields(style: str, prompt: Prompt) -> dict[str, Any]:
    """Extra request fields that restrict the answer to the prompt's constraint (vLLM servers)."""
    constraint = prompt.constraint
    if style == "off" or constraint is None:
        return {}
    spec: dict[str, Any] = (
        {"choice": list(constraint.choices)} if constraint.choices else {"regex": constraint.regex}
    )
    if style == "vllm":
        return {"structured_outputs": spec}
    return {f"guided_{key}": value for key, value in spec.items()}
