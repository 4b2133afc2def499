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

from collections.abc import Iterable, Iterator

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.broker_trace.follower import (
    append_follower,
    fetch_response,
    log_recovery,
    make_follower,
    truncate,
)
from kafkarep.broker_trace.leader import (
    alter_partition_answer,
    append_leader,
    check_hwm,
    fetch_handled,
    isr_proposed,
    make_leader,
    metadata_applied,
)
from kafkarep.broker_trace.replica import (
    Broker,
    Context,
    Unexplained,
    ahead,
    partition_key,
    problem,
    replay_early,
)
from kafkarep.model.state import (
    Replica,
    Role,
)

# Events written inside another hooked call, before it (docs/trace-validation.md).
INNER = frozenset({"hwm_moved", "isr_expand_proposed", "append_follower"})


# Events that are no step of the model: the agent's own, and Kafka's bookkeeping.
BOOKKEEPING = frozenset({"agent_start", "instrumented", "shutdown"})


def replay(
    ctx: Context, node: int, source: str, events: Iterable[AgentEvent]
) -> tuple[int, list[Unexplained]]:
    """Replay one broker's events: (how many were explained, the others)."""
    broker = Broker(node, source, step=_step)
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
        key = partition_key(event)
        if event.kind == "fetch_handled" and key is not None:
            lines, offsets = found.setdefault((key, int(event["follower"])), ([], []))
            lines.append(event.line)
            offsets.append(int(event["fetch_offset"]))
    return found


LEADER_STEPS = frozenset(
    {"fetch_handled", "append_leader", "isr_expand_proposed", "isr_shrink_proposed"}
)


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
    made = ahead(
        broker, event, lambda e: e.about(*key) and e.kind in ("make_leader", "make_follower")
    )
    if made is not None and made.kind == "make_leader":
        yield from replay_early(ctx, broker, made)


def _step(ctx: Context, broker: Broker, event: AgentEvent) -> Iterator[Unexplained]:
    key = partition_key(event)
    if key is not None and event.kind in LEADER_STEPS:
        yield from _made_leader_first(ctx, broker, event, key)
    if event.line in broker.publishing:
        broker.image = ctx.images.at(broker.publishing[event.line])
    thread = str(event.get("thread", ""))
    after, broker.last_kind[thread] = broker.last_kind.get(thread), event.kind
    if event.kind == "hwm_moved" and after == "isr_shrink_proposed" and key is not None:
        # `maybeShrinkIsr` moves the HWM after `prepareIsrShrink` returned (Kafka 4.1.1)
        yield from check_hwm(ctx, broker, event, key)
        return
    if event.kind in INNER and key is not None:
        if event.kind == "append_follower":
            yield from append_follower(ctx, broker, event, key)
        elif event.kind == "isr_expand_proposed":
            yield from isr_proposed(ctx, broker, event, key)
        broker.open_calls.setdefault(thread, []).append(event)
        return
    if event.kind == "agent_error":
        yield problem(
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
        metadata_applied(ctx, broker, event)
    elif event.kind in BOOKKEEPING or key is None or key[0] == "__cluster_metadata":
        pass
    else:
        yield from STEPS.get(event.kind, _unknown)(ctx, broker, event, key)
    yield from _close_call(ctx, broker, thread)


def _unknown(
    ctx: Context, broker: Broker, event: AgentEvent, key: tuple[str, int]
) -> Iterator[Unexplained]:
    yield problem(broker, event, "an event kind", "validate-trace does not know this event")


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


def _close_call(ctx: Context, broker: Broker, thread: str) -> Iterator[Unexplained]:
    """The call a thread's open events belong to returned: check its HWM moves now."""
    for event in broker.open_calls.pop(thread, ()):
        key = partition_key(event)
        if event.kind == "hwm_moved" and key is not None:
            yield from check_hwm(ctx, broker, event, key)


# --- the follower -----------------------------------------------------------------------------


STEPS = {
    "make_leader": make_leader,
    "make_follower": make_follower,
    "log_recovery": log_recovery,
    "append_leader": append_leader,
    "fetch_handled": fetch_handled,
    "isr_shrink_proposed": isr_proposed,
    "alter_partition_answer": alter_partition_answer,
    "fetch_response": fetch_response,
    "truncate": truncate,
}
