"""Read a metadata log as Kafka's `kafka-dump-log --cluster-metadata-decoder` prints it
(`kafka.tools.DumpLogSegments`, Kafka 4.1.0): a line per batch (`baseOffset: ... isControl:
...`), then a line per record (`| offset: N ... payload: {"type": ..., "version": ..., "data":
{...}}`). Control batches (Raft leader changes, snapshot headers) carry no metadata records and are
skipped; so are NoOpRecords. A problem is a `LogError` naming the file and the line.

A dump may begin with a snapshot (`Snapshot end offset: N`, a `*.checkpoint` file): its records
hold the state up to offset N, and the segments' records below N that follow it are skipped. A
dump whose first segment starts after offset 0 without one is refused: the state before it is
unknown.

A record's payload is checked where it is read: the fields the replay reads of each record type
(`RECORD_FIELDS`) must be there with values of the right kind, or a `LogError` names the line and
the field (`log.txt:42: payload.data.isr: expected a list of broker ids, got a string`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.common import shape
from kafkarep.common.shape import At


class LogError(Exception):
    """A metadata log that cannot be read: one line, exit code 2."""


class LogRecord(NamedTuple):
    offset: int
    type: str  # Kafka's MetadataRecordType name, e.g. "PARTITION_CHANGE_RECORD"
    version: int
    data: dict[str, Any]


class Batch(NamedTuple):
    base_offset: int
    records: tuple[LogRecord, ...]


_BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .*isControl: (true|false)")
_RECORD = re.compile(r"^\| offset: (\d+) ")
_FILE = re.compile(r"^Dumping (.*)$")
_SNAPSHOT = re.compile(r"^Snapshot end offset: (\d+)")
_SEGMENT_NAME = re.compile(r"(\d+)\.log$")


def read_dump(path: str | Path) -> list[Batch]:
    """The batches of a dumped metadata log, control batches and NoOpRecords left out."""
    path = Path(path)
    try:
        content = path.read_text()
    except FileNotFoundError:
        raise LogError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise LogError(
            f"{path}: a binary file (a log segment?): dump it first with kafka-dump-log "
            "--cluster-metadata-decoder --files <segments> (docs/validate-log.md)"
        ) from None
    except (OSError, ValueError) as error:
        raise LogError(f"{path}: cannot read ({error.__class__.__name__})") from None
    return parse_dump(content, str(path))


def parse_dump(text: str, name: str = "<log>") -> list[Batch]:
    batches: list[Batch] = []
    records: list[LogRecord] = []
    base = -1
    control = False
    seen_batch = False  # inside a batch of the current file
    any_batch = False
    in_snapshot = False
    replayed_to = 0  # the end offset of the snapshot replayed, if any

    def close() -> None:
        if seen_batch and not control and records:
            batches.append(Batch(base, tuple(records)))

    for number, line in enumerate(text.splitlines(), 1):
        snapshot = _SNAPSHOT.match(line)
        if snapshot:
            close()
            seen_batch, records, in_snapshot = False, [], True
            replayed_to = _offset(snapshot.group(1), f"{name}:{number}")
            continue
        dumping = _FILE.match(line)
        if dumping:
            close()
            seen_batch, records, in_snapshot = False, [], False
            segment = _SEGMENT_NAME.search(dumping.group(1))
            start = _offset(segment.group(1), f"{name}:{number}") if segment else 0
            if segment and not batches and start > replayed_to:
                raise LogError(
                    f"{name}:{number}: the log starts at offset {start} and no "
                    "snapshot precedes it: dump the snapshot (*.checkpoint) that reaches it first"
                )
            continue
        if line.startswith("Found ") and "invalid bytes" in line:
            raise LogError(f"{name}:{number}: Kafka's decoder: {line.strip()} (a corrupt segment)")
        header = _BATCH.match(line)
        if header:
            if "isvalid: false" in line:
                raise LogError(
                    f"{name}:{number}: the batch at offset {header.group(1)} fails its CRC check "
                    "(a corrupt segment)"
                )
            close()
            seen_batch, any_batch, records = True, True, []
            base = _offset(header.group(1), f"{name}:{number}")
            control = header.group(3) == "true"
            continue
        found = _RECORD.match(line)
        if not found or control:
            continue
        if not seen_batch:
            raise LogError(f"{name}:{number}: a record before any batch header")
        offset = _offset(found.group(1), f"{name}:{number}")
        if not in_snapshot and offset < replayed_to:
            continue
        record = _record(line, offset, f"{name}:{number}")
        if record is not None and record.type != "NO_OP_RECORD":
            records.append(record)
    close()
    if not any_batch:
        raise LogError(
            f"{name}: no batches: not the output of kafka-dump-log --cluster-metadata-decoder"
        )
    return batches


def _offset(digits: str, where: str) -> int:
    """A log offset (Kafka's are 64-bit)."""
    if len(digits.lstrip("0")) > 19 or int(digits) >= 2**63:
        raise LogError(f"{where}: offset {digits[:20]}... is beyond a 64-bit offset")
    return int(digits)


def _record(line: str, offset: int, where: str) -> LogRecord | None:
    at = line.find(" payload: ")
    if at < 0:
        raise LogError(
            f"{where}: a record without a payload (dump it with --cluster-metadata-decoder)"
        )
    payload = line[at + len(" payload: ") :].strip()
    if payload.startswith("Error at"):
        raise LogError(f"{where}: Kafka could not decode the record at offset {offset}: {payload}")
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError) as error:
        raise LogError(f"{where}: malformed payload ({error.__class__.__name__})") from None
    inside = shape.at(where, LogError, "payload")
    shape.obj(value, inside)
    kind = shape.field(value, "type", inside, shape.text)
    version = shape.field(value, "version", inside, shape.integer)
    data = shape.field(value, "data", inside, shape.obj)
    for key, (check, required) in RECORD_FIELDS.get(kind, {}).items():
        if required or key in data:
            shape.field(data, key, inside.key("data"), check)
    value = data.get("value")
    min_isr = kind == "CONFIG_RECORD" and data["name"] == "min.insync.replicas"
    if min_isr and value is not None and not re.fullmatch(r"[0-9]{1,9}", value):
        inside.key("data").key("value").fail(f"expected a number of replicas, got {value!r}")
    return LogRecord(offset, kind, version, data)


_IDS = shape.optional(shape.brokers)
# What the replay (cluster.py, explain.py) reads of each record type: field -> (check, required).
RECORD_FIELDS: dict[str, dict[str, tuple[Callable[[Any, At], Any], bool]]] = {
    "REGISTER_BROKER_RECORD": {
        "brokerId": (shape.broker, True),
        "brokerEpoch": (shape.integer, True),
        "fenced": (shape.flag, False),
        "inControlledShutdown": (shape.flag, False),
        "incarnationId": (shape.text, False),
    },
    "BROKER_REGISTRATION_CHANGE_RECORD": {
        "brokerId": (shape.broker, True),
        "fenced": (shape.between(-1, 1), False),
        "inControlledShutdown": (shape.between(-1, 1), False),
    },
    "FENCE_BROKER_RECORD": {"id": (shape.broker, True)},
    "UNFENCE_BROKER_RECORD": {"id": (shape.broker, True)},
    "UNREGISTER_BROKER_RECORD": {"brokerId": (shape.broker, True)},
    "TOPIC_RECORD": {"topicId": (shape.text, True), "name": (shape.text, True)},
    "REMOVE_TOPIC_RECORD": {"topicId": (shape.text, True)},
    "PARTITION_RECORD": {
        "topicId": (shape.text, True),
        "partitionId": (shape.integer, True),
        "replicas": (shape.brokers, True),
        "isr": (shape.brokers, True),
        "leader": (shape.integer, True),
        "leaderEpoch": (shape.integer, True),
        "partitionEpoch": (shape.integer, True),
        "eligibleLeaderReplicas": (_IDS, False),
        "lastKnownElr": (_IDS, False),
        "addingReplicas": (_IDS, False),
        "removingReplicas": (_IDS, False),
        "leaderRecoveryState": (shape.between(0, 1), False),
    },
    "PARTITION_CHANGE_RECORD": {
        "topicId": (shape.text, True),
        "partitionId": (shape.integer, True),
        "leader": (shape.integer, False),
        "isr": (_IDS, False),
        "replicas": (_IDS, False),
        "eligibleLeaderReplicas": (_IDS, False),
        "lastKnownElr": (_IDS, False),
        "addingReplicas": (_IDS, False),
        "removingReplicas": (_IDS, False),
        "leaderRecoveryState": (shape.between(-1, 1), False),
    },
    "CLEAR_ELR_RECORD": {"topicName": (shape.optional(shape.text), False)},
    "CONFIG_RECORD": {
        "resourceType": (shape.integer, True),
        "resourceName": (shape.text, True),
        "name": (shape.text, True),
        "value": (shape.optional(shape.text), False),
    },
    "FEATURE_LEVEL_RECORD": {"name": (shape.text, True), "featureLevel": (shape.integer, True)},
}
