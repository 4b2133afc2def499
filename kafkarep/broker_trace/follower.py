"""The follower's events, each against the model's step: following a leader (`makeFollower`),
a fetch response taken (its records appended, the leader's HWM adopted), a truncation, and a
log recovered at start-up."""

from __future__ import annotations

from collections.abc import Iterator

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.broker_trace.replica import (
    UNKNOWN_VALUE,
    Broker,
    Context,
    Unexplained,
    problem,
    registration,
    replica_of,
    unknown_log,
)
from kafkarep.model.actions.data import batch_epoch_within_fetch, response_guards
from kafkarep.model.logs import Entries, truncate_to
from kafkarep.model.state import (
    FetchResponse,
    Role,
)
from kafkarep.rules.guards import first_failure


def make_follower(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """`Partition.makeFollower` (Kafka 4.1.1): the replica follows the registration's leader."""
    replica = replica_of(ctx, broker, key)
    view = registration(event["requested"], leader=int(event["requested"]["leader"]))
    if replica.view is not None and view.partition_epoch < replica.view.partition_epoch:
        return iter(())
    if replica.role == Role.LEADER:
        broker.former_leader[key] = replica
    broker.replicas[key] = replica._replace(
        role=Role.FOLLOWER, view=view, maximal_isr=frozenset(), pending=None, leso=0
    )
    broker.diverging.pop(key, None)
    return iter(())


def log_recovery(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A log loaded at start-up: what was flushed survives (from the recovery point on Kafka
    may lose a suffix, `LogLoader`), and nothing that was never written appears."""
    replica = replica_of(ctx, broker, key)
    recovered = int(event["log_end_offset"])
    flushed = min(int(event["recovery_point_checkpoint"]), replica.leo)
    if recovered > replica.leo and replica.leo > 0:
        yield problem(
            broker,
            event,
            f"recovered to {recovered}",
            f"the log held {replica.leo} records before: recovery adds none",
            replica,
        )
    elif recovered < flushed:
        yield problem(
            broker,
            event,
            f"recovered to {recovered}",
            f"below the recovery point {flushed}: flushed records survive",
            replica,
        )
    log = replica.log[:recovered] if replica.leo >= recovered else unknown_log(recovered)
    broker.replicas[key] = replica._replace(log=log, hwm=min(replica.hwm, recovered))


def append_follower(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """Records the fetcher appended (`appendRecordsToFollowerOrFutureReplica`); the response
    that carried them is checked by its `fetch_response` event, next."""
    replica = replica_of(ctx, broker, key)
    if int(event["first_offset"]) != replica.leo:
        yield problem(
            broker,
            event,
            f"append at {event['first_offset']}",
            f"a follower appends at its log end, {replica.leo}",
            replica,
        )


def fetch_response(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """The follower took a response (`ReplicaFetcherThread.processPartitionData`, or
    `truncateOnFetchResponse` for a divergence): it passes the model's response guards, its
    records are appended at the fetch offset, and the follower adopts the leader's HWM within
    its log (`fetch_response_step`)."""
    replica = replica_of(ctx, broker, key)
    diverging = event.get("diverging_epoch")
    if diverging:
        # read on entry to `truncateOnFetchResponse`, after the fetcher's own checks of the
        # response; the truncation that follows is checked by its `truncate` event
        broker.diverging[key] = (int(diverging["epoch"]), int(diverging["end_offset"]))
        return
    offset = int(event["fetch_offset"])
    what = f"fetched at {offset} in leader epoch {event.get('fetch_leader_epoch')}"
    if replica.role != Role.FOLLOWER or replica.view is None:
        yield problem(broker, event, what, "the broker does not follow the partition", replica)
        return
    count = int(event.get("offsets") or 0)
    epoch = event.get("last_leader_epoch")
    entries = unknown_log(count, int(epoch) if epoch is not None else 0)
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
        yield problem(
            broker, event, what, f"guard {refusing.qualified} drops this response", replica
        )
    if (
        count
        and epoch is not None
        and not batch_epoch_within_fetch.passes(disabled, replica, (int(epoch), UNKNOWN_VALUE))
    ):
        yield problem(
            broker,
            event,
            what,
            f"guard {batch_epoch_within_fetch.qualified}: a batch of leader epoch {epoch}",
            replica,
        )
    log = replica.log[:offset] + entries
    hwm = min(response.hwm, len(log))
    if int(event["log_end_offset"]) != len(log) or int(event["high_watermark"]) != hwm:
        yield problem(
            broker,
            event,
            what,
            f"the model's follower ends at {len(log)} with HWM "
            f"{hwm} (the leader's {response.hwm} within its log); Kafka's at "
            f"{event['log_end_offset']} with {event['high_watermark']}",
            replica,
        )
    broker.replicas[key] = replica._replace(log=log, hwm=hwm)


def truncate(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    """A truncation: the fetcher's on a divergence cuts where the model's follower does
    (`logs.truncate_to`, KIP-279's search, which the fetcher runs on the diverging epoch);
    the log's own (`Partition.truncateTo`) cuts the log there."""
    replica = replica_of(ctx, broker, key)
    offset = int(event["offset"])
    via = str(event.get("via", ""))
    if via.startswith("AbstractFetcherThread"):
        diverging = broker.diverging.pop(key, None)
        if event.get("cause") == "diverging_epoch" and diverging is not None:
            expected = truncate_to("leader-epoch", Entries(replica.log), replica.hwm, *diverging)
            if expected is not None and expected != offset and offset < replica.leo:
                yield problem(
                    broker,
                    event,
                    f"to {offset}",
                    f"the model's follower truncates "
                    f"to {expected} (epoch {diverging[0]} ends at {diverging[1]})",
                    replica,
                )
        return
    if via.endswith("truncateFullyAndStartAt"):
        log = unknown_log(offset)
    else:
        log = replica.log[: min(offset, replica.leo)]
    broker.replicas[key] = replica._replace(log=log, hwm=min(replica.hwm, len(log)))
