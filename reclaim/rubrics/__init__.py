"""The rubric files shipped with reclaim."""

from __future__ import annotations

from pathlib import Path

from replay.rubric import LoadedRubric, RubricError, parse_rubric

from ..packaged import text_of

DEFAULT = "rubric-v1"
SHIPPED = ("rubric-v1", "rubric-v2-strict")


def shipped(name: str = DEFAULT) -> LoadedRubric:
    """A rubric shipped inside the package, by id."""
    return load(name)


def load(path_or_name: str | Path) -> LoadedRubric:
    """A rubric from a file, or a shipped one by id (``rubric-v2-strict``)."""
    return parse_rubric(*text_of(__name__, path_or_name, SHIPPED, RubricError))
