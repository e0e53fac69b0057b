"""A thinking model's reasoning apart from its answer: the shared split, the fake backend's thinking mode,
the row columns, and DrugMech answers that parse right only when the parser reads the answer alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.records import Generation, Prompt
from biorab.drugmech.prompts.texts import EL_OPTIONS
from biorab.drugmech.queries.query_files import load_release_file
from biorab.drugmech.scoring.correctness import score_answer
from biorab.generation import SamplingParams, build_backend
from biorab.generation.hf.params import TransformersParams
from biorab.generation.reasoning import ThinkingParams, apply_split, split_reasoning
from biorab.ral.specs.rows import ROW_SCHEMA, row_generation, set_generation

WHY = "A long explanation of the mechanism that is more than long enough to pass the length checks. " * 2


@pytest.mark.parametrize(("text", "reasoning", "answer"), [
    ("<think>\nStep 1.\nStep 2.\n</think>\n\nYES.", "Step 1.\nStep 2.", "YES."),
    ("Step 1.</think>NO", "Step 1.", "NO"),                      # the template opened <think>
    ("<think>cut off by max_tokens", "cut off by max_tokens", ""),
    ("<think></think>\n\nNO", "", "NO"),                        # thinking switched off in the template
    ("NO <think> is not a marker here", None, "NO <think> is not a marker here"),
    ("plain answer", None, "plain answer"),
])
def test_split_reasoning(text: str, reasoning: str | None, answer: str) -> None:
    assert split_reasoning(text) == (reasoning, answer)


def test_apply_split_respects_the_switch_a_server_split_and_errors() -> None:
    on = ThinkingParams(split=True)
    gen = Generation(text="<think>r</think>a", completion_tokens=3, finish_reason="stop")
    assert apply_split(gen, ThinkingParams()) is gen
    assert (apply_split(gen, on).text, apply_split(gen, on).reasoning) == ("a", "r")
    served = Generation(text="<think>x</think>a", reasoning="from the server")
    assert apply_split(served, on) is served
    failed = Generation(text="", error="boom")
    assert apply_split(failed, on) is failed
    custom = ThinkingParams(split=True, open_marker="<reasoning>", close_marker="</reasoning>")
    assert apply_split(Generation(text="<reasoning>r</reasoning>a"), custom).text == "a"


def test_fake_thinking_mode_and_the_row_columns() -> None:
    params = {"answer": "NO", "think": "Maybe YES? No.", "thinking": {"split": True}}
    [gen] = build_backend("fake", params).generate([Prompt("q", "p")], SamplingParams())
    assert (gen.text, gen.reasoning) == ("NO", "Maybe YES? No.")
    [whole] = build_backend("fake", {**params, "thinking": {}}).generate([Prompt("q", "p")], SamplingParams())
    assert whole.text == "<think>Maybe YES? No.</think>\n\nNO" and whole.reasoning is None
    row: dict[str, object] = {}
    set_generation(row, gen, key="k", cached=False)
    assert (row["gen_text"], row["gen_reasoning"]) == ("NO", "Maybe YES? No.")
    assert {"gen_reasoning", "gen_reasoning_tokens"} <= set(ROW_SCHEMA.names)
    assert row_generation(row) == gen


def test_split_changes_the_cache_key() -> None:
    plain = build_backend("fake", {"answer": "a"}).model_digest
    assert build_backend("fake", {"answer": "a", "thinking": {"split": True}}).model_digest != plain


def test_fake_thinking_budget_cuts_the_reasoning_then_answers() -> None:
    params = {"answer": "NO", "think": "one two three four five",
              "thinking": {"split": True, "token_budget": 2}}
    [gen] = build_backend("fake", params).generate([Prompt("q", "p")], SamplingParams(max_tokens=4))
    assert (gen.text, gen.reasoning, gen.finish_reason) == ("NO", "one two", "stop")
    params["thinking"] = {"token_budget": 9}  # not reached: the whole reasoning, unsplit
    [whole] = build_backend("fake", params).generate([Prompt("q", "p")], SamplingParams())
    assert whole.text == "<think>one two three four five</think>\n\nNO"


def test_the_budget_is_in_the_cache_key_and_no_budget_keeps_the_old_keys() -> None:
    from biorab.generation.model_source import engine_digest

    unset = {"split": False, "open_marker": "<think>", "close_marker": "</think>"}
    assert ThinkingParams().model_dump() == unset
    plain = build_backend("fake", {"answer": "a"}).model_digest
    budget = build_backend("fake", {"answer": "a", "thinking": {"token_budget": 8}}).model_digest
    other = build_backend("fake", {"answer": "a", "thinking": {"token_budget": 9}}).model_digest
    assert len({plain, budget, other}) == 3
    keyed = [engine_digest("w", "transformers", TransformersParams(thinking=t)) for t in
             ({}, {"token_budget": 8}, {"token_budget": 9}, {"split": True})]  # type: ignore[arg-type]
    assert keyed[0] == "w" and len(set(keyed)) == 4


def _fake_reply(think: str, answer: str) -> tuple[str, str]:
    """(the whole reply, the answer alone) from the fake backend in thinking mode."""
    params = {"answer": answer, "think": think}
    [whole] = build_backend("fake", params).generate([Prompt("q", "p")], SamplingParams(max_tokens=4096))
    [split] = build_backend("fake", {**params, "thinking": {"split": True}}).generate(
        [Prompt("q", "p")], SamplingParams(max_tokens=4096))
    return whole.text, split.text


def test_drugmech_addlink_negative_reads_the_answer_only(drugmechcf_dir: Path) -> None:
    """§9.3 reads every YES/NO line from the end: a "YES." the model weighed while thinking outvotes the
    answer's NO unless the reasoning is kept out."""
    query = load_release_file("AddLink_neg_ppi_r1k", release_dir=drugmechcf_dir).queries[0]
    whole, answer = _fake_reply("Could it work?\nYES.\nOn reflection, no.",
                                "NO supporting beneficial Mechanism of Action found.")
    assert not score_answer(query, whole).correct_strict
    assert score_answer(query, answer).correct_strict


def test_drugmech_factual_negative_reads_the_answer_only(drugmechcf_dir: Path) -> None:
    """§9.2 takes the first YES/NO line: a thinking line "Yes, the drug ..." would be read as the answer."""
    query = load_release_file("factuals_neg_r1k", release_dir=drugmechcf_dir).queries[0]
    whole, answer = _fake_reply("\nYes, the drug could act on the disease; checking.\n",
                                "NO supporting Mechanism of Action found.")
    assert score_answer(query, whole).yes_no == "YES" and not score_answer(query, whole).correct_strict
    s = score_answer(query, answer)
    assert (s.yes_no, s.correct_strict) == ("NO", True)


def test_drugmech_delete_link_option_reads_the_answer_only(drugmechcf_dir: Path) -> None:
    """§9.4 on the answer alone finds its own Summary (a draft Summary in the reasoning is never read)."""
    query = load_release_file("delete_pos_dpi_r250", release_dir=drugmechcf_dir).queries[0]
    draft = WHY + "\n\nSummary:\n" + EL_OPTIONS["No Effect"]
    final = WHY + "\n\nSummary:\n" + EL_OPTIONS["Fully Blocked"]
    s = score_answer(query, _fake_reply(draft, final)[1])
    assert (s.option, s.correct_strict) == ("Fully Blocked", True)


class _Chars:
    """A character tokenizer: token i is chr(i)."""

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids)


def test_what_a_reply_cut_at_the_budget_still_needs() -> None:
    from biorab.generation.reasoning import continuation

    chars, thinking = _Chars(), ThinkingParams(token_budget=12)
    open_reply = [ord(c) for c in "<think>abcde"]
    assert continuation(open_reply, "<think>abcde", 4, thinking, chars) == (
        [ord(c) for c in "<think>abcde</think>"], 4)  # still thinking: the marker, the whole answer budget
    closed = [ord(c) for c in "ab</think>YE"]  # the answer began: 2 of its 4 tokens taken
    assert continuation(closed, "ab</think>YE", 4, thinking, chars) == (closed, 2)
    assert continuation(closed, "ab</think>YE", 2, thinking, chars) is None  # the answer budget is spent
