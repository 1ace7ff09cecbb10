"""reclaim's event log: typed events, an append-only SQLite store, content-addressed blobs and
hash-chain integrity. It knows nothing of agents, benchmarks or screens."""

from .blobs import Blob, blob_of
from .codec import Codec, UnknownEvent, Upcaster, default_codec
from .errors import (
    BlobMissing,
    CorruptEvent,
    DuplicateEvent,
    EventLogError,
    InvalidEvent,
    StoreUnreadable,
    WrongExpectedVersion,
)
from .events import EVENT_TYPES, AnyEvent, Event
from .redact import REDACTED, Redactor, looks_secret_name
from .store import ANY, NO_STREAM, Appended, NewEvent, Recorded, Store
from .verify import Break, Verification, verify

__all__ = [
    "ANY",
    "EVENT_TYPES",
    "NO_STREAM",
    "REDACTED",
    "AnyEvent",
    "Appended",
    "Blob",
    "BlobMissing",
    "Break",
    "Codec",
    "CorruptEvent",
    "DuplicateEvent",
    "Event",
    "EventLogError",
    "InvalidEvent",
    "NewEvent",
    "Recorded",
    "Redactor",
    "Store",
    "StoreUnreadable",
    "UnknownEvent",
    "Upcaster",
    "Verification",
    "WrongExpectedVersion",
    "blob_of",
    "default_codec",
    "looks_secret_name",
    "verify",
]
