"""The store: one SQLite file holding every stream's events, their hash chains and the blobs.

Appends are atomic per batch and take an expected stream version (optimistic concurrency).
Reads go by stream, by global position, or by type. Secrets are redacted before anything is
written; UPDATE and DELETE on events and blobs are refused by triggers.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from sqlite_utils import Database

from .blobs import Blob, BlobCodec, blob_of
from .chain import GENESIS, link_hash
from .codec import Codec, UnknownEvent, default_codec
from .errors import BlobMissing, CorruptEvent, DuplicateEvent, StoreUnreadable, WrongExpectedVersion
from .events import BlobRef, Event
from .redact import Redactor
from .schema import migrations

ANY = -1
"""``expected_version`` that skips the concurrency check."""
NO_STREAM = 0
"""``expected_version`` of a stream that must not exist yet."""

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=30000",
    "PRAGMA cache_size=-65536",
)
_STREAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._/@+=-]{0,254}")
_SQLITE_MAGIC = b"SQLite format 3\x00"
COLUMNS = (
    "position",
    "stream",
    "version",
    "event_id",
    "type",
    "schema_version",
    "recorded_at",
    "payload",
    "prev_hash",
    "hash",
)
"""Columns of the events table, in the order reads return them."""
_COLUMNS = ", ".join(COLUMNS)
INSERT = (
    f"INSERT INTO events ({', '.join(COLUMNS[1:])}) VALUES ({', '.join('?' * len(COLUMNS[1:]))})"
)
"""The one statement that writes events (the position is assigned by SQLite)."""


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """A stored event with its envelope."""

    position: int
    """Global position: increases with every append to the store."""
    stream: str
    """Stream id, e.g. ``run:<id>``."""
    version: int
    """Position inside the stream, from 1."""
    event_id: str
    """UUID of the event, stable across export and import."""
    type: str
    """The event's type tag."""
    schema_version: int
    """Schema version the payload was written with."""
    recorded_at: datetime
    """When the event was recorded (UTC)."""
    event: Event | UnknownEvent
    """The decoded event (upcast to the current version)."""
    prev_hash: str
    """Hash of the previous event in the stream ('' for the first)."""
    hash: str
    """This event's link in the chain."""


class NewEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event to append with an id or time of its own (imports keep the source's)."""

    event: Event | UnknownEvent
    event_id: str | uuid.UUID | None = None
    recorded_at: datetime | None = None


class Appended(msgspec.Struct, frozen=True, kw_only=True):
    """What an append did."""

    stream: str
    version: int
    """The stream's version after the append."""
    first_position: int
    last_position: int
    written: bool
    """False when every event was already stored (an idempotent repeat)."""


class Store:
    """An event store in one SQLite file. Not thread-safe: one Store per thread or task."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        durable: bool = True,
        codec: Codec | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.path = Path(path)
        self.codec = codec or default_codec()
        self.redactor = redactor or Redactor.from_environ()
        self._blobs = BlobCodec()
        _check_file(self.path, create)
        try:
            self.conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30
            )
            for pragma in (*PRAGMAS, f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}"):
                self.conn.execute(pragma)
            self.db = Database(self.conn)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreUnreadable(f"{self.path}: not a readable reclaim store ({exc})") from exc

    def _migrate(self) -> None:
        names = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master")}
        if names and "events" not in names:
            raise StoreUnreadable(f"{self.path}: a SQLite database, but not a reclaim store")
        if not migrations.pending(self.db):
            return
        with self._write():
            migrations.apply(self.db)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- writing -------------------------------------------------------------------------

    def blob(self, data: bytes | str) -> Blob:
        """Redact and address ``data`` without writing it; pass it to ``append(blobs=...)``."""
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        return blob_of(self.redactor.redact_bytes(raw))

    def put_blob(self, data: bytes | str) -> BlobRef:
        """Store one blob now (redacted) and return its reference."""
        blob = self.blob(data)
        with self._write():
            self._insert_blobs([blob])
        return blob.ref

    def _insert_blobs(self, blobs: Iterable[Blob]) -> None:
        rows = {b.ref.sha256: b for b in blobs}
        if not rows:
            return
        stored = self._existing_blobs(list(rows))
        self.conn.executemany(
            "INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)",
            [
                (sha, b.ref.size, self._blobs.compress(b.data))
                for sha, b in rows.items()
                if sha not in stored
            ],
        )

    def _existing_blobs(self, hashes: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT sha256 FROM blobs WHERE sha256 IN ({marks})", chunk
                )
            )
        return found

    def append(
        self,
        stream: str,
        events: Sequence[Event | UnknownEvent | NewEvent],
        *,
        expected_version: int,
        blobs: Iterable[Blob] = (),
    ) -> Appended:
        """Append ``events`` to ``stream`` atomically, with ``blobs`` in the same transaction.

        ``expected_version`` is the version the stream must be at (``NO_STREAM`` for a new
        stream, ``ANY`` to skip the check); otherwise WrongExpectedVersion is raised and nothing
        is written. Repeating an append whose events (by id) are all stored already writes
        nothing and returns ``written=False``."""
        if not _STREAM_NAME.fullmatch(stream):
            raise ValueError(f"invalid stream name {stream!r}")
        items = [e if isinstance(e, NewEvent) else NewEvent(event=e) for e in events]
        if not items:
            raise ValueError("nothing to append")
        rows = self._prepare(items)
        given_ids = [row[0] for row, item in zip(rows, items, strict=True) if item.event_id]
        blob_list = list(blobs)
        with self._write():
            head = self.conn.execute(
                "SELECT version, hash FROM events WHERE stream = ? ORDER BY version DESC LIMIT 1",
                (stream,),
            ).fetchone()
            version, prev = head if head else (0, GENESIS)
            if given_ids:
                repeat = self._repeat_of(stream, [row[0] for row in rows], given_ids)
                if repeat is not None:
                    return repeat
            if expected_version != ANY and version != expected_version:
                raise WrongExpectedVersion(stream, expected_version, version)
            self._insert_blobs(blob_list)
            self.conn.executemany(INSERT, _chained(stream, version, prev, rows))
            last_position = self.conn.execute(
                "SELECT position FROM events WHERE stream = ? AND version = ?",
                (stream, version + len(rows)),
            ).fetchone()[0]
        return Appended(
            stream=stream,
            version=version + len(rows),
            first_position=last_position - len(rows) + 1,
            last_position=last_position,
            written=True,
        )

    def _prepare(self, items: list[NewEvent]) -> list[tuple[str, str, int, str, bytes]]:
        """(event id, tag, schema version, recorded-at, redacted payload) for each item."""
        now = _timestamp(None)
        fresh = iter(_new_ids(sum(1 for item in items if not item.event_id)))
        rows = []
        for item in items:
            event = item.event
            if isinstance(event, UnknownEvent):
                tag, schema_version = event.type, event.schema_version
                payload = self.redactor.redact_bytes(event.payload.encode("utf-8"))
            else:
                tag = self.codec.tag(event)
                schema_version = self.codec.versions[tag]
                payload = self.codec.encode(event)
                if self.redactor.suspicious(payload):
                    payload = self._redacted(event, payload)
            event_id = str(uuid.UUID(str(item.event_id))) if item.event_id else next(fresh)
            at = now if item.recorded_at is None else _timestamp(item.recorded_at)
            rows.append((event_id, tag, schema_version, at, payload))
        return rows

    def _redacted(self, event: Event, payload: bytes) -> bytes:
        data = msgspec.json.decode(payload)
        cleaned = self.redactor.redact_value(data)
        if cleaned == data:
            return payload
        return self.codec.encode(msgspec.convert(cleaned, type(event)))

    def _repeat_of(self, stream: str, ids: list[str], given: list[str]) -> Appended | None:
        marks = ",".join("?" * len(given))
        found = {
            r[0]: r[1:]
            for r in self.conn.execute(
                "SELECT event_id, stream, version, position FROM events "
                f"WHERE event_id IN ({marks})",
                given,
            )
        }
        if not found:
            return None
        if len(found) == len(ids) and all(found[i][0] == stream for i in ids):
            versions = [found[i][1] for i in ids]
            if versions == list(range(versions[0], versions[0] + len(ids))):
                return Appended(
                    stream=stream,
                    version=versions[-1],
                    first_position=found[ids[0]][2],
                    last_position=found[ids[-1]][2],
                    written=False,
                )
        event_id = next(iter(found))
        where = found[event_id]
        raise DuplicateEvent(
            f"event {event_id} is already stored as {where[0]} version "
            f"{where[1]}; this append would store it again in {stream}"
        )

    # -- reading -------------------------------------------------------------------------

    def version(self, stream: str) -> int:
        """The stream's current version (0 when it does not exist)."""
        row = self.conn.execute(
            "SELECT max(version) FROM events WHERE stream = ?", (stream,)
        ).fetchone()
        return row[0] or 0

    def head_position(self) -> int:
        """The global position of the last event (0 for an empty store)."""
        return self.conn.execute("SELECT max(position) FROM events").fetchone()[0] or 0

    def streams(self, prefix: str = "", *, limit: int = -1) -> list[tuple[str, int]]:
        """Streams (optionally those starting with ``prefix``) with their versions, by name."""
        return self.conn.execute(
            "SELECT stream, max(version) FROM events WHERE stream >= ? AND stream < ? "
            "GROUP BY stream ORDER BY stream LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        ).fetchall()

    def has_type(self, type_: str) -> bool:
        """Whether any event of this type is stored."""
        return (
            self.conn.execute("SELECT 1 FROM events WHERE type = ? LIMIT 1", (type_,)).fetchone()
            is not None
        )

    def read_stream(self, stream: str, *, from_version: int = 1) -> Iterator[Recorded]:
        """The events of one stream in order, from ``from_version``."""
        yield from self._paged(
            f"SELECT {_COLUMNS} FROM events WHERE stream = ? AND version > ? "
            "ORDER BY version LIMIT ?",
            [stream],
            from_version - 1,
            key=2,
        )

    def read_all(
        self, *, after: int = 0, types: Iterable[str] | None = None, page: int = 2000
    ) -> Iterator[Recorded]:
        """Every event after global position ``after``, in order (optionally only ``types``).
        Reads page by page, so a long scan holds no read transaction open."""
        if types is None:
            query = f"SELECT {_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?"
            yield from self._paged(query, [], after, key=0, page=page)
            return
        names = sorted(set(types))
        marks = ",".join("?" * len(names))
        query = (
            f"SELECT {_COLUMNS} FROM events WHERE type IN ({marks}) AND position > ? "
            "ORDER BY position LIMIT ?"
        )
        yield from self._paged(query, names, after, key=0, page=page)

    def read_type(self, type_: str, *, after: int = 0) -> Iterator[Recorded]:
        """Every event of one type after global position ``after``."""
        return self.read_all(after=after, types=[type_])

    def get(self, event_id: str | uuid.UUID) -> Recorded | None:
        """One event by id."""
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_id = ?", (str(event_id),)
        ).fetchone()
        return self._recorded(row) if row else None

    def _paged(
        self, query: str, params: list[object], lower: int, key: int, page: int = 2000
    ) -> Iterator[Recorded]:
        """Run ``query`` (ending in ``> ? ... LIMIT ?``) page by page; ``key`` is the index of
        the column the pages advance on."""
        while True:
            rows = self.conn.execute(query, [*params, lower, page]).fetchall()
            for row in rows:
                yield self._recorded(row)
            if len(rows) < page:
                return
            lower = rows[-1][key]

    def _recorded(self, row: tuple) -> Recorded:
        position, stream, version, event_id, tag, schema_version, at, payload, prev, link = row
        try:
            event = self.codec.decode(tag, schema_version, payload)
        except CorruptEvent as exc:
            raise CorruptEvent(f"{stream} version {version}: {exc}") from exc
        return Recorded(
            position,
            stream,
            version,
            event_id,
            tag,
            schema_version,
            datetime.fromisoformat(at),
            event,
            prev,
            link,
        )

    def blob_bytes(self, sha256: str) -> bytes:
        """The raw bytes of a stored blob."""
        row = self.conn.execute(
            "SELECT size, data FROM blobs WHERE sha256 = ?", (sha256,)
        ).fetchone()
        if row is None:
            raise BlobMissing(f"no blob {sha256} in {self.path}")
        return self._blobs.decompress(row[1], row[0])

    def blob_text(self, ref: BlobRef) -> str:
        """A blob decoded as UTF-8 (undecodable bytes replaced)."""
        return self.blob_bytes(ref.sha256).decode("utf-8", "replace")

    def blob_stats(self) -> tuple[int, int, int]:
        """Number of blobs, their raw bytes, and the bytes stored after compression."""
        count, raw, stored = self.conn.execute(
            "SELECT count(*), sum(size), sum(length(data)) FROM blobs"
        ).fetchone()
        return count, raw or 0, stored or 0

    def counts(self) -> dict[str, int]:
        """Events per type."""
        return dict(
            self.conn.execute(
                "SELECT type, count(*) FROM events GROUP BY type ORDER BY type"
            ).fetchall()
        )


def _chained(
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


def _new_ids(count: int) -> list[str]:
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


def _timestamp(at: datetime | None) -> str:
    if at is None:
        at = datetime.now(UTC)
    elif at.tzinfo is None:
        raise ValueError("recorded_at must be timezone-aware")
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def _check_file(path: Path, create: bool) -> None:
    """Refuse, with one clear line, a path that cannot be a store."""
    if path.is_dir():
        raise StoreUnreadable(f"{path}: is a directory, not a store file")
    if not path.exists():
        if not create:
            raise StoreUnreadable(
                f"{path}: no store here (create one with an import, "
                "`reclaim synth` or `reclaim demo`)"
            )
        if not path.parent.exists():
            raise StoreUnreadable(f"{path}: directory {path.parent} does not exist")
        return
    size = path.stat().st_size
    if size == 0:
        if create:
            return  # an empty file (say, from `touch`) becomes a new store
        raise StoreUnreadable(f"{path}: empty file, not a store")
    with path.open("rb") as f:
        header = f.read(100)
    if not header.startswith(_SQLITE_MAGIC):
        raise StoreUnreadable(f"{path}: not a SQLite database")
    if len(header) < 100:
        raise StoreUnreadable(f"{path}: truncated ({size} bytes, shorter than a SQLite header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and size < pages * page_size:
        raise StoreUnreadable(
            f"{path}: truncated ({size} bytes, the header says {pages * page_size})"
        )
