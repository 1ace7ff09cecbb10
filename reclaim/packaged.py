"""Data files shipped inside the package (rubrics, rates), named by id or given as a path."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def text_of(
    package: str, path_or_name: str | Path, shipped: tuple[str, ...], error: type[Exception]
) -> tuple[str, str]:
    """(text, name) of a shipped ``<id>.toml`` of ``package`` when ``path_or_name`` is one of
    ``shipped``, else of the file at that path; an unreadable file raises ``error``."""
    if str(path_or_name) in shipped:
        name = str(path_or_name)
        return files(package).joinpath(f"{name}.toml").read_text("utf-8"), name
    path = Path(path_or_name)
    try:
        return path.read_text("utf-8"), str(path)
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from exc
