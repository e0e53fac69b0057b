"""corpora."""
