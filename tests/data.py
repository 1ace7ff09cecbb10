"""Real data from ../shared/data, read in place (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("RECLAIM_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
"""../shared/data beside the checkout, or wherever $RECLAIM_SHARED_DATA says."""


def shared(*parts: str) -> Path:
    """A file under ../shared/data; a missing file is a failure, never a skip."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"real test data missing: {path}")
    return path
