"""The leader's events, each against the model's step: becoming leader (`makeLeader`), a
producer's write, a follower's fetch handled (and the ISR expansion it may propose), an
AlterPartition and its answer, the HWM's moves; and what its broker's metadata image tells it."""

from __future__ import annotations

from collections.abc import Iterator

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.broker_trace.images import Image
from kafkarep.broker_trace.replica import (
    Broker,
    Context,
    Unexplained,
    ahead,
    next_fetch,
    problem,
    registration,
    replay_early,
    replica_of,
    unknown_log,
)
from kafkarep.kafka.metadata import PartitionRegistration
from kafkarep.model.actions.alter_partition import follower_out_of_sync, isr_join_guards
from kafkarep.model.domain import CONCRETE
from kafkarep.model.hwm import hwm_offset, isr_at_min_isr
from kafkarep.model.metadata_cache import eligibility
from kafkarep.model.state import (
    FollowerView,
    PendingAlterPartition,
    Replica,
    Role,
)
from kafkarep.rules.guards import first_failure


def metadata_applied(ctx: Context, broker: Broker, event: AgentEvent) -> None:
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


def make_leader(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """`Partition.makeLeader` (Kafka 4.1.1): a partition epoch older than the replica's changes
    nothing; otherwise the replica leads with the registration's ISR, and its pending
    AlterPartition is dropped (the model's `pending_isr_on_metadata = "reset"`). On a new leader
    epoch it forgets what it knew of its followers and starts the epoch at its log end."""
    replica = replica_of(ctx, broker, key)
    requested = event["requested"]
    view = registration(requested, leader=broker.node)
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


def append_leader(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A producer's write (`Partition.appendRecordsToLeader`): acks=all only while the ISR is
    at least MinISR (the model's `produce`), at the log's end, in the leader epoch."""
    replica = replica_of(ctx, broker, key)
    acks_all = event.get("required_acks") == -1
    below = replica.view is not None and len(replica.view.isr) < replica.min_isr
    if event.get("error") is not None:
        if "NotEnoughReplicas" in str(event["error"]) and not (acks_all and below):
            yield problem(
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
        broker.replicas[key] = replica._replace(log=replica.log + unknown_log(count, epoch))
        broker.former_leader[key] = former._replace(log=former.log + unknown_log(count, epoch))
        return
    view = _led(replica)
    if view is None:
        yield problem(broker, event, "a write", NOT_LEADING, replica)
        return
    if first + count <= replica.leo == int(event.get("log_end_offset", -1)):
        # An idempotent producer's retry of a batch the log holds: Kafka answers with the
        # batch's offsets and appends nothing (`UnifiedLog.append`, `maybeDuplicate`, 4.1.1).
        return
    if first > replica.leo:
        # Two producers' appends: the log's lock orders them, their events are written after
        # it is released, so the one below may come second.
        earlier = ahead(
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
            yield from replay_early(ctx, broker, earlier)
            replica = replica_of(ctx, broker, key)
    if acks_all and below:
        yield problem(
            broker,
            event,
            f"acks=all write at {first}",
            f"produce: the ISR {sorted(view.isr)} is below MinISR {replica.min_isr}",
            replica,
        )
    if first != replica.leo:
        yield problem(
            broker,
            event,
            f"write at {first}",
            f"produce appends at the log end, {replica.leo}",
            replica,
        )
    epoch = int(event.get("leader_epoch") or view.leader_epoch)
    log = replica.log[:first] + unknown_log(first - replica.leo) + unknown_log(count, epoch)
    broker.replicas[key] = replica._replace(log=log)


NOT_LEADING = "the broker does not lead the partition"


def _led(replica: Replica) -> PartitionRegistration | None:
    """The partition as the replica leads it, or None where its events have not made it leader."""
    return replica.view if replica.role == Role.LEADER else None


def fetch_handled(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader handled a follower's fetch (`Partition.updateFollowerFetchState`): it records
    the follower at its fetch offset and proposes it for the ISR exactly when the model does
    (`alter_partition.joins`: not in the ISR, no AlterPartition in flight, every ISR-join guard
    passes)."""
    replica = replica_of(ctx, broker, key)
    follower = int(event["follower"])
    offset = int(event["fetch_offset"])
    what = f"broker {follower} at offset {offset}"
    view = _led(replica)
    if view is None:
        yield problem(broker, event, what, NOT_LEADING, replica)
        return
    if follower > len(ctx.cfg.broker_ids) or follower not in view.replicas:
        yield problem(broker, event, what, f"broker {follower} is not a replica", replica)
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
        yield problem(
            broker, event, what, f"Kafka proposed it for the ISR; the model does not: {why}", judged
        )
    elif not proposed and why is None:
        yield problem(
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


def isr_proposed(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader sends AlterPartition (`prepareIsrExpand`, `prepareIsrShrink`): one at a time;
    a shrink drops only followers that are out of sync (`follower_out_of_sync`)."""
    replica = replica_of(ctx, broker, key)
    proposed = frozenset(event["proposed_isr"])
    what = f"ISR {sorted(proposed)}"
    view = _led(replica)
    if view is None:
        yield problem(broker, event, what, NOT_LEADING, replica)
        return
    if replica.pending is not None:
        yield problem(broker, event, what, "an AlterPartition is in flight already", replica)
    disabled = ctx.cfg.options.disabled_guards
    for dropped in event.get("out_of_sync_replicas") or ():
        if 0 < dropped <= len(ctx.cfg.broker_ids) and not follower_out_of_sync.passes(
            disabled, replica, dropped
        ):
            yield problem(
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


def alter_partition_answer(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The controller's answer (`handleAlterPartitionUpdate`/`Error`): taken only for the
    proposal in flight; the state after is Kafka's."""
    replica = replica_of(ctx, broker, key)
    took = event.get("answer") == "update" and not event.get("pending")
    if (
        took
        and replica.pending is None
        and frozenset(event["isr"]) != (replica.view.isr if replica.view else frozenset())
    ):
        yield problem(
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


def check_hwm(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The leader's HWM moved (`Partition.maybeIncrementLeaderHW`): only while the ISR is at
    least MinISR, and never past what the HWM's members have fetched (`hwm.hwm_offset`). An
    upper bound: which fetches the leader had recorded when it moved the HWM, the events'
    order does not always tell (`next_fetch`)."""
    replica = replica_of(ctx, broker, key)
    new = int(event["new_hwm"])
    what = f"{event.get('old_hwm')} -> {new}"
    view = _led(replica)
    if view is None:
        yield problem(broker, event, what, NOT_LEADING, replica)
        return
    disabled = ctx.cfg.options.disabled_guards
    if not isr_at_min_isr.passes(disabled, ctx.cfg, replica, replica.min_isr):
        yield problem(
            broker,
            event,
            what,
            f"guard {isr_at_min_isr.qualified}: the ISR is below MinISR {replica.min_isr}",
            replica,
        )
    known = tuple(
        f._replace(
            leo=max(f.leo, next_fetch(broker, key, b, event.line)),
            caught_up=_caught_up(ctx, broker, key, b, event.ts_ms),
        )
        for b, f in enumerate(replica.followers, 1)
    )
    # The leader's own log end as the event records it: an append whose event another request
    # thread writes later may have moved it already.
    ahead_of_log = max(0, int(event.get("log_end_offset") or 0) - replica.leo)
    log = replica.log + unknown_log(ahead_of_log, view.leader_epoch)
    bound = hwm_offset(CONCRETE, ctx.cfg, replica._replace(followers=known, log=log), broker.node)
    if new > bound:
        yield problem(
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
