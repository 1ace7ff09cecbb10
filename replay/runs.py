"""A fold of the log into one summary row per run: what it was, what it spent, how it was judged.

Pure: the same events in the same order give the same rows. The persisted catalogue (with
verdicts under a chosen rubric) builds on the same idea."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from eventlog import Recorded
from eventlog.events import (
    AuditJudged,
    FailureModeLabelled,
    FlagRaised,
    GpuCharged,
    ModelTurnFinished,
    RunEnded,
    RunImported,
    RunStarted,
    ToolCallFinished,
)


class RunSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One run as the log tells it so far."""

    run_id: str
    source: str = "recorded"
    """Where the run came from: 'recorded' by reclaim, or the format it was imported from."""
    paper_id: str = ""
    agent: str = ""
    tier: str | None = None
    band: str | None = None
    grant_h100: float | None = None
    rounds: int = 0
    tool_calls: int = 0
    spent_h100: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    exit_reason: str | None = None
    score: int | None = None
    verdict: str | None = None
    mode: str | None = None
    flags: int = 0


def fold_runs(records: Iterable[Recorded]) -> dict[str, RunSummary]:
    """Summaries of every run mentioned by ``records``, keyed by run id."""
    runs: dict[str, RunSummary] = {}
    for record in records:
        run_id = _run_of(record)
        if run_id is None:
            continue
        before = runs.get(run_id) or RunSummary(run_id=run_id)
        runs[run_id] = apply(before, record.event)
    return runs


def _run_of(record: Recorded) -> str | None:
    event = record.event
    if isinstance(event, AuditJudged | FlagRaised | FailureModeLabelled):
        return event.run_id
    if record.stream.startswith("run:"):
        return record.stream[4:]
    return None


def apply(run: RunSummary, event: object) -> RunSummary:
    """The summary after one more event of that run."""
    replace = msgspec.structs.replace
    match event:
        case RunImported():
            return replace(run, source=event.source_format)
        case RunStarted():
            return replace(
                run,
                paper_id=event.paper_id,
                agent=event.endpoint.agent,
                tier=event.tier,
                band=event.band,
                grant_h100=event.limits.grant_h100,
            )
        case ModelTurnFinished():
            return replace(
                run,
                rounds=max(run.rounds, event.round),
                prompt_tokens=run.prompt_tokens + (event.usage.prompt if event.usage else 0),
                completion_tokens=run.completion_tokens
                + (event.usage.completion if event.usage else 0),
            )
        case ToolCallFinished():
            return replace(run, tool_calls=run.tool_calls + 1)
        case GpuCharged():
            return replace(run, spent_h100=run.spent_h100 + event.h100_hours)
        case RunEnded():
            return replace(
                run,
                exit_reason=event.exit_reason,
                rounds=event.rounds if event.rounds is not None else run.rounds,
                tool_calls=event.tool_calls if event.tool_calls is not None else run.tool_calls,
                spent_h100=event.spent_h100 if event.spent_h100 is not None else run.spent_h100,
            )
        case AuditJudged():
            score = (
                event.recorded_score if event.recorded_score is not None else event.judgment.score
            )
            return replace(run, score=score, verdict=event.recorded_verdict)
        case FlagRaised():
            return replace(run, flags=run.flags + 1)
        case FailureModeLabelled():
            return replace(run, mode=event.mode)
        case _:
            return run
