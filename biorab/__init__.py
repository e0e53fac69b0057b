"""BioRAB: benchmark, harden and serve retrieval-augmented LLMs in biomedicine.

Importing this package is cheap: it never imports ray, torch, vllm, mlflow, faiss or transformers. The
heavy parts are imported inside the functions and CLI commands that need them.
"""

from __future__ import annotations

from biorab.common.errors import BioRABError, ConfigError, DataError, UnknownNameError
from biorab.common.records import CorpusItem, Example, Generation, Hit, OutputConstraint, Prediction, Prompt

__version__ = "0.1.0"

__all__ = [
    "BioRABError",
    "ConfigError",
    "CorpusItem",
    "DataError",
    "Example",
    "Generation",
    "Hit",
    "OutputConstraint",
    "Prediction",
    "Prompt",
    "UnknownNameError",
    "__version__",
]
