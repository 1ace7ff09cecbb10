"""The store's schema, as sqlite-utils migrations. Add a function to change it; never edit one
that has shipped."""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("reclaim.eventlog")

APPEND_ONLY_TRIGGERS = {
    "events_no_update": "BEFORE UPDATE ON events",
    "events_no_delete": "BEFORE DELETE ON events",
    "blobs_no_update": "BEFORE UPDATE ON blobs",
    "blobs_no_delete": "BEFORE DELETE ON blobs",
}


@migrations()
def m001_events(db: Database) -> None:
    db["events"].create(
        {
            "position": int,
            "stream": str,
            "version": int,
            "event_id": str,
            "type": str,
            "schema_version": int,
            "recorded_at": str,
            "payload": str,
            "prev_hash": str,
            "hash": str,
        },
        pk="position",
        not_null={
            "stream",
            "version",
            "event_id",
            "type",
            "schema_version",
            "recorded_at",
            "payload",
            "prev_hash",
            "hash",
        },
    )
    db["events"].create_index(["stream", "version"], unique=True, index_name="events_stream")
    db["events"].create_index(["event_id"], unique=True, index_name="events_id")
    db["events"].create_index(["type", "position"], index_name="events_type")


@migrations()
def m002_blobs(db: Database) -> None:
    db["blobs"].create(
        {"sha256": str, "size": int, "data": bytes}, pk="sha256", not_null={"size", "data"}
    )


@migrations()
def m003_append_only(db: Database) -> None:
    for name, when in APPEND_ONLY_TRIGGERS.items():
        table = when.rsplit(" ", 1)[1]
        db.execute(
            f"CREATE TRIGGER {name} {when} BEGIN "
            f"SELECT RAISE(ABORT, '{table} are append-only'); END"
        )
