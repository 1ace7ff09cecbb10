"""RECLAIM run bundles (``runs/<id>.json.gz``): one gzipped JSON object with the run's index
entry (``run``), its ordered rows (``events``), the release's ``analysis`` and the auditor's
loop (``audit_events``, same row shape, or null).

Rows become model turns, tool calls with their output as blobs, files written, and GPU charges
from ``cost_h100``; times are kept as seconds since the start (``elapsed_s``). The importer is
strict about what it relies on (row kinds, order, a result's call) and ignores extra keys.
``reclaim.export`` writes the same shape back, so a bundle round-trips.
"""

from __future__ import annotations

import gzip
import io
import itertools
import zlib
from collections.abc import Callable, Iterator
from typing import Any, Literal

import msgspec

from eventlog import Blob
from eventlog.events import (
    EvidenceQuote,
    FileChange,
    FilesChanged,
    GpuCharged,
    ModelTurnFinished,
    ModelTurnRequested,
    RunAnalysed,
    ToolCallFinished,
    ToolCallRequest,
    ToolCallStarted,
)

from .base import (
    Importer,
    Source,
    SourceError,
    StreamBuilder,
    Unit,
    convert,
    decode_json,
    safe_id,
)
from .reclaim_index import Context, IndexRun, run_unit
from .transcript import raw_arguments

MAX_BYTES = 1 << 30
"""Largest decompressed bundle accepted (a guard against decompression bombs)."""

RowKind = Literal["round_open", "call_start", "call_result", "final"]


class Row(msgspec.Struct):
    """One bundle row; only ``seq`` and ``kind`` are always required."""

    seq: int
    kind: RowKind
    round_index: int | None = None
    role: str | None = None
    reasoning: str | None = None
    content: str | None = None
    exit_reason: str | None = None
    finish_reason: str | None = None
    tool_name: str | None = None
    command: str | None = None
    detail_kind: Literal["command", "diff", "path", "json"] | None = None
    args: Any = None
    ok: bool | None = None
    rc: int | None = None
    duration_s: float | None = None
    cost_h100: float | None = None
    remaining_h100: float | None = None
    error: str | None = None
    path: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    truncated: bool | None = None
    t_rel_s: float | None = None


class Quote(msgspec.Struct):
    quote: str
    round: int | None = None


class Analysis(msgspec.Struct):
    paper_gist: str = ""
    target_claim: str = ""
    failure_mode_detail: str = ""
    agent_trajectory_summary: str = ""
    evidence_quotes: list[Quote] = []
    self_report: str | None = None


class Bundle(msgspec.Struct):
    run: IndexRun
    events: list[Row]
    analysis: Analysis | None = None
    audit_events: list[Row] | None = None


def gunzip(data: bytes) -> bytes:
    """The decompressed bytes, with truncation and oversize reported as SourceError."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(MAX_BYTES + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise SourceError(f"gzip data is damaged or cut short: {exc}") from exc
    if len(out) > MAX_BYTES:
        raise SourceError(f"decompresses to more than {MAX_BYTES >> 20} MiB")
    return out


def bundle_json(source: Source) -> Any:
    if "bundle" not in source.cache:
        data = gunzip(source.data) if source.data[:2] == b"\x1f\x8b" else source.data
        source.cache["bundle"] = decode_json(data)
    return source.cache["bundle"]


class BundleImporter(Importer):
    name = "reclaim-bundle"
    description = "a RECLAIM run bundle (runs/<id>.json.gz): rounds, tool output, audit loop"

    def detect(self, source: Source) -> bool:
        data = bundle_json(source)
        return isinstance(data, dict) and {"run", "events"} <= data.keys()

    def read(self, source: Source, make_blob: Callable[[bytes | str], Blob]) -> Iterator[Unit]:
        bundle: Bundle = convert(bundle_json(source), Bundle, "bundle")
        _check_order(bundle.events, "events")
        _check_order(bundle.audit_events or [], "audit_events")
        ctx = Context(source=source, format=self.name, models={}, bands={}, auditor="")
        yield run_unit(
            self,
            ctx,
            bundle.run,
            make_blob,
            middle=lambda s: add_rows(s, bundle.events, "events"),
            audit_middle=lambda s: add_rows(s, bundle.audit_events or [], "audit_events"),
            review_extra=lambda s: _add_analysis(s, bundle, self.name),
        )


def _check_order(rows: list[Row], where: str) -> None:
    for before, after in itertools.pairwise(rows):
        if after.seq <= before.seq:
            raise SourceError(f"{where}: row seq {after.seq} follows {before.seq} (out of order)")


def _add_analysis(review: StreamBuilder, bundle: Bundle, source: str) -> None:
    a = bundle.analysis
    if a is None:
        return
    review.add(
        RunAnalysed(
            run_id=safe_id(bundle.run.id),
            by=source,
            paper_gist=a.paper_gist,
            target_claim=a.target_claim,
            failure_mode_detail=a.failure_mode_detail,
            trajectory_summary=a.agent_trajectory_summary,
            evidence_quotes=tuple(
                EvidenceQuote(round=q.round, quote=q.quote) for q in a.evidence_quotes
            ),
            self_report=a.self_report or "",
        )
    )


def add_rows(stream: StreamBuilder, rows: list[Row], where: str) -> None:
    """Turn a row list into turns, tool calls, file writes and GPU charges. Calls have no ids
    in a bundle: the k-th call of round r gets ``r<r>c<k>``."""
    asked = _calls_by_round(rows, where)
    started: dict[int, int] = {}
    pending: dict[int, list[tuple[str, str]]] = {}
    for row in rows:
        r, at = row.round_index or 0, row.t_rel_s
        if row.kind in ("round_open", "final"):
            final = row.kind == "final"
            stream.add(ModelTurnRequested(round=r, tools_enabled=not final, elapsed_s=at))
            stream.add(
                ModelTurnFinished(
                    round=r,
                    content=row.content or "",
                    reasoning=row.reasoning or "",
                    tool_calls=() if final else asked.get(r, ()),
                    finish_reason=row.finish_reason,
                    error=row.error,
                    elapsed_s=at,
                )
            )
        elif row.kind == "call_start":
            call_id = f"r{r}c{started.get(r, 0)}"
            started[r] = started.get(r, 0) + 1
            pending.setdefault(r, []).append((call_id, row.tool_name or ""))
            stream.add(
                ToolCallStarted(
                    round=r,
                    call_id=call_id,
                    tool=row.tool_name or "",
                    arguments=raw_arguments(row.args),
                    detail=row.command or "",
                    detail_kind=row.detail_kind,
                    elapsed_s=at,
                )
            )
        else:
            _add_result(stream, row, pending, where)


def _calls_by_round(rows: list[Row], where: str) -> dict[int, tuple[ToolCallRequest, ...]]:
    calls: dict[int, list[ToolCallRequest]] = {}
    for row in rows:
        if row.kind == "call_start":
            if not row.tool_name:
                raise SourceError(f"{where}: row seq {row.seq}: call_start without tool_name")
            r = row.round_index or 0
            made = calls.setdefault(r, [])
            made.append(
                ToolCallRequest(
                    call_id=f"r{r}c{len(made)}",
                    name=row.tool_name,
                    arguments=raw_arguments(row.args),
                )
            )
    return {r: tuple(c) for r, c in calls.items()}


def _add_result(
    stream: StreamBuilder, row: Row, pending: dict[int, list[tuple[str, str]]], where: str
) -> None:
    r, at = row.round_index or 0, row.t_rel_s
    if not pending.get(r):
        raise SourceError(f"{where}: row seq {row.seq}: call_result with no call_start before it")
    if row.ok is None:
        raise SourceError(f"{where}: row seq {row.seq}: call_result without ok")
    call_id, tool = pending[r].pop(0)
    stream.add(
        ToolCallFinished(
            round=r,
            call_id=call_id,
            tool=tool,
            ok=row.ok,
            exit_code=row.rc,
            duration_s=row.duration_s,
            stdout=stream.blob(row.stdout),
            stderr=stream.blob(row.stderr),
            truncated=bool(row.truncated),
            error=row.error,
            elapsed_s=at,
        )
    )
    if row.path:
        stream.add(
            FilesChanged(
                round=r,
                call_id=call_id,
                changes=(FileChange(path=row.path, op="written"),),
                elapsed_s=at,
            )
        )
    if row.cost_h100 is not None:
        stream.add(
            GpuCharged(
                round=r,
                call_id=call_id,
                h100_hours=row.cost_h100,
                remaining_h100=row.remaining_h100,
                executor="imported",
                elapsed_s=at,
            )
        )


IMPORTER = BundleImporter()
