"""Results as data frames, for notebooks: `open_results(path)` opens a run's or a sweep's output folder and
gives its cells, rows, attribution and claim diagnostics as pandas DataFrames that join on ``key`` (the run
and cell id) and ``id`` (the instance), and `Results.compare` compares two cells on any subset of their
instances (n, Δ accuracy with a reproducible paired bootstrap CI, McNemar's p). docs/results_api.md shows
it on a run. pandas is imported only when a frame is made."""

from biorab.results.folder import Results, open_results
from biorab.results.subset import SubsetComparison, compare_correct

__all__ = ["Results", "SubsetComparison", "compare_correct", "open_results"]
