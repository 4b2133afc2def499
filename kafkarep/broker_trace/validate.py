"""`kafkarep validate-trace DIR`: a recorded trace directory checked against the model.

A trace directory holds the agent's `events-<broker>.jsonl` files and `metadata.txt`, the
controller's metadata log dumped by `kafka-dump-log --cluster-metadata-decoder` (what each
broker's metadata image held: which brokers were fenced, at which epochs, the topics' MinISR),
and may hold `trace.json` (the cluster's settings that neither carries: its Kafka release, the
brokers' `min.insync.replicas` and `replica.lag.time.max.ms`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.broker_trace.events import EventsError, read_events
from kafkarep.broker_trace.images import Images
from kafkarep.broker_trace.replay import Context, Unexplained, replay
from kafkarep.metadata_log.dump import LogError, read_dump
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.properties.model_files import parse_model

MANIFEST = "trace.json"
METADATA = "metadata.txt"
EVENTS = re.compile(r"^events-(\d+)\.jsonl(\.gz)?$")
# Kafka's defaults (`ReplicationConfigs`, `ServerLogConfigs` at 4.1.1) where trace.json is silent
DEFAULTS = {"kafka": "4.1", "min_insync_replicas": 1, "replica_lag_time_max_ms": 30_000}


class TraceError(ValueError):
    """A trace directory that cannot be read: one line naming the file, exit code 2."""


class Settings(NamedTuple):
    kafka: str
    min_isr: int
    lag_time_ms: int
    disabled_guards: frozenset[str]


class Validation(NamedTuple):
    explained: int
    unexplained: tuple[Unexplained, ...]
    files: tuple[str, ...]

    def last_line(self) -> str:
        return f"validate-trace: {self.explained:,} events explained, {len(self.unexplained):,} not"


def settings(directory: Path, overrides: dict[str, Any]) -> Settings:
    """The cluster's settings: the command line's, else trace.json's, else Kafka's defaults."""
    manifest: dict[str, Any] = {}
    path = directory / MANIFEST
    if path.exists():
        try:
            manifest = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise TraceError(f"{path}: not JSON ({error})") from None
        if not isinstance(manifest, dict):
            raise TraceError(f"{path}: not a JSON object")
    merged = {**DEFAULTS, **manifest, **{k: v for k, v in overrides.items() if v is not None}}
    for key in ("min_insync_replicas", "replica_lag_time_max_ms"):
        if not isinstance(merged[key], int) or isinstance(merged[key], bool) or merged[key] < 0:
            raise TraceError(f"{path}: {key} is {merged[key]!r}, not a count")
    return Settings(
        kafka=str(merged["kafka"]),
        min_isr=merged["min_insync_replicas"],
        lag_time_ms=merged["replica_lag_time_max_ms"],
        disabled_guards=frozenset(overrides.get("disabled_guards") or ()),
    )


def event_files(directory: Path) -> dict[int, Path]:
    if not directory.is_dir():
        raise TraceError(f"{directory}: not a directory")
    found = {int(m.group(1)): p for p in directory.iterdir() if (m := EVENTS.match(p.name))}
    if not found:
        raise TraceError(f"{directory}: no events-<broker>.jsonl (or .jsonl.gz) files")
    return dict(sorted(found.items()))


def model_config(values: Settings, brokers: int, source: Path) -> ModelConfig:
    """The model's options at the trace's release: its guards and its data-plane rules."""
    try:
        return parse_model(
            {
                "model": {"description": f"validate-trace {source}"},
                "cluster": {
                    "brokers": brokers,
                    "replicas": list(range(1, brokers + 1)),
                    "isr": list(range(1, brokers + 1)),
                    "min_isr": max(1, min(values.min_isr, brokers)),
                },
                "rules": {
                    "kafka_version": values.kafka,
                    "disable_guards": sorted(values.disabled_guards),
                },
            }
        )
    except ModelError as error:
        raise TraceError(f"{source}: {error}") from None


def validate(directory: Path, overrides: dict[str, Any] | None = None) -> Validation:
    """Every broker's events replayed through the model (`replay.replay`)."""
    values = settings(directory, overrides or {})
    files = event_files(directory)
    try:
        events = {node: read_events(path) for node, path in files.items()}
    except EventsError as error:
        raise TraceError(str(error)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(f"{directory}: cannot read an events file ({error})") from None
    if not (directory / METADATA).exists():
        raise TraceError(
            f"{directory}: no {METADATA}: the controller's metadata log, dumped by kafka-dump-log "
            "--cluster-metadata-decoder (what each broker's metadata image held)"
        )
    try:
        images = Images(read_dump(directory / METADATA))
    except LogError as error:
        raise TraceError(str(error)) from None
    brokers = max([*files, *_replica_ids(events)])
    ctx = Context(
        model_config(values, brokers, directory), images, values.min_isr, values.lag_time_ms
    )
    explained, unexplained = 0, []
    for node, broker_events in events.items():
        good, bad = replay(ctx, node, files[node].name, broker_events)
        explained += good
        unexplained += bad
    return Validation(explained, tuple(unexplained), tuple(p.name for p in files.values()))


def _replica_ids(events: dict[int, list[Any]]) -> set[int]:
    ids: set[int] = set()
    for broker_events in events.values():
        for event in broker_events:
            requested = event.get("requested")
            if isinstance(requested, dict):
                ids.update(int(b) for b in requested.get("replicas") or ())
    return ids
