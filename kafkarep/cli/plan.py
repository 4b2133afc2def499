"""`kafkarep plan`: the KIP-435 incremental reassignment steps of one partition.

Prints one row per step: the step's target replicas, what it drops and adds, whether it moves
the preferred leader, and how many replicas are able to be in sync after it. With `--json FILE`
it also writes {"steps": [[replica ids of each step, in order], ...]}. Exit 0, or 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kafkarep.common.exit_codes import OK, UsageError
from kafkarep.planner import kip435


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "plan",
        help="the KIP-435 incremental reassignment steps of one partition",
        description=__doc__,
    )
    parser.add_argument("--current", required=True, metavar="IDS", help="current replicas, 0,1,2")
    parser.add_argument("--target", required=True, metavar="IDS", help="final target replicas")
    parser.add_argument(
        "--isr", default=None, metavar="IDS", help="in-sync replicas (default: every current one)"
    )
    parser.add_argument("--min-isr", default="1", metavar="N", help="min.insync.replicas (1)")
    parser.add_argument(
        "--parallel-replicas",
        default=None,
        metavar="R",
        help="reassignment.parallel.replica.count (default: unlimited, as the KIP's default)",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="write the steps")
    parser.set_defaults(run=run)


_DIGITS = re.compile(r"[0-9]{1,9}")  # a broker id or a count: ASCII digits, 32-bit


def _ids(text: str, flag: str, allow_empty: bool = False) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",")] if text.strip() else []
    if not parts and not allow_empty:
        raise UsageError(f"{flag} needs at least one broker id, like 0,1,2")
    ids = []
    for part in parts:
        if not _DIGITS.fullmatch(part):
            raise UsageError(f"{flag} {text!r} is not a comma-separated list of broker ids")
        ids.append(int(part))
    seen: set[int] = set()
    for broker in ids:
        if broker in seen:
            raise UsageError(f"{flag} lists broker {broker} twice")
        seen.add(broker)
    return tuple(ids)


def _count(text: str, flag: str) -> int:
    if not _DIGITS.fullmatch(text.strip()):
        raise UsageError(f"{flag} must be a positive integer, not {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    current = _ids(args.current, "--current")
    target = _ids(args.target, "--target")
    isr = current if args.isr is None else _ids(args.isr, "--isr", allow_empty=True)
    unknown = [b for b in isr if b not in current]
    if unknown:
        raise UsageError(f"--isr names broker {unknown[0]}, which is not a current replica")
    min_isr = _count(args.min_isr, "--min-isr")
    if not 1 <= min_isr <= len(target):
        raise UsageError(
            f"--min-isr {min_isr} is out of range: 1 to the target's {len(target)} replicas"
        )
    parallel = (
        len(current) + len(target)
        if args.parallel_replicas is None
        else _count(args.parallel_replicas, "--parallel-replicas")
    )
    if parallel < 1:
        raise UsageError("--parallel-replicas must be at least 1")
    try:
        result = kip435.plan(target, current, isr, min_isr, parallel)
    except kip435.PlanError as error:
        raise UsageError(str(error)) from None
    console = Console(width=120)
    console.print(_table(result, current, isr, min_isr, args.parallel_replicas))
    if args.json is not None:
        steps = [list(step.target) for step in result.steps]
        try:
            args.json.write_text(json.dumps({"steps": steps}) + "\n")
        except OSError as error:
            raise UsageError(f"cannot write {args.json}: {error.strerror}") from None
        console.print(f"steps: {args.json}", highlight=False)
    return OK


def _show(ids: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, ids)) + ")"


def _table(
    result: kip435.Plan,
    current: tuple[int, ...],
    isr: tuple[int, ...],
    min_isr: int,
    parallel: str | None,
) -> Table:
    limit = "unlimited" if parallel is None else parallel
    table = Table(
        title=f"KIP-435 plan: MinISR {min_isr}, parallel replica count {limit}",
        title_justify="left",
    )
    for column in ("step", "replicas", "drop", "add", "leader moves", "able to be in sync"):
        table.add_column(column)
    table.add_row("start", _show(current), "", "", "", f"ISR {_show(isr)}")
    if result.waited_for:
        table.add_row("wait", _show(current), "", "", "", f"{_show(result.waited_for)} catch up")
    in_sync: tuple[int, ...] = current if result.waited_for else isr
    for number, step in enumerate(result.steps, 1):
        table.add_row(
            str(number),
            _show(step.target),
            _show(step.drop) if step.drop else "",
            _show(step.new) if step.new else "",
            "yes" if step.moves_leader else "",
            str(kip435.able_to_be_in_sync(step, in_sync)),
        )
        in_sync = step.target
    return table
