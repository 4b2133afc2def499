"""The metadata log's files themselves: `__cluster_metadata-0` segments (`*.log`) and snapshots
(`*.checkpoint`), decoded by Kafka's own `kafka.tools.DumpLogSegments --cluster-metadata-decoder`
(what `kafka-dump-log.sh` runs) into the text `dump.parse_dump` reads.

The decoder runs from an installed Kafka's `libs/` when one is named, else from Kafka's jars
fetched once from Maven Central (`kafkarep.kafka.jars`). A log whose oldest segment does not start
at offset 0 was cleaned after a snapshot: the oldest snapshot that reaches that segment is decoded
first, so replay starts from the state it holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from kafkarep.kafka.jars import KAFKA_VERSION, Log, fetch_kafka, installed_libs
from kafkarep.metadata_log.dump import LogError

DUMP_LOG_SEGMENTS = "kafka.tools.DumpLogSegments"
METADATA_PARTITION = "__cluster_metadata-0"


def is_text(path: Path) -> bool:
    """A dump already (text), not a segment, a snapshot or a log directory."""
    if path.is_dir() or path.suffix in (".log", ".checkpoint"):
        return False
    try:
        with path.open("rb") as file:
            return b"\0" not in file.read(4096)
    except OSError:
        return True  # read_dump names the problem


def base_offset(path: Path) -> int:
    """A segment's first offset or a snapshot's end offset, from its name (`00..0123.log`,
    `00..0123-0000000001.checkpoint`)."""
    digits = path.name.split(".")[0].split("-")[0]
    if not digits.isdigit():
        raise LogError(f"{path}: not a metadata log file name (<offset>.log or .checkpoint)")
    return int(digits)


def log_files(path: Path) -> list[Path]:
    """The files to decode, in order: the segments of a log directory (or of its
    `__cluster_metadata-0`), after the snapshot they need; or the one file given."""
    if not path.exists():
        raise LogError(f"{path}: no such file or directory")
    if not path.is_dir():
        base_offset(path)
        return [path]
    if (path / METADATA_PARTITION).is_dir():
        path = path / METADATA_PARTITION
    segments = sorted(path.glob("*.log"), key=base_offset)
    if not segments:
        raise LogError(f"{path}: no metadata log segments (*.log) in this directory")
    first = base_offset(segments[0])
    if first == 0:
        return segments
    reaching = [
        s for s in sorted(path.glob("*.checkpoint"), key=base_offset) if base_offset(s) >= first
    ]
    if not reaching:
        raise LogError(
            f"{path}: the oldest segment starts at offset {first} and no snapshot reaches it"
        )
    return [reaching[0], *segments]


def decode(files: list[Path], *, kafka_home: Path | None = None, log: Log | None = None) -> str:
    """Kafka's `DumpLogSegments --cluster-metadata-decoder` output for `files`, in order."""
    libs = installed_libs(kafka_home) if kafka_home is not None else None
    if shutil.which("java") is None:
        raise LogError(
            f"{files[0]}: decoding a segment needs Java 17 (or dump it first with "
            "kafka-dump-log.sh --cluster-metadata-decoder; docs/validate-log.md)"
        )
    if libs is None:
        libs = fetch_kafka(KAFKA_VERSION, log=log or (lambda message: None))
    if log is not None:
        where = kafka_home or f"Kafka {KAFKA_VERSION}"
        log(f"decoding {len(files)} file(s) with DumpLogSegments from {where}")
    cmd = ["java", "-Xmx1g", "-cp", str(libs / "*"), DUMP_LOG_SEGMENTS]
    cmd += ["--cluster-metadata-decoder", "--files", ",".join(str(f) for f in files)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = next((line for line in lines if "Exception" in line), lines[-1] if lines else "")
        raise LogError(f"{files[0]}: DumpLogSegments failed: {reason.strip()}")
    return done.stdout
