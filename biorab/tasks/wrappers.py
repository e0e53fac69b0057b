"""The Alpaca-style prompt wrappers of the original BioRAB scripts, verbatim.

The original fine-tuned with one wrapper (``3_train.py``) and decoded with another (``4_generation.py``):
the inference wrapper drops "Write a response that appropriately completes the request." when there is a
context and puts a space after ``### Instruction:``. Both are reproduced byte for byte here (a quirk of the
original, kept on purpose so that prompts match the published containers); `training_prompt` can also use
the inference wrapper so that a model is trained on exactly what it later sees.
"""

from __future__ import annotations

RESPONSE_MARKER = "### Response:"


def inference_prompt(instruction: str, context: str) -> str:
    """The prompt the original fed to the model at test time (``4_generation.py``).

    >>> inference_prompt("Say hi.", "")[-52:]
    'request.\\n\\n### Instruction: \\nSay hi.\\n\\n### Response: \\n'
    >>> inference_prompt("Label it.", "Aspirin.")[-66:]
    '### Instruction: \\nLabel it.\\n\\n### Input: \\nAspirin.\\n\\n### Response: \\n'
    """
    if not context:
        return (
            "Below is an instruction that describes a task. Write a response that appropriately completes "
            f"the request.\n\n### Instruction: \n{instruction}\n\n### Response: \n"
        )
    return (
        "Below is an instruction that describes a task, paired with an input that provides further context."
        f"\n\n### Instruction: \n{instruction}\n\n### Input: \n{context}\n\n### Response: \n"
    )


def training_prompt(instruction: str, context: str, response: str, *, match_inference: bool = False) -> str:
    """The full fine-tuning text: the original training wrapper (``3_train.py``) followed by the response.

    Args:
        instruction: the instruction with its retrieved examples.
        context: the instance's input ("" for none).
        response: the training target (see `Template.format_target`).
        match_inference: use the inference wrapper instead, so training and test prompts are identical
            (the original's mismatch is a known quirk; off by default to stay faithful).

    >>> training_prompt("I.", "C.", "R")[-53:]
    '### Instruction:\\nI.\\n\\n### Input: \\nC.\\n\\n### Response: \\nR'
    >>> training_prompt("I.", "C.", "R", match_inference=True).endswith("### Response: \\nR")
    True
    """
    if match_inference:
        return inference_prompt(instruction, context) + response
    if not context:
        return (
            "Below is an instruction that describes a task. Write a response that appropriately completes "
            f"the request.\n\n### Instruction:\n{instruction}\n\n### Response:\n{response}"
        )
    return (
        "Below is an instruction that describes a task, paired with an input that provides further context. "
        "Write a response that appropriately completes the request.\n\n"
        f"### Instruction:\n{instruction}\n\n### Input: \n{context}\n\n### Response: \n{response}"
    )
