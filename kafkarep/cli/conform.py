"""`kafkarep conform [--kafka VERSION] [--oracle] [--write] PATH...`: replay conformance cases
through the rules of a Kafka release, or through Kafka itself.

By default the rules answer (`--kafka`, the newest supported release by default). With
`--oracle` Kafka's own controller answers instead (needs Java and Maven), for `--kafka` or, with
`--kafka all`, every supported release; a case whose stored expectation is not Kafka's answer is
a failure, and `--write` rewrites the files with Kafka's answers (kept as written where Kafka
agrees). The last line is 'conformance: N passed, M failed'.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.kafka.releases import NEWEST, RELEASES, resolve
from kafkarep.oracle import conformance
from kafkarep.oracle.conformance import CaseFileError, CaseResult, Mismatch, run_file
from kafkarep.oracle.harness import Oracle, OracleError, answer


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "conform",
        help="replay conformance cases through the rules of a Kafka release, or through Kafka",
        description=__doc__,
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="case files (JSON)")
    parser.add_argument(
        "--kafka",
        default=NEWEST,
        metavar="VERSION",
        help=f"the Kafka release (default {NEWEST}; 'all' with --oracle: every supported one)",
    )
    parser.add_argument(
        "--oracle", action="store_true", help="Kafka's own controller answers (Java, Maven)"
    )
    parser.add_argument(
        "--write", action="store_true", help="with --oracle: rewrite the expectations"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.write and not (args.oracle and args.kafka == "all"):
        raise UsageError("--write needs --oracle --kafka all (every release's answer)")
    if args.kafka == "all" and not args.oracle:
        raise UsageError("--kafka all needs --oracle")
    named: tuple[str, ...] = RELEASES if args.kafka == "all" else (args.kafka,)
    try:
        releases = tuple(resolve(r) for r in named)
    except ValueError as error:
        raise UsageError(str(error)) from None
    results: list[CaseResult] = []
    try:
        if args.oracle:
            results = _through_kafka(args.paths, releases, args.write)
        else:
            for path in args.paths:
                results.extend(run_file(path, releases[0]))
    except CaseFileError as error:
        raise UsageError(str(error)) from None
    except OracleError as error:
        raise UsageError(str(error)) from None
    failed = [result for result in results if not result.passed]
    if failed:
        _table(failed, "Kafka" if args.oracle else "rules")
    skipped = sum(not r.applicable and r.passed for r in results)
    tail = f" ({skipped} not expressible in the release)" if skipped else ""
    print(f"conformance: {len(results) - len(failed) - skipped} passed, {len(failed)} failed{tail}")
    return EXPECTATION_NOT_MET if failed else OK


def _table(failed: list[CaseResult], who: str) -> None:
    table = Table(title="conformance failures", show_lines=False)
    for column in ("case", "file", "field", "expected", who):
        table.add_column(column)
    for result in failed:
        for mismatch in result.mismatches:
            table.add_row(
                result.case_id, result.path.name, mismatch.field, mismatch.expected, mismatch.got
            )
    Console(width=160).print(table)


def _through_kafka(paths: list[Path], releases: tuple[str, ...], write: bool) -> list[CaseResult]:
    """Every case through Kafka at each release, against the stored expectations."""
    files = {path: conformance.load_cases(path) for path in paths}
    cases = [(path, case) for path, found in files.items() for case in found]
    answers: dict[str, list[dict[str, Any] | None]] = {}
    for release in releases:
        with Oracle(release) as oracle:
            answers[release] = [answer(reply) for reply in oracle.ask_many(c for _, c in cases)]
    results = []
    rewritten: dict[Path, list[dict[str, Any]]] = {path: [] for path in paths}
    for k, (path, case) in enumerate(cases):
        per_release = {release: answers[release][k] for release in releases}
        for release, kafka in per_release.items():
            expect = conformance.expectation(case, release)
            mismatches: tuple[Mismatch, ...] = ()
            if kafka is None or expect is None:
                if (kafka is None) != (expect is None):
                    stated, kafkas = str(expect is not None), str(kafka is not None)
                    mismatches = (Mismatch("expressible", stated, kafkas),)
                results.append(CaseResult(case["id"], path, mismatches, applicable=False))
                continue
            mismatches = tuple(
                m._replace(field=f"{m.field} @ {release}")
                for m in conformance.compare(expect, kafka)
            )
            results.append(CaseResult(case["id"], path, mismatches))
        if write:
            rewritten[path].append(conformance.rederive(case, per_release)[0])
    if write:
        for path, found in rewritten.items():
            path.write_text(_dump(found))
    return results


def _dump(cases: list[dict[str, Any]]) -> str:
    """Case files as they are written: objects indented, lists of broker ids on one line."""
    return _json(cases, "") + "\n"


def _json(value: Any, indent: str) -> str:
    flat = json.dumps(value)
    if not isinstance(value, dict | list):
        return flat
    items = value.values() if isinstance(value, dict) else value
    shallow = not any(
        (isinstance(v, dict) and v) or (isinstance(v, list) and any(isinstance(x, dict) for x in v))
        for v in items
    )
    if shallow and len(flat) <= 72:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        lines = [f"{inner}{json.dumps(k)}: {_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
    lines = [inner + _json(v, inner) for v in value]
    return "[\n" + ",\n".join(lines) + "\n" + indent + "]"
