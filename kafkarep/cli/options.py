"""Flags that commands share: how the explorer searches a model (`check`, `suite`), and the
`--kafka` release (`validate-log`, `validate-trace`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafkarep.common.exit_codes import UsageError
from kafkarep.kafka.releases import resolve


def add_search_options(parser: argparse.ArgumentParser, whose: str) -> None:
    """--symmetry, --reduction, --por, --liveness and --workers; `whose` says whose setting is the
    default ("the model's", "each model's")."""
    parser.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"broker-id symmetry reduction (default: {whose})",
    )
    parser.add_argument(
        "--reduction",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the sound state reductions of kafkarep/model/reduction.py (default: on, unless "
        "[check] reduction = false)",
    )
    parser.add_argument(
        "--por",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="partial-order reduction by sleep sets: the explorer skips steps another path "
        "reaches the same state by, never a state (default: on, unless [check] por = false; "
        "off while liveness is checked)",
    )
    parser.add_argument(
        "--liveness",
        action="store_true",
        help="check the liveness properties too, under weak fairness (explorer only; default: "
        "[check] liveness)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        metavar="N",
        help="explorer worker processes (default: every core; 1: in-process)",
    )


def check_kafka_flag(kafka: str | None) -> None:
    """A `--kafka` release the rules know, or one line naming the flag (exit 2)."""
    if kafka is None:
        return
    try:
        resolve(kafka)
    except ValueError as error:
        raise UsageError(f"--kafka: {error}") from None


def add_controller_options(parser: argparse.ArgumentParser) -> None:
    """--controller, --kafka-jar, --kafka-classes and --audit-controller (docs/oracle.md)."""
    group = parser.add_argument_group("Kafka's controller (Java 17 and Maven)")
    group.add_argument(
        "--controller",
        choices=("rules", "kafka"),
        default=None,
        help="who answers the controller steps: the rules, or Kafka's own classes at the "
        "model's release (default: the model's [rules] controller)",
    )
    group.add_argument(
        "--kafka-jar",
        type=Path,
        default=None,
        metavar="PATH",
        help="Kafka's classes from a kafka-metadata jar built from a branch",
    )
    group.add_argument(
        "--kafka-classes",
        type=Path,
        default=None,
        metavar="DIR",
        help="classes compiled from changed sources (kafkarep kafka-patch), before the release's",
    )
    group.add_argument(
        "--audit-controller",
        action="store_true",
        help="after the search, ask Kafka's classes every distinct controller step the rules "
        "answered",
    )
