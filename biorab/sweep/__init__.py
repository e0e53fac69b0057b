"""Sweeps: a matrix of models × datasets × retrievers × testbeds × rates × methods × seeds, expanded into the
`ExperimentConfig`s `biorab run` knows, planned before launch (`plan`), run model by model in one Ray job
(`run`), and reported as the paper's tables (`report`). Importing this package imports no heavy module."""

from __future__ import annotations

from biorab.sweep.config import SweepConfig, load_sweep
from biorab.sweep.expand import SweepCell, SweepRun, expand_cells, expand_runs

__all__ = ["SweepCell", "SweepConfig", "SweepRun", "expand_cells", "expand_runs", "load_sweep"]
