"""Rubrics as data: score bands, the caps applied after the auditor's score, a flag policy per
kind and severity, and the default bar (operator, tolerance) per bar kind.

A rubric is a TOML file validated by the ``Rubric`` type (its JSON Schema is
``schemas/rubric.json``). ``reclaim/rubrics/rubric-v1.toml`` reproduces the benchmark's frozen
rules exactly.
"""

from __future__ import annotations

import hashlib
import tomllib
from typing import Annotated, Literal

import msgspec

from eventlog.events.base import Doc

Policy = Literal["ignore", "disqualify"] | Annotated[int, msgspec.Meta(ge=0, le=10)]
"""What a counted flag does: nothing, disqualify (score 0), or cap the score at a number."""

Op = Literal["abs_rel_within", ">=", "<=", ">", "<"]


class Bands(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Score bands, after every cap: ``reproduced`` from this score up, ``partial`` from this
    score up; below, ``not_reproduced``."""

    reproduced: Annotated[int, Doc("Lowest score that reads as reproduced.", ge=0, le=10)] = 8
    partial: Annotated[int, Doc("Lowest score that reads as partial.", ge=0, le=10)] = 6


class Unverified(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The cap on a run whose execution the auditor did not verify."""

    min_score: Annotated[int, Doc("The cap applies from this score up.", ge=0, le=10)] = 6
    score: Annotated[
        int,
        Doc(
            "The score it is capped to; a run at this score with execution "
            "not verified reads as unverifiable.",
            ge=0,
            le=10,
        ),
    ] = 1


class FlagPolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a counted flag of each severity does."""

    low: Annotated[Policy, Doc("Policy for low flags.")] = "ignore"
    med: Annotated[Policy, Doc("Policy for medium flags.")] = "ignore"
    high: Annotated[Policy, Doc("Policy for high flags.")] = "disqualify"


class Bar(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The default comparison for one bar kind, used where a judgment states none."""

    op: Annotated[Op, Doc("How measured compares with reference.")]
    tolerance: Annotated[float | None, Doc("Relative tolerance (of the reference).")] = None


class Bars(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Default bars per bar kind, and what a missed bar does on re-check."""

    point_estimate: Annotated[Bar, Doc("A single number.")] = Bar(
        op="abs_rel_within", tolerance=0.05
    )
    threshold: Annotated[Bar, Doc("At least / at most a number.")] = Bar(op=">=")
    direction: Annotated[Bar, Doc("Better than a baseline, strictly.")] = Bar(op=">")
    magnitude: Annotated[Bar, Doc("A delta, judged within tolerance.")] = Bar(
        op="abs_rel_within", tolerance=0.05
    )
    cap_when_missed: Annotated[
        int | None,
        Doc(
            "Cap on the score when the re-checked bar is missed; None means the auditor's "
            "score already reflects the bar and a miss is only reported."
        ),
    ] = None

    def for_kind(self, kind: str | None) -> Bar | None:
        return getattr(self, kind, None) if kind in _BAR_KINDS else None


_BAR_KINDS = {"point_estimate", "threshold", "direction", "magnitude"}


class Rubric(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A rubric: how a judgment and its reviewed flags become a score and a verdict."""

    id: Annotated[str, Doc("Rubric id, e.g. 'rubric-v1'.")]
    description: Annotated[str, Doc("What this rubric is.")] = ""
    reported_score: Annotated[
        bool, Doc("Keep the auditor's score as reported_score when a rule lowers it.")
    ] = True
    bands: Annotated[Bands, Doc("Score bands.")] = Bands()
    unverified: Annotated[Unverified, Doc("The execution-not-verified cap.")] = Unverified()
    flags: Annotated[FlagPolicy, Doc("Flag policy by severity.")] = FlagPolicy()
    kinds: Annotated[
        dict[str, FlagPolicy],
        Doc("Per-kind policies that replace the severity policy for that kind."),
    ] = {}
    bars: Annotated[Bars, Doc("Default bars and the re-check policy.")] = Bars()

    def policy(self, kind: str, severity: str) -> Policy:
        table = self.kinds.get(kind, self.flags)
        return getattr(table, severity if severity in ("low", "med", "high") else "low")


class RubricError(ValueError):
    """A rubric file that is not valid TOML or not a valid rubric."""


class LoadedRubric(msgspec.Struct, frozen=True):
    """A rubric with the text it came from and that text's hash."""

    rubric: Rubric
    text: str
    sha256: str


def parse_rubric(text: str, name: str = "rubric") -> LoadedRubric:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"{name}: not valid TOML: {exc}") from exc
    try:
        rubric = msgspec.convert(data, Rubric)
    except msgspec.ValidationError as exc:
        raise RubricError(f"{name}: not a valid rubric: {exc}") from exc
    return LoadedRubric(rubric, text, hashlib.sha256(text.encode()).hexdigest())
