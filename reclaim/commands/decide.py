"""Human decisions, each an attributed event in the run's review stream (or, for a rubric,
the benchmark stream): review a flag, label a failure mode, override a verdict, mark a
decisive round, adopt a rubric. Anything unknown is refused with one line and nothing written."""

from __future__ import annotations

import argparse
import getpass

from eventlog import Store
from eventlog.events import (
    FAILURE_MODES,
    VERDICTS,
    DecisiveRoundMarked,
    Event,
    FailureModeLabelled,
    FlagReviewed,
    RubricAdopted,
    VerdictOverridden,
)
from replay.catalogue import Catalogue
from replay.catalogue_fold import FlagRow, RunRow

from ..rubrics import load
from .common import Subparsers, UsageError, add_command, open_catalogue, open_store, store_option


def _who(args: argparse.Namespace) -> str:
    return args.by or getpass.getuser()


def _why(args: argparse.Namespace) -> str:
    why = (args.why or "").strip()
    if not why:
        raise UsageError("--why needs a reason: decisions are kept with who made them and why")
    return why


def _run(catalogue: Catalogue, run_id: str) -> RunRow:
    run = catalogue.run(run_id.removeprefix("run:"))
    if run is None:
        raise UsageError(f"no run {run_id!r} in {catalogue.store.path}")
    return run


def _flag(catalogue: Catalogue, flag_id: str) -> FlagRow:
    """A flag by id, or by a unique start or end of it (6+ characters): time-ordered ids
    share their start, so the end is often the handier part."""
    if len(flag_id) < 6:
        raise UsageError(f"flag id {flag_id!r} is too short: give at least 6 characters")
    escaped = _escape_like(flag_id)
    found = catalogue.flags(
        "flag_id LIKE ? ESCAPE '\\' OR flag_id LIKE ? ESCAPE '\\'", [escaped + "%", "%" + escaped]
    )
    if not found:
        raise UsageError(f"no flag {flag_id!r} (see `reclaim flags`)")
    if len(found) > 1:
        raise UsageError(f"flag id {flag_id!r} is ambiguous: it matches {len(found)} flags")
    return found[0]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _record(store: Store, stream: str, event: Event) -> None:
    store.append(stream, [event], expected_version=store.version(stream))


def _verdict_line(before: RunRow, after: RunRow) -> str:
    def shown(run: RunRow) -> str:
        return (run.verdict or "unscored") + (" (edited)" if run.edited else "")

    if shown(before) == shown(after):
        return f"{after.run_id}: verdict stays {shown(after)}"
    return f"{after.run_id}: verdict {shown(before)} → {shown(after)}"


def cmd_review(args: argparse.Namespace) -> int:
    why, who = _why(args), _who(args)
    with open_store(args) as store:
        catalogue = open_catalogue(store)
        flag = _flag(catalogue, args.flag)
        before = _run(catalogue, flag.run_id)
        decision = "uphold" if args.uphold else "dismiss"
        _record(
            store,
            f"review:{flag.run_id}",
            FlagReviewed(
                flag_id=flag.flag_id, run_id=flag.run_id, decision=decision, by=who, why=why
            ),
        )
        catalogue.catch_up()
        after = _run(catalogue, flag.run_id)
    print(f"{decision} {flag.severity} {flag.kind} flag {flag.flag_id} ({who})")
    print(_verdict_line(before, after))
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    if args.mode not in FAILURE_MODES:
        raise UsageError(f"unknown failure mode {args.mode!r} (known: {', '.join(FAILURE_MODES)})")
    why, who = _why(args), _who(args)
    with open_store(args) as store:
        run = _run(open_catalogue(store), args.run)
        _record(
            store,
            f"review:{run.run_id}",
            FailureModeLabelled(
                run_id=run.run_id, mode=args.mode, raw_label=args.raw or args.mode, by=who, why=why
            ),
        )
    print(f"{run.run_id}: failure mode {run.mode or '-'} → {args.mode} ({who})")
    return 0


def cmd_override(args: argparse.Namespace) -> int:
    if args.verdict not in VERDICTS:
        raise UsageError(f"unknown verdict {args.verdict!r} (known: {', '.join(VERDICTS)})")
    why, who = _why(args), _who(args)
    with open_store(args) as store:
        catalogue = open_catalogue(store)
        before = _run(catalogue, args.run)
        _record(
            store,
            f"review:{before.run_id}",
            VerdictOverridden(run_id=before.run_id, verdict=args.verdict, by=who, why=why),
        )
        catalogue.catch_up()
        after = _run(catalogue, before.run_id)
    print(_verdict_line(before, after) + f" ({who})")
    return 0


def cmd_mark(args: argparse.Namespace) -> int:
    why, who = _why(args), _who(args)
    with open_store(args) as store:
        run = _run(open_catalogue(store), args.run)
        if args.round < 0 or (run.rounds and args.round > run.rounds):
            raise UsageError(
                f"{run.run_id} has rounds 1-{run.rounds}; there is no round {args.round}"
            )
        _record(
            store,
            f"review:{run.run_id}",
            DecisiveRoundMarked(run_id=run.run_id, round=args.round, by=who, why=why),
        )
    print(f"{run.run_id}: round {args.round} marked decisive ({who})")
    return 0


def cmd_adopt_rubric(args: argparse.Namespace) -> int:
    loaded = load(args.file)
    who = _who(args)
    with open_store(args, create=True) as store:
        catalogue = open_catalogue(store)
        before = {r.run_id: r for r in catalogue.runs()}
        _record(
            store,
            "benchmark",
            RubricAdopted(
                rubric_id=loaded.rubric.id,
                rubric_hash=loaded.sha256,
                content=loaded.text,
                by=who,
                why=(args.why or "").strip(),
            ),
        )
        catalogue.catch_up()
        moved = [
            r
            for r in catalogue.runs()
            if r.run_id in before and before[r.run_id].verdict != r.verdict
        ]
    print(
        f"adopted {loaded.rubric.id} ({loaded.sha256[:12]}) as the current rubric ({who}); "
        f"{len(moved)} verdicts moved"
    )
    return 0


def register(sub: Subparsers) -> None:
    def common(p: argparse.ArgumentParser, why_required: bool = True) -> None:
        store_option(p)
        p.add_argument(
            "--why",
            required=why_required,
            metavar="TEXT",
            help="the reason, kept with the decision",
        )
        p.add_argument("--by", metavar="WHO", help="who decides (default: the OS user)")

    p = add_command(
        sub,
        "review",
        cmd_review,
        "Uphold or dismiss an anti-cheat flag; the run's verdict is recomputed at once.",
    )
    p.add_argument(
        "flag", metavar="FLAG_ID", help="flag id, or a unique start or end of it (6+ characters)"
    )
    decision = p.add_mutually_exclusive_group(required=True)
    decision.add_argument("--uphold", action="store_true")
    decision.add_argument("--dismiss", action="store_true")
    common(p)

    p = add_command(sub, "label", cmd_label, "Set a run's primary failure mode.")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--mode", required=True, metavar="MODE", help=", ".join(FAILURE_MODES))
    p.add_argument("--raw", metavar="LABEL", help="the raw label, for mode 'other'")
    common(p)

    p = add_command(
        sub, "override", cmd_override, "Replace a run's computed verdict (shown as edited)."
    )
    p.add_argument("run", metavar="RUN")
    p.add_argument("--verdict", required=True, metavar="V", help=", ".join(VERDICTS))
    common(p)

    p = add_command(sub, "mark", cmd_mark, "Mark a round of a run as decisive.")
    p.add_argument("run", metavar="RUN")
    p.add_argument("round", type=int, metavar="ROUND")
    common(p)

    p = add_command(
        sub,
        "adopt-rubric",
        cmd_adopt_rubric,
        "Make a rubric file (or a shipped "
        "rubric id) the benchmark's current rubric; verdicts are recomputed.",
    )
    p.add_argument("file", metavar="FILE")
    common(p, why_required=False)
