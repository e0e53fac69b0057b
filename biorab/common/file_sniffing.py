"""Small helpers for error messages about input files: JSON decode errors phrased once, and the
recognition of a binary format (Parquet) given where JSON lines are expected."""

from __future__ import annotations

import json

PARQUET_MAGIC = b"PAR1"


def json_error_text(e: json.JSONDecodeError) -> str:
    """``"Expecting ',' delimiter at column 7"``; messages that already end in "at" (``Unterminated string
    starting at``) are not given a second one.

    >>> json_error_text(json.JSONDecodeError("Unterminated string starting at", '{"a": "b', 6))
    'Unterminated string starting at column 7'
    >>> json_error_text(json.JSONDecodeError("Expecting value", "[", 1))
    'Expecting value at column 2'
    """
    joint = " column" if e.msg.rstrip().endswith(" at") else " at column"
    return f"{e.msg.rstrip()}{joint} {e.colno}"


def is_parquet(head: bytes) -> bool:
    """Whether a file starting with `head` is Parquet (its first four bytes are ``PAR1``)."""
    return head[:4] == PARQUET_MAGIC
