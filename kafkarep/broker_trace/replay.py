"""A broker's events replayed through the model's data-plane rules.

Each broker's events are read in its file's order; each partition the broker holds is a model
`Replica` (`model.state`) that its events build. An event is explained when it is a step the
model allows from that replica: the guard or rule that would refuse it is asked, and when one
does, the event is reported with the broker's state and that guard's name. The model's own
functions answer: the ISR-join guards (`isr_join_guards`), the HWM's bound (`hwm.hwm_offset`,
`hwm.isr_at_min_isr`), the fetch response's guards (`response_guards`,
`batch_epoch_within_fetch`), the follower's truncation (`logs.truncate_to`), the shrink's
(`follower_out_of_sync`).

Where Kafka does in one call what the model does in several steps, the finer steps are taken
silently: a fetch handled by the leader records the follower, may propose it for the ISR and
moves the HWM (`Partition.updateFollowerFetchState`, Kafka 4.1.1). An event of a hook read on
exit is written when its method returns, so the events of the methods it called come first in
the file: a `hwm_moved` is checked once the call that moved it (the next event of the same
thread and partition) has been replayed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.broker_trace.images import Image, Images
from kafkarep.kafka.metadata import PartitionRegistration
from kafkarep.model.actions.alter_partition import follower_out_of_sync, isr_join_guards
from kafkarep.model.actions.data import batch_epoch_within_fetch, response_guards
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE
from kafkarep.model.hwm import hwm_offset, isr_at_min_isr
from kafkarep.model.logs import Entries, truncate_to
from kafkarep.model.metadata_cache import eligibility
from kafkarep.model.state import (
    FetchResponse,
    FollowerView,
    Log,
    PendingAlterPartition,
    Replica,
    Role,
)
from kafkarep.rules.guards import first_failure

# Events written inside another hooked call, before it (docs/trace-validation.md).
INNER = frozenset({"hwm_moved", "isr_expand_proposed", "append_follower"})
# Events that are no step of the model: the agent's own, and Kafka's bookkeeping.
BOOKKEEPING = frozenset({"agent_start", "instrumented", "shutdown"})
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


class Context(NamedTuple):
    cfg: ModelConfig
    images: Images
    default_min_isr: int
    lag_time_ms: int


def replay(
    ctx: Context, node: int, source: str, events: Iterable[AgentEvent]
) -> tuple[int, list[Unexplained]]:
    """Replay one broker's events: (how many were explained, the others)."""
    broker = Broker(node, source)
    broker.events = list(events)
    broker.position = {event.line: i for i, event in enumerate(broker.events)}
    broker.publishing = _publishing(broker.events)
    broker.fetches = _fetches(broker.events)
    explained, unexplained = 0, []
    for event in broker.events:
        if event.line in broker.replayed_early:
            explained += 1
            continue
        problems = list(_step(ctx, broker, event))
        unexplained += problems
        explained += not problems
    for thread in list(broker.open_calls):
        unexplained += _close_call(ctx, broker, thread)
    return explained, unexplained


def _publishing(events: list[AgentEvent]) -> dict[int, int]:
    """For each event of a metadata delta's application (`makeLeader`, `makeFollower` and what
    they call, on the thread that then publishes the image), that image's offset: the event
    happens with the delta's broker records applied, though its `metadata_applied` comes
    after it in the file."""
    found: dict[int, int] = {}
    upcoming: dict[str, int] = {}
    for event in reversed(events):
        thread = str(event.get("thread", ""))
        if event.kind == "metadata_applied":
            upcoming[thread] = int(event["offset"])
        elif event.kind == "agent_start":
            upcoming.clear()
        elif thread in upcoming:
            found[event.line] = upcoming[thread]
    return found


def _fetches(
    events: list[AgentEvent],
) -> dict[tuple[tuple[str, int], int], tuple[list[int], list[int]]]:
    found: dict[tuple[tuple[str, int], int], tuple[list[int], list[int]]] = {}
    for event in events:
        key = _key(event)
        if event.kind == "fetch_handled" and key is not None:
            lines, offsets = found.setdefault((key, int(event["follower"])), ([], []))
            lines.append(event.line)
            offsets.append(int(event["fetch_offset"]))
    return found


def _next_fetch(broker: Broker, key: tuple[str, int], follower: int, line: int) -> int:
    """The offset of `follower`'s next fetch after `line` in the file (-1 if none): the leader
    may have recorded it already, its event written later by another request thread. A
    follower's fetcher sends one fetch at a time, so no later fetch can have been recorded."""
    lines, offsets = broker.fetches.get((key, follower), ([], []))
    index = bisect_right(lines, line)
    return offsets[index] if index < len(lines) else -1


# How far ahead an event that happened first may be written: a few request threads' events.
AHEAD = 64
LEADER_STEPS = frozenset(
    {"fetch_handled", "append_leader", "isr_expand_proposed", "isr_shrink_proposed"}
)


def _ahead(
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


def _replay_early(ctx: Context, broker: Broker, event: AgentEvent) -> Iterator[Unexplained]:
    broker.replayed_early.add(event.line)
    yield from _step(ctx, broker, event)


def _made_leader_first(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A leader's event on a replica its events have not made leader yet, where the next event
    of the partition on the metadata thread makes it leader: `makeLeader` changed the partition
    under its write lock and returned later, so its event comes after the first fetches the
    leader handled."""
    replica = broker.replicas.get(key)
    if replica is not None and replica.role == Role.LEADER:
        return
    made = _ahead(
        broker, event, lambda e: e.about(*key) and e.kind in ("make_leader", "make_follower")
    )
    if made is not None and made.kind == "make_leader":
        yield from _replay_early(ctx, broker, made)


def _step(ctx: Context, broker: Broker, event: AgentEvent) -> Iterator[Unexplained]:
    key = _key(event)
    if key is not None and event.kind in LEADER_STEPS:
        yield from _made_leader_first(ctx, broker, event, key)
    if event.line in broker.publishing:
        broker.image = ctx.images.at(broker.publishing[event.line])
    thread = str(event.get("thread", ""))
    after, broker.last_kind[thread] = broker.last_kind.get(thread), event.kind
    if event.kind == "hwm_moved" and after == "isr_shrink_proposed" and key is not None:
        # `maybeShrinkIsr` moves the HWM after `prepareIsrShrink` returned (Kafka 4.1.1)
        yield from _check_hwm(ctx, broker, event, key)
        return
    if event.kind in INNER and key is not None:
        if event.kind == "append_follower":
            yield from _append_follower(ctx, broker, event, key)
        elif event.kind == "isr_expand_proposed":
            yield from _isr_proposed(ctx, broker, event, key)
        broker.open_calls.setdefault(thread, []).append(event)
        return
    if event.kind == "agent_error":
        yield _problem(
            broker,
            event,
            "the agent failed in a hook",
            f"{event.get('hook')}: "
            f"{event.get('kind')}: {event.get('message')}; the trace may lack events",
        )
        return
    if event.kind == "agent_start":
        _restart(broker)
    elif event.kind == "metadata_applied":
        _metadata_applied(ctx, broker, event)
    elif event.kind in BOOKKEEPING or key is None or key[0] == "__cluster_metadata":
        pass
    else:
        yield from STEPS.get(event.kind, _unknown)(ctx, broker, event, key)
    yield from _close_call(ctx, broker, thread)


def _key(event: AgentEvent) -> tuple[str, int] | None:
    if event.topic is None or event.partition is None:
        return None
    return (event.topic, event.partition)


def _replica(ctx: Context, broker: Broker, key: tuple[str, int]) -> Replica:
    brokers = len(ctx.cfg.broker_ids)
    if key not in broker.replicas:
        broker.replicas[key] = Replica(
            followers=(FollowerView(),) * brokers, eligible=(-1,) * brokers
        )
    return broker.replicas[key]


def _describe(replica: Replica | None) -> str:
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


def _problem(
    broker: Broker, event: AgentEvent, what: str, why: str, replica: Replica | None = None
) -> Unexplained:
    where = f"{broker.source}:{event.line}"
    partition = f" {event.topic}-{event.partition}" if event.topic is not None else ""
    return Unexplained(where, f"{event.kind}{partition} ({what})", why, _describe(replica))


def _unknown(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    yield _problem(broker, event, "an event kind", "validate-trace does not know this event")


# --- the broker's life and its metadata -------------------------------------------------------


def _restart(broker: Broker) -> None:
    """A new JVM: every replica keeps its log and nothing else until its metadata is applied."""
    broker.open_calls.clear()
    broker.diverging.clear()
    broker.image = None
    broker.replicas = {
        key: Replica(log=r.log, hwm=r.hwm, followers=r.followers, eligible=r.eligible)
        for key, r in broker.replicas.items()
    }


def _metadata_applied(ctx: Context, broker: Broker, event: AgentEvent) -> None:
    """The broker published the image up to the event's offset: its leaders' metadata caches
    (ISR eligibility, MinISR) are that image's."""
    broker.image = ctx.images.at(int(event["offset"]))
    for key, replica in broker.replicas.items():
        if replica.role == Role.LEADER:
            broker.replicas[key] = _with_image(ctx, broker, key, replica)


def _with_image(ctx: Context, broker: Broker, key: tuple[str, int], replica: Replica) -> Replica:
    image = broker.image
    if image is None:
        return replica._replace(min_isr=_min_isr(ctx, key, replica, None))
    eligible = eligibility(image.registry, len(ctx.cfg.broker_ids), zookeeper=False)
    return replica._replace(eligible=eligible, min_isr=_min_isr(ctx, key, replica, image))


def _min_isr(ctx: Context, key: tuple[str, int], replica: Replica, image: Image | None) -> int:
    """The leader's effective MinISR: the topic's (or the brokers' default), at most the
    replication factor (`Partition.effectiveMinIsr`, Kafka 4.1.1)."""
    configured = ctx.default_min_isr
    if image is not None:
        configured = image.min_isr.get(key[0], configured)
    replicas = len(replica.view.replicas) if replica.view is not None else configured
    return min(configured, replicas)


def _make_leader(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """`Partition.makeLeader` (Kafka 4.1.1): a partition epoch older than the replica's changes
    nothing; otherwise the replica leads with the registration's ISR, and its pending
    AlterPartition is dropped (the model's `pending_isr_on_metadata = "reset"`). On a new leader
    epoch it forgets what it knew of its followers and starts the epoch at its log end."""
    replica = _replica(ctx, broker, key)
    requested = event["requested"]
    view = _registration(requested, leader=broker.node)
    if replica.view is not None and view.partition_epoch < replica.view.partition_epoch:
        return iter(())
    new_epoch = (
        replica.role != Role.LEADER
        or replica.view is None
        or view.leader_epoch > replica.view.leader_epoch
    )
    followers = replica.followers
    leso = replica.leso
    if new_epoch:
        followers = tuple(
            FollowerView(caught_up=b in view.isr) for b in range(1, len(ctx.cfg.broker_ids) + 1)
        )
        leso = int(event.get("epoch_start_offset", replica.leo))
    led = replica._replace(
        role=Role.LEADER,
        view=view,
        maximal_isr=view.isr,
        followers=followers,
        leso=leso,
        pending=None,
    )
    broker.replicas[key] = _with_image(ctx, broker, key, led)
    broker.former_leader.pop(key, None)
    return iter(())


def _make_follower(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """`Partition.makeFollower` (Kafka 4.1.1): the replica follows the registration's leader."""
    replica = _replica(ctx, broker, key)
    view = _registration(event["requested"], leader=int(event["requested"]["leader"]))
    if replica.view is not None and view.partition_epoch < replica.view.partition_epoch:
        return iter(())
    if replica.role == Role.LEADER:
        broker.former_leader[key] = replica
    broker.replicas[key] = replica._replace(
        role=Role.FOLLOWER, view=view, maximal_isr=frozenset(), pending=None, leso=0
    )
    broker.diverging.pop(key, None)
    return iter(())


def _registration(requested: dict[str, Any], leader: int) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=tuple(requested["replicas"]),
        isr=frozenset(requested["isr"]),
        leader=leader,
        leader_epoch=int(requested["leader_epoch"]),
        partition_epoch=int(requested["partition_epoch"]),
    )


def _log_recovery(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A log loaded at start-up: what was flushed survives (from the recovery point on Kafka
    may lose a suffix, `LogLoader`), and nothing that was never written appears."""
    replica = _replica(ctx, broker, key)
    recovered = int(event["log_end_offset"])
    flushed = min(int(event["recovery_point_checkpoint"]), replica.leo)
    if recovered > replica.leo and replica.leo > 0:
        yield _problem(
            broker,
            event,
            f"recovered to {recovered}",
            f"the log held {replica.leo} records before: recovery adds none",
            replica,
        )
    elif recovered < flushed:
        yield _problem(
            broker,
            event,
            f"recovered to {recovered}",
            f"below the recovery point {flushed}: flushed records survive",
            replica,
        )
    log = replica.log[:recovered] if replica.leo >= recovered else _unknown_log(recovered)
    broker.replicas[key] = replica._replace(log=log, hwm=min(replica.hwm, recovered))


def _unknown_log(length: int, epoch: int = 0) -> Log:
    return ((epoch, UNKNOWN_VALUE),) * length


# --- the leader -------------------------------------------------------------------------------


def _append_leader(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A producer's write (`Partition.appendRecordsToLeader`): acks=all only while the ISR is
    at least MinISR (the model's `produce`), at the log's end, in the leader epoch."""
    replica = _replica(ctx, broker, key)
    acks_all = event.get("required_acks") == -1
    below = replica.view is not None and len(replica.view.isr) < replica.min_isr
    if event.get("error") is not None:
        if "NotEnoughReplicas" in str(event["error"]) and not (acks_all and below):
            yield _problem(
                broker,
                event,
                "refused: not enough replicas",
                "the model appends it: the ISR is at MinISR",
                replica,
            )
        return
    first, count = int(event["first_offset"]), int(event["offsets"])
    former = broker.former_leader.get(key)
    if replica.role != Role.LEADER and former is not None and first == former.leo == replica.leo:
        # Taken while it led: the append holds the partition's read lock, `makeFollower` waits
        # for the write lock and its event, written on return, came first.
        epoch = former.view.leader_epoch if former.view is not None else 0
        broker.replicas[key] = replica._replace(log=replica.log + _unknown_log(count, epoch))
        broker.former_leader[key] = former._replace(log=former.log + _unknown_log(count, epoch))
        return
    view = _led(replica)
    if view is None:
        yield _problem(broker, event, "a write", NOT_LEADING, replica)
        return
    if first + count <= replica.leo == int(event.get("log_end_offset", -1)):
        # An idempotent producer's retry of a batch the log holds: Kafka answers with the
        # batch's offsets and appends nothing (`UnifiedLog.append`, `maybeDuplicate`, 4.1.1).
        return
    if first > replica.leo:
        # Two producers' appends: the log's lock orders them, their events are written after
        # it is released, so the one below may come second.
        earlier = _ahead(
            broker,
            event,
            lambda e: (
                e.about(*key)
                and e.kind == "append_leader"
                and e.get("first_offset") == replica.leo
                and int(e["first_offset"]) + int(e.get("offsets") or 0) == first
            ),
        )
        if earlier is not None:
            yield from _replay_early(ctx, broker, earlier)
            replica = _replica(ctx, broker, key)
    if acks_all and below:
        yield _problem(
            broker,
            event,
            f"acks=all write at {first}",
            f"produce: the ISR {sorted(view.isr)} is below MinISR {replica.min_isr}",
            replica,
        )
    if first != replica.leo:
        yield _problem(
            broker,
            event,
            f"write at {first}",
            f"produce appends at the log end, {replica.leo}",
            replica,
        )
    epoch = int(event.get("leader_epoch") or view.leader_epoch)
    log = replica.log[:first] + _unknown_log(first - replica.leo) + _unknown_log(count, epoch)
    broker.replicas[key] = replica._replace(log=log)


NOT_LEADING = "the broker does not lead the partition"


def _led(replica: Replica) -> PartitionRegistration | None:
    """The partition as the replica leads it, or None where its events have not made it leader."""
    return replica.view if replica.role == Role.LEADER else None


def _fetch_handled(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader handled a follower's fetch (`Partition.updateFollowerFetchState`): it records
    the follower at its fetch offset and proposes it for the ISR exactly when the model does
    (`alter_partition.joins`: not in the ISR, no AlterPartition in flight, every ISR-join guard
    passes)."""
    replica = _replica(ctx, broker, key)
    follower = int(event["follower"])
    offset = int(event["fetch_offset"])
    what = f"broker {follower} at offset {offset}"
    view = _led(replica)
    if view is None:
        yield _problem(broker, event, what, NOT_LEADING, replica)
        return
    if follower > len(ctx.cfg.broker_ids) or follower not in view.replicas:
        yield _problem(broker, event, what, f"broker {follower} is not a replica", replica)
        return
    state = event.get("replica") or {}
    broker.caught_up_ms[(key, follower)] = int(state.get("last_caught_up_time_ms", 0))
    caught_up = offset >= int(event.get("leader_log_end_offset", replica.leo)) or (
        event.ts_ms - broker.caught_up_ms[(key, follower)] <= ctx.lag_time_ms
    )
    followers = list(replica.followers)
    broker_epoch = int(event["broker_epoch"])
    followers[follower - 1] = FollowerView(offset, broker_epoch, True, caught_up)
    before = replica
    replica = replica._replace(followers=tuple(followers))
    proposed = any(
        e.kind == "isr_expand_proposed"
        and e.about(*key)
        and e.get("new_in_sync_replica") == follower
        for e in broker.open_calls.get(str(event.get("thread", "")), ())
    )
    # An expansion proposed in this call set the pending state already: judge it from before.
    judged = before._replace(followers=tuple(followers)) if proposed else replica
    if proposed:
        judged = judged._replace(
            pending=None, maximal_isr=before.view.isr if before.view else frozenset()
        )
    why = _join_refused(ctx, judged, follower)
    if proposed and why is not None:
        yield _problem(
            broker, event, what, f"Kafka proposed it for the ISR; the model does not: {why}", judged
        )
    elif not proposed and why is None:
        yield _problem(
            broker,
            event,
            what,
            "the model proposes it for the ISR here (no "
            "AlterPartition in flight, every ISR-join guard passes); Kafka did not",
            judged,
        )
    broker.replicas[key] = replica


def _join_refused(ctx: Context, replica: Replica, follower: int) -> str | None:
    """Why the model's leader does not propose `follower` for the ISR now, or None."""
    assert replica.view is not None
    if follower in replica.view.isr:
        return "it is in the ISR"
    if replica.pending is not None:
        return "an AlterPartition is in flight"
    refusing = first_failure(
        isr_join_guards(ctx.cfg), ctx.cfg.options.disabled_guards, replica, follower
    )
    return None if refusing is None else f"guard {refusing.qualified}"


def _isr_proposed(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader sends AlterPartition (`prepareIsrExpand`, `prepareIsrShrink`): one at a time;
    a shrink drops only followers that are out of sync (`follower_out_of_sync`)."""
    replica = _replica(ctx, broker, key)
    proposed = frozenset(event["proposed_isr"])
    what = f"ISR {sorted(proposed)}"
    view = _led(replica)
    if view is None:
        yield _problem(broker, event, what, NOT_LEADING, replica)
        return
    if replica.pending is not None:
        yield _problem(broker, event, what, "an AlterPartition is in flight already", replica)
    disabled = ctx.cfg.options.disabled_guards
    for dropped in event.get("out_of_sync_replicas") or ():
        if 0 < dropped <= len(ctx.cfg.broker_ids) and not follower_out_of_sync.passes(
            disabled, replica, dropped
        ):
            yield _problem(
                broker,
                event,
                what,
                f"guard {follower_out_of_sync.qualified}: broker "
                f"{dropped} fetched at the leader's log end",
                replica,
            )
    pending = PendingAlterPartition(proposed, view.partition_epoch)
    maximal = frozenset(event.get("maximal_isr") or view.isr | proposed)
    broker.replicas[key] = replica._replace(pending=pending, maximal_isr=maximal)


def _alter_partition_answer(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The controller's answer (`handleAlterPartitionUpdate`/`Error`): taken only for the
    proposal in flight; the state after is Kafka's."""
    replica = _replica(ctx, broker, key)
    took = event.get("answer") == "update" and not event.get("pending")
    if (
        took
        and replica.pending is None
        and frozenset(event["isr"]) != (replica.view.isr if replica.view else frozenset())
    ):
        yield _problem(
            broker,
            event,
            f"ISR {event['isr']}",
            "the leader has no AlterPartition in flight to take an answer for",
            replica,
        )
    if replica.view is None:
        return
    view = replica.view._replace(
        isr=frozenset(event.get("isr") or replica.view.isr),
        partition_epoch=int(event.get("partition_epoch") or replica.view.partition_epoch),
    )
    pending = replica.pending if event.get("pending") else None
    maximal = frozenset(event.get("maximal_isr") or view.isr)
    broker.replicas[key] = replica._replace(view=view, pending=pending, maximal_isr=maximal)


def _check_hwm(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader's HWM moved (`Partition.maybeIncrementLeaderHW`): only while the ISR is at
    least MinISR, and never past what the HWM's members have fetched (`hwm.hwm_offset`). An
    upper bound: which fetches the leader had recorded when it moved the HWM, the events'
    order does not always tell (`_next_fetch`)."""
    replica = _replica(ctx, broker, key)
    new = int(event["new_hwm"])
    what = f"{event.get('old_hwm')} -> {new}"
    view = _led(replica)
    if view is None:
        yield _problem(broker, event, what, NOT_LEADING, replica)
        return
    disabled = ctx.cfg.options.disabled_guards
    if not isr_at_min_isr.passes(disabled, ctx.cfg, replica, replica.min_isr):
        yield _problem(
            broker,
            event,
            what,
            f"guard {isr_at_min_isr.qualified}: the ISR is below MinISR {replica.min_isr}",
            replica,
        )
    known = tuple(
        f._replace(
            leo=max(f.leo, _next_fetch(broker, key, b, event.line)),
            caught_up=_caught_up(ctx, broker, key, b, event.ts_ms),
        )
        for b, f in enumerate(replica.followers, 1)
    )
    bound = hwm_offset(CONCRETE, ctx.cfg, replica._replace(followers=known), broker.node)
    if new > bound:
        yield _problem(
            broker,
            event,
            what,
            f"the model's HWM stops at {bound}: the slowest "
            "member of the Maximal ISR, or a caught-up follower it waits for",
            replica,
        )
    broker.replicas[key] = replica._replace(hwm=max(replica.hwm, new))


def _caught_up(ctx: Context, broker: Broker, key: tuple[str, int], follower: int, now: int) -> bool:
    """Kafka's `ReplicaState.isCaughtUp` by its clock: the follower reached the leader's log end
    within replica.lag.time.max.ms (the model's `caught_up` is a clock-free stand-in for it)."""
    seen = broker.caught_up_ms.get((key, follower))
    return seen is not None and now - seen <= ctx.lag_time_ms


def _close_call(ctx: Context, broker: Broker, thread: str) -> Iterator[Unexplained]:
    """The call a thread's open events belong to returned: check its HWM moves now."""
    for event in broker.open_calls.pop(thread, ()):
        key = _key(event)
        if event.kind == "hwm_moved" and key is not None:
            yield from _check_hwm(ctx, broker, event, key)


# --- the follower -----------------------------------------------------------------------------


def _append_follower(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """Records the fetcher appended (`appendRecordsToFollowerOrFutureReplica`); the response
    that carried them is checked by its `fetch_response` event, next."""
    replica = _replica(ctx, broker, key)
    if int(event["first_offset"]) != replica.leo:
        yield _problem(
            broker,
            event,
            f"append at {event['first_offset']}",
            f"a follower appends at its log end, {replica.leo}",
            replica,
        )


def _fetch_response(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The follower took a response (`ReplicaFetcherThread.processPartitionData`, or
    `truncateOnFetchResponse` for a divergence): it passes the model's response guards, its
    records are appended at the fetch offset, and the follower adopts the leader's HWM within
    its log (`fetch_response_step`)."""
    replica = _replica(ctx, broker, key)
    diverging = event.get("diverging_epoch")
    if diverging:
        # read on entry to `truncateOnFetchResponse`, after the fetcher's own checks of the
        # response; the truncation that follows is checked by its `truncate` event
        broker.diverging[key] = (int(diverging["epoch"]), int(diverging["end_offset"]))
        return
    offset = int(event["fetch_offset"])
    what = f"fetched at {offset} in leader epoch {event.get('fetch_leader_epoch')}"
    if replica.role != Role.FOLLOWER or replica.view is None:
        yield _problem(broker, event, what, "the broker does not follow the partition", replica)
        return
    count = int(event.get("offsets") or 0)
    epoch = event.get("last_leader_epoch")
    entries = _unknown_log(count, int(epoch) if epoch is not None else 0)
    response = FetchResponse(
        leader=replica.view.leader,
        leader_epoch=int(event.get("fetch_leader_epoch", replica.view.leader_epoch)),
        fetch_offset=offset,
        hwm=int(event.get("leader_high_watermark") or 0),
        entries=entries,
    )
    disabled = ctx.cfg.options.disabled_guards
    refusing = first_failure(response_guards(ctx.cfg), disabled, replica, response)
    if refusing is not None:
        yield _problem(
            broker, event, what, f"guard {refusing.qualified} drops this response", replica
        )
    if (
        count
        and epoch is not None
        and not batch_epoch_within_fetch.passes(disabled, replica, (int(epoch), UNKNOWN_VALUE))
    ):
        yield _problem(
            broker,
            event,
            what,
            f"guard {batch_epoch_within_fetch.qualified}: a batch of leader epoch {epoch}",
            replica,
        )
    log = replica.log[:offset] + entries
    hwm = min(response.hwm, len(log))
    if int(event["log_end_offset"]) != len(log) or int(event["high_watermark"]) != hwm:
        yield _problem(
            broker,
            event,
            what,
            f"the model's follower ends at {len(log)} with HWM "
            f"{hwm} (the leader's {response.hwm} within its log); Kafka's at "
            f"{event['log_end_offset']} with {event['high_watermark']}",
            replica,
        )
    broker.replicas[key] = replica._replace(log=log, hwm=hwm)


def _truncate(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A truncation: the fetcher's on a divergence cuts where the model's follower does
    (`logs.truncate_to`, KIP-279's search, which the fetcher runs on the diverging epoch);
    the log's own (`Partition.truncateTo`) cuts the log there."""
    replica = _replica(ctx, broker, key)
    offset = int(event["offset"])
    via = str(event.get("via", ""))
    if via.startswith("AbstractFetcherThread"):
        diverging = broker.diverging.pop(key, None)
        if event.get("cause") == "diverging_epoch" and diverging is not None:
            expected = truncate_to("leader-epoch", Entries(replica.log), replica.hwm, *diverging)
            if expected is not None and expected != offset and offset < replica.leo:
                yield _problem(
                    broker,
                    event,
                    f"to {offset}",
                    f"the model's follower truncates "
                    f"to {expected} (epoch {diverging[0]} ends at {diverging[1]})",
                    replica,
                )
        return
    if via.endswith("truncateFullyAndStartAt"):
        log = _unknown_log(offset)
    else:
        log = replica.log[: min(offset, replica.leo)]
    broker.replicas[key] = replica._replace(log=log, hwm=min(replica.hwm, len(log)))


STEPS = {
    "make_leader": _make_leader,
    "make_follower": _make_follower,
    "log_recovery": _log_recovery,
    "append_leader": _append_leader,
    "fetch_handled": _fetch_handled,
    "isr_shrink_proposed": _isr_proposed,
    "alter_partition_answer": _alter_partition_answer,
    "fetch_response": _fetch_response,
    "truncate": _truncate,
}
