"""`kafkarep check MODEL... [--json FILE]`: explore models and judge their expectations."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rich.console import Console

from kafkarep.cli.controller import ControllerRun
from kafkarep.cli.options import add_controller_options, add_search_options
from kafkarep.cli.run import run_model
from kafkarep.common import compiled
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.engines.registry import ENGINES
from kafkarep.engines.results import Limits, RunOptions
from kafkarep.model.config import ModelError
from kafkarep.model.guard_catalogue import all_guards
from kafkarep.output.summary import write_summary
from kafkarep.properties.model_files import load_model


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="explore models and check their properties and expectations",
        description="Explore each model, print counterexamples as step tables, write ITF traces "
        "and a summary JSON. Exit 0 when every model meets its [expect], 1 when one does not.",
    )
    parser.add_argument("models", nargs="*", type=Path, metavar="MODEL", help="model files (TOML)")
    parser.add_argument(
        "--engine", default=None, help=f"engine: {', '.join(ENGINES)} (default: the model's)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="summary JSON (default reports/summary.json)",
    )
    parser.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where traces go (default reports/)",
    )
    parser.add_argument("--max-states", type=int, default=None, metavar="N")
    parser.add_argument("--max-depth", type=int, default=None, metavar="N")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="S")
    add_search_options(parser, "the model's")
    parser.add_argument(
        "--spill-after",
        type=int,
        default=None,
        metavar="N",
        help="explorer: states a worker holds in memory before the rest of a level goes to "
        "disk (default: half the available memory; 0: never)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines or trace tables")
    saved = parser.add_argument_group("work dir (explorer and spark)")
    saved.add_argument(
        "--workdir",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each completed level here, so a killed run can be resumed",
    )
    saved.add_argument(
        "--resume",
        action="store_true",
        help="continue the run saved in --workdir (same engine and model file)",
    )
    spark = parser.add_argument_group("spark engine")
    spark.add_argument("--master", default=None, metavar="URL", help="Spark master (local[*])")
    spark.add_argument("--partitions", type=int, default=None, metavar="N")
    hypothesis = parser.add_argument_group("hypothesis engine")
    hypothesis.add_argument("--examples", type=int, default=None, metavar="N")
    hypothesis.add_argument("--steps", type=int, default=None, metavar="N")
    hypothesis.add_argument("--seed", type=int, default=None, metavar="S")
    add_controller_options(parser)
    parser.add_argument(
        "--list-guards",
        action="store_true",
        help="list the guards a model can switch off, and exit",
    )
    parser.set_defaults(run=run)


ENGINE_FLAGS = (
    "spill_after",
    "master",
    "partitions",
    "workdir",
    "resume",
    "examples",
    "steps",
    "seed",
)


def engine_args(args: argparse.Namespace) -> tuple[tuple[str, Any], ...]:
    """The engine-specific flags that were given, for the engine to read from RunOptions."""
    given = ((name, getattr(args, name)) for name in ENGINE_FLAGS)
    return tuple((n, v) for n, v in given if v is not None and v is not False)  # 0 is a value


def run(args: argparse.Namespace) -> int:
    console = Console(width=160)
    if args.list_guards:
        for name, entry in all_guards().items():
            console.print(
                f"{name:55} {entry.error or '':28} {(entry.doc or ' ').splitlines()[0]}",
                highlight=False,
            )
        return OK
    if not args.models:
        raise UsageError("give at least one MODEL file (or --list-guards)")
    checks = (
        (args.max_states, "--max-states"),
        (args.max_depth, "--max-depth"),
        (args.workers, "--workers"),
        (args.spill_after, "--spill-after"),
        (args.partitions, "--partitions"),
        (args.examples, "--examples"),
        (args.steps, "--steps"),
    )
    for value, flag in checks:
        if value is not None and value < 0:
            raise UsageError(f"{flag} must be >= 0")
    if args.max_seconds is not None and not 0 <= args.max_seconds < math.inf:
        raise UsageError("--max-seconds must be a number of seconds >= 0")
    if args.engine is not None and args.engine not in ENGINES:
        raise UsageError(f"unknown engine {args.engine!r}; one of {', '.join(ENGINES)}")
    try:
        configs = [load_model(path) for path in args.models]
    except ModelError as error:
        raise UsageError(str(error)) from None
    err = Console(stderr=True, width=160)
    controller = ControllerRun(args, err)
    configs = controller.configs(configs)
    note = compiled.note()
    if note and not args.quiet:
        err.print(note, highlight=False)
    reports = []
    summary = args.json or args.reports / "summary.json"
    for cfg in configs:
        engine = args.engine or cfg.check.engine
        if engine not in ENGINES:
            raise UsageError(
                f"{cfg.path}: engine {engine!r} is not available; one of {', '.join(ENGINES)}"
            )
        limits = None
        if any(v is not None for v in (args.max_states, args.max_depth, args.max_seconds)):
            limits = Limits(
                args.max_states if args.max_states is not None else cfg.check.max_states,
                args.max_depth if args.max_depth is not None else cfg.check.max_depth,
                args.max_seconds if args.max_seconds is not None else cfg.check.max_seconds,
            )
        options = RunOptions(
            engine=engine,
            limits=limits,
            symmetry=args.symmetry,
            reduction=args.reduction,
            por=args.por,
            liveness=args.liveness,
            reports=args.reports,
            quiet=args.quiet,
            workers=args.workers,
            engine_args=engine_args(args),
        )
        try:
            with controller.around(cfg) as extra:
                report = run_model(cfg, options, console, err)
            report.extra.update(extra)
            reports.append(report)
        finally:
            if reports:
                write_summary(summary, reports)  # what is computed is kept, even on interrupt
    console.print(f"summary: {summary}", highlight=False)
    controller.finish(console)
    if controller.disagreed():
        return EXPECTATION_NOT_MET
    return OK if all(r.expectations_met for r in reports) else EXPECTATION_NOT_MET
