"""Read a metadata log as Kafka's `kafka-dump-log --cluster-metadata-decoder` prints it
(`kafka.tools.DumpLogSegments`, Kafka 4.1.0): a line per batch (`baseOffset: ... isControl:
...`), then a line per record (`| offset: N ... payload: {"type": ..., "version": ..., "data":
{...}}`). Control batches (Raft leader changes, snapshot headers) carry no metadata records and are
skipped; so are NoOpRecords. A problem is a `LogError` naming the file and the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple


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


def read_dump(path: str | Path) -> list[Batch]:
    """The batches of a dumped metadata log, control batches and NoOpRecords left out."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise LogError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise LogError(
            f"{path}: a binary file (a log segment?): dump it first with kafka-dump-log "
            "--cluster-metadata-decoder --files <segments> (docs/validate-log.md)"
        ) from None
    except (IsADirectoryError, PermissionError) as error:
        raise LogError(f"{path}: cannot read ({error.__class__.__name__})") from None
    return parse_dump(text, str(path))


def parse_dump(text: str, name: str = "<log>") -> list[Batch]:
    batches: list[Batch] = []
    records: list[LogRecord] = []
    base = -1
    control = False
    seen_batch = False

    def close() -> None:
        if seen_batch and not control and records:
            batches.append(Batch(base, tuple(records)))

    for number, line in enumerate(text.splitlines(), 1):
        header = _BATCH.match(line)
        if header:
            close()
            seen_batch, records = True, []
            base, control = int(header.group(1)), header.group(3) == "true"
            continue
        found = _RECORD.match(line)
        if not found or control:
            continue
        if not seen_batch:
            raise LogError(f"{name}:{number}: a record before any batch header")
        record = _record(line, int(found.group(1)), f"{name}:{number}")
        if record is not None and record.type != "NO_OP_RECORD":
            records.append(record)
    close()
    if not seen_batch:
        raise LogError(
            f"{name}: no batches: not the output of kafka-dump-log --cluster-metadata-decoder"
        )
    return batches


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
        return LogRecord(offset, str(value["type"]), int(value["version"]), dict(value["data"]))
    except (ValueError, KeyError, TypeError) as error:
        raise LogError(f"{where}: malformed payload ({error.__class__.__name__})") from None
