"""Factual (known-MoA) prompts, version 2, 5 in-context examples, in three disease modes (spec §8.1).

* ``NAMED_DISEASE`` names the disease; it needs nothing but the query.
* ``ANONYMIZED_DISEASE`` describes the disease by its neighbours only; ``NAMED_DISEASE_WITH_ALL_ASSOCIATIONS``
  names it and adds the neighbours. For a DrugMechDB positive the neighbours come from its MoA (so
  DrugMechDB is needed, also for the examples). For a PrimeKG negative they come from PrimeKG, which is not
  staged: without a `DiseaseNeighbours` source these two modes raise a `DataError` saying so, rather than
  degrading to a different prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from biorab.common.errors import DataError
from biorab.drugmech.graph.moa import MoA, capitalize_words
from biorab.drugmech.prompts.factual_associations import describe_disease, describe_primekg_disease
from biorab.drugmech.prompts.moa_text import MoaLookup, lookup_moa
from biorab.drugmech.prompts.texts import (
    ALL_ENTITY_TYPES,
    F_DISEASE_SUBPROMPTS,
    F_DRUG_DISEASE,
    F_EXAMPLE,
    F_EXAMPLES,
    F_GOAL,
    F_INSTRUCTIONS,
    F_PERSONA,
    F_TEMPLATE,
)
from biorab.drugmech.queries.query_files import FactualQuery

ANONYMIZED = "ANONYMIZED_DISEASE"
NAMED = "NAMED_DISEASE"
NAMED_WITH_ASSOCIATIONS = "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"
DISEASE_MODES: tuple[str, ...] = (ANONYMIZED, NAMED, NAMED_WITH_ASSOCIATIONS)
PRIME_KG = "PRIME_KG"  # `source_kg` of the released negatives


class DiseaseNeighbours(Protocol):
    """A PrimeKG-like source of disease neighbours for factual negatives (spec §8.1.4)."""

    def disease_neighbours(self, disease_id: str, /) -> Sequence[tuple[str, str]]:
        """``(PrimeKG node type, name)`` of the disease's neighbours, ``rev-*`` edges excluded."""
        ...


def _subprompt(mode: str, disease_name: str, associations: str) -> str:
    if mode == NAMED:
        return F_DISEASE_SUBPROMPTS[NAMED].format(disease_name=disease_name)
    if mode == ANONYMIZED:
        return F_DISEASE_SUBPROMPTS[ANONYMIZED].format(associations=associations)
    return F_DISEASE_SUBPROMPTS[NAMED_WITH_ASSOCIATIONS].format(
        disease_name=capitalize_words(disease_name), associations=associations
    )


def _moa_associations(moa: MoA, mode: str, where: str) -> tuple[str, list[str]]:
    text, nodes = describe_disease(moa, anonymized=mode == ANONYMIZED)
    if not text:
        raise DataError(
            f"{where}: MoA {moa.moa_id!r} has no disease associations for mode {mode}; the "
            "original skips such samples",
            field="moa_id",
        )
    return text, nodes


def _examples(mode: str, moas: MoaLookup | None) -> str:
    rendered = []
    for nbr, ex in enumerate(F_EXAMPLES, start=1):
        associations = ""
        if ex.get("is_negative"):
            associations = ex["all_disease_associations"]
        elif mode != NAMED:
            moa = lookup_moa(moas, ex["moa_id"], needed_for=f"factual example {nbr} in mode {mode}")
            associations = _moa_associations(moa, mode, f"factual example {nbr}")[0]
        sub = _subprompt(mode, ex["disease_name"], associations)
        response = ex["example_llm_response"]
        if not ex.get("is_negative"):
            # The original meant "associated with" in two modes, but its lookup always falls back to the
            # per-example relation (spec §8.1.3); reproduced as it behaves.
            response = response.format(
                disease_association_reln=ex["disease_association_relation"],
                example_disease_name="new disease" if mode == ANONYMIZED else ex["disease_name"],
            )
        rendered.append(
            F_EXAMPLE.format(
                example_nbr=nbr,
                example_drug_disease_prompt=F_DRUG_DISEASE.format(
                    disease_subprompt=sub, drug_name=ex["drug_name"]
                ),
                example_llm_response=response,
            )
        )
    return "".join(rendered)


def factual_prompt_nodes(
    query: FactualQuery,
    *,
    mode: str,
    moas: MoaLookup | None = None,
    primekg: DiseaseNeighbours | None = None,
) -> tuple[str, list[str]]:
    """The disease description of a query and the node ids it used (``n_prompt_ref_nodes`` of spec §10.3).

    Returns ``("", [])`` in ``NAMED_DISEASE`` mode.

    Raises:
        DataError: For an unknown mode, a missing MoA, an empty description, or a negative outside
            ``NAMED_DISEASE`` without a PrimeKG source.
    """
    if mode not in DISEASE_MODES:
        raise DataError(f"unknown disease mode {mode!r}; allowed: {', '.join(DISEASE_MODES)}", field="mode")
    if mode == NAMED:
        return "", []
    if query.moa_id is None:
        if query.source_kg != PRIME_KG:
            # e.g. a no-relation negative drawn among DrugMechDB drugs and diseases: the original describes
            # diseases only from a MoA or from PrimeKG, so there is no description to give.
            raise DataError(
                f"mode {mode} needs a disease description, which exists only for DrugMechDB positives (from "
                f"their MoA) and PrimeKG negatives; this negative ({query.disease_id}) comes from "
                f"{query.source_kg}; use NAMED_DISEASE",
                field="mode",
            )
        if primekg is None:
            raise DataError(
                f"mode {mode} for a PrimeKG negative ({query.disease_id}) needs PrimeKG disease "
                "neighbours, which are not staged; use NAMED_DISEASE or supply a PrimeKG kg.csv",
                field="mode",
            )
        text = describe_primekg_disease(
            query.disease_name, primekg.disease_neighbours(query.disease_id), anonymized=mode == ANONYMIZED
        )
        if not text:
            raise DataError(
                f"PrimeKG has no usable neighbours of {query.disease_id} for mode {mode}", field="disease_id"
            )
        return text, []
    moa = lookup_moa(moas, query.moa_id, needed_for=f"the factual prompt in mode {mode}")
    return _moa_associations(moa, mode, "factual query")


def render_factual(
    query: FactualQuery,
    *,
    mode: str = NAMED,
    moas: MoaLookup | None = None,
    primekg: DiseaseNeighbours | None = None,
) -> str:
    """Render the factual prompt of one sample in one disease mode.

    Args:
        query: A factual sample (DrugMechDB positive or PrimeKG negative).
        mode: ``ANONYMIZED_DISEASE``, ``NAMED_DISEASE`` or ``NAMED_DISEASE_WITH_ALL_ASSOCIATIONS``.
        moas: DrugMechDB; needed outside ``NAMED_DISEASE`` (the examples' descriptions come from it too).
        primekg: PrimeKG disease neighbours, needed for negatives outside ``NAMED_DISEASE``.

    Raises:
        DataError: See `factual_prompt_nodes`.
    """
    associations, _nodes = factual_prompt_nodes(query, mode=mode, moas=moas, primekg=primekg)
    drug_disease = F_DRUG_DISEASE.format(
        disease_subprompt=_subprompt(mode, query.disease_name, associations),
        drug_name=capitalize_words(query.drug_name),
    )
    return F_TEMPLATE.format(
        prompt_persona=F_PERSONA + "\n",
        prompt_goal=F_GOAL,
        prompt_instructions=F_INSTRUCTIONS.format(all_entity_types=ALL_ENTITY_TYPES),
        prompt_examples=_examples(mode, moas),
        drug_disease_prompt=drug_disease,
    )
