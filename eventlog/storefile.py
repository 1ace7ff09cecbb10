"""Refusing, with one clear line, a path that cannot be a store: a directory, a missing file
(for reading commands), a file that is not SQLite, or a SQLite file cut short."""

from __future__ import annotations

from pathlib import Path

from .errors import StoreUnreadable

_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_file(path: Path, create: bool) -> None:
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
