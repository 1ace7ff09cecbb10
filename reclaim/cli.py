"""The ``reclaim`` command line. Each command is a function taking the parsed arguments and
returning an exit status; errors a user can cause end in one line on stderr and status 1."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from eventlog import EventLogError, Recorded, Store, UnknownEvent, verify
from eventlog.events import EVENT_TYPES

from . import __version__
from .describe import describe

Command = Callable[[argparse.Namespace], int]
IMPORT_FORMATS = (
    "reclaim-index",
    "reclaim-bundle",
    "reclaim-dataset",
    "archive",
    "inspect",
    "swe-agent",
    "openhands",
    "openai-messages",
)
DEFAULT_STORE = "reclaim.db"


class UsageError(Exception):
    """A mistake in how a command was called, reported as one line."""


def default_store() -> str:
    return os.environ.get("RECLAIM_STORE") or DEFAULT_STORE


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    return Store(args.store, create=create)


def cmd_verify(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    with open_store(args) as store:
        result = verify(store, blobs=not args.no_blobs)
    took = time.perf_counter() - started
    if result.ok:
        print(
            f"ok: {result.streams} streams, {result.events} events, {result.blobs} blobs "
            f"verified in {took:.2f}s ({args.store})"
        )
        return 0
    for found in result.breaks:
        print(f"broken: {found}", file=sys.stderr)
    print(
        f"{args.store}: {len(result.breaks)} problem(s) in {result.streams} streams, "
        f"{result.events} events",
        file=sys.stderr,
    )
    return 1


def cmd_events(args: argparse.Namespace) -> int:
    known = {t.__name__ for t in EVENT_TYPES}
    with open_store(args) as store:
        if args.type and args.type not in known and not store.has_type(args.type):
            raise UsageError(
                f"unknown event type {args.type!r} (known: {', '.join(sorted(known))})"
            )
        if store.version(args.stream) == 0:
            similar = store.streams(args.stream.split(":")[0] + ":", limit=3) or store.streams(
                limit=3
            )
            hint = ", ".join(s for s, _ in similar)
            raise UsageError(
                f"no stream {args.stream!r} in {args.store}"
                + (f" (streams look like: {hint})" if hint else " (it is empty)")
            )
        encoder = msgspec.json.Encoder()
        out = sys.stdout
        for record in store.read_stream(args.stream):
            if args.type and record.type != args.type:
                continue
            if args.json:
                out.write(encoder.encode(_as_json(record)).decode() + "\n")
            else:
                stamp = record.recorded_at.strftime("%Y-%m-%d %H:%M:%S")
                out.write(
                    f"{record.version:>6}  #{record.position:<8} {stamp}  "
                    f"{record.type:<22} {describe(record.event)}\n"
                )
    return 0


def _as_json(record: Recorded) -> dict[str, object]:
    data = msgspec.to_builtins(record)
    if isinstance(record.event, UnknownEvent):  # show the payload as stored, not as a wrapper
        data["event"] = msgspec.json.decode(record.event.payload)
    return data


def cmd_schemas(args: argparse.Namespace) -> int:
    from . import schemas

    directory = Path(args.out) if args.out else schemas.default_dir()
    changed = schemas.write(directory)
    names = ", ".join(p.name for p in changed) or "none"
    print(f"{len(schemas.SCHEMA_TYPES)} schemas in {directory}; changed: {names}")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from .progress import progress_bar
    from .synth import synthesize

    started = time.perf_counter()
    with Store(args.store, durable=False) as store, progress_bar("synthesizing runs") as bar:
        summary = synthesize(
            store,
            runs=args.runs,
            rounds=args.rounds,
            output_mb=args.output_mb,
            seed=args.seed,
            progress=bar,
        )
    took = time.perf_counter() - started
    if summary.events == 0:
        print(
            f"{summary.runs} runs of seed {args.seed} are already in {args.store}: nothing written"
        )
        return 0
    print(
        f"wrote {summary.runs} runs, {summary.events:,} events, "
        f"{summary.blobs_bytes / 1e6:.1f} MB of tool output to {args.store} in {took:.2f}s"
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from .importers import import_paths
    from .progress import progress_bar

    with Store(args.store) as store, progress_bar("importing") as bar:
        results = import_paths(
            store, [Path(p) for p in args.paths], args.format, progress=lambda name, n: bar(n, 0)
        )
    failed = 0
    for r in results:
        if r.error:
            failed += 1
            print(f"reclaim: error: {r.path}: {r.error}", file=sys.stderr)
        elif r.skipped:
            print(f"skipped   {r.path}: {r.skipped}")
        else:
            what = _count(len(r.runs), "run") if r.runs else _count(r.units, "record")
            if r.written == 0 and r.present:
                print(f"unchanged {r.path} ({r.format}): {what} already imported")
            else:
                present = f", {r.present:,} already present" if r.present else ""
                print(f"imported  {r.path} ({r.format}): {what}, {r.written:,} events{present}")
    if not results:
        raise UsageError("no files found in " + ", ".join(args.paths))
    return 1 if failed else 0


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def cmd_export(args: argparse.Namespace) -> int:
    from .export import UnknownRun, archive_bytes, bundle_bytes, write_atomically

    with open_store(args) as store:
        try:
            data = (bundle_bytes if args.format == "reclaim-bundle" else archive_bytes)(
                store, args.run
            )
        except UnknownRun as exc:
            raise UsageError(str(exc)) from exc
    out = Path(args.output)
    write_atomically(out, data)
    print(f"exported {args.run} as {args.format} to {out} ({len(data):,} bytes)")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from replay.runs import fold_runs

    with open_store(args) as store:
        runs = sorted(fold_runs(store.read_all()).values(), key=lambda r: r.run_id)
    columns = ("run", "source", "agent", "tier", "rounds", "calls", "score", "verdict", "mode")
    table = [columns] + [
        (
            r.run_id,
            r.source,
            r.agent,
            r.tier or "-",
            str(r.rounds),
            str(r.tool_calls),
            "-" if r.score is None else str(r.score),
            r.verdict or "-",
            r.mode or "-",
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(f"{len(runs)} runs", file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(Path(args.dir))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reclaim",
        description="Record, audit, recompute and replay coding-agent runs that reproduce ML "
        "papers. Every command reads or appends the event log in one SQLite file.",
    )
    parser.add_argument("--version", action="version", version=f"reclaim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Command, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    def store_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--store",
            default=default_store(),
            metavar="PATH",
            help="store file (default: $RECLAIM_STORE, else ./reclaim.db)",
        )

    p = add(
        "demo",
        cmd_demo,
        "Write a small synthetic store into ./reclaim-demo/, verify it and show what it holds.",
    )
    p.add_argument("--dir", default="reclaim-demo", help="where to write (default: reclaim-demo)")

    p = add(
        "verify",
        cmd_verify,
        "Check every stream's hash chain, the append-only triggers "
        "and every blob; exit 1 naming the first broken link.",
    )
    store_option(p)
    p.add_argument("--no-blobs", action="store_true", help="skip re-hashing blobs")

    p = add("events", cmd_events, "Print the events of one stream in order.")
    p.add_argument(
        "stream",
        metavar="STREAM",
        help="stream id, e.g. run:<id>, audit:<id>, review:<run id>, benchmark",
    )
    store_option(p)
    p.add_argument("--type", metavar="T", help="only events of this type, e.g. ToolCallFinished")
    p.add_argument(
        "--json", action="store_true", help="one JSON object per line: envelope fields plus 'event'"
    )

    p = add(
        "import",
        cmd_import,
        "Import runs recorded elsewhere: the RECLAIM release (index, "
        "bundles, dataset rows), reclaim archives, Inspect, SWE-agent, OpenHands and "
        "OpenAI-style message logs. Formats are detected from content; directories are walked.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    store_option(p)
    p.add_argument(
        "--format",
        default="auto",
        choices=["auto", *IMPORT_FORMATS],
        help="the format of every PATH (default: detect each file's from its content)",
    )

    p = add(
        "export",
        cmd_export,
        "Export one run as a RECLAIM bundle (.json.gz) or a reclaim "
        "archive (events, envelopes and blobs, zstd).",
    )
    p.add_argument("run", metavar="RUN", help="run id (with or without 'run:')")
    store_option(p)
    p.add_argument("--format", required=True, choices=["reclaim-bundle", "archive"])
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")

    p = add(
        "runs",
        cmd_runs,
        "List the runs in a store: id, source, agent, tier, rounds, tool "
        "calls, score, verdict and failure mode.",
    )
    store_option(p)

    p = add("schemas", cmd_schemas, "Regenerate the JSON Schemas (schemas/*.json) from the types.")
    p.add_argument("--out", metavar="DIR", help="directory (default: the checkout's schemas/)")

    p = add("synth", cmd_synth, "Write realistic, reproducible synthetic runs into a store.")
    store_option(p)
    p.add_argument("--runs", type=_positive_int, default=12, help="runs to write (default 12)")
    p.add_argument("--rounds", type=_positive_int, help="tool rounds per run (default: varied)")
    p.add_argument(
        "--output-mb",
        type=_positive_float,
        metavar="N",
        help="MB of tool output per run (default: realistic sizes)",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (EventLogError, UsageError) as exc:
        return _fail(str(exc))
    except sqlite3.DatabaseError as exc:
        return _fail(f"{getattr(args, 'store', 'store')}: {exc}")
    except BrokenPipeError:  # e.g. `reclaim events ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        return _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
    except KeyboardInterrupt:
        return 130


def _fail(message: str) -> int:
    print(f"reclaim: error: {message}", file=sys.stderr)
    return 1
