"""Label spaces of the staged datasets, in the order the paper's instructions list them.

Templates (`biorab.tasks`), loaders (`biorab.datasets`), corpora (`biorab.corpora`) and metrics all read
these tuples, so a label set is written down exactly once.
"""

from __future__ import annotations

# Triple extraction: the relation sets quoted in the original instruction files.
ADE_RELATIONS: tuple[str, ...] = ("effect", "dosage")
CHEMPROT_RELATIONS: tuple[str, ...] = ("ANTAGONIST", "ACTIVATOR", "DOWNREGULATOR", "PRODUCT-OF", "AGONIST")
GIT_RELATIONS: tuple[str, ...] = (
    "TREATS", "AFFECTS", "DISRUPTS", "CAUSES", "SYMPTOM_OF", "COEXISTS_WITH", "ASSOCIATED_WITH",
    "INTERACTS_WITH", "INHIBITS", "STIMULATES", "DOES_NOT_TREAT", "MANIFESTATION_OF", "PREVENTS",
    "ADMINISTERED_TO", "PREDISPOSES", "PRODUCES", "PRECEDES", "USES", "COMPLICATES", "AUGMENTS",
    "DIAGNOSES", "PROCESS_OF",
)  # fmt: skip

# Link prediction.
PHARMKG_LABELS: tuple[str, ...] = ("Interactions", "Disease-Gene", "Disease-Chemical", "Chemical-Gene")
# The order of the first staged Hetionet prompt (the original took it from a Python set, so it varied).
HETIONET_LABELS: tuple[str, ...] = (
    "covaries", "upregulates", "regulates", "treats", "includes", "expresses", "downregulates",
    "localizes", "causes", "binds", "interacts", "resembles", "associates", "presents", "participates",
)  # fmt: skip

# Classification.
ADE_CORPUS_V2_LABELS: tuple[str, ...] = ("1", "0")
SEMCLASS_LABELS: tuple[str, ...] = ("y", "n")

# Question answering (MedMCQA has 4 options in the staged data; (E) is accepted for 5-option sets).
MEDMCQA_LABELS: tuple[str, ...] = ("(A)", "(B)", "(C)", "(D)")
QA_OPTION_LETTERS: tuple[str, ...] = ("A", "B", "C", "D", "E")

# NLI (BioNLI's published labels).
BIONLI_LABELS: tuple[str, ...] = ("entailment", "contradiction")

# The negative-awareness probe (`biorab.tasks.awareness_probe`).
#: The probe's answer meaning "the retrieved example is negative". The probe instruction (the original's,
#: verbatim) says "If it is negative, please output False; if it is not negative, please output True".
#: `biorab.metrics.negative_awareness` and the pipeline read this one definition, so probe outputs are
#: scored with the convention the probe asked for.
AWARENESS_NEGATIVE = "False"
#: The probe's answer meaning "the retrieved example is not negative".
AWARENESS_NOT_NEGATIVE = "True"
#: The probe's closed answer set.
AWARENESS_LABELS: tuple[str, ...] = (AWARENESS_NOT_NEGATIVE, AWARENESS_NEGATIVE)

# Triple-extraction relation sets and closed label sets, by dataset registry name.
RELATIONS: dict[str, tuple[str, ...]] = {
    "ade": ADE_RELATIONS,
    "chemprot": CHEMPROT_RELATIONS,
    "git": GIT_RELATIONS,
}
LABELS: dict[str, tuple[str, ...]] = {
    "pharmkg": PHARMKG_LABELS,
    "hetionet": HETIONET_LABELS,
    "ade_corpus_v2": ADE_CORPUS_V2_LABELS,
    "semclass": SEMCLASS_LABELS,
    "medmcqa": MEDMCQA_LABELS,
    "bionli": BIONLI_LABELS,
}



def dataset_labels(dataset: str) -> tuple[str, ...] | None:
    """The closed label set of a dataset (the relation set for triple extraction), if it has one."""
    return LABELS.get(dataset) or RELATIONS.get(dataset)
