"""Delete-Link and Invert-Link prompts, version 2, zero-shot (spec §8.3).

Open world asks about the edited link alone; closed world also inserts the edited MoA (the sample's
``source_moa_id``) as a known mechanism.
"""

from __future__ import annotations

from biorab.common.errors import DataError
from biorab.drugmech.graph.moa import capitalize_words, type_name
from biorab.drugmech.prompts.moa_text import (
    CLOSED_WORLD,
    MoaLookup,
    check_world,
    format_options,
    known_moa_block,
    lookup_moa,
)
from biorab.drugmech.prompts.texts import EL_OBSERVATIONS, EL_OPTIONS, EL_TEMPLATE, EL_UNKNOWN_OPTION
from biorab.drugmech.queries.query_files import CHANGE_LINK, DELETE_LINK, CounterfactualQuery


def editlink_options(*, with_unknown: bool = False) -> dict[str, str]:
    """The response options (key -> text) in prompt order; `with_unknown` adds the unused 5th option."""
    return {**EL_OPTIONS, **EL_UNKNOWN_OPTION} if with_unknown else dict(EL_OPTIONS)


def _observation(query: CounterfactualQuery, drug_name: str) -> str:
    info = query.edit_link_info
    template = EL_OBSERVATIONS[query.query_type]
    if query.query_type == DELETE_LINK:
        return template.format(
            drug_name=drug_name,
            source_node_type=type_name(info.source_node_type),
            source_node_name=info.source_node_name,
            target_node_type=type_name(info.target_node_type),
            target_node_name=info.target_node_name,
        )
    return template.format(
        drug_name=drug_name,
        source_change_descr=info.source_change_descr,
        inverted_relation=info.new_relation,
        target_node_type=type_name(info.target_node_type),
        target_node_name=info.target_node_name,
    )


def render_editlink(
    query: CounterfactualQuery,
    *,
    world: str = "open",
    moas: MoaLookup | None = None,
    with_unknown: bool = False,
) -> str:
    """Render the prompt of one Delete-Link or Invert-Link sample.

    Args:
        query: A ``DELETE_LINK`` or ``CHANGE_LINK`` sample.
        world: ``open`` (no MoA in the prompt) or ``closed`` (the edited MoA is inserted).
        moas: DrugMechDB (or any id -> MoA lookup); required in the closed world.
        with_unknown: Offer the 5th "Unknown" option (not used in the paper).

    Raises:
        DataError: On another query type, an unknown world, or a closed world without the MoA.
    """
    if query.query_type not in (DELETE_LINK, CHANGE_LINK):
        raise DataError(
            f"not a Delete/Invert-Link sample: query_type {query.query_type!r}", field="query_type"
        )
    check_world(world)
    drug_name = capitalize_words(query.drug_name)
    disease_name = capitalize_words(query.disease_name)
    insert = ""
    if world == CLOSED_WORLD:
        moa = lookup_moa(moas, query.edit_link_info.source_moa_id, needed_for="the closed-world prompt")
        insert = known_moa_block(moa)
    return EL_TEMPLATE.format(
        disease_name=disease_name,
        drug_name=drug_name,
        observation_dsecription=_observation(query, drug_name),
        known_moa_insert=insert,
        response_options=format_options(editlink_options(with_unknown=with_unknown)),
    )
