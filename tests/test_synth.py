"""Synthetic runs: reproducible from the seed, shaped like the benchmark, consistent with the
frozen rubric and the GPU grant, and a store that verifies."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventlog import Recorded, Redactor, Store, verify
from eventlog.events import AuditJudged, FlagRaised, RunEnded, RunStarted
from reclaim.synth import AGENT_TOOLS, MB, SynthSummary, synthesize


def _open(path: Path) -> Store:
    return Store(path, durable=False, redactor=Redactor())


def _rows(store: Store) -> list[tuple]:
    return store.conn.execute(
        "SELECT position, stream, version, event_id, type, recorded_at, payload, hash "
        "FROM events ORDER BY position"
    ).fetchall()


def _by_stream(store: Store) -> dict[str, list[Recorded]]:
    streams: dict[str, list[Recorded]] = defaultdict(list)
    for rec in store.read_all():
        streams[rec.stream].append(rec)
    return streams


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, SynthSummary]]:
    """Twelve realistic runs (three papers × four agents)."""
    with _open(tmp_path_factory.mktemp("synth") / "store.db") as store:
        yield store, synthesize(store, runs=12, seed=3)


def test_same_seed_writes_the_same_log(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as a, _open(tmp_path / "b.db") as b:
        first = synthesize(a, runs=3, rounds=20, seed=42)
        second = synthesize(b, runs=3, rounds=20, seed=42)
        assert first == second
        assert _rows(a) == _rows(b)
        blobs = "SELECT sha256, size FROM blobs ORDER BY sha256"
        assert a.conn.execute(blobs).fetchall() == b.conn.execute(blobs).fetchall()


def test_another_seed_writes_another_log(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as a, _open(tmp_path / "b.db") as b:
        first = synthesize(a, runs=2, rounds=10, seed=1)
        second = synthesize(b, runs=2, rounds=10, seed=2)
        assert first.run_ids != second.run_ids
        assert [r[4:7] for r in _rows(a)] != [r[4:7] for r in _rows(b)]


def test_repeating_on_the_same_store_writes_only_new_runs(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as store:
        first = synthesize(store, runs=2, rounds=10, seed=5)
        head = store.head_position()
        assert synthesize(store, runs=2, rounds=10, seed=5).events == 0
        assert store.head_position() == head
        more = synthesize(store, runs=3, rounds=10, seed=5)
        assert more.run_ids[:2] == first.run_ids
        assert store.head_position() == head + more.events
        assert len(store.streams("run:")) == 3


def test_rounds_fixes_every_runs_round_count(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as store:
        summary = synthesize(store, runs=4, rounds=17, seed=9)
        for run_id in summary.run_ids:
            events = [r.event for r in store.read_stream(f"run:{run_id}")]
            turns = [
                e.round
                for e in events
                if type(e).__name__ == "ModelTurnRequested" and e.tools_enabled
            ]
            assert turns == list(range(1, 18))
            ended = events[-1]
            assert isinstance(ended, RunEnded) and ended.rounds == 17


def test_output_mb_sets_each_runs_tool_output(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as store:
        summary = synthesize(store, runs=2, rounds=25, output_mb=2, seed=4)
        for run_id in summary.run_ids:
            total = sum(
                ref.size
                for r in store.read_stream(f"run:{run_id}")
                if r.type == "ToolCallFinished"
                for ref in (r.event.stdout, r.event.stderr, r.event.output)
                if ref
            )
            assert abs(total - 2 * MB) <= 0.05 * 2 * MB
        assert abs(summary.blobs_bytes - 4 * MB) <= 0.05 * 4 * MB


def test_realistic_output_is_capped(synth: tuple[Store, SynthSummary]) -> None:
    store, _ = synth
    finished = [r.event for r in store.read_type("ToolCallFinished") if r.stream.startswith("run:")]
    assert all(e.stdout.size <= 8_000 for e in finished if e.stdout)
    cut = [e for e in finished if e.truncated]
    assert cut and all(e.stdout.size == 8_000 for e in cut)


def test_streams_open_and_close(synth: tuple[Store, SynthSummary]) -> None:
    store, summary = synth
    streams = _by_stream(store)
    assert len(summary.run_ids) == 12 == len(set(summary.run_ids))
    assert summary.events == store.head_position()
    assert set(summary.streams) == set(streams)
    agents = Counter(run_id.split("-")[0] for run_id in summary.run_ids)
    assert agents == {"dsv4": 3, "qwen3": 3, "minimax": 3, "muse": 3}
    for run_id in summary.run_ids:
        run = streams[f"run:{run_id}"]
        assert run[0].type == "RunStarted" and run[-1].type == "RunEnded"
        assert run[0].event.tools == AGENT_TOOLS
        audit = streams[f"audit:{run_id}-a1"]
        assert audit[0].type == "AuditStarted" and audit[-1].type == "AuditEnded"
        assert streams[f"review:{run_id}"][0].type == "FailureModeLabelled"
        times = [r.recorded_at for r in run + audit]
        assert times == sorted(times)


def test_run_totals_match_the_events(synth: tuple[Store, SynthSummary]) -> None:
    store, summary = synth
    for run_id in summary.run_ids:
        events = [r.event for r in store.read_stream(f"run:{run_id}")]
        kinds = Counter(type(e).__name__ for e in events)
        ended = events[-1]
        assert ended.tool_calls == kinds["ToolCallStarted"] == kinds["ToolCallFinished"]
        turns = [e for e in events if type(e).__name__ == "ModelTurnFinished"]
        assert ended.usage.prompt == sum(t.usage.prompt for t in turns)
        assert ended.usage.completion == sum(t.usage.completion for t in turns)
        assert kinds["ReportSubmitted"] == 1
        for plan in (e for e in events if type(e).__name__ == "PlanUpdated"):
            assert 3 <= len(plan.steps) <= 7
            assert sum(s.status == "in_progress" for s in plan.steps) <= 1


def test_written_files_are_hashed_from_their_content(synth: tuple[Store, SynthSummary]) -> None:
    store, _ = synth
    import hashlib

    writes = {
        r.event.call_id: json.loads(r.event.arguments)
        for r in store.read_type("ToolCallStarted")
        if r.event.tool == "write_file"
    }
    checked = 0
    for rec in store.read_type("FilesChanged"):
        args = writes.get(rec.event.call_id)
        if args:
            (change,) = rec.event.changes
            assert change.path == args["path"]
            assert change.sha256 == hashlib.sha256(args["content"].encode()).hexdigest()
            checked += 1
    assert checked


def test_gpu_spend_stays_inside_the_grant(synth: tuple[Store, SynthSummary]) -> None:
    store, summary = synth
    for run_id in summary.run_ids:
        events = [r.event for r in store.read_stream(f"run:{run_id}")]
        started, ended = events[0], events[-1]
        assert isinstance(started, RunStarted)
        grant = started.limits.grant_h100
        assert grant == {"0-8": 8.0, "8-32": 32.0, "32-96": 96.0}[started.band]
        charges = [e for e in events if type(e).__name__ == "GpuCharged"]
        spent = sum(c.h100_hours for c in charges)
        assert spent <= grant + 1e-6
        assert ended.spent_h100 == pytest.approx(spent, abs=1e-5)
        remaining = [c.remaining_h100 for c in charges]
        assert remaining == sorted(remaining, reverse=True)
        for c in charges:
            assert c.h100_hours == pytest.approx(c.gpus * c.held_s / 3600, abs=1e-6)


def _frozen(score: int, verified: bool | None, severities: list[str]) -> tuple[str, int]:
    """The benchmark's frozen rules, restated from the reference."""
    if "high" in severities:
        return "disqualified", 0
    if not verified and score >= 6:
        score = 1
    if score == 0:
        return "disqualified", 0
    if score >= 8:
        return "reproduced", score
    if score >= 6:
        return "partial", score
    if score == 1 and not verified:
        return "unverifiable", score
    return "not_reproduced", score


def test_recorded_verdicts_follow_the_frozen_rules(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as store:
        synthesize(store, runs=40, rounds=15, seed=11)
        flags: dict[str, list[FlagRaised]] = defaultdict(list)
        for rec in store.read_type("FlagRaised"):
            flags[rec.event.audit_id].append(rec.event)
        verdicts = Counter()
        for rec in store.read_type("AuditJudged"):
            judged: AuditJudged = rec.event
            j = judged.judgment
            raised = flags[judged.audit_id]
            assert [(f.kind, f.severity) for f in raised] == [
                (f.kind, f.severity) for f in j.cheat_flags
            ]
            rounds = {r for f in raised for r in f.cited_rounds}
            assert all(1 <= r <= 15 for r in rounds)
            expected = _frozen(j.score, j.execution_verified, [f.severity for f in raised])
            assert (judged.recorded_verdict, judged.recorded_score) == expected
            verdicts[judged.recorded_verdict] += 1
        assert len(verdicts) >= 3


def test_progress_is_called_after_each_run(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    with _open(tmp_path / "a.db") as store:
        synthesize(store, runs=3, rounds=5, seed=0, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_the_store_verifies(synth: tuple[Store, SynthSummary]) -> None:
    store, _ = synth
    assert verify(store).ok


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with _open(tmp_path / "a.db") as store:
        for bad in ({"runs": -1}, {"rounds": 0}, {"output_mb": -1.0}):
            with pytest.raises(ValueError):
                synthesize(store, **bad)
