"""`kafkarep validate-trace DIR`: check real brokers' data-plane events against the model.

DIR holds the kafkarep agent's `events-<broker>.jsonl` files (docs/trace-validation.md) and
`metadata.txt` (the controller's metadata log, dumped by `kafka-dump-log
--cluster-metadata-decoder`: what each broker's metadata image held), and may hold `trace.json`
(the cluster's release, `min_insync_replicas`, `replica_lag_time_max_ms`). Each broker's events are
replayed through the model's data-plane rules from the state its events so far have built; an
event the model does not allow is printed in one line with the guard or rule that refuses it and
the broker's state. Exit 0 when every event is explained, 1 when one is not, 2 for a bad file or
flag.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kafkarep.broker_trace.validate import TraceError, validate
from kafkarep.cli.options import check_kafka_flag
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate-trace",
        help="check real brokers' recorded data-plane events against the model",
        description=__doc__,
    )
    parser.add_argument("trace", type=Path, metavar="DIR", help="a recorded trace directory")
    parser.add_argument(
        "--kafka",
        default=None,
        metavar="VERSION",
        help="the cluster's Kafka release (else trace.json's, else 4.1)",
    )
    parser.add_argument(
        "--min-isr",
        type=int,
        default=None,
        metavar="N",
        help="the brokers' min.insync.replicas where the log sets none (else trace.json's, or 1)",
    )
    parser.add_argument(
        "--lag-time-ms",
        type=int,
        default=None,
        metavar="MS",
        help="the brokers' replica.lag.time.max.ms (else trace.json's, else 30000)",
    )
    parser.add_argument(
        "--disable-guard",
        action="append",
        default=[],
        metavar="AREA.NAME",
        help="switch off one of the model's guards (repeatable): seeds a bug in the model",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_kafka_flag(args.kafka)
    for flag, value in (("--min-isr", args.min_isr), ("--lag-time-ms", args.lag_time_ms)):
        if value is not None and value < 0:
            raise UsageError(f"{flag}: {value} is negative")
    overrides = {
        "kafka": args.kafka,
        "min_insync_replicas": args.min_isr,
        "replica_lag_time_max_ms": args.lag_time_ms,
        "disabled_guards": args.disable_guard,
    }
    try:
        result = validate(args.trace, overrides)
    except TraceError as error:
        raise UsageError(str(error)) from None
    for problem in result.unexplained:
        print(problem.line())
    print(result.last_line())
    return EXPECTATION_NOT_MET if result.unexplained else OK
