"""Drug Mechanisms Counterfactuals (Mohan & Karaletsos 2025): a pure library on networkx and rapidfuzz.

Data and generation (one job per module):

* `biorab.drugmech.moa`: the MoA graph type, `moa_from_record`, `reduce_graph`, display helpers.
* `biorab.drugmech.drugmechdb`: `load_drugmechdb` (deprecated-id filter, parse cache), the `DrugMechDB` set.
* `biorab.drugmech.simulator`: the qualitative simulator (`simulate`, `is_valid`).
* `biorab.drugmech.cutedges` / `editlink`: cut-edges (``faithful`` / ``exact``) and editable links.
* `biorab.drugmech.editlink_gen`, `addlink`, `addlink_gen`, `factual`, `primekg`, `sampling`: the generators.
* `biorab.drugmech.generate`: one entry point writing query files with a ``.meta.json`` sidecar.
* `biorab.drugmech.stats`: reference counts and query-set statistics.

Query files, prompts, parsing, matching and scoring live in `queryfiles`, `prompts*`, `parsing*`,
`matching*`, `scoring*` and `aggregate*`. Submodules are imported explicitly; this package imports nothing.
"""
