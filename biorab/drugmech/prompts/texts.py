"""The exact prompt strings of the Drug Mechanisms Counterfactuals prompts (spec §8).

These are data: the MIT-licensed template text of czi-ai/DrugMechCounterfactuals ("Copyright (c) 2024
czi-ai"), reproduced byte for byte because rendered prompts must equal the paper's. Each literal is one line
of the original (long lines are split across adjacent literals), so trailing spaces stay visible and exact.
Versions: Add-Link v0, Delete/Invert v2, factual v2 (the versions the paper used).
"""

from __future__ import annotations

from typing import Any

# The entity types the instructions list, in this order (spec §8.1.1).
ALL_ENTITY_TYPES = (
    "Anatomical Structure, Biological Process, Cell, Cellular Component, Chemical, Disease, Drug, Gene, "
    "Macromolecular Complex, Molecular Activity, Organism, Pathway, Phenotype, Protein"
)

# ---- Add-Link, prompt version 0 (spec §8.2) ----
AL_TEMPLATE = (
    "\n"
    "{prompt_persona}\n"
    "-Goal-\n"
    "{prompt_goal}\n"
    "\n"
    "-Steps-\n"
    "{prompt_instructions}\n"
    "\n"
    "{examples_subprompt}\n"
    "######################\n"
    "-Real Query-\n"
    "\n"
    "{drug_disease_prompt}\n"
    "######################\n"
    "Output:\n"
)

AL_EXAMPLES_SUBPROMPT = "\n######################\n-Examples-\n######################\n{prompt_examples}\n"

AL_EXAMPLE = (
    "\n"
    "Example {example_nbr}:\n"
    "\n"
    "{example_drug_disease_prompt}\n"
    "################\n"
    "Output:\n"
    "{example_llm_response}\n"
    "\n"
    "#############################\n"
)

AL_DRUG_DISEASE = (
    "We have some patients with an unusual combination of symptoms that are being treated with\n"
    "an experimental drug. The drug is helping with some of the symptoms.\n"
    "However some patients are showing signs of {target_disease_name}, but the common drugs for\n"
    "{target_disease_name} are contraindicated for these patients.\n"
    "We have also observed a novel interaction in these patients: in the presence of the "
    "experimental drug,\n"
    "the {source_node_type} {source_node_name} {new_relation} the {target_node_type} {target_node_name}.\n"
    "Given this observation, for these patients, could the drug {source_drug_name} be useful\n"
    "in treating {target_disease_name}?\n"
    "If so, please provide a potential Mechanism of Action for the drug.\n"
)

KNOWN_MOA_INSERT = (
    "\n"
    "We know the Mechanism of Action of the drug {drug_name} on the disease {disease_name} is:\n"
    "{moa_repr}\n"
)

AL_PERSONA = (
    "You are a biomedical research assistant at a research hospital, assisting in the "
    "evaluation of drugs for treating diseases."
)

AL_GOAL = (
    "You will be presented with some observations about a group of patients undergoing\n"
    "treatment with an experimental drug. These patients have some additional untreated\n"
    "symptoms related to a known disease. You will be asked to determine, given some\n"
    "observations, whether a proposed known drug could be useful in treating that disease, and\n"
    "if it can be useful, to provide a potential Mechanism of Action for that drug on that disease."
)

AL_NEGATIVE_RESPONSE = "NO supporting beneficial Mechanism of Action found."

# Step 2 of the Add-Link and factual instructions: how to write a MoA answer (the same text in both prompts,
# composed once; `biorab.drugmech.parsing.moa_answer` reads answers in this format).
MOA_ANSWER_FORMAT = (
    '2. If the response in step 1 is "YES", provide a Mechanism of Action describing how the '
    "drug will affect the disease.\n"
    "Present the Mechanism of Action as a series of interaction steps, one step per line.\n"
    "Each interaction step should mention a direct interaction relationship between two "
    "entities, containing \n"
    "the following information:\n"
    "- source_entity_type: The type of the source entity. One of the following types: "
    "[{all_entity_types}]\n"
    "- source_entity_name: The name of the source entity\n"
    "- target_entity_type: The type of the target entity. One of the following types: "
    "[{all_entity_types}]\n"
    "- target_entity_name: The name of the target entity\n"
    "- interaction_relationship: How the source entity interacts with the target entity\n"
    "\n"
    "Please use as many interaction steps as are needed for a complete detailed response, \n"
    "using specific entities instead of abstract entities wherever possible.\n"
    "Please use the same formal entity name each time the entity is mentioned in your response.\n"
    "\n"
    "Format each interaction step as a triple, using the format:\n"
    "<source_entity_type>: <source_entity_name> | <interaction_relationship> | "
    "<target_entity_type>: <target_entity_name>\n"
)

AL_INSTRUCTIONS = (
    "\n"
    '1. Say "YES." if the drug could be useful in treating the disease in the described situation.\n'
    "If on the other hand the drug could not be used in treating the disease despite the novel\n"
    "interactions observed in these patients, then your final output should be\n"
    '"{negative_response_text}"\n'
    "\n"
) + MOA_ANSWER_FORMAT

# The 8 in-context examples, in prompt order (3 is an unrelated-protein negative, 4 and 5 invert 1 and 2).
AL_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "drug_node": "MESH:D011239",
        "drug_name": "Prednisolone",
        "disease_node": "MESH:D005764",
        "disease_name": "Gastroesophageal Reflux",
        "edit_link_info": {
            "source_moa_id": "DB00860_MESH_D008224_1",
            "source_node": "UniProt:P35354",
            "source_node_name": "Prostaglandin G/H synthase 2",
            "source_node_type": "Protein",
            "target_moa_id": "DB00863_MESH_D005764_1",
            "target_node": "UniProt:P25021",
            "target_node_name": "Histamine H2 receptor",
            "target_node_type": "Protein",
            "new_relation": "increases activity of",
        },
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Prednisolone | increases activity of | Protein: Glucocorticoid receptor\n"
            "Protein: Glucocorticoid receptor | decreases activity of | Protein: Prostaglandin "
            "G/H Synthase 2\n"
            "Protein: Prostaglandin G/H Synthase 2 | increases activity of | Protein: "
            "Histamine H2 Receptor\n"
            "Protein: Histamine H2 receptor | positively regulates | Biological Process: "
            "Gastric Acid Secretion\n"
            "Biological Process: Gastric Acid Secretion | increases abundance of | Chemical: Gastric Acid\n"
            "Chemical: Gastric Acid | contributes to | Disease: Gastroesophageal Reflux\n"
        ),
    },
    {
        "drug_node": "MESH:C086276",
        "drug_name": "Cerivastatin",
        "disease_node": "MESH:D013276",
        "disease_name": "Gastric Ulcer",
        "edit_link_info": {
            "source_moa_id": "DB00439_MESH_D006937_1",
            "source_node": "MESH:C086276",
            "source_node_name": "Cerivastatin",
            "source_node_type": "Drug",
            "target_moa_id": "DB00585_MESH_D013276_1",
            "target_node": "UniProt:P25021",
            "target_node_name": "Histamine H2 receptor",
            "target_node_type": "Protein",
            "new_relation": "decreases activity of",
        },
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Cerivastatin | decreases activity of | Protein: Histamine H2 Receptor\n"
            "Protein: Histamine H2 Receptor | positively regulates | Biological Process: "
            "Gastric Acid Secretion\n"
            "Biological Process: Gastric Acid Secretion | increases abundance of | Chemical: Gastric Acid\n"
            "Chemical: Gastric Acid | contributes to | Disease: Gastric Ulcer\n"
        ),
    },
    {
        "drug_node": "MESH:D020110",
        "drug_name": "Pinacidil",
        "disease_node": "MESH:D013290",
        "disease_name": "Streptococcus Pyogenes Infection",
        "is_negative": True,
        "edit_link_info": {
            "source_moa_id": "DB01212_MESH_D013290_1",
            "source_node": "MESH:D020110",
            "source_node_name": "Pinacidil",
            "source_node_type": "Drug",
            "target_moa_id": "DB06762_MESH_D006973_1",
            "target_node": "UniProt:P11229",
            "target_node_name": "Muscarinic Acetylcholine Receptor M1",
            "target_node_type": "Protein",
            "new_relation": "positively regulates",
        },
        "example_llm_response": ("\nNO supporting beneficial Mechanism of Action found.\n"),
    },
    {
        "drug_node": "MESH:D011239",
        "drug_name": "Prednisolone",
        "disease_node": "MESH:D005764",
        "disease_name": "Gastroesophageal Reflux",
        "edit_link_info": {
            "source_moa_id": "DB00860_MESH_D008224_1",
            "source_node": "UniProt:P35354",
            "source_node_name": "Prostaglandin G/H synthase 2",
            "source_node_type": "Protein",
            "target_moa_id": "DB00863_MESH_D005764_1",
            "target_node": "UniProt:P25021",
            "target_node_name": "Histamine H2 receptor",
            "target_node_type": "Protein",
            "new_relation": "decreases activity of",
        },
        "example_llm_response": ("\nNO supporting beneficial Mechanism of Action found.\n"),
    },
    {
        "drug_node": "MESH:C086276",
        "drug_name": "Cerivastatin",
        "disease_node": "MESH:D013276",
        "disease_name": "Gastric Ulcer",
        "edit_link_info": {
            "source_moa_id": "DB00439_MESH_D006937_1",
            "source_node": "MESH:C086276",
            "source_node_name": "Cerivastatin",
            "source_node_type": "Drug",
            "target_moa_id": "DB00585_MESH_D013276_1",
            "target_node": "UniProt:P25021",
            "target_node_name": "Histamine H2 receptor",
            "target_node_type": "Protein",
            "new_relation": "increases activity of",
        },
        "example_llm_response": ("\nNO supporting beneficial Mechanism of Action found.\n"),
    },
    {
        "drug_node": "MESH:D012601",
        "drug_name": "Scopolamine",
        "disease_node": "MESH:D012559",
        "disease_name": "Schizophrenia",
        "edit_link_info": {
            "source_moa_id": "DB00747_MESH_D015863_1",
            "source_node": "UniProt:P11229",
            "source_node_name": "Muscarinic Acetylcholine Receptor M1",
            "source_node_type": "Protein",
            "target_moa_id": "DB04842_MESH_D012559_1",
            "target_node": "UniProt:P14416",
            "target_node_name": "D(2) Dopamine Receptor",
            "target_node_type": "Protein",
            "new_relation": "increases activity of",
        },
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Scopolamine | decreases activity of | Protein: Muscarinic Acetylcholine Receptor M1\n"
            "Protein: Muscarinic Acetylcholine Receptor M1 | increases activity of | Protein: "
            "D(2) Dopamine Receptor\n"
            "Protein: D(2) Dopamine Receptor | positively regulates | Biological Process: "
            "Dopamine Secretion\n"
            "Biological Process: Dopamine Secretion | increases abundance of | Chemical: Dopamine\n"
            "Chemical: Dopamine | located in | Anatomical Structure: Dorsolateral Prefrontal Cortex\n"
            "Chemical: Dopamine | located in | Anatomical Structure: Medial Forebrain Bundle\n"
            "Anatomical Structure: Medial Forebrain Bundle | correlated with | Phenotype: Psychosis\n"
            "Phenotype: Psychosis | positively correlated with | Disease: Schizophrenia\n"
            "Anatomical Structure: Dorsolateral Prefrontal Cortex | correlated with | "
            "Phenotype: Anhedonia\n"
            "Anatomical Structure: Dorsolateral Prefrontal Cortex | correlated with | "
            "Phenotype: Emotional Blunting\n"
            "Anatomical Structure: Dorsolateral Prefrontal Cortex | correlated with | "
            "Phenotype: Cognitive Impairment\n"
            "Anatomical Structure: Dorsolateral Prefrontal Cortex | correlated with | Phenotype: Apathy\n"
            "Anatomical Structure: Dorsolateral Prefrontal Cortex | correlated with | "
            "Phenotype: Poor Speech\n"
            "Phenotype: Apathy | positively correlated with | Disease: Schizophrenia\n"
            "Phenotype: Poor Speech | positively correlated with | Disease: Schizophrenia\n"
            "Phenotype: Anhedonia | positively correlated with | Disease: Schizophrenia\n"
            "Phenotype: Emotional Blunting | positively correlated with | Disease: Schizophrenia\n"
            "Phenotype: Cognitive Impairment | positively correlated with | Disease: Schizophrenia\n"
        ),
    },
    {
        "drug_node": "MESH:D003348",
        "drug_name": "Cortisone Acetate",
        "disease_node": "MESH:D015464",
        "disease_name": "CML (ph+)",
        "edit_link_info": {
            "source_moa_id": "DB01380_MESH_D007634_1",
            "source_node": "UniProt:P23219",
            "source_node_name": "COX Genes",
            "source_node_type": "Protein",
            "target_moa_id": "DB00619_MESH_D015464_1",
            "target_node": "UniProt:P00519",
            "target_node_name": "BCR/ABL",
            "target_node_type": "Protein",
            "new_relation": "increases activity of",
        },
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Cortisone Acetate | increases activity of | Protein: Glucocorticoid Receptor\n"
            "Drug: Cortisone Acetate | decreases abundance of | Protein: COX Genes\n"
            "Protein: Glucocorticoid Receptor | decreases abundance of | Protein: COX Genes\n"
            "Protein: COX Genes | increases activity of | Protein: BCR/ABL\n"
            "Protein: BCR/ABL | causes | Disease: CML (ph+)\n"
        ),
    },
    {
        "drug_node": "MESH:D000068877",
        "drug_name": "Imatinib",
        "disease_node": "MESH:D007634",
        "disease_name": "Keratitis",
        "edit_link_info": {
            "source_moa_id": "DB00619_MESH_D015464_1",
            "source_node": "UniProt:P00519",
            "source_node_name": "BCR/ABL",
            "source_node_type": "Protein",
            "target_moa_id": "DB01380_MESH_D007634_1",
            "target_node": "UniProt:P04150",
            "target_node_name": "Glucocorticoid receptor",
            "target_node_type": "Protein",
            "new_relation": "decreases activity of",
        },
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Imatinib | decreases activity of | Protein: BCR/ABL\n"
            "Protein: BCR/ABL | decreases activity of | Protein: Glucocorticoid Receptor\n"
            "Protein: Glucocorticoid Receptor | increases abundance of | Protein: lipocortin-1\n"
            "Protein: Glucocorticoid Receptor | decreases abundance of | Protein: COX Genes\n"
            "Protein: lipocortin-1 | negatively regulates | Pathway: Prostaglandin Synthesis\n"
            "Protein: lipocortin-1 | negatively regulates | Biological Process: Immune Cell Funciton\n"
            "Biological Process: Immune Cell Funciton | positively regulates | Biological "
            "Process: Inflammation\n"
            "Protein: COX Genes | increases abundance of | Chemical: Prostaglandins\n"
            "Chemical: Prostaglandins | participates in | Biological Process: Inflammation\n"
            "Pathway: Prostaglandin Synthesis | participates in | Biological Process: Inflammation\n"
            "Pathway: Prostaglandin Synthesis | positively regulates | Biological Process: Inflammation\n"
            "Biological Process: Inflammation | causes | Disease: Keratitis\n"
        ),
    },
)

# ---- Delete-Link / Invert-Link, prompt version 2 (spec §8.3) ----
EL_TEMPLATE = (
    "\n"
    "You are a biomedical research assistant at a research hospital, assisting\n"
    "in the evaluation of drugs for treating diseases.\n"
    "\n"
    "We have some patients with an unusual combination of symptoms that are \n"
    "being treated with an experimental drug. The drug is helping with some of\n"
    "the symptoms. However some patients are showing signs of {disease_name}.\n"
    "These symptoms were observed both before and after the experimental drug was administered,\n"
    "so the experimental drug is neither causing nor curing the observed {disease_name}.\n"
    "\n"
    "{observation_dsecription}\n"
    "\n"
    "We know that the pharmacological action of the experimental drug does not rely on this interaction,\n"
    "so the question is only about the effectiveness of {drug_name} on {disease_name} in these patients.\n"
    "{known_moa_insert}\n"
    "Given this observation, for these patients, could the drug {drug_name}\n"
    "be useful in treating {disease_name}?\n"
    "\n"
    'Please provide a detailed explanation, and then output the heading "Summary", followed by\n'
    "one of the following options that best addresses the effectiveness of {drug_name} on {disease_name}:\n"
    "\n"
    "{response_options}\n"
)

# The placeholder is spelled `observation_dsecription` in the original template; kept as is.
EL_OBSERVATIONS: dict[str, str] = {
    "DELETE_LINK": (
        "We have also observed in these patients,\n"
        "when the drug {drug_name} is combined with the experimental drug,\n"
        "the {source_node_type} {source_node_name} has no effect on \n"
        "the {target_node_type} {target_node_name}."
    ),
    "CHANGE_LINK": (
        "We have also observed in these patients,\n"
        "when the drug {drug_name} is combined with the experimental drug,\n"
        "{source_change_descr} {inverted_relation} the {target_node_type} {target_node_name}."
    ),
}

# Response options in prompt order; the keys are never shown to the model.
EL_OPTIONS: dict[str, str] = {
    "No Effect": (
        "The observed behavior will not affect the drug's mechanism of action on the disease. "
        "The drug's intended effect is still active, so the drug can be used to treat the "
        "disease in these patients."
    ),
    "Partially Blocked": (
        "The observed behavior affects only one of the drug's mechanisms of action. However "
        "the drug has other mechanisms that are unaffected, so the drug could still provide "
        "therapeutic benefits in treating the disease in these patients."
    ),
    "Fully Blocked": (
        "The observed behavior suggests that the drug's mechanism of action is completely "
        "blocked in these patients. So the drug will not be effective in treating the disease "
        "in these patients."
    ),
    "Contra-indicated": (
        "Given the observed behavior, the drug could worsen the disease in these patients and "
        "potentially exacerbate its symptoms. So the drug should not be used on these patients."
    ),
}

# The optional 5th option (behind a flag; not used in the paper).
EL_UNKNOWN_OPTION: dict[str, str] = {
    "Unknown": (
        "The effect of the observed behavior on the drug's mechanism of action could not be determined."
    ),
}

# ---- Factual (known-MoA) test, prompt version 2 (spec §8.1) ----
F_TEMPLATE = (
    "\n"
    "{prompt_persona}\n"
    "-Goal-\n"
    "{prompt_goal}\n"
    "\n"
    "-Steps-\n"
    "{prompt_instructions}\n"
    "\n"
    "######################\n"
    "-Examples-\n"
    "######################\n"
    "{prompt_examples}\n"
    "-Real Data-\n"
    "######################\n"
    "{drug_disease_prompt}\n"
    "######################\n"
    "Output:\n"
)

F_EXAMPLE = (
    "\n"
    "Example {example_nbr}:\n"
    "\n"
    "{example_drug_disease_prompt}\n"
    "################\n"
    "Output:\n"
    "{example_llm_response}\n"
    "\n"
    "#############################\n"
)

F_DRUG_DISEASE = (
    "{disease_subprompt}\n"
    "Will the drug {drug_name} be useful in treating this disease?\n"
    "If so, please provide a Mechanism of Action for the drug.\n"
)

F_PERSONA = (
    "You are a biomedical research assistant, assisting in the evaluation of drugs for treating diseases."
)

F_GOAL = (
    "Given the name or description of a disease, and the name or description of a drug, "
    "determine whether or not the drug might be useful in treating the disease, and if it is "
    "useful, provide a Mechanism of Action for the drug."
)

# The factual prompt's NO sentence (step 1 asks for it verbatim; `biorab.drugmech.parsing.answer_options`).
F_NEGATIVE_RESPONSE = "NO supporting Mechanism of Action found."

F_INSTRUCTIONS = (
    "\n"
    f'1. Say "YES." or "{F_NEGATIVE_RESPONSE}" depending on whether the drug '
    "might be useful in treating the disease.\n"
    "\n"
) + MOA_ANSWER_FORMAT

F_DISEASE_SUBPROMPTS: dict[str, str] = {
    "ANONYMIZED_DISEASE": ("A new disease has been identified which is associated with {associations}."),
    "NAMED_DISEASE": ("I would like to find a treatment for the disease {disease_name}."),
    "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS": (
        "I would like to find a treatment for the disease {disease_name},\n"
        "which is associated with {associations}."
    ),
}

# The 5 in-context examples (4 positive, 1 negative), in prompt order (spec §8.1.3).
F_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "moa_id": "DB00945_MESH_D010146_1",
        "drug_node": "MESH:D001241",
        "drug_name": "Aspirin",
        "disease_node": "MESH:D010146",
        "disease_name": "Pain",
        "disease_association_relation": "causes",
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Aspirin | Decreases Activity Of | Protein: Prostaglandin G/H synthase 1\n"
            "Drug: Aspirin | Decreases Activity Of | Protein: Prostaglandin G/H synthase 2\n"
            "Protein: Prostaglandin G/H synthase 1 | Positively Regulates | Biological "
            "Process: Prostaglandin Biosynthetic Process\n"
            "Protein: Prostaglandin G/H synthase 2 | Positively Regulates | Biological "
            "Process: Prostaglandin Biosynthetic Process\n"
            "Biological Process: Prostaglandin Biosynthetic Process | Increases Abundance Of | "
            "Chemical: Prostaglandins\n"
            "Chemical: Prostaglandins | Contributes To | Biological Process: Inflammatory Response\n"
            "Biological Process: Inflammatory Response | {disease_association_reln} | Disease: "
            "{example_disease_name}\n"
        ),
    },
    {
        "moa_id": "DB11693_MESH_D014605_1",
        "drug_node": "MESH:C484071",
        "drug_name": "Voclosporin",
        "disease_node": "MESH:D014605",
        "disease_name": "Noninfectious Uveitis",
        "disease_association_relation": "causes",
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Voclosporin | Decreases Activity Of | Protein: Calcineurin subunit B type 1\n"
            "Protein: Calcineurin subunit B type 1 | Increases Abundance Of | Protein: Nuclear "
            "factor of activated T-cells, cytoplasmic 1\n"
            "Protein: Nuclear factor of activated T-cells, cytoplasmic 1 | Increases Abundance "
            "Of | Protein: interleukin 2\n"
            "Protein: interleukin 2 | Produces | Cell: T-cell\n"
            "Cell: T-cell | {disease_association_reln} | Disease: {example_disease_name}\n"
        ),
    },
    {
        "drug_node": "MESH:D020110",
        "drug_name": "Pinacidil",
        "disease_node": "MESH:D013290",
        "disease_name": "Streptococcus Pyogenes Infection",
        "is_negative": True,
        "all_disease_associations": "the Organism: Streptococcus Pyogenes.",
        "filtered_disease_associations": "the Organism: Streptococcus Pyogenes.",
        "example_llm_response": ("\nNO supporting Mechanism of Action found.\n"),
    },
    {
        "moa_id": "DB00195_MESH_D006973_1",
        "drug_node": "MESH:D015784",
        "drug_name": "Betaxolol",
        "disease_node": "MESH:D006973",
        "disease_name": "Hypertensive Disorder",
        "disease_association_relation": "manifestation of",
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Betaxolol | Decreases Activity Of | Protein: Beta-1 adrenergic receptor\n"
            "Protein: Beta-1 adrenergic receptor | Participates In | Pathway: G Alpha (s) "
            "Signalling Events\n"
            "Pathway: G Alpha (s) Signalling Events | Increases Abundance Of | Chemical: 3,5-cyclic AMP\n"
            "Pathway: G Alpha (s) Signalling Events | Positively Regulates | Gene: "
            "Voltage-dependent calcium channel, L-type, alpha-1 subunit\n"
            "Chemical: 3,5-cyclic AMP | Positively Correlated With | Biological Process: Heart "
            "Contraction\n"
            "Gene: Voltage-dependent calcium channel, L-type, alpha-1 subunit | Positively "
            "Correlated With | Biological Process: Heart Contraction\n"
            "Biological Process: Heart Contraction | Positively Correlated With | Phenotype: "
            "Increased Blood Pressure\n"
            "Phenotype: Increased Blood Pressure | {disease_association_reln} | Disease: "
            "{example_disease_name}\n"
        ),
    },
    {
        "moa_id": "DB09079_MESH_D000080203_1",
        "drug_node": "MESH:C530716",
        "drug_name": "Nintedanib",
        "disease_node": "MESH:D000080203",
        "disease_name": "Hamman-Rich Syndrome",
        "disease_association_relation": "contributes to",
        "example_llm_response": (
            "\n"
            "YES.\n"
            "\n"
            "Drug: Nintedanib | Decreases Activity Of | Protein: Tyrosine-protein phosphatase "
            "non-receptor type\n"
            "Drug: Nintedanib | Decreases Activity Of | Protein: Vascular endothelial growth "
            "factor receptor 1\n"
            "Drug: Nintedanib | Decreases Activity Of | Protein: Vascular endothelial growth "
            "factor receptor 2\n"
            "Drug: Nintedanib | Decreases Activity Of | Protein: Vascular endothelial growth "
            "factor receptor 3\n"
            "Drug: Nintedanib | Decreases Activity Of | Gene: Platelet-derived growth factor, N-terminal\n"
            "Drug: Nintedanib | Decreases Activity Of | Gene: Fibroblast growth factor receptor family\n"
            "Gene: Platelet-derived growth factor, N-terminal | Participates In | Pathway: "
            "Signaling By PDGF\n"
            "Gene: Fibroblast growth factor receptor family | Participates In | Pathway: "
            "Signaling By FGFR\n"
            "Protein: Vascular endothelial growth factor receptor 1 | Participates In | "
            "Pathway: VEGFR2 Mediated Cell Proliferation\n"
            "Protein: Tyrosine-protein phosphatase non-receptor type | Participates In | "
            "Pathway: Signal Transduction\n"
            "Protein: Vascular endothelial growth factor receptor 3 | Participates In | "
            "Pathway: VEGFR2 Mediated Cell Proliferation\n"
            "Protein: Vascular endothelial growth factor receptor 2 | Participates In | "
            "Pathway: VEGFR2 Mediated Cell Proliferation\n"
            "Pathway: Signal Transduction | Positively Regulates | Biological Process: "
            "Fibroblast Proliferation\n"
            "Pathway: Signaling By PDGF | Positively Regulates | Biological Process: "
            "Fibroblast Proliferation\n"
            "Pathway: Signaling By FGFR | Positively Regulates | Biological Process: "
            "Fibroblast Proliferation\n"
            "Pathway: VEGFR2 Mediated Cell Proliferation | Positively Regulates | Biological "
            "Process: Fibroblast Proliferation\n"
            "Biological Process: Fibroblast Proliferation | {disease_association_reln} | "
            "Disease: {example_disease_name}\n"
        ),
    },
)
