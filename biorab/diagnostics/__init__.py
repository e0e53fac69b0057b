"""Judge-free claim diagnostics: RAGChecker's retriever and generator metrics computed exactly from the rows
on disk, with the task's answer items as the claims and "a retrieved hit's label holds the item" as
entailment (`claims`: one instance; `cells`: a cell's means with bootstrap CIs, added where the attribution
rates are; `report`: the run report's table). docs/metrics.md, "Claim diagnostics", defines each metric."""
