"""Add-Link prompts, version 0, with 5 positive and 3 negative in-context examples (spec §8.2).

In the closed world the source MoA and then the target MoA follow the drug–disease sub-prompt, for the
real query and for every example alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.common.errors import DataError
from biorab.drugmech.graph.moa import capitalize_words, display_name
from biorab.drugmech.prompts.moa_text import (
    CLOSED_WORLD,
    MoaLookup,
    check_world,
    known_moa_block,
    lookup_moa,
)
from biorab.drugmech.prompts.texts import (
    AL_DRUG_DISEASE,
    AL_EXAMPLE,
    AL_EXAMPLES,
    AL_EXAMPLES_SUBPROMPT,
    AL_GOAL,
    AL_INSTRUCTIONS,
    AL_NEGATIVE_RESPONSE,
    AL_PERSONA,
    AL_TEMPLATE,
    ALL_ENTITY_TYPES,
)
from biorab.drugmech.queries.query_files import ADD_LINK, CounterfactualQuery


def _drug_disease(
    drug_name: str, disease_name: str, info: Mapping[str, Any], world: str, moas: MoaLookup | None
) -> str:
    """The drug–disease sub-prompt; names are raw and get capitalised here (node types stay raw)."""
    text = AL_DRUG_DISEASE.format(
        target_disease_name=capitalize_words(disease_name),
        source_node_type=info["source_node_type"],
        source_node_name=display_name(info["source_node_type"], info["source_node_name"]),
        new_relation=info["new_relation"],
        target_node_type=info["target_node_type"],
        target_node_name=display_name(info["target_node_type"], info["target_node_name"]),
        source_drug_name=capitalize_words(drug_name),
    )
    if world != CLOSED_WORLD:
        return text
    blocks = [
        known_moa_block(lookup_moa(moas, info[key], needed_for="the closed-world Add-Link prompt"))
        for key in ("source_moa_id", "target_moa_id")
    ]
    return text + "\n" + "\n".join(blocks)


def _examples(world: str, moas: MoaLookup | None) -> str:
    rendered = []
    for nbr, example in enumerate(AL_EXAMPLES, start=1):
        sub = _drug_disease(
            example["drug_name"], example["disease_name"], example["edit_link_info"], world, moas
        )
        rendered.append(
            AL_EXAMPLE.format(
                example_nbr=nbr,
                example_drug_disease_prompt=sub,
                example_llm_response=example["example_llm_response"],
            )
        )
    return AL_EXAMPLES_SUBPROMPT.format(prompt_examples="".join(rendered))


def render_addlink(query: CounterfactualQuery, *, world: str = "open", moas: MoaLookup | None = None) -> str:
    """Render the prompt of one Add-Link sample.

    Args:
        query: An ``ADD_LINK`` sample (positive or negative: they differ only in ``new_relation``).
        world: ``open`` or ``closed``.
        moas: DrugMechDB (or any id -> MoA lookup); required in the closed world, where the examples'
            MoAs are inserted too.

    Raises:
        DataError: On another query type, an unknown world, or a closed world without the MoAs.
    """
    if query.query_type != ADD_LINK:
        raise DataError(f"not an Add-Link sample: query_type {query.query_type!r}", field="query_type")
    check_world(world)
    info = query.edit_link_info.to_json(ADD_LINK)
    return AL_TEMPLATE.format(
        prompt_persona=AL_PERSONA + "\n",
        prompt_goal=AL_GOAL,
        prompt_instructions=AL_INSTRUCTIONS.format(
            negative_response_text=AL_NEGATIVE_RESPONSE, all_entity_types=ALL_ENTITY_TYPES
        ),
        examples_subprompt=_examples(world, moas),
        drug_disease_prompt=_drug_disease(query.drug_name, query.disease_name, info, world, moas),
    )
