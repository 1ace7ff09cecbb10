"""Real processes against one store file: concurrent appends, conflicts, and a SIGKILL in the
middle of a large batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from eventlog import Redactor, Store, verify
from eventlog.events import RunEnded

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from eventlog import ANY, NO_STREAM, Redactor, Store, WrongExpectedVersion
    from eventlog.events import RunEnded, ToolCallFinished
    store = Store(sys.argv[1], redactor=Redactor())
    def wait_for(flag):
        while not Path(flag).exists():
            time.sleep(0.001)
""")


def spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out.strip()


def test_two_processes_on_different_streams_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "s.db", tmp_path / "go"
    Store(path, redactor=Redactor()).close()
    writer = """
        stream, go = sys.argv[2], sys.argv[3]
        wait_for(go)
        version = NO_STREAM
        for i in range(150):
            version = store.append(stream, [RunEnded(exit_reason="natural", rounds=i)] * 4,
                                   expected_version=version).version
        print(version)
    """
    procs = [spawn(writer, str(path), f"run:{name}", str(go)) for name in ("a", "b")]
    time.sleep(0.3)
    go.touch()
    assert [finish(p) for p in procs] == ["600", "600"]
    with Store(path, create=False, redactor=Redactor()) as store:
        assert store.streams() == [("run:a", 600), ("run:b", 600)]
        assert store.head_position() == 1200
        assert verify(store).ok


def test_two_processes_appending_to_one_stream_get_one_conflict(tmp_path: Path) -> None:
    path, go = tmp_path / "s.db", tmp_path / "go"
    Store(path, redactor=Redactor()).close()
    racer = """
        wait_for(sys.argv[2])
        try:
            store.append("run:x", [RunEnded(exit_reason="natural")] * 50,
                         expected_version=NO_STREAM)
            print("appended")
        except WrongExpectedVersion as exc:
            print("conflict:", exc)
    """
    procs = [spawn(racer, str(path), str(go)) for _ in range(2)]
    time.sleep(0.3)
    go.touch()
    outcomes = sorted(finish(p) for p in procs)
    assert outcomes == [
        "appended",
        "conflict: stream run:x is at version 50, but the append expected version 0",
    ]
    with Store(path, create=False, redactor=Redactor()) as store:
        assert store.version("run:x") == 50
        assert verify(store).ok


def test_racing_writers_that_retry_on_conflict_keep_the_stream_whole(tmp_path: Path) -> None:
    path, go = tmp_path / "s.db", tmp_path / "go"
    Store(path, redactor=Redactor()).close()
    retrier = """
        wait_for(sys.argv[2])
        written = conflicts = 0
        while written < 100:
            try:
                store.append("run:x", [RunEnded(exit_reason="natural")] * 3,
                             expected_version=store.version("run:x"))
                written += 1
            except WrongExpectedVersion:
                conflicts += 1
        print(conflicts)
    """
    procs = [spawn(retrier, str(path), str(go)) for _ in range(2)]
    time.sleep(0.3)
    go.touch()
    for p in procs:
        finish(p)
    with Store(path, create=False, redactor=Redactor()) as store:
        assert [r.version for r in store.read_stream("run:x")] == list(range(1, 601))
        assert verify(store).ok


def test_sigkill_during_a_large_batch_leaves_all_or_none(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path, redactor=Redactor()) as store:
        store.append("run:big", [RunEnded(exit_reason="natural")], expected_version=0)
    big_batch = """
        output = "x" * 900
        batch = [ToolCallFinished(round=i, call_id=f"c{i}", tool="workspace_bash", ok=True,
                                  error=output + str(i)) for i in range(60_000)]
        print("appending", flush=True)
        store.append("run:big", batch, expected_version=1)
        print("done", flush=True)
    """
    proc = spawn(big_batch, str(path))
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "appending"
    wal = Path(f"{path}-wal")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > 4_000_000:  # the batch is being written
            break
        time.sleep(0.0005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.stdout.read() == "", "the kill must land before the append returned"
    assert proc.returncode == -signal.SIGKILL
    with Store(path, create=False, redactor=Redactor()) as store:
        assert store.version("run:big") in (1, 60_001)
        assert verify(store).ok
        after = store.version("run:big")
        store.append("run:big", [RunEnded(exit_reason="error")], expected_version=after)
        assert verify(store).ok
