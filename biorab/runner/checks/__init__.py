"""Checks made before any work starts: the config against the registries and the staged data
(`validate`), the data files a config reads (`data_needs`) and the run's preconditions (`preflight`)."""
