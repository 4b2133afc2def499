"""`kafkarep differential [--kafka VERSION] [--cases N] [--seed S] [--area AREA]`: random valid
cases through Kafka's own controller (the oracle) and through the rules, compared field by field.

A disagreement is shrunk to a minimal case and printed in the conformance format, ready for
`tests/data/conformance/`. The last line is `differential: N agreed, M disagreed`. Exit 0 when M
is 0, 1 otherwise, 2 when the oracle cannot run here (no Java or Maven) or for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.kafka.releases import NEWEST, resolve
from kafkarep.oracle import differential
from kafkarep.oracle.harness import Oracle, OracleError

PROGRESS_SECONDS = 30.0  # between progress lines when stderr is not a terminal


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "differential",
        help="compare the rules with Kafka's own controller on random cases (needs Java, Maven)",
        description=__doc__,
    )
    parser.add_argument(
        "--kafka",
        default=NEWEST,
        metavar="VERSION",
        help=f"the Kafka release (default {NEWEST}; a line such as 4.1 means its newest patch)",
    )
    parser.add_argument(
        "--cases", type=int, default=1000, metavar="N", help="cases per area (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument(
        "--area",
        action="append",
        choices=differential.AREAS,
        help="an area (repeatable; default every area)",
    )
    parser.set_defaults(run=run)


def case_text(case: dict[str, Any]) -> str:
    """A case as the test data writes one: a line per top-level field."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in case.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def run(args: argparse.Namespace) -> int:
    try:
        release = resolve(args.kafka)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.cases <= 0:
        raise UsageError("--cases must be positive")
    areas = tuple(args.area or differential.AREAS)
    err = Console(width=160, stderr=True)
    out = Console(width=160)
    results: list[differential.AreaResult] = []
    try:
        with (
            _progress(err, release, args.cases * len(areas)) as tick,
            Oracle(release, lambda m: err.print(m, highlight=False)) as oracle,
        ):
            for area in areas:
                result = differential.run_area(oracle, area, args.cases, args.seed, tick)
                results.append(result)
                _print_area(out, result, release)  # as it finishes: nothing is lost
    except OracleError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        err.print(f"interrupted: {len(results)} of {len(areas)} areas done", highlight=False)
        _print_summary(out, results, release, args.seed)
        raise
    return _print_summary(out, results, release, args.seed)


@contextlib.contextmanager
def _progress(err: Console, release: str, total: int) -> Iterator[Callable[[], None]]:
    """A bar on a terminal; otherwise a line every PROGRESS_SECONDS (CI logs)."""
    if err.is_terminal:
        columns = (
            TextColumn(f"Kafka {release}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=err, transient=True) as progress:
            task = progress.add_task("cases", total=total)
            yield lambda: progress.advance(task)
        return
    started = last = time.monotonic()
    done = 0

    def tick() -> None:
        nonlocal done, last
        done += 1
        now = time.monotonic()
        if now - last >= PROGRESS_SECONDS:
            last = now
            err.print(
                f"  Kafka {release}: {done:,} of {total:,} cases, "
                f"{done / (now - started):,.0f} cases/s, {now - started:.0f}s",
                highlight=False,
            )

    yield tick


def _print_area(out: Console, r: differential.AreaResult, release: str) -> None:
    rate = (r.agreed + r.unsupported) / r.seconds if r.seconds else 0.0
    verdict = "[red]DISAGREES[/red]" if r.disagreement else "[green]agrees[/green]"
    out.print(
        f"{r.area:18} {verdict}: {r.agreed:,} agreed, {r.unsupported:,} not expressible "
        f"in Kafka {release}, {rate:,.0f} cases/s",
        highlight=False,
    )
    if r.disagreement is not None:
        for difference in r.differences:
            out.print(f"  {difference}", highlight=False)
        out.print("  the shrunk case (conformance format):", highlight=False)
        out.file.flush()
        print(case_text(r.disagreement), flush=True)


def _print_summary(
    out: Console, results: list[differential.AreaResult], release: str, seed: int
) -> int:
    agreed = sum(r.agreed for r in results)
    disagreed = sum(r.disagreement is not None for r in results)
    seconds = sum(r.seconds for r in results)
    rate = agreed / seconds if seconds else 0.0
    out.print(f"Kafka {release}, seed {seed}: {rate:,.0f} cases/s", highlight=False)
    print(f"differential: {agreed} agreed, {disagreed} disagreed", flush=True)
    return EXPECTATION_NOT_MET if disagreed else OK
