"""`kafkarep differential [--kafka VERSION] [--cases N] [--seed S] [--area AREA]`: random valid
cases through Kafka's own controller (the oracle) and through the rules, compared field by field.

A disagreement is shrunk to a minimal case and printed in the conformance format, ready for
`tests/data/conformance/`. The last line is `differential: N agreed, M disagreed`. Exit 0 when M
is 0, 1 otherwise, 2 when the oracle cannot run here (no Java or Maven) or for bad input.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafkarep import differential
from kafkarep.cli.errors import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.oracle import OracleError
from kafkarep.releases import NEWEST, resolve


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
    console = Console(width=160, stderr=True)
    total = args.cases * len(areas)
    columns = (
        TextColumn(f"Kafka {release}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("cases", total=total)
            results = differential.run(
                release,
                args.cases,
                args.seed,
                areas,
                tick=lambda: progress.advance(task),
                log=lambda m: console.print(m, highlight=False),
            )
    except OracleError as error:
        raise UsageError(str(error)) from None
    out = Console(width=160)
    agreed = sum(r.agreed for r in results)
    disagreed = sum(r.disagreement is not None for r in results)
    seconds = sum(r.seconds for r in results)
    for r in results:
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
            print(case_text(r.disagreement))
    rate = agreed / seconds if seconds else 0.0
    out.print(f"Kafka {release}, seed {args.seed}: {rate:,.0f} cases/s", highlight=False)
    print(f"differential: {agreed} agreed, {disagreed} disagreed")
    return EXPECTATION_NOT_MET if disagreed else OK
