"""The benchmark's dataset rows (``data/splits/*.jsonl``): one paper and its pinned target per
line. Typed with msgspec: unknown extra keys are tolerated; a key reclaim cannot work without
(``custom_id``, ``central_claim``, ``tier``, ``match_target`` with ``metric`` and ``value``) is a
clear error naming the line. ``match_bar_kind`` may be missing (the release has one such row):
the bar kind is then unknown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from eventlog.events import BarKind, Tier
from eventlog.events.base import Doc

DataTier = Literal["Easy", "Medium", "Hard"]
TIER_OF: dict[str, Tier] = {"Easy": "run", "Medium": "retrain", "Hard": "reimplement"}
"""Data files spell the release tiers Easy, Medium, Hard."""


class Signal(msgspec.Struct, kw_only=True):
    """One availability signal with how it was verified."""

    value: Annotated[bool | None, Doc("Whether it is available.")] = None
    verification: Annotated[str, Doc("How it was verified, e.g. 'tool_verified'.")] = ""
    evidence: Annotated[str, Doc("What showed it.")] = ""


class Signals(msgspec.Struct, kw_only=True):
    """What the authors released."""

    code_available: Annotated[Signal | None, Doc("Released code.")] = None
    dataset_available: Annotated[Signal | None, Doc("Released or public data.")] = None
    weights_available: Annotated[Signal | None, Doc("Released weights.")] = None
    dataset_is_standard: Annotated[Signal | None, Doc("A standard benchmark dataset.")] = None


class VerifiedLinks(msgspec.Struct, kw_only=True, frozen=True):
    """Links checked by the dataset's builders."""

    paper_or_project: Annotated[tuple[str, ...], Doc("Paper or project pages.")] = ()
    code: Annotated[tuple[str, ...], Doc("Code links.")] = ()
    dataset: Annotated[tuple[str, ...], Doc("Dataset links.")] = ()
    weights: Annotated[tuple[str, ...], Doc("Weight links.")] = ()


class MatchTarget(msgspec.Struct, kw_only=True):
    """The pinned target result."""

    metric: Annotated[str, Doc("Metric of the target.")]
    value: Annotated[str | float, Doc("The paper's value, as written.")]
    scope: Annotated[str, Doc("Dataset, split or setting.")] = ""
    config: Annotated[str, Doc("Exact configuration (withheld from the agent).")] = ""
    match_bar_kind: Annotated[
        BarKind | None, Doc("How the target is matched; None when the row does not say.")
    ] = None


class DatasetRow(msgspec.Struct, kw_only=True):
    """One paper of the benchmark."""

    custom_id: Annotated[str, Doc("arXiv id; the row's key.")]
    central_claim: Annotated[str, Doc("The central claim.")]
    tier: Annotated[DataTier, Doc("Easy (run), Medium (retrain) or Hard (reimplement).")]
    match_target: Annotated[MatchTarget, Doc("The pinned target.")]
    claim_evidence: Annotated[str, Doc("Where the paper states the claim.")] = ""
    paper_kind: Annotated[str, Doc("Kind of paper, e.g. 'empirical'.")] = ""
    mre_config: Annotated[str, Doc("Minimal reproduction config (withheld from the agent).")] = ""
    agent_task: Annotated[str, Doc("The task as shown to the agent.")] = ""
    verified_links: Annotated[VerifiedLinks, Doc("Checked links.")] = VerifiedLinks()
    signals: Annotated[Signals | None, Doc("Release availability signals.")] = None
    split: Annotated[str | None, Doc("'eval' or 'dev'.")] = None
    score: Annotated[int | None, Doc("The dataset builders' score for the row.")] = None
    h100_estimate: Annotated[dict[str, Any] | None, Doc("Estimate of the compute needed.")] = None
    h100_hours_estimate: Annotated[float | None, Doc("Estimated H100-hours.")] = None
    audited_h100_hours: Annotated[float | None, Doc("Audited H100-hours.")] = None
    h100_recomputed_hours: Annotated[float | None, Doc("Recomputed H100-hours.")] = None
    h100_band: Annotated[str | None, Doc("Compute band from the estimate.")] = None
    selection_band: Annotated[str | None, Doc("Band the paper was selected in.")] = None

    @property
    def reclaim_tier(self) -> Tier:
        return TIER_OF[self.tier]

    @property
    def band(self) -> str | None:
        return self.selection_band or self.h100_band


class RowError(ValueError):
    """A dataset line that cannot be used, with its line number."""


_decoder = msgspec.json.Decoder(DatasetRow)


def parse_rows(data: bytes, name: str = "") -> Iterator[tuple[int, bytes, DatasetRow]]:
    """(line number, raw line, row) for each non-blank line; RowError names the bad line."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, line, _decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            where = f"{name} line {number}" if name else f"line {number}"
            raise RowError(f"{where}: {exc}") from exc


def load_rows(path: Path) -> list[DatasetRow]:
    """Every row of a dataset file."""
    return [row for _, _, row in parse_rows(path.read_bytes(), path.name)]
