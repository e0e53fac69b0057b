"""`FakeBackend`: a deterministic test double shipped in the library and registered as ``fake``.

It never loads a model. Its answer is one of:

- ``fixed``: always `answer`;
- ``choice``: one of the prompt's `constraint.choices`, picked by a seeded hash of the prompt text (falls
  back to `answer` when the prompt has no choices);
- ``constraint``: as ``choice``, and for a prompt whose constraint is a regex (triples, label lists) a
  string drawn from that regex (`biorab.generation.regex_sample`, seeded by the prompt text), so every
  task's parser and metrics see a well-formed answer (what `--rehearse` runs);
- ``map``: `answers[prompt.example_id]` (e.g. the gold labels, to check that a pipeline scores a perfect
  run as perfect, and that no answer is counted as misled), falling back to `answer` for ids not in the map;
- ``copy_last``: as ``copy_top`` (below), the label of the *last* retrieved example written in the prompt
  (the one nearest the question): an order-sensitive model (`biorab.ral.specs.evidence_order`);
- ``copy_plausible``: a model with a prior that believes only plausible lies. Its own answer is
  `answers[example_id]` (else `answer`); it answers the top example's label instead when that label is
  one of `plausible[its own answer]` (a plausibility-sensitive model, `biorab.corpora.plausibility`);
- ``sycophant``: its own answer is `answers[example_id]` (else `answer`), unless the prompt says "I think
  the answer is X." (the leading query framing, `biorab.datasets.framing`): then X (a framing-sensitive
  model);
- ``copy_top``: the label of the top retrieved example, read back from the prompt: the text after the first
  of `value_markers` (what precedes ``{value}`` in the templates' example formats), as the longest of the
  prompt's `constraint.choices` it starts with, or (open answers: triples) up to the first of `value_ends`.
  Its copy rate is 1, and it is misled wherever the top hit is corrupted (`biorab.attribution`); falls back
  to `answer` when the prompt shows no labeled example;
- ``copy_when_unsure``: a model with a prior. Its own answer is `answers[example_id]` (else `answer`), held
  with the label log-prob margin `margins[example_id]` (else `margin`); where that margin is below
  `unsure_below` it answers as ``copy_top`` instead (its prior when the prompt shows no example). With
  ``score_labels`` its label log-probs put the answered label `margin` nats above every other label, so the
  no-retrieval twin's margin is the one given (the prior bins of `biorab.attribution.twin`).

With `think` set it replies as a thinking model does: ``<think>{think}</think>\n\n{answer}``, split into
`Generation.reasoning` and the answer when ``thinking: {split: true}`` (as the real backends do);
``thinking: {token_budget: N}`` keeps the first N words of `think` (a word a token), as a budget cuts it;
``{answer}`` in `think` is the row's answer (a reasoning that quotes the label it then gives).

Faults can be injected deterministically: every `fail_every`-th `generate` call fails (raises
`BackendError`, or returns error rows), and the example ids in `fail_ids` always come back as error rows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import re
import time
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from biorab.common.errors import BackendError
from biorab.common.params import Params as BaseParams
from biorab.common.records import Generation, Prompt
from biorab.common.registry import BACKENDS
from biorab.generation.base import SamplingParams, stable_digest, truncate_at_stop
from biorab.generation.capabilities import Capabilities
from biorab.generation.reasoning import ThinkingParams, apply_split


def _unit_hash(*parts: object) -> float:
    """A deterministic number in (0, 1] from `parts` (stable across processes, unlike `hash`)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") + 1) / 2**64


@BACKENDS.register("fake")
class FakeBackend:
    """Deterministic backend for tests and dry runs (see the module docstring)."""

    capabilities = Capabilities()  # no model: nothing to load, prepare or share

    class Params(BaseParams):
        mode: Literal["fixed", "choice", "constraint", "map", "copy_top", "copy_when_unsure", "copy_last",
                      "copy_plausible", "sycophant"] = "fixed"
        answer: str = ""
        answers: dict[str, str] = Field(default_factory=dict)
        plausible: dict[str, list[str]] = Field(default_factory=dict)
        seed: int = 0
        apply_stop: bool = True
        fail_every: int = Field(default=0, ge=0)
        fail_mode: Literal["raise", "error_rows"] = "raise"
        fail_ids: tuple[str, ...] = ()
        delay_s: float = Field(default=0.0, ge=0.0)
        name: str = "fake"
        value_markers: tuple[str, ...] = ("response: ", "Response: ", " has label ", " is labeled as ")
        value_ends: tuple[str, ...] = ("\n\n### ", " Excample:", "Example: ", " Example:")
        margins: dict[str, float] = Field(default_factory=dict)
        margin: float = Field(default=10.0, ge=0.0)
        unsure_below: float = Field(default=1.0, ge=0.0)
        think: str | None = None
        thinking: ThinkingParams = Field(default_factory=ThinkingParams)

    def __init__(self, params: FakeBackend.Params | None = None) -> None:
        self.params = params or FakeBackend.Params()
        self.calls = 0
        self.prompts_seen = 0
        self.closed = False

    @property
    def model_digest(self) -> str:
        return self.params_digest(self.params)

    @staticmethod
    def params_digest(params: FakeBackend.Params) -> str:
        """The cache digest of a fake backend with `params` (`biorab.generation.model_info` asks it too)."""
        return stable_digest({"backend": "fake", **params.model_dump(mode="json")})

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """Answer every prompt deterministically; see the class docs for the modes and faults."""
        if self.closed:
            raise BackendError("fake backend used after close()")
        self.calls += 1
        self.prompts_seen += len(prompts)
        if self.params.delay_s:
            time.sleep(self.params.delay_s)
        fault = self.params.fail_every > 0 and self.calls % self.params.fail_every == 0
        if fault and self.params.fail_mode == "raise":
            raise BackendError(f"fake backend: injected fault on call {self.calls}")
        out = []
        for prompt in prompts:
            if fault or prompt.example_id in self.params.fail_ids:
                out.append(Generation(text="", error=f"fake backend: injected fault on call {self.calls}"))
            else:
                out.append(dataclasses.replace(self._generate_one(prompt, params), batch_size=len(prompts)))
        return out

    def close(self) -> None:
        self.closed = True

    def _generate_one(self, prompt: Prompt, params: SamplingParams) -> Generation:
        choices = prompt.constraint.choices if prompt.constraint and prompt.constraint.choices else ()
        weights = {c: _unit_hash(self.params.seed, params.seed, prompt.text, c) for c in choices}
        answer = self._answer(prompt, weights)
        finish = "stop"
        if self.params.apply_stop:
            answer, _ = truncate_at_stop(answer, params.stops_for(prompt))
        words = answer.split()
        if len(words) > params.max_tokens:
            answer, finish = " ".join(words[: params.max_tokens]), "length"
        logprobs = None
        if params.score_labels and choices:
            logprobs = (_margin_logprobs(choices, answer, self._margin(prompt))
                        if self.params.mode == "copy_when_unsure" else _label_logprobs(weights, answer))
        if self.params.think is not None:
            marks = self.params.thinking
            think = self.params.think.replace("{answer}", answer)  # a reasoning that names its answer
            if marks.token_budget is not None:  # a word a token: cut at the budget, then closed
                think = " ".join(think.split()[: marks.token_budget])
            answer = f"{marks.open_marker}{think}{marks.close_marker}\n\n{answer}"
        gen = Generation(
            text=answer,
            prompt_tokens=len(prompt.text.split()),
            completion_tokens=len(answer.split()),
            finish_reason=finish,
            label_logprobs=logprobs,
        )
        return apply_split(gen, self.params.thinking)

    def _robustness_answer(self, prompt: Prompt, mode: str) -> str | None:
        """The answer of the issue-43 modes (``None``: another mode)."""
        prior = self.params.answers.get(prompt.example_id, self.params.answer)
        if mode == "sycophant":
            suggested = _SUGGESTION.search(prompt.text)
            return suggested.group(1) if suggested else prior
        if mode == "copy_plausible":
            top = top_value(prompt, self.params.value_markers, self.params.value_ends)
            return top if top is not None and top in self.params.plausible.get(prior, ()) else prior
        if mode == "copy_last":
            last = top_value(prompt, self.params.value_markers, self.params.value_ends, last=True)
            return self.params.answer if last is None else last
        return None

    def _answer(self, prompt: Prompt, weights: dict[str, float]) -> str:
        mode = self.params.mode
        robust = self._robustness_answer(prompt, mode)
        if robust is not None:
            return robust
        if mode == "map":
            return self.params.answers.get(prompt.example_id, self.params.answer)
        if mode in ("choice", "constraint") and weights:
            return max(weights, key=lambda c: (weights[c], c))
        if mode == "constraint" and prompt.constraint is not None and prompt.constraint.regex:
            from biorab.generation.regex_sample import sample_regex

            seed = int(_unit_hash(self.params.seed, prompt.text) * 2**32)
            return sample_regex(prompt.constraint.regex, random.Random(seed))
        if mode in ("copy_top", "copy_when_unsure"):
            prior = self.params.answers.get(prompt.example_id, self.params.answer)
            if mode == "copy_when_unsure" and self._margin(prompt) >= self.params.unsure_below:
                return prior
            top = top_value(prompt, self.params.value_markers, self.params.value_ends)
            return (self.params.answer if mode == "copy_top" else prior) if top is None else top
        return self.params.answer

    def _margin(self, prompt: Prompt) -> float:
        return self.params.margins.get(prompt.example_id, self.params.margin)


#: The leading framing's sentence (`biorab.datasets.framing.LEADING`), as the sycophant reads it.
_SUGGESTION = re.compile(r"I think the answer is (.+?)\.(?:\s|$)")


def top_value(prompt: Prompt, markers: Sequence[str], ends: Sequence[str], *, last: bool = False
              ) -> str | None:
    """The value of the first (`last`: the last) retrieved example written in `prompt` (``None``: none is
    written). Examples sit in the instruction, so the search stops at the wrapper's input or response
    section."""
    instruction = prompt.text.split("\n\n### Input:")[0].split("\n\n### Response:")[0]
    if last:
        found = [(i, m) for m in markers if (i := instruction.rfind(m)) >= 0]
    else:
        found = [(i, m) for m in markers if (i := instruction.find(m)) >= 0]
    if not found:
        return None
    start, marker = max(found) if last else min(found)
    rest = instruction[start + len(marker):]
    choices = prompt.constraint.choices if prompt.constraint and prompt.constraint.choices else ()
    matching = [c for c in choices if rest.startswith(c)]
    if matching:
        return max(matching, key=len)
    stops = [i for e in ends if (i := rest.find(e)) >= 0]
    return rest[: min(stops)].strip() if stops else rest.strip()


def _margin_logprobs(choices: Sequence[str], answer: str, margin: float) -> dict[str, float]:
    """Normalised log-probabilities with the answered label (if it is one) `margin` nats above every other.

    >>> scores = _margin_logprobs(("yes", "no"), "yes", 2.0)
    >>> round(scores["yes"] - scores["no"], 9)
    2.0
    """
    raw = {c: (0.0 if c == answer.strip() else -margin) for c in choices}
    total = math.log(sum(math.exp(v) for v in raw.values()))
    return {label: value - total for label, value in raw.items()}


def _label_logprobs(weights: dict[str, float], answer: str) -> dict[str, float]:
    """Normalised log-probabilities from the hash weights; the answered label (if it is one) ranks first,
    so scores and answers agree as they would for a real model."""
    scores = dict(weights)
    if answer.strip() in scores:
        scores[answer.strip()] = max(scores.values()) + 1.0
    total = sum(scores.values())
    return {label: math.log(value / total) for label, value in scores.items()}
