"""Names as MLflow keys take them."""

from __future__ import annotations


def mlflow_name(metric: str) -> str:
    """A metric's name as MLflow keys take it (metrics and tags alike): MLflow refuses ``@`` in a key
    (``recall@10``, ``selective/accuracy@100`` are ``recall_at_10``, ``selective/accuracy_at_100``)."""
    return metric.replace("@", "_at_")
