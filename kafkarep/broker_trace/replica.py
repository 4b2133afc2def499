"""A broker's replay: what its events have built (a model `Replica` per partition it holds,
what its threads have open), and what every step uses: the partition an event is about, the
broker's state in one line, an unexplained event, an event replayed ahead of its place."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.broker_trace.images import Image, Images
from kafkarep.kafka.metadata import PartitionRegistration
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import (
    FollowerView,
    Log,
    Replica,
    Role,
)

UNKNOWN_VALUE = 0  # the model's logs hold record values; a trace holds offsets only


class Unexplained(NamedTuple):
    where: str  # "events-1.jsonl:57"
    event: str  # what happened, in one phrase
    why: str  # the model's guard or rule that refuses it
    state: str  # the broker's replica before it

    def line(self) -> str:
        return f"{self.where}: {self.event}: {self.why} [{self.state}]"


@dataclass
class Broker:
    """One broker's replay: its replicas by partition, and what its threads have open."""

    node: int
    source: str
    replicas: dict[tuple[str, int], Replica] = field(default_factory=dict)
    image: Image | None = None
    # per thread: the `hwm_moved` and `isr_expand_proposed` events of the call in progress
    open_calls: dict[str, list[AgentEvent]] = field(default_factory=dict)
    # per partition: the divergence a fetch response named, for the truncation that follows
    diverging: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    last_kind: dict[str, str] = field(default_factory=dict)  # per thread: its last event's kind
    # by line: the offset of the image that the event's metadata delta publishes
    publishing: dict[int, int] = field(default_factory=dict)
    # by partition and follower: the lines and fetch offsets of its fetches the leader handled
    fetches: dict[tuple[tuple[str, int], int], tuple[list[int], list[int]]] = field(
        default_factory=dict
    )
    # by partition and follower: when the leader last saw it caught up (Kafka's clock)
    caught_up_ms: dict[tuple[tuple[str, int], int], int] = field(default_factory=dict)
    # the events in the file's order, where each line is, and the lines replayed ahead of it
    events: list[AgentEvent] = field(default_factory=list)
    position: dict[int, int] = field(default_factory=dict)
    replayed_early: set[int] = field(default_factory=set)
    # by partition: the replica as it led, until it leads again (for a write it took then)
    former_leader: dict[tuple[str, int], Replica] = field(default_factory=dict)
    # how an event is replayed (`replay.step`), for one replayed ahead of its place
    step: Callable[[Context, Broker, AgentEvent], Iterator[Unexplained]] | None = None


class Context(NamedTuple):
    cfg: ModelConfig
    images: Images
    default_min_isr: int
    lag_time_ms: int


def partition_key(event: AgentEvent) -> tuple[str, int] | None:
    if event.topic is None or event.partition is None:
        return None
    return (event.topic, event.partition)


def replica_of(ctx: Context, broker: Broker, key: tuple[str, int]) -> Replica:
    brokers = len(ctx.cfg.broker_ids)
    if key not in broker.replicas:
        broker.replicas[key] = Replica(
            followers=(FollowerView(),) * brokers, eligible=(-1,) * brokers
        )
    return broker.replicas[key]


def describe(replica: Replica | None) -> str:
    if replica is None:
        return "no replica"
    view = replica.view
    text = f"{replica.role.name.lower()} leo {replica.leo} hwm {replica.hwm}"
    if view is not None:
        text += (
            f"; leader {view.leader} le {view.leader_epoch} pe {view.partition_epoch} "
            f"isr {sorted(view.isr)}"
        )
    if replica.role == Role.LEADER:
        known = [f"{b}:{f.leo}" for b, f in enumerate(replica.followers, 1) if f.leo >= 0]
        text += f"; maximal isr {sorted(replica.maximal_isr)}; followers {' '.join(known)}"
        if replica.pending is not None:
            text += f"; pending isr {sorted(replica.pending.isr)}"
    return text


def problem(
    broker: Broker, event: AgentEvent, what: str, why: str, replica: Replica | None = None
) -> Unexplained:
    where = f"{broker.source}:{event.line}"
    partition = f" {event.topic}-{event.partition}" if event.topic is not None else ""
    return Unexplained(where, f"{event.kind}{partition} ({what})", why, describe(replica))


def registration(requested: dict[str, Any], leader: int) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=tuple(requested["replicas"]),
        isr=frozenset(requested["isr"]),
        leader=leader,
        leader_epoch=int(requested["leader_epoch"]),
        partition_epoch=int(requested["partition_epoch"]),
    )


def unknown_log(length: int, epoch: int = 0) -> Log:
    return ((epoch, UNKNOWN_VALUE),) * length


# --- the leader -------------------------------------------------------------------------------


def next_fetch(broker: Broker, key: tuple[str, int], follower: int, line: int) -> int:
    """The offset of `follower`'s next fetch after `line` in the file (-1 if none): the leader
    may have recorded it already, its event written later by another request thread. A
    follower's fetcher sends one fetch at a time, so no later fetch can have been recorded."""
    lines, offsets = broker.fetches.get((key, follower), ([], []))
    index = bisect_right(lines, line)
    return offsets[index] if index < len(lines) else -1


# How far ahead an event that happened first may be written: a few request threads' events.
AHEAD = 64


def ahead(
    broker: Broker, event: AgentEvent, wanted: Callable[[AgentEvent], bool]
) -> AgentEvent | None:
    """The first event after `event`, within AHEAD and the same run, that `wanted` picks."""
    start = broker.position[event.line] + 1
    for later in broker.events[start : start + AHEAD]:
        if later.kind == "agent_start":
            return None
        if later.line not in broker.replayed_early and wanted(later):
            return later
    return None


def replay_early(ctx: Context, broker: Broker, event: AgentEvent) -> Iterator[Unexplained]:
    broker.replayed_early.add(event.line)
    assert broker.step is not None  # set by `replay.replay`
    yield from broker.step(ctx, broker, event)
