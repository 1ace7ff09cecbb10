"""The audit session of a run as the audit screen shows it: one entry per auditor tool call in
order, with what it opened or ran, then the judgment and the recorded verdict."""

from __future__ import annotations

import json

import msgspec

from eventlog import Store
from eventlog.events import (
    AuditEnded,
    AuditJudged,
    AuditJudgment,
    AuditStarted,
    BlobRef,
    ToolCallFinished,
    ToolCallStarted,
)

CALL_KINDS = ("list", "read", "bash", "write", "other")


def call_kind(tool: str) -> str:
    """What an auditor call did: list, read or write run files, run bash, or other."""
    return {
        "list_run_files": "list",
        "read_run_file": "read",
        "bash": "bash",
        "write_run_file": "write",
    }.get(tool, "other")


class AuditCall(msgspec.Struct, kw_only=True):
    """One auditor tool call."""

    round: int
    call_id: str
    tool: str
    target: str
    """The path it opened or listed, or the command it ran."""
    arguments: str = ""
    ok: bool | None = None
    output: BlobRef | None = None

    @property
    def kind(self) -> str:
        return call_kind(self.tool)


class AuditView(msgspec.Struct, kw_only=True):
    """One audit session of a run."""

    audit_id: str
    stream: str
    auditor_model: str = ""
    rubric_id: str = ""
    calls: list[AuditCall] = []
    judgment: AuditJudgment | None = None
    recorded_verdict: str | None = None
    recorded_score: int | None = None
    inferred: tuple[str, ...] = ()
    status: str | None = None


def audits_of(store: Store, run_id: str) -> list[AuditView]:
    """Every audit session of the run, oldest first."""
    views = []
    for record in store.read_type("AuditStarted"):
        started = record.event
        if isinstance(started, AuditStarted) and started.run_id == run_id:
            views.append(_read(store, record.stream, started))
    return views


def _read(store: Store, stream: str, started: AuditStarted) -> AuditView:
    view = AuditView(
        audit_id=started.audit_id,
        stream=stream,
        auditor_model=started.auditor_model,
        rubric_id=started.rubric_id,
    )
    calls: dict[str, AuditCall] = {}
    for record in store.read_stream(stream):
        event = record.event
        match event:
            case ToolCallStarted():
                call = AuditCall(
                    round=event.round,
                    call_id=event.call_id,
                    tool=event.tool,
                    target=target_of(event),
                    arguments=event.arguments,
                )
                calls[event.call_id] = call
                view.calls.append(call)
            case ToolCallFinished() if event.call_id in calls:
                calls[event.call_id].ok = event.ok
                calls[event.call_id].output = event.stdout or event.output
            case AuditJudged():
                view.judgment = event.judgment
                view.recorded_verdict = event.recorded_verdict
                view.recorded_score = event.recorded_score
                view.inferred = event.inferred
            case AuditEnded():
                view.status = event.status
    return view


def target_of(call: ToolCallStarted) -> str:
    """The path or command a call names, from its arguments (or its display detail)."""
    try:
        args = json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        args = {}
    if isinstance(args, dict):
        for key in ("path", "command", "cmd", "url"):
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
    return call.detail or call.arguments
