"""The reasoning axes of a sweep (issue 43 item 5): ``reasoning_efforts`` and ``thinking_budgets``.

A value on these axes is a change to the model profile's backend params, so a cell with one is a run of its
own (`biorab.sweep.expand.expand_runs`) and a model of its own in the plan (`biorab.sweep.cost_estimate`).
The one place that turns a (profile, effort, budget) into backend params and a decode-token bound:

- ``reasoning_effort`` is an OpenAI reasoning model's request field (`openai_params.OpenAIParams`): only the
  ``openai`` backend with a reasoning model takes it (other models never get it sent, so a cell with it would
  repeat the cell without it; refused here).
- a thinking budget is ``thinking: {token_budget: N}`` on ``transformers``, ``vllm`` and ``fake`` (reasoning
  ≤ N tokens, then the answer ≤ ``max_tokens``: `biorab.generation.reasoning`) and ``thinking_token_budget``
  on ``openai`` (a vLLM server's field; its ``max_tokens`` bounds reasoning and answer together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from biorab.generation.capabilities import takes_param

#: The values ``reasoning_efforts`` takes (`openai_params.OpenAIParams.reasoning_effort`).
ReasoningEffort = Literal["minimal", "low", "medium", "high"]



@dataclass(frozen=True)
class ReasoningSetting:
    """One cell's value on the reasoning axes (None: the profile's own params, unchanged)."""

    effort: str | None = None
    budget: int | None = None

    @property
    def label(self) -> str:
        """``effort=high,budget=256`` ('' without a setting): what a plan row and a record name append."""
        parts = [f"effort={self.effort}"] if self.effort else []
        parts += [f"budget={self.budget}"] if self.budget is not None else []
        return ",".join(parts)

    @property
    def run_suffix(self) -> str:
        """The run-name suffix (file-name safe): ``__effort-high__think256``."""
        out = f"__effort-{self.effort}" if self.effort else ""
        return out + (f"__think{self.budget}" if self.budget is not None else "")


def with_reasoning(backend: str, params: dict[str, Any], setting: ReasoningSetting, *, profile: str
                   ) -> dict[str, Any]:
    """`params` (a profile's backend params) with `setting` applied; a setting the backend cannot take is a
    ValueError naming the profile."""
    out = dict(params)
    if setting.effort is not None:
        if not takes_param(backend, "reasoning_effort"):
            raise ValueError(f"model profile {profile!r}: reasoning_efforts apply to the openai backend only "
                             f"(its backend is {backend!r}); exclude the cell or use thinking_budgets")
        from biorab.generation.openai.params import OpenAIParams

        if not OpenAIParams.model_validate({**out, "reasoning_effort": setting.effort}).reasons:
            raise ValueError(f"model profile {profile!r} is not an OpenAI reasoning model (by name, or "
                             "params.reasoning: true): reasoning_effort would not be sent")
        out["reasoning_effort"] = setting.effort
    if setting.budget is not None:
        if takes_param(backend, "thinking_token_budget"):
            out["thinking_token_budget"] = setting.budget
        elif takes_param(backend, "thinking"):  # `biorab.generation.reasoning.ThinkingParams`
            out["thinking"] = {**(out.get("thinking") or {}), "token_budget": setting.budget}
        else:
            raise ValueError(f"model profile {profile!r}: backend {backend!r} takes no thinking budget")
    return out


def reasoning_bound(backend: str, params: dict[str, Any], max_tokens: int) -> tuple[int, str | None]:
    """Decode tokens per answer a run may take at most given its reasoning params, and a note where the
    reasoning's share is unknown before the run (None where the bound is all there is to say).

    >>> reasoning_bound("fake", {"thinking": {"token_budget": 32}}, 16)
    (48, None)
    >>> reasoning_bound("openai", {"model": "o4-mini", "reasoning_effort": "high"}, 100)[0]
    100
    >>> reasoning_bound("openai", {"model": "gpt-4o", "reasoning_effort": "medium"}, 100)  # never sent to it
    (100, None)
    """
    if takes_param(backend, "thinking"):
        budget = (params.get("thinking") or {}).get("token_budget")
        # reasoning cut at the budget, then the answer continued for up to max_tokens
        return (max_tokens + int(budget), None) if budget is not None else (max_tokens, None)
    if not takes_param(backend, "reasoning_effort"):  # nothing else bounds the reasoning
        return max_tokens, None
    effort, budget = params.get("reasoning_effort"), params.get("thinking_token_budget")
    if effort is not None and not _reasons(backend, params):
        return max_tokens, None  # a model that does not reason is never sent the effort (docs/generation.md)
    if effort is not None:
        return max_tokens, (f"reasoning_effort={effort}: its reasoning tokens are unknown before a run "
                            "(hidden, billed as output); the decode bound is max_completion_tokens")
    if budget is not None:
        return max_tokens, (f"thinking_token_budget={budget} bounds the reasoning; max_tokens bounds "
                            "reasoning and answer together")
    return max_tokens, None


def _reasons(backend: str, params: dict[str, Any]) -> bool:
    """Whether the backend's params say the model reasons (their ``reasons``, e.g. an OpenAI reasoning model
    by its name or flag); True where the params do not say or do not validate (the note stays)."""
    from pydantic import ValidationError

    from biorab.common.registry import BACKENDS

    model = BACKENDS.params_of(backend)
    if model is None:
        return True
    try:
        built = model.model_validate(params)
    except ValidationError:
        return True
    return bool(getattr(built, "reasons", True))
