"""The answers each DrugMech prompt kind admits, written as its parser reads them (spec §9), as an output
constraint: what a rehearsal's fake engine draws its answers from (`DrugMechSpec.answer_constraint`), so
that DrugMech cells are parsed and scored with answers that are sometimes right and sometimes wrong.

- Delete-Link, Invert-Link (§9.4): the heading ``Summary``, then one of the four response options as the
  prompt words it;
- Add-Link negative (§9.3): ``YES.``, or the prompt's NO sentence (`AL_NEGATIVE_RESPONSE`);
- Add-Link positive, factual (§9.2): ``YES.`` with a one-step MoA from the drug to the disease, or the
  prompt's NO sentence.

A real model answers these prompts in free text (an explanation first); the options are not that text, only
answers in the form the parsers accept, so a real run never carries them (guided decoding would cut the
answers to the bare options).
"""

from __future__ import annotations

from biorab.common.records import OutputConstraint
from biorab.drugmech.graph.moa import capitalize_words
from biorab.drugmech.parsing.moa_answer import NEW_DISEASE
from biorab.drugmech.parsing.option_answer import wrapped_options
from biorab.drugmech.parsing.yes_no_answer import YES_NO_OPTIONS
from biorab.drugmech.prompts.factual import ANONYMIZED, NAMED
from biorab.drugmech.prompts.texts import AL_NEGATIVE_RESPONSE, F_NEGATIVE_RESPONSE
from biorab.drugmech.queries.query_files import ADD_LINK, CHANGE_LINK, DELETE_LINK, FactualQuery, Query

#: The relation of the one-step MoA a YES option gives (any relation parses; the graph scores read nodes).
TREATS = "treats"


def answer_options(query: Query, *, mode: str = NAMED) -> tuple[str, ...]:
    """The answers `query`'s prompt admits (`mode`: the factual disease mode the prompt was rendered in).

    >>> from biorab.drugmech.queries.query_files import FactualQuery
    >>> q = FactualQuery(False, "DrugMechDB", "m1", "MESH:D1", "aspirin", "MESH:D2", "fever")
    >>> answer_options(q, mode="ANONYMIZED_DISEASE")
    ('YES.\\nDrug: Aspirin | treats | Disease: new disease', 'NO supporting Mechanism of Action found.')
    """
    if query.query_type in (DELETE_LINK, CHANGE_LINK):
        return tuple(f"Summary\n{text}" for text in wrapped_options().values())
    if query.query_type == ADD_LINK and query.is_negative_sample:
        return (YES_NO_OPTIONS["YES"], AL_NEGATIVE_RESPONSE)
    if isinstance(query, FactualQuery):
        # the disease as the prompt names it: unnamed (anonymized), verbatim (named), capitalized (with
        # its associations), as `biorab.drugmech.prompts.factual` renders it
        disease = (NEW_DISEASE if mode == ANONYMIZED else
                   query.disease_name if mode == NAMED else capitalize_words(query.disease_name))
        no = F_NEGATIVE_RESPONSE
    else:  # an Add-Link positive: its prompt names both capitalized
        disease, no = capitalize_words(query.disease_name), AL_NEGATIVE_RESPONSE
    moa = f"Drug: {capitalize_words(query.drug_name)} | {TREATS} | Disease: {disease}"
    return (f"{YES_NO_OPTIONS['YES']}\n{moa}", no)


def answer_constraint(query: Query, *, mode: str = NAMED) -> OutputConstraint:
    """`answer_options` as the output constraint of the query's row (a closed choice)."""
    return OutputConstraint(choices=answer_options(query, mode=mode))
