"""`kafkarep validate-log LOG`: check a real KRaft cluster's metadata log against the rules.

LOG is the output of Kafka's `kafka-dump-log --cluster-metadata-decoder --files <segment>`
(`kafka.tools.DumpLogSegments`) over the `__cluster_metadata-0` segments in order, or the files
themselves: a segment (`*.log`), a snapshot (`*.checkpoint`) or the `__cluster_metadata-0`
directory, which Kafka's DumpLogSegments decodes first (Java; Kafka's jars from `--kafka-home` or
Maven Central). The log is
replayed record by record; each PartitionChangeRecord must be produced exactly by some request or
event the rules allow from the state before it (docs/validate-log.md). One line per partition;
for a record not explained, its offset, the record, the state before it and each candidate with
the guard or the fields that refused it. Exit 0 when every record is explained, 1 when one is
not, 2 for a bad file or flag.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kafkarep.cli.options import check_kafka_flag
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.kafka.jars import KafkaJarsError
from kafkarep.metadata_log import segments
from kafkarep.metadata_log.dump import Batch, LogError, parse_dump, read_dump
from kafkarep.metadata_log.explain import Verdict, validate


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate-log",
        help="check a KRaft cluster's dumped metadata log against the rules",
        description=__doc__,
    )
    parser.add_argument(
        "log",
        type=Path,
        metavar="LOG",
        help="kafka-dump-log output, a segment or snapshot, or the __cluster_metadata-0 directory",
    )
    parser.add_argument(
        "--kafka-home",
        type=Path,
        default=None,
        metavar="DIR",
        help="an installed Kafka whose libs/ decode segments (default: Kafka's jars from Maven)",
    )
    parser.add_argument(
        "--kafka", default=None, metavar="VERSION", help="the cluster's Kafka release"
    )
    parser.add_argument("--topic", default=None, help="only this topic's partitions")
    parser.add_argument("--partition", type=int, default=None, help="only this partition")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="verdicts as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_kafka_flag(args.kafka)
    try:
        batches = _read(args.log, args.kafka_home)
    except (LogError, KafkaJarsError) as error:
        raise UsageError(str(error)) from None
    try:
        verdicts = validate(batches, args.kafka)
    except LogError as error:
        raise UsageError(f"{args.log}: {error}") from None
    verdicts = [v for v in verdicts if _selected(v, args.topic, args.partition)]
    if (args.topic is not None or args.partition is not None) and not verdicts:
        raise UsageError(f"{args.log}: no partition change records of the selected partitions")
    by_partition: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_partition.setdefault(verdict.partition, []).append(verdict)
    for name, judged in by_partition.items():
        bad = [v for v in judged if v.explained_by is None]
        if not bad:
            print(f"{name}: valid ({len(judged)} change records explained)")
            continue
        print(f"{name}: NOT VALID ({len(bad)} of {len(judged)} change records not explained)")
        for v in bad:
            _show(v)
    unexplained = sum(v.explained_by is None for v in verdicts)
    if args.json is not None:
        args.json.write_text(json.dumps([_json(v) for v in verdicts], indent=1) + "\n")
    print(f"validate-log: {len(verdicts) - unexplained} records explained, {unexplained} not")
    return EXPECTATION_NOT_MET if unexplained else OK


def _read(log: Path, kafka_home: Path | None) -> list[Batch]:
    if segments.is_text(log):
        return read_dump(log)
    files = segments.log_files(log)
    text = segments.decode(files, kafka_home=kafka_home, log=_progress)
    return parse_dump(text, str(log))


def _progress(message: str) -> None:
    print(f"validate-log: {message}", file=sys.stderr, flush=True)


def _selected(v: Verdict, topic: str | None, partition: int | None) -> bool:
    name, _, number = v.partition.rpartition("-")
    return (topic is None or name == topic) and (partition is None or int(number) == partition)


def _show(v: Verdict) -> None:
    print(f"  offset {v.offset}: {json.dumps(v.record, sort_keys=True)}")
    print(f"    before: {v.before}")
    if not v.candidates:
        print("    no partition registration before it")
    for c in v.candidates:
        print(f"    {c.event}: {c.verdict}")


def _json(v: Verdict) -> dict[str, Any]:
    return {
        "offset": v.offset,
        "partition": v.partition,
        "record": v.record,
        "explained_by": v.explained_by,
        "candidates": [{"event": c.event, "verdict": c.verdict} for c in v.candidates],
    }
