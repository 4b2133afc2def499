"""`kafkarep reproduce TRACE --kafka V`: drive a counterexample through a real Kafka cluster.

The cluster (one controller, brokers 1 to 3, each broker with the kafkarep agent and its gate) is
set up in the trace's initial state; every step is then taken by letting go the broker thread the
gate holds for it (a fetch at the leader, a fetch response at the follower, an AlterPartition
request or answer, a metadata publication) or by the fault itself (a broker stopped until fenced,
killed), and the fields the step changes in the model are compared with what the cluster recorded.
A step that is not ready may be taken after a later one it commutes with in the model. At the end
the violated clause is checked on the cluster. Needs Java 17 and Maven (the agent is built from
`agent/` in a clone, or given with --agent). Exit 0 when Kafka reached the violation, 1 when it
did not, 2 for a bad file or flag, or a trace the driver cannot take (docs/reproduce.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kafkarep.cli.replay import NotReproduced, load_counterexample
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.kafka.jars import KAFKA_VERSION
from kafkarep.reproduce.driver import CannotReproduce, Reproduction, Row, check_drivable, reproduce

AGENT_BUILD = Path(__file__).resolve().parents[2] / "agent" / "build.sh"
OLDEST = (4, 1)  # the harness formats metadata.version 4.1-IV1


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "reproduce",
        help="drive an ITF counterexample through a real Kafka cluster, step by step",
        description=__doc__,
    )
    parser.add_argument(
        "trace", type=Path, metavar="TRACE", help="an ITF trace written by kafkarep"
    )
    parser.add_argument(
        "--kafka",
        default=KAFKA_VERSION,
        metavar="VERSION",
        help=f"the Kafka release the cluster runs, from Maven Central (default {KAFKA_VERSION})",
    )
    parser.add_argument(
        "--model", type=Path, default=None, help="the model file (default: the trace's)"
    )
    parser.add_argument(
        "--agent", type=Path, default=None, metavar="JAR", help="the agent's jar (default: built)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the brokers' events and the gate's files here",
    )
    parser.set_defaults(run=run)


def _release(version: str) -> str:
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise UsageError(f"--kafka: {version!r} is not a release such as {KAFKA_VERSION}")
    if (int(parts[0]), int(parts[1])) < OLDEST:
        raise UsageError(f"--kafka: the harness runs Kafka 4.1.0 and later, not {version}")
    return version


def _agent(given: Path | None) -> Path:
    if given is not None:
        if not given.is_file():
            raise UsageError(f"--agent: {given}: no such file")
        return given
    if not AGENT_BUILD.is_file():
        raise UsageError("the agent's sources (agent/) are not here: give its jar with --agent")
    built = subprocess.run(["bash", str(AGENT_BUILD)], capture_output=True, text=True)
    if built.returncode != 0:
        last = (built.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"the agent did not build (agent/build.sh): {last}")
    return Path(built.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> int:
    console = Console(width=160)
    version = _release(args.kafka)
    try:
        loaded = load_counterexample(args.trace, args.model)
    except NotReproduced as error:
        raise UsageError(
            f"{args.trace}: the trace does not replay through the rules: {error}"
        ) from None
    if loaded.loop is not None:
        raise UsageError(f"{args.trace}: a liveness lasso; reproduce takes safety traces")
    try:
        check_drivable(loaded.cfg, loaded.trace, loaded.clause)
    except CannotReproduce as error:
        raise UsageError(f"{args.trace}: {error}") from None
    agent = _agent(args.agent)
    console.print(
        f"reproduce {args.trace}: {loaded.clause}, {len(loaded.trace.steps)} steps, on Kafka "
        f"{version} (the model's rules: Kafka {loaded.cfg.options.kafka_version})",
        highlight=False,
    )

    def show(row: Row) -> None:
        mark = "reached" if row.reached else "NOT TAKEN"
        console.print(f"  {row.number:3} {row.who:10} {row.step:28} {mark}", highlight=False)

    def log(line: str) -> None:
        print(f"    {line}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="kafkarep-reproduce-") as scratch:
        where = args.keep or Path(scratch)
        try:
            result = reproduce(
                loaded.cfg,
                loaded.trace,
                loaded.clause,
                version=version,
                agent=agent,
                scratch=where,
                show=show,
                log=log,
            )
        except CannotReproduce as error:
            raise UsageError(f"{args.trace}: {error}") from None
    console.print(_table(result))
    if result.witness is None:
        console.print(f"not reached: Kafka {version} did not take the trace to {result.clause}")
        return EXPECTATION_NOT_MET
    console.print(
        f"reached: Kafka {version} violates {result.clause}: {result.witness}", highlight=False
    )
    return OK


def _table(result: Reproduction) -> Table:
    table = Table(show_lines=True)
    for column in ("step", "by", "action", "Kafka"):
        table.add_column(column)
    for row in result.rows:
        table.add_row(str(row.number), row.who, row.step, row.kafka)
    return table
