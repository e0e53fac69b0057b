"""Scoring: `correctness` (per sample), `graph_matching` with `tfidf` (node matching), `responses` (a
responses file against its query files), `aggregate` and `accuracy_report` (over runs and groups).
Imports nothing."""
