"""`kafkarep suite [DIR_OR_MODEL...]`: run every model and judge each against its [expect].

Models come from the directories given (recursively, default `models/`) and the files named.
Each runs in this process with its own engine (or --engine), with a progress display, then a
summary table, the JSON summary, JUnit XML and the HTML report with trace pictures. A model
marked `[suite] slow = true` is skipped unless --slow is given or its file is named; --only-slow
runs only what --slow adds (the nightly's share); --exclude GLOB skips models by file name or
path. --prove also runs `kafkarep prove` on each model after
its check (a column, JUnit cases and HTML beside the check's; see docs/suites.md). Exit code, the
most severe of: 0 every expectation met, 1 an expectation not met (check's or prove's), 2 bad
input or a model whose engine is not available, 3 an internal error while running a model (the
suite goes on with the next model).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from kafkarep.cli import suite_prove
from kafkarep.cli.options import add_search_options
from kafkarep.cli.run import run_model
from kafkarep.common import compiled
from kafkarep.common.exit_codes import (
    BAD_INPUT,
    EXPECTATION_NOT_MET,
    INTERNAL_ERROR,
    OK,
    UsageError,
    internal_error,
)
from kafkarep.engines.registry import ENGINES
from kafkarep.engines.results import Limits, RunOptions
from kafkarep.engines.results import Progress as Step
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.output.html import write_html
from kafkarep.output.junit import write_junit
from kafkarep.output.suite import (
    ERROR,
    MET,
    NOT_MET,
    SKIPPED,
    UNAVAILABLE,
    Entry,
    counterexamples,
    is_slow,
    read_baseline,
    seconds_change,
    select,
    signed,
    states_change,
    suite_document,
    summary_row,
    write_document,
)
from kafkarep.output.suite_proofs import COLOUR as PROVE_COLOUR
from kafkarep.output.suite_proofs import NOT_ENCODED
from kafkarep.properties.model_files import load_model

SEVERITY = {MET: OK, SKIPPED: OK, NOT_MET: EXPECTATION_NOT_MET, UNAVAILABLE: BAD_INPUT}
PROVE_SEVERITY = {MET: OK, NOT_ENCODED: OK, SKIPPED: OK, NOT_MET: EXPECTATION_NOT_MET}
LINE_EVERY = 10.0  # seconds between progress lines when the output is not a terminal


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "suite",
        help="run every model of a directory and judge each against its [expect]",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "targets",
        nargs="*",
        type=Path,
        metavar="DIR_OR_MODEL",
        help="model directories (searched recursively) and model files (default: models/)",
    )
    parser.add_argument(
        "--engine", default=None, help=f"engine for every model: {', '.join(ENGINES)}"
    )
    parser.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where traces and the default outputs go (default reports/)",
    )
    parser.add_argument(
        "--junit",
        type=Path,
        default=None,
        metavar="FILE",
        help="JUnit XML (default REPORTS/junit.xml)",
    )
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="DIR",
        help="HTML report directory (default REPORTS/html)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="summary JSON (default REPORTS/suite.json)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="FILE",
        help="a previous run's summary JSON: print the change in distinct states and seconds",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip models whose file name or path tail matches (repeatable): 'kip966_shipped*', "
        "'mutations/*'",
    )
    parser.add_argument(
        "--slow", action="store_true", help="also run models marked [suite] slow = true"
    )
    parser.add_argument(
        "--only-slow",
        action="store_true",
        help="run only what --slow adds: the models marked [suite] slow = true and, with --prove, "
        "those whose proof is marked [prove] slow = true (the nightly's share)",
    )
    parser.add_argument(
        "--prove",
        action="store_true",
        help="also run `kafkarep prove` on each model after its check, with its [prove] settings "
        "(minutes per model where induction does not close)",
    )
    parser.add_argument("--max-states", type=int, default=None, metavar="N")
    parser.add_argument("--max-depth", type=int, default=None, metavar="N")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        metavar="S",
        help="per model; a model cut short cannot be said to hold (not met)",
    )
    add_search_options(parser, "each model's")
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for value, flag in (
        (args.max_states, "--max-states"),
        (args.max_depth, "--max-depth"),
        (args.max_seconds, "--max-seconds"),
        (args.workers, "--workers"),
    ):
        if value is not None and not 0 <= value < math.inf:
            raise UsageError(f"{flag} must be >= 0")
    if args.engine is not None and args.engine not in ENGINES:
        raise UsageError(f"unknown engine {args.engine!r}; one of {', '.join(ENGINES)}")
    try:
        baseline = read_baseline(args.baseline) if args.baseline else None
        plan = _plan(args)
    except ModelError as error:
        raise UsageError(str(error)) from None
    if not any(cfg is not None for _, cfg, _, _ in plan):
        raise UsageError(
            f"nothing to run: all {len(plan)} model(s) skipped ({plan[0][2] if plan else ''})"
        )
    console = Console() if sys.stdout.isatty() else Console(width=160)
    err = Console(stderr=True, width=160)
    entries: list[Entry] = []
    start = time.monotonic()
    code, written = OK, ""
    try:
        _run_all(args, plan, console, err, entries)
    finally:  # what ran is reported, even when interrupted
        if entries:
            code = max(_severity(e) for e in entries)
            written = _outputs(args, entries, code, baseline, time.monotonic() - start)
    _summary(entries, baseline, console, args.prove)
    console.print(written, highlight=False)
    return code


def _severity(entry: Entry) -> int:
    code = SEVERITY.get(entry.outcome, INTERNAL_ERROR)
    if entry.proof is not None:
        code = max(code, PROVE_SEVERITY.get(entry.proof.outcome, INTERNAL_ERROR))
    return code


# (file, config to run or None, why not, why its proof is not run under --prove or "")
Plan = list[tuple[Path, ModelConfig | None, str, str]]
SLOW = "slow ([{}] slow = true): run with --slow or name it"
NOT_SLOW = "not slow: --only-slow runs what --slow adds"


def _plan(args: argparse.Namespace) -> Plan:
    plan: Plan = []
    for selected in select(args.targets or [Path("models")], args.exclude):
        if selected.excluded_by is not None:
            why = f"excluded by --exclude {selected.excluded_by}"
            plan.append((selected.path, None, why, ""))
            continue
        cfg = load_model(selected.path)
        asked = selected.named or args.slow or args.only_slow
        if is_slow(cfg) and not asked:
            plan.append((selected.path, None, SLOW.format("suite"), ""))
            continue
        slow_here = is_slow(cfg) or (args.prove and is_slow(cfg, "prove"))
        if args.only_slow and not (slow_here or selected.named):
            plan.append((selected.path, None, NOT_SLOW, ""))
            continue
        if args.prove:
            suite_prove.check_settings(cfg)
        slow_proof = args.prove and is_slow(cfg, "prove") and not asked
        plan.append((selected.path, cfg, "", SLOW.format("prove") if slow_proof else ""))
    return plan


def _limits(args: argparse.Namespace, cfg: ModelConfig) -> Limits | None:
    if all(v is None for v in (args.max_states, args.max_depth, args.max_seconds)):
        return None
    return Limits(
        args.max_states if args.max_states is not None else cfg.check.max_states,
        args.max_depth if args.max_depth is not None else cfg.check.max_depth,
        args.max_seconds if args.max_seconds is not None else cfg.check.max_seconds,
    )


def _run_all(
    args: argparse.Namespace, plan: Plan, console: Console, err: Console, entries: list[Entry]
) -> None:
    """Run the plan, appending each model's entry as it finishes."""
    runnable = [(path, cfg) for path, cfg, _, _ in plan if cfg is not None]
    console.print(
        f"suite: {len(plan)} model(s), {len(runnable)} to run, {len(plan) - len(runnable)} skipped",
        highlight=False,
    )
    note = compiled.note()
    if note and not args.quiet:
        err.print(note, highlight=False)
    live = console.is_terminal and not args.quiet
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not live,
    )
    tasks: dict[Path, TaskID] = {}
    with progress:
        for path, cfg in runnable:
            engine = args.engine or cfg.check.engine
            tasks[path] = progress.add_task(
                f"{escape(cfg.name)} [dim]({escape(engine)})[/dim]",
                start=False,
                total=None,
                stats="waiting",
            )
        for path, maybe, why, not_proved in plan:
            if maybe is None:
                entries.append(Entry(path, None, "-", SKIPPED, why))
                continue
            task = tasks[path]
            progress.start_task(task)
            entry = _run_one(args, path, maybe, console, err, progress, task, live)
            entries.append(entry)  # the check is reported even if the proof is interrupted
            if args.prove:
                progress.update(task, stats=f"{_verdict(entry.outcome)} · proving")
                if not live and not args.quiet:
                    err.print(f"  {maybe.name}: proving", highlight=False)
                options = suite_prove.options(args.workers, args.reports)
                if not_proved:
                    proof = suite_prove.not_proved(maybe, not_proved, console)
                else:
                    proof = suite_prove.prove_one(maybe, options, console)
                entry = entry._replace(proof=proof)
                entries[-1] = entry
            progress.update(task, stats=_verdict(entry.outcome), completed=1, total=1)
            progress.stop_task(task)


def _run_one(
    args: argparse.Namespace,
    path: Path,
    cfg: ModelConfig,
    console: Console,
    err: Console,
    progress: Progress,
    task: TaskID,
    live: bool,
) -> Entry:
    engine = args.engine or cfg.check.engine
    if engine not in ENGINES:
        note = f"engine {engine!r} is not available; available: {', '.join(ENGINES)}"
        console.print(
            f"{escape(cfg.name)}: [yellow]not run[/yellow]: {escape(note)}", highlight=False
        )
        return Entry(path, cfg, engine, UNAVAILABLE, note)
    last = [0.0]

    def show(p: Step) -> None:
        rate = p.distinct / p.seconds if p.seconds > 0 else 0.0
        stats = f"{p.distinct:,} distinct · depth {p.depth} · queue {p.queue:,} · {rate:,.0f}/s"
        if live:
            progress.update(task, stats=stats)
        elif not args.quiet and (p.seconds - last[0] >= LINE_EVERY or p.done):
            last[0] = p.seconds
            err.print(f"  {cfg.name}: {stats}, {p.seconds:.0f}s", highlight=False)

    options = RunOptions(
        engine=engine,
        limits=_limits(args, cfg),
        symmetry=args.symmetry,
        reduction=args.reduction,
        por=args.por,
        liveness=args.liveness,
        reports=args.reports,
        quiet=True,  # the suite prints the tables of unexpected violations only
        workers=args.workers,
    )
    started = time.monotonic()
    try:
        report = run_model(cfg, options, console, err, progress=show)
        found = counterexamples(report)
    except ImportError as error:
        note = f"engine {engine!r} is not available: {error}"
        console.print(
            f"{escape(cfg.name)}: [yellow]not run[/yellow]: {escape(note)}", highlight=False
        )
        return Entry(path, cfg, engine, UNAVAILABLE, note, wall_seconds=time.monotonic() - started)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:
        note = internal_error(error)
        console.print(
            f"{escape(cfg.name)}: [red]{escape(note)}[/red] (KAFKAREP_DEBUG=1 for the traceback)"
        )
        return Entry(path, cfg, engine, ERROR, note, wall_seconds=time.monotonic() - started)
    outcome = MET if report.expectations_met else NOT_MET
    for cx in found:
        if not cx.expected:
            console.print(cx.text(), highlight=False, markup=False)
    return Entry(path, cfg, engine, outcome, "", report, found, time.monotonic() - started)


def _verdict(outcome: str) -> str:
    colour = {MET: "green", NOT_MET: "red", SKIPPED: "dim", UNAVAILABLE: "yellow"}
    label = {MET: "met", NOT_MET: "NOT MET"}.get(outcome, outcome)
    return f"[{colour.get(outcome, 'red')}]{label}[/]"


def _prove_verdict(outcome: str | None, text: str) -> str:
    if outcome is None:
        return "-"
    colour = PROVE_COLOUR.get(outcome, "red")
    return f"[{colour}]{escape(text)}[/]"


def _summary(
    entries: list[Entry],
    baseline: dict[str, dict[str, Any]] | None,
    console: Console,
    prove: bool = False,
) -> None:
    table = Table(title="suite summary", title_justify="left")
    table.add_column("model", overflow="fold")
    for column in ("engine", "verdict", "distinct states", "depth", "seconds"):
        table.add_column(column, justify="right" if column in ("depth", "seconds") else "left")
    table.add_column("vs pinned", justify="right")
    if baseline is not None:
        table.add_column("states vs baseline", justify="right")
        table.add_column("seconds vs baseline", justify="right")
    if prove:
        table.add_column("prove", overflow="fold")
    table.add_column("note", overflow="fold")
    for entry in entries:
        row = summary_row(entry, baseline)
        cells = [
            escape(row.model),
            escape(row.engine),
            _verdict(row.outcome),
            f"{row.distinct:,}" if row.distinct is not None else "-",
            str(row.depth) if row.depth is not None else "-",
            f"{row.seconds:.1f}" if row.seconds is not None else "-",
            signed(row.pinned_change),
        ]
        if baseline is not None:
            ran = row.distinct is not None
            cells += [
                states_change(row.trend) if ran else "-",
                seconds_change(row.trend) if ran else "-",
            ]
        if prove:
            cells.append(_prove_verdict(row.prove_outcome, row.prove))
        cells.append(escape(row.note))
        table.add_row(*cells)
    console.print(table)


def _outputs(
    args: argparse.Namespace,
    entries: list[Entry],
    code: int,
    baseline: dict[str, dict[str, Any]] | None,
    seconds: float,
) -> str:
    summary = args.json or args.reports / "suite.json"
    junit = args.junit or args.reports / "junit.xml"
    html = args.html or args.reports / "html"
    write_document(summary, suite_document(entries, code, seconds))
    write_junit(junit, entries)
    page = write_html(html, entries, code, baseline, seconds)
    return f"summary: {summary}  junit: {junit}  html: {page}"
