"""Content-addressed blobs: large strings (tool output, file contents, raw provider responses)
stored once, zstd-compressed, keyed by the SHA-256 of their raw bytes."""

from __future__ import annotations

import hashlib

import msgspec
import zstandard

from .events import BlobRef

PREVIEW_CHARS = 200
"""How much of a blob's text an event keeps inline for listings."""

ZSTD_LEVEL = 3


class Blob(msgspec.Struct, frozen=True):
    """Bytes about to be stored, with the reference an event will carry."""

    ref: BlobRef
    data: bytes


def blob_of(data: bytes | str, *, preview_chars: int = PREVIEW_CHARS) -> Blob:
    """Address ``data`` (text is stored as UTF-8). Does not redact: use ``Store.blob``."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
    preview = raw[: preview_chars * 4].decode("utf-8", "replace")[:preview_chars]
    ref = BlobRef(sha256=hashlib.sha256(raw).hexdigest(), size=len(raw), preview=preview)
    return Blob(ref, raw)


class BlobCodec:
    """zstd compression with reused contexts (one per store; not shared across threads)."""

    def __init__(self, level: int = ZSTD_LEVEL) -> None:
        self._compressor = zstandard.ZstdCompressor(level=level)
        self._decompressor = zstandard.ZstdDecompressor()

    def compress(self, raw: bytes) -> bytes:
        return self._compressor.compress(raw)

    def decompress(self, stored: bytes, size: int) -> bytes:
        return self._decompressor.decompress(stored, max_output_size=max(size, 1))
