"""The instruction strings of the original BioRAB, verbatim (typos, double spaces and all).

Sources: the authors' triple-extraction instruction files (``model/<task>/instruction/*.txt``) and the
staged instruction containers / prompt files under ``data/biorab/*/`` (docs/tasks_and_parsing.md says
which file each string was checked against). ``{labels_tuple}`` / ``{labels_list}`` are filled from the
template's label set, so a relation order read from another prompt file can be reproduced exactly.
Strings marked *ours* have no published original.
"""

from __future__ import annotations

_TRIPLE_CORE = (
    "extract the triplet from this sentence, the triplet is [head entity, relation, tail entity], the "
    "element relation denotes the relationship between head entity and tail entity, I will provide you the "
    "definition of the triplet you need to extract, the sentence from where your extract the triplets "
    "(head entity, relation, tail_entity) and the output format"
)
_RELATION_SET = " the relation must in my predefined relation set: {labels_tuple}."
_TRIPLE_FORMAT = " response Format: head entity|relation|tail entity."

#: The staged ADE/GIT test containers and ``instruction_negative_awareness.txt`` (= the ChemProt file).
TRIPLE = "please " + _TRIPLE_CORE + " with examples." + _RELATION_SET + _TRIPLE_FORMAT
#: ``instruction_ade.txt``: used with retrieved sentences without labels (``2_get_test_instruction.py``).
TRIPLE_UNLABELED_ADE = (
    "Please " + _TRIPLE_CORE + " with examples." + _RELATION_SET + _TRIPLE_FORMAT
    + " The following retrieved sentence may be helpful or not."
)
#: ``instruction_gmciht.txt`` (GIT): the same sentence, without the space before it.
TRIPLE_UNLABELED_GIT = TRIPLE + "The following retrieved sentence may be helpful or not."
#: ChemProt has no unlabeled instruction file (*ours*: the ADE sentence appended to the ChemProt text).
TRIPLE_UNLABELED_CHEMPROT = TRIPLE + " The following retrieved sentence may be helpful or not."
#: ``instruction_{ade,chemprot,gmciht}na.txt``: the negative-awareness testbed.
TRIPLE_NEGATIVE_AWARENESS = (
    "You are an excellent linguist. Please " + _TRIPLE_CORE + "." + _RELATION_SET + _TRIPLE_FORMAT
    + " And the retrieved example may constitutes noise information or not."
)
#: *ours*: a triple instruction for a bring-your-own dataset without a closed relation set.
TRIPLE_OPEN = "please " + _TRIPLE_CORE + " with examples." + _TRIPLE_FORMAT

#: The sentence the ``*na.txt`` files end with; appended to other tasks' instructions (*ours*).
NOISE_SENTENCE = " And the retrieved example may constitutes noise information or not."

#: The Hetionet prompt files (``hetionet5k_lp_*_instruction_*.json``); note the two double spaces.
LINK_PREDICTION = (
    "You are an excellent linguist. The task is to predict the  relationship between the given head entity "
    "and tail entity in a sentence, this relation  must be in {labels_tuple}"
)

#: ``ade_corpus_v2/prompts/*``: both staged files share this sentence.
ADE_CLASSIFICATION = (
    "You are an excellent medical expert. The task is to predict whether the given text describes an adverse "
    "drug event (ADE) or not. If the text describes an ADE, the label should be 1, otherwise 0."
)
ADE_BM25_CONTEXT = (
    "Input: {text}\nQuestion: is the text describing an ADE? If yes, output 1, if not, output 0."
)

#: ``semclass/prompts/sentence_triple_*_bm25.jsonl``.
SEMCLASS = (
    "You are an excellent medical expert. The task is to predict whether the given text describes the "
    "relation between the head and tail entities. If the text describes the relation, the label should be "
    "'y', otherwise 'n'."
)
#: SemClass keys (the uniform-corpus form of ``classification_semmed_train.json``) and their BM25 prompt form.
SEMCLASS_KEY_PATTERN = (
    r"if the triple (?P<head>[^|]*)\|(?P<relation>[^|]*)\|(?P<tail>[^|]*) is belong to sentence "
    r"(?P<sentence>.*)"
)
SEMCLASS_KEY_FORMAT = (
    "in sentence {sentence} the relationship between {head} and {tail} has relation {relation}"
)
SEMCLASS_CONTEXT = "In sentence {sentence}, {head} and {tail} has relation {relation} is?"

#: MedMCQA (docs/notes/biorab_original.md section 1.2); the trailing newline is the original's.
MEDMCQA = (
    "TASK: Given the medical context, example and the single-choice question, please choose the correct "
    "answer index with the following options: {labels_list}.\n"
)
MEDMCQA_CONTEXT = "Question: {question}\nAnswers: {options_text}\n"

#: *ours* (no published original): generic classification and NLI instructions in the house style.
CLASSIFICATION_GENERIC = (
    "You are an excellent medical expert. The task is to predict the label of the given text, the label must "
    "be in {labels_tuple}."
)
NLI = (
    "You are an excellent medical expert. The task is to predict whether the hypothesis is entailed by the "
    "premise or contradicts it, the label must be in {labels_tuple}."
)
NLI_CONTEXT = "Premise: {premise}\nHypothesis: {hypothesis}"

#: ``9_metrics_reject_rate.py``: the True/False negative-awareness probe.
AWARENESS = (
    "Please determine whether the retrieved example constitutes negative information. If it is negative, "
    "please output False; if it is not negative, please output True"
)
#: The probe's context. The original forgot the f-string prefix: ``{example}``/``{context}`` stayed literal.
AWARENESS_CONTEXT = "if the retrieved document: ({example}) is  the negative example for ({context})"
AWARENESS_TARGET_NOT_NEGATIVE = "True-The retrieved example is not a negative example"
#: *ours*: the original wrote the "not negative" target for both files (see docs).
AWARENESS_TARGET_NEGATIVE = "False-The retrieved example is a negative example"
