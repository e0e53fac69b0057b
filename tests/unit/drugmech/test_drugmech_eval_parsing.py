"""Option, YES/NO and MoA-graph parsers on the failure cases the spec lists (§9, §14.5), in both modes."""

from __future__ import annotations

import pytest

from biorab.drugmech.parsing.moa_answer import UNKNOWN_TYPE, parse_moa_answer, parse_triples
from biorab.drugmech.parsing.option_answer import (
    ROBUST,
    STRICT_ORIGINAL,
    extract_option_para,
    option_match,
    parse_option,
    wrapped_options,
)
from biorab.drugmech.parsing.yes_no_answer import decide_yes_no
from biorab.drugmech.prompts.texts import EL_OPTIONS

EXPLANATION = (
    "The interaction between the drug and its target is essential. Since the link is removed, the drug "
    "mechanism is affected. However, other pathways may remain and the drug may have other actions which "
    "we do not know about at all. It is completely blocked in one sense."
)


def test_option_lengths_drive_min_and_max() -> None:
    lengths = {k: len(v) for k, v in wrapped_options().items()}
    assert lengths == {
        "No Effect": 192,
        "Partially Blocked": 229,
        "Fully Blocked": 184,
        "Contra-indicated": 171,
    }


def test_key_only_summary_is_misparsed_in_strict_mode_and_fixed_in_robust() -> None:
    text = EXPLANATION + "\n\nSummary: Partially Blocked"
    strict = parse_option(text, mode=STRICT_ORIGINAL)
    assert strict.option == "Fully Blocked"  # the original matched the explanation paragraph instead
    assert strict.score == pytest.approx(0.568392962208)
    assert parse_option(text, mode=ROBUST).option == "Partially Blocked"


def test_full_option_text_after_markdown_summary_in_both_modes() -> None:
    text = EXPLANATION + "\n\n**Summary**\n\n* " + EL_OPTIONS["Contra-indicated"] + "\n"
    assert parse_option(text, mode=STRICT_ORIGINAL).option == "Contra-indicated"
    assert parse_option(text, mode=ROBUST).option == "Contra-indicated"


def test_short_key_answers() -> None:
    assert parse_option("Contraindicated.", mode=STRICT_ORIGINAL).option is None  # unparsed: wrong
    assert parse_option("Contraindicated.", mode=ROBUST).option == "Contra-indicated"
    # Two keys on the summary line: the robust mode does not guess; the original procedure decides.
    two = EXPLANATION + "\n\nSummary: between No Effect and Partially Blocked"
    assert parse_option(two, mode=ROBUST) == parse_option(two, mode=STRICT_ORIGINAL)
    assert parse_option("I cannot tell.", mode=ROBUST).option is None


def test_para_is_truncated_to_the_option_it_starts_with() -> None:
    options = wrapped_options()
    text = EXPLANATION + "\n\nSummary:\n" + options["No Effect"] + " Additional remarks follow here."
    assert extract_option_para(text, options) == options["No Effect"]


def test_option_match_threshold_and_ties() -> None:
    assert option_match("abc", {"a": "abc", "b": "abc"}) == ("a", 1.0)  # first listed wins a tie
    key, score = option_match("zzzz", {"a": "abc", "b": "xyz"})
    assert key is None and score == 0.0


@pytest.mark.parametrize(
    ("text", "strict", "robust"),
    [
        ("**YES.**\nDrug: A | inhibits | Protein: B", None, "YES"),  # original raised on markdown bold
        ("Note: this is speculative.\nYES.\n", "NO", "YES"),  # prefix match reads "Note" as NO
        ("Not clear.", "NO", None),
        ("No, the drug will not help.", "NO", "NO"),
        ("Maybe.", None, None),
    ],
)
def test_yes_no_first_line(text: str, strict: str | None, robust: str | None) -> None:
    assert parse_moa_answer(text, drug_name="A", disease_name="D", mode=STRICT_ORIGINAL).yes_no == strict
    assert parse_moa_answer(text, drug_name="A", disease_name="D", mode=ROBUST).yes_no == robust


def test_triples_node_ids_types_and_new_disease_swap() -> None:
    graph = parse_triples(
        [
            "Drug: Aspirin | Decreases Activity Of | Protein: COX-2",
            "Protein: COX-2 | Positively Regulates | Biological Process: Inflammation",
            "Disease: new disease | caused by | Biological Process: Inflammation",
            "only | two",
            "Thing | causes | Other",
        ],
        mode=STRICT_ORIGINAL,
    )
    nodes = {n: (d["type"], d["name"]) for n, d in graph.nodes(data=True)}
    assert nodes == {
        "Drug.0": ("Drug", "Aspirin"),
        "Protein.1": ("Protein", "COX-2"),
        "BiologicalProcess.2": ("BiologicalProcess", "Inflammation"),
        "Disease.3": ("Disease", "new disease"),
        f"{UNKNOWN_TYPE}.4": (UNKNOWN_TYPE, "Thing"),
        f"{UNKNOWN_TYPE}.5": (UNKNOWN_TYPE, "Other"),
    }
    assert graph.has_edge("BiologicalProcess.2", "Disease.3", key="caused by")


def test_single_node_triple_self_loop_only_in_strict_mode() -> None:
    line = ["Drug: Aspirin | inhibits | COX-2"]
    strict = parse_triples(line, mode=STRICT_ORIGINAL)
    assert list(strict.edges(keys=True)) == [("Drug.0", "Drug.0", "inhibits + COX-2")]
    robust = parse_triples(line, mode=ROBUST)
    assert list(robust.edges(keys=True)) == [("Drug.0", f"{UNKNOWN_TYPE}.1", "inhibits")]


def test_root_and_sink_identification() -> None:
    text = (
        "YES.\n"
        "- Drug: Aspirin | inhibits | Protein: COX-1\n"
        "- Drug: Aspirin | inhibits | Protein: COX-2\n"
        "- Protein: COX-1 | produces | Chemical: Prostaglandins\n"
        "- Protein: COX-2 | contributes to | Phenotype: Pain\n"
    )
    answer = parse_moa_answer(text, drug_name="aspirin", disease_name="Headache", mode=ROBUST)
    assert answer.moa is not None
    g = answer.moa.graph
    assert answer.moa.root == "Drug.0"
    # Two sinks, none named like the disease: a Disease node is added and both sinks point to it.
    assert g.nodes[answer.moa.sink]["name"] == "Headache"
    assert {u for u, _ in g.in_edges(answer.moa.sink)} == {"ChemicalSubstance.3", "PhenotypicFeature.4"}
    # The strict mode does not strip list bullets: the type is read as "- Drug", which no reference matches.
    strict = parse_moa_answer(text, drug_name="aspirin", disease_name="Headache", mode=STRICT_ORIGINAL)
    assert strict.moa is not None and strict.moa.root == "- Drug.0"
    assert strict.moa.graph.nodes["- Drug.0"]["type"] == "- Drug"


def test_anonymized_answers_sink_on_new_disease() -> None:
    text = (
        "YES.\nDrug: X | inhibits | Protein: P\nProtein: P | causes | Disease: New Disease\n"
        "Protein: P | causes | Cell: C"
    )
    answer = parse_moa_answer(text, drug_name="x", disease_name="ignored", anonymized=True)
    # Exactly one sink is the (casefolded) "new disease": it is the sink; the other sink stays dangling.
    assert answer.moa is not None and answer.moa.sink == "Disease.2"
    assert answer.moa.graph.out_degree("Cell.3") == 0
    named = parse_moa_answer(text, drug_name="x", disease_name="Flu", anonymized=False)
    assert named.moa is not None and named.moa.graph.nodes[named.moa.sink]["name"] == "Flu"
    assert named.moa.graph.has_edge("Cell.3", named.moa.sink, key="associated with")
    assert named.moa.graph.has_edge("Disease.2", named.moa.sink, key="associated with")


@pytest.mark.parametrize(
    ("text", "strict", "robust"),
    [
        ("Reasoning.\nNO supporting beneficial Mechanism of Action found.", "NO", "NO"),
        ("YES.\nDrug: X | a | Protein: Y", "YES", "YES"),
        ("**NO supporting beneficial Mechanism of Action found.**", None, "NO"),
        ("Note: unclear.\nYES.", "YES", "YES"),  # "Note" scores below YES. against both canonical answers
        ("I am not sure.", None, None),
    ],
)
def test_addlink_negative_decision(text: str, strict: str | None, robust: str | None) -> None:
    assert decide_yes_no(text, mode=STRICT_ORIGINAL).answer == strict
    assert decide_yes_no(text, mode=ROBUST).answer == robust


def test_parsers_never_raise_on_odd_output() -> None:
    for text in ("", "\n\n", "|||", "YES.\n | | \n:::", "Summary", "\x00\ufffd"):
        parse_option(text)
        parse_moa_answer(text, drug_name="a", disease_name="b")
        decide_yes_no(text)
    with pytest.raises(ValueError, match="unknown parser mode"):
        parse_option("x", mode="lenient")
