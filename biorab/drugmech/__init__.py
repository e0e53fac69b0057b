"""Drug Mechanisms Counterfactuals (Mohan & Karaletsos 2025): a pure library on networkx and rapidfuzz.

Subpackages by role; inside each, modules are named by the query kind they serve (``add_link``,
``edit_link``, ``factual``) or by the thing they hold:

* `biorab.drugmech.graph`: MoA graphs, DrugMechDB and PrimeKG loaders, the simulator, cut-edges.
* `biorab.drugmech.queries`: query-file records and the one query-file resolver.
* `biorab.drugmech.generate`: the query-set generators, their entry point and the reference counts.
* `biorab.drugmech.prompts`: prompt rendering; the template strings as data.
* `biorab.drugmech.parsing`: answer parsers.
* `biorab.drugmech.scoring`: per-sample correctness, graph matching, responses files, aggregates.
* `biorab.drugmech.experiment`: DrugMech cells as an experiment source of ``biorab run``.
* `biorab.drugmech.tfidf` (a module): the text similarity that prompts, parsing and scoring share, so
  none of them imports another's package for it.

"spec §N" in these modules cites docs/drugmech_spec_notes.md. Submodules are imported explicitly; this
package imports nothing.
"""
