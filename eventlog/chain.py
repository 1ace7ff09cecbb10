"""The hash chain: each event's hash covers the previous event's hash in its stream, its
envelope and its payload bytes, so any edit to a stored event breaks every later link."""

from __future__ import annotations

import hashlib

GENESIS = ""
"""The previous hash of a stream's first event."""


def link_hash(
    prev_hash: str,
    stream: str,
    version: int,
    event_id: str,
    type_: str,
    schema_version: int,
    recorded_at: str,
    payload: bytes,
) -> str:
    """SHA-256 (hex) of one link. Stream names cannot hold newlines, so fields cannot blur."""
    head = (
        f"{prev_hash}\n{stream}\n{version}\n{event_id}\n{type_}\n{schema_version}\n"
        f"{recorded_at}\n".encode()
    )
    return hashlib.sha256(head + payload).hexdigest()
