"""An event's envelope as the store writes it: ids, recorded-at times and chained rows."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from .chain import link_hash


def chained(
    stream: str, version: int, prev: str, rows: list[tuple[str, str, int, str, bytes]]
) -> list[tuple]:
    """Insert rows for ``rows`` appended after ``version`` whose last hash is ``prev``."""
    inserts = []
    for event_id, tag, schema_version, recorded_at, payload in rows:
        version += 1
        link = link_hash(prev, stream, version, event_id, tag, schema_version, recorded_at, payload)
        inserts.append(
            (
                stream,
                version,
                event_id,
                tag,
                schema_version,
                recorded_at,
                payload.decode(),
                prev,
                link,
            )
        )
        prev = link
    return inserts


def new_ids(count: int) -> list[str]:
    """``count`` new event ids: UUIDv7 (48-bit millisecond time, then random bits).

    Time-ordered ids keep inserts into the unique id index near its end; random (v4) ids
    scatter them over the whole index, which slows appends as a store grows. Formatting one
    urandom read is also several times faster than ``uuid.uuid4()`` per id."""
    stamp = f"{time.time_ns() // 1_000_000:012x}"
    digits = os.urandom(10 * count).hex()
    ids = []
    for i in range(0, 20 * count, 20):
        h = digits[i : i + 20]
        variant = "89ab"[int(h[3], 16) & 3]
        ids.append(f"{stamp[:8]}-{stamp[8:]}-7{h[:3]}-{variant}{h[4:7]}-{h[7:19]}")
    return ids


def timestamp(at: datetime | None) -> str:
    if at is None:
        at = datetime.now(UTC)
    elif at.tzinfo is None:
        raise ValueError("recorded_at must be timezone-aware")
    return at.astimezone(UTC).isoformat(timespec="microseconds")
