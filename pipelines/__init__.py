"""Ray Data pipelines: thin ``Dataset -> Dataset`` stages around the `biorab` functions.

Only resources, batching and I/O live here; what a stage computes is `biorab.ral.row_stages.stages` (the same
code
the in-process runner calls). Importing this package does not import Ray.
"""
