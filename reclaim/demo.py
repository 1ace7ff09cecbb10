"""``reclaim demo``: the main job on embedded defaults. For now it writes a small synthetic store,
verifies it and shows what it holds; later it runs the agent harness and auditor end to end."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.columns import Columns
from rich.console import Console
from rich.table import Table
from rich.text import Text

from eventlog import Store, verify
from replay.runs import fold_runs

from .describe import size
from .synth import synthesize

DEMO_RUNS = 12
DEMO_SEED = 7


def run_demo(directory: Path) -> int:
    # a pipe gets the full width instead of rich's 80 columns, so the run table is not squeezed
    console = Console(width=None if sys.stdout.isatty() else 150)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "reclaim.db"
    for leftover in (path, path.with_name("reclaim.db-wal"), path.with_name("reclaim.db-shm")):
        leftover.unlink(missing_ok=True)  # the demo owns this store and rebuilds it each time

    started = time.perf_counter()
    with Store(path) as store:
        summary = synthesize(store, runs=DEMO_RUNS, seed=DEMO_SEED)
        wrote = time.perf_counter() - started
        console.print(
            f"[bold]wrote[/] {summary.runs} synthetic runs ({summary.events:,} events) "
            f"to {path} in {wrote:.1f}s"
        )
        result = verify(store)
        if not result.ok:
            for found in result.breaks:
                console.print(f"[red]broken:[/] {found}", markup=True)
            return 1
        console.print(
            f"[bold green]verified[/]: {result.streams} streams, {result.events:,} "
            f"hash-chained events, {result.blobs:,} blobs"
        )
        _show_contents(console, store)
        first_run = store.streams("run:", limit=1)[0][0]
    console.print("\nNext:")
    for command in (f"reclaim events {first_run} --store {path}", f"reclaim verify --store {path}"):
        console.print(Text("  " + command), soft_wrap=True)
    return 0


def _show_contents(console: Console, store: Store) -> None:
    count, raw, stored = store.blob_stats()
    console.print(
        f"blobs: {count:,} holding {size(raw)} of tool output, {size(stored)} on disk after zstd"
    )
    counts = sorted(store.counts().items(), key=lambda kv: -kv[1])
    console.print("events by type:")
    console.print(Columns([Text(f"{n:>6,}  {name}") for name, n in counts], padding=(0, 3)))

    runs = Table(title="runs", show_edge=False, title_justify="left")
    numeric = {"rounds", "calls", "H100-h", "score", "flags"}
    for column in (
        "run",
        "agent",
        "tier",
        "band",
        "rounds",
        "calls",
        "H100-h",
        "score",
        "verdict",
        "mode",
        "flags",
    ):
        runs.add_column(
            column, justify="right" if column in numeric else "left", no_wrap=column == "run"
        )
    for run in sorted(fold_runs(store.read_all()).values(), key=lambda r: r.run_id):
        grant = f"/{run.grant_h100:g}" if run.grant_h100 else ""
        cells = (
            run.run_id,
            run.agent,
            run.tier or "?",
            run.band or "?",
            str(run.rounds),
            str(run.tool_calls),
            f"{run.spent_h100:.1f}{grant}",
            "" if run.score is None else str(run.score),
            run.verdict or "",
            run.mode or "",
            str(run.flags),
        )
        runs.add_row(*(Text(cell) for cell in cells))  # Text: run data is never markup
    console.print(runs)
