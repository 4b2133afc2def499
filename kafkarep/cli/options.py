"""Flags that commands share: how the explorer searches a model (`check`, `suite`), and the
`--kafka` release (`validate-log`, `validate-trace`)."""

from __future__ import annotations

import argparse

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
