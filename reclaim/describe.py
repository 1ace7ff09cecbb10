"""One-line descriptions of events, for listings such as ``reclaim events``."""

from __future__ import annotations

from eventlog import UnknownEvent
from eventlog.events import (
    AuditJudged,
    AuditStarted,
    BlobRef,
    Event,
    FailureModeLabelled,
    FilesChanged,
    FlagRaised,
    FlagReviewed,
    GpuCharged,
    ModelTurnFinished,
    ModelTurnRequested,
    PlanUpdated,
    ReportSubmitted,
    RunEnded,
    RunStarted,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
)


def clip(text: str, width: int = 60) -> str:
    """One line of at most ``width`` characters, control characters shown escaped."""
    flat = " ".join(text.split())
    flat = "".join(c if c.isprintable() else repr(c)[1:-1] for c in flat)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _tokens(usage: TokenUsage | None) -> str:
    return "tokens unknown" if usage is None else f"{usage.prompt}+{usage.completion} tok"


def _blob(label: str, ref: BlobRef | None) -> str:
    return f" {label} {size(ref.size)} {clip(ref.preview, 40)!r}" if ref and ref.size else ""


def describe(event: Event | UnknownEvent) -> str:
    """A short human summary of an event's payload."""
    match event:
        case RunStarted():
            return (
                f"{event.run_id} paper {event.paper_id} {event.tier or '?'} "
                f"band {event.band or '?'} agent {event.endpoint.agent}"
            )
        case RunEnded():
            return (
                f"{event.exit_reason} after {event.rounds} rounds, {event.tool_calls} calls, "
                f"{event.spent_h100} H100-h"
            )
        case ModelTurnRequested():
            kind = "tools off" if not event.tools_enabled else f"{event.messages} messages"
            return f"round {event.round} request ({kind}) {clip(event.budget_line, 40)}"
        case ModelTurnFinished():
            calls = ", ".join(c.name for c in event.tool_calls) or "no tool"
            text = clip(event.content or event.reasoning, 50)
            return f"round {event.round} → {calls}; {_tokens(event.usage)} {text!r}"
        case ToolCallStarted():
            return f"round {event.round} {event.tool} {clip(event.arguments, 60)}"
        case ToolCallFinished():
            status = "ok" if event.ok else "failed"
            rc = f" rc={event.exit_code}" if event.exit_code is not None else ""
            took = f" {event.duration_s:.1f}s" if event.duration_s is not None else ""
            return (
                f"round {event.round} {event.tool} {status}{rc}{took}"
                f"{_blob('stdout', event.stdout)}{_blob('output', event.output)}"
                f"{' (truncated)' if event.truncated else ''}"
            )
        case FilesChanged():
            return "; ".join(f"{c.op} {c.path}" for c in event.changes)
        case PlanUpdated():
            done = sum(s.status == "completed" for s in event.steps)
            return f"round {event.round} plan {done}/{len(event.steps)} done"
        case GpuCharged():
            return f"round {event.round} {event.h100_hours:.3f} H100-h, {event.remaining_h100} left"
        case ReportSubmitted():
            return f"{event.status} report" + (
                f": {event.report.agent_assessment}" if event.report else ""
            )
        case AuditStarted():
            return f"audit of {event.run_id} by {event.auditor_model}"
        case AuditJudged():
            return (
                f"score {event.judgment.score}, recorded {event.recorded_verdict}, "
                f"{len(event.judgment.cheat_flags)} flags"
            )
        case FlagRaised():
            return f"{event.severity} {event.kind} by {event.source}: {clip(event.evidence, 50)}"
        case FlagReviewed():
            return f"{event.decision} {event.flag_id} by {event.by}: {clip(event.why, 40)}"
        case FailureModeLabelled():
            return f"{event.mode} by {event.by}"
        case UnknownEvent():
            return (
                f"(unknown to this reclaim: schema v{event.schema_version}) "
                f"{clip(event.payload, 60)}"
            )
        case _:
            return clip(_fields(event), 90)


def _fields(event: Event) -> str:
    return " ".join(f"{name}={getattr(event, name)!s}" for name in event.__struct_fields__)
