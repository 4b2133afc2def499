"""`kafkarep conform PATH...`: replay Kafka's conformance cases through the rules."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kafkarep.cli.errors import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.conformance import CaseFileError, CaseResult, run_file


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "conform",
        help="replay conformance cases (from Kafka's own tests) through the controller rules",
        description="Replay conformance case files through the controller rules. "
        "The last line is 'conformance: N passed, M failed'.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="case files (JSON)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    results: list[CaseResult] = []
    for path in args.paths:
        try:
            results.extend(run_file(path))
        except CaseFileError as error:
            raise UsageError(str(error)) from None
    failed = [result for result in results if not result.passed]
    if failed:
        table = Table(title="conformance failures", show_lines=False)
        for column in ("case", "file", "field", "expected (Kafka)", "got"):
            table.add_column(column)
        for result in failed:
            for mismatch in result.mismatches:
                table.add_row(
                    result.case_id,
                    result.path.name,
                    mismatch.field,
                    mismatch.expected,
                    mismatch.got,
                )
        Console(width=160).print(table)
    print(f"conformance: {len(results) - len(failed)} passed, {len(failed)} failed")
    return EXPECTATION_NOT_MET if failed else OK
