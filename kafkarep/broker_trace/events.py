"""The instrumented broker's events, read back (stdlib only): the JSON lines that the kafkarep
agent (`agent/`, docs/trace-validation.md) appends to `events-<node>.jsonl`, one file per broker.

Every line is one JSON object with at least `seq`, `ts_ms`, `node`, `event`, `topic` and
`partition`; the rest are the event's own fields. A JVM numbers its events from 1, and a broker
restarted with the same file appends a new run that starts with an `agent_start` event, so the
numbers rise within a run and start again at each `agent_start`. A line that breaks any of this
is reported in one line naming the file and the line (`EventsError`).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The keys every line has, and the types their values must have (None where null is allowed).
HEADER: dict[str, tuple[type, ...]] = {
    "seq": (int,),
    "ts_ms": (int,),
    "node": (int,),
    "event": (str,),
    "topic": (str, type(None)),
    "partition": (int, type(None)),
}
RUN_START = "agent_start"


class EventsError(ValueError):
    """A malformed events file: the message is one line, `FILE:LINE: what is wrong`."""


@dataclass(frozen=True)
class AgentEvent:
    """One line of an events file."""

    seq: int
    ts_ms: int
    node: int
    kind: str
    topic: str | None
    partition: int | None
    fields: dict[str, Any]  # every key but the header's
    line: int  # where in its file

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def about(self, topic: str, partition: int = 0) -> bool:
        return self.topic == topic and self.partition == partition


def _event(value: object, source: str, number: int) -> AgentEvent:
    if not isinstance(value, dict):
        raise EventsError(f"{source}:{number}: not a JSON object but {type(value).__name__}")
    for key, types in HEADER.items():
        if key not in value:
            raise EventsError(f"{source}:{number}: no {key!r}")
        got = value[key]
        # bool is an int to isinstance; no header field is a boolean
        if isinstance(got, bool) or not isinstance(got, types):
            raise EventsError(f"{source}:{number}: {key!r} is {got!r}")
    return AgentEvent(
        seq=value["seq"],
        ts_ms=value["ts_ms"],
        node=value["node"],
        kind=value["event"],
        topic=value["topic"],
        partition=value["partition"],
        fields={k: v for k, v in value.items() if k not in HEADER},
        line=number,
    )


def parse_events(text: str, source: str = "<events>") -> list[AgentEvent]:
    """Every event of one file's text, in the file's order; `source` names it in errors."""
    events: list[AgentEvent] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    for number, line in enumerate(lines, 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise EventsError(f"{source}:{number}: not JSON ({error.msg}): {line[:80]!r}") from None
        event = _event(value, source, number)
        if events and event.node != events[0].node:
            raise EventsError(
                f"{source}:{number}: node {event.node} in a file of node {events[0].node}"
            )
        if event.kind == RUN_START and event.seq != 1:
            raise EventsError(f"{source}:{number}: {RUN_START} with seq {event.seq}, not 1")
        if events and event.kind != RUN_START and event.seq <= events[-1].seq:
            raise EventsError(
                f"{source}:{number}: seq {event.seq} after {events[-1].seq} "
                f"(line {events[-1].line}) without an {RUN_START}"
            )
        events.append(event)
    return events


def read_events(path: Path) -> list[AgentEvent]:
    """The events of one file, gzipped if its name ends in `.gz` (`EventsError` names the file
    and line of a malformed line)."""
    if path.suffix == ".gz":
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, EOFError) as error:
            raise EventsError(f"{path}: not gzip ({error})") from None
        return parse_events(text, str(path))
    return parse_events(path.read_text(encoding="utf-8"), str(path))


def runs(events: Sequence[AgentEvent]) -> list[list[AgentEvent]]:
    """The events split by JVM: each run starts at an `agent_start` (a file that does not start
    with one yields a first run without it)."""
    out: list[list[AgentEvent]] = []
    for event in events:
        if event.kind == RUN_START or not out:
            out.append([])
        out[-1].append(event)
    return out


def of_kind(events: Iterable[AgentEvent], *kinds: str) -> list[AgentEvent]:
    return [e for e in events if e.kind in kinds]


def kind_counts(events: Iterable[AgentEvent]) -> Counter[str]:
    return Counter(e.kind for e in events)
