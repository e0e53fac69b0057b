"""Guided decoding in the transformers backend (xgrammar), on the tiny random-init Llama and its BPE.

The tiny model writes byte soup when free, so any well-formed constrained output is the grammar's doing.
Masks and outputs are exact here (float32, greedy, one process).
"""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("xgrammar")

from biorab.common.errors import BackendError  # noqa: E402
from biorab.common.records import OutputConstraint, Prompt  # noqa: E402
from biorab.generation import SamplingParams, build_backend  # noqa: E402
from biorab.generation.hf.backend import TransformersBackend  # noqa: E402
from biorab.generation.hf.guided import RowGrammars, grammar_source  # noqa: E402
from biorab.tasks.triples import TripleExtraction  # noqa: E402
from tests.support.tiny_causal_lm import build_tiny_lm  # noqa: E402

YN = OutputConstraint(choices=("y", "n", "maybe so"))
SMALL_TRIPLE = OutputConstraint(regex=r"[a-z]{1,3}\|(?:effect|dosage)\|[a-z]{1,3}")


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> TransformersBackend:
    folder = build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")
    return build_backend("transformers", {"model": str(folder), "dtype": "float32", "batch_size": 4})


def _allowed_first_tokens(backend: TransformersBackend, constraint: OutputConstraint) -> set[str]:
    grammar = backend.grammars.get(constraint)
    processor = RowGrammars([grammar], backend.grammars.vocab_size)
    scores = processor(torch.zeros((1, 1), dtype=torch.long), torch.zeros((1, backend.grammars.vocab_size)))
    allowed = torch.nonzero(scores[0] > float("-inf")).flatten().tolist()
    return {backend.tokenizer.decode([t]) for t in allowed}


def test_grammar_sources_follow_vllm() -> None:
    assert grammar_source(YN) == ("ebnf", 'root ::= "y" | "n" | "maybe so"')
    assert grammar_source(OutputConstraint(choices=('say "hi"',))) == ("ebnf", 'root ::= "say \\"hi\\""')
    assert grammar_source(SMALL_TRIPLE) == ("regex", SMALL_TRIPLE.regex)
    with pytest.raises(BackendError, match="neither"):
        grammar_source(OutputConstraint())


def test_label_mask_allows_only_label_prefixes(backend: TransformersBackend) -> None:
    # every token that starts a label, nothing else (pinned on the tiny BPE vocabulary)
    assert _allowed_first_tokens(backend, YN) == {"y", "n", "m"}
    triple_start = _allowed_first_tokens(backend, SMALL_TRIPLE)
    assert triple_start and all(re.fullmatch(r"[a-z]{1,3}(\|.*)?", t) for t in triple_start)


def test_grammars_are_compiled_once_per_constraint(backend: TransformersBackend) -> None:
    cache = backend.grammars
    first = cache.get(YN)
    size = len(cache)
    assert (
        cache.get(OutputConstraint(choices=("y", "n", "maybe so"))) is first
    )  # equal constraint, same grammar
    assert len(cache) == size
    with pytest.raises(BackendError, match="cannot be compiled"):
        cache.get(OutputConstraint(regex="(unclosed"))


def test_regex_constraint_is_enforced(backend: TransformersBackend) -> None:
    prompts = [
        Prompt("t/0", "ibuprofen|effect|", constraint=SMALL_TRIPLE),
        Prompt("t/1", "Aspirin", constraint=SMALL_TRIPLE),
    ]
    free = backend.generate(prompts, SamplingParams(max_tokens=24, constrained=False))
    assert not any(re.fullmatch(SMALL_TRIPLE.regex or "", g.text) for g in free)  # the tiny model on its own
    guided = backend.generate(prompts, SamplingParams(max_tokens=24))  # guided decoding is the default
    for gen in guided:
        assert re.fullmatch(SMALL_TRIPLE.regex or "", gen.text), gen.text
        assert gen.finish_reason == "stop" and gen.error is None


def test_the_task_triple_regex_parses(backend: TransformersBackend) -> None:
    constraint = TripleExtraction().constraint(["effect", "dosage"])
    (gen,) = backend.generate(
        [Prompt("t/0", "Aspirin", constraint=constraint)], SamplingParams(max_tokens=40)
    )
    lines = gen.text.split("\n")
    complete = lines if gen.finish_reason == "stop" else lines[:-1]  # a cut last line may be partial
    assert all(len(line.split("|")) == 3 and line.split("|")[1] in {"effect", "dosage"} for line in complete)


def test_per_row_constraints_in_one_batch(backend: TransformersBackend) -> None:
    grammar_backend = build_backend(
        "transformers",
        {"model": backend.params.model, "dtype": "float32", "batch_size": 4, "choices_via": "grammar"},
    )
    free = Prompt("t/0", "the patient walked home and")
    prompts = [free, Prompt("t/1", "ibuprofen|effect|", constraint=SMALL_TRIPLE),
               Prompt("t/2", "Sentence: metformin lowers blood glucose. Answer:", constraint=YN)]  # fmt: skip
    gens = grammar_backend.generate(prompts, SamplingParams(max_tokens=12))
    alone = grammar_backend.generate([free], SamplingParams(max_tokens=12))[0]
    assert gens[0].text == alone.text  # an unconstrained row is not masked by its neighbours' grammars
    assert re.fullmatch(SMALL_TRIPLE.regex or "", gens[1].text)
    assert gens[2].text in YN.choices and gens[2].label_logprobs is None  # decoded, not scored
    assert [g.batch_size for g in gens] == [3, 3, 3] and alone.batch_size == 1
    assert grammar_backend.model_digest != backend.model_digest  # label answers differ: so do cache keys


def test_stop_strings_still_apply_under_a_grammar(backend: TransformersBackend) -> None:
    forced = OutputConstraint(regex=r"ab c[a-z]{0,5}")
    (gen,) = backend.generate(
        [Prompt("t/0", "Aspirin", stop=(" ",), constraint=forced)], SamplingParams(max_tokens=24)
    )
    assert (gen.text, gen.finish_reason) == ("ab", "stop")


def test_default_label_lists_keep_the_argmax_path(backend: TransformersBackend) -> None:
    prompt = Prompt("t/0", "Sentence: metformin lowers blood glucose. Answer:", constraint=YN)
    (gen,) = backend.generate([prompt], SamplingParams(max_tokens=4))
    assert gen.label_logprobs is not None
    assert gen.text == max(gen.label_logprobs, key=gen.label_logprobs.__getitem__)
