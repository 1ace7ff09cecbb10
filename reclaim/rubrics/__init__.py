"""The rubric files shipped with reclaim."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from replay.rubric import LoadedRubric, RubricError, parse_rubric

DEFAULT = "rubric-v1"
SHIPPED = ("rubric-v1", "rubric-v2-strict")


def shipped(name: str = DEFAULT) -> LoadedRubric:
    """A rubric shipped inside the package, by id."""
    return parse_rubric(files(__name__).joinpath(f"{name}.toml").read_text("utf-8"), name)


def load(path_or_name: str | Path) -> LoadedRubric:
    """A rubric from a file, or a shipped one by id (``rubric-v2-strict``)."""
    if str(path_or_name) in SHIPPED:
        return shipped(str(path_or_name))
    path = Path(path_or_name)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise RubricError(f"{path}: {exc.strerror or exc}") from exc
    return parse_rubric(text, str(path))
