"""Query-set generators, one module per query kind: `add_link` (with `add_link_candidates`), `edit_link`
(Delete/Invert-Link, with `edit_link_candidates`), `factual`; `sampling` (seeded link sampling) and
`query_sets` (one entry point writing a query file with its ``.meta.json``). Imports nothing."""
