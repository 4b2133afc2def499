"""Leader-initiated ISR changes through AlterPartition (protocol description §2.9.2).

The leader proposes (expand with one caught-up follower while it handles that follower's fetch,
see data.py; or shrink by a budgeted subset of out-of-sync followers), eagerly widens its
Maximal ISR, and waits. The controller handles the request with the controller rules in a
separate step, and the leader handles the response in a third, so stale responses and metadata
that overtakes a response both happen.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.model import controller
from kafkarep.model import footprint as fp
from kafkarep.model.actions.base import CONTROLLER, Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import _LEADER, CONCRETE, Domain, leads, running
from kafkarep.model.footprint import Footprint
from kafkarep.model.hwm import hwm_members, maybe_advance_hwm, waits_for_caught_up_follower
from kafkarep.model.metadata_cache import (
    alive_in_leader_metadata,
    broker_epoch_in_leader_metadata,
)
from kafkarep.model.shapes import ClusterShape, ReplicaShape
from kafkarep.model.state import (
    ClusterState,
    Role,
)
from kafkarep.rules import outcome
from kafkarep.rules.alter_partition import NO_EPOCH_CHECK
from kafkarep.rules.guards import Guard, all_pass, guard
from kafkarep.rules.terms import Term, and_, eq, implies, ite, not_, or_


def idle_leader(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """A running leader with no AlterPartition of its own in flight (one at a time, as Kafka's
    AlterPartitionManager sends them)."""
    broker = state.brokers[broker_id - 1]
    up = leads(d, broker)
    if up is False:
        return False
    return and_(
        up,
        not_(d.pending(broker.replica)),
        not_(d.present(broker.ap_response)),
        not_(d.present(d.ap_request(state, broker_id))),
    )


# --- the ISR join, decided while the leader handles a fetch (Partition.maybeExpandIsr, 4.1.0) ---


@guard("isr_join")
def fetch_offset_at_hwm(replica: ReplicaShape, follower: int) -> Term:
    """The out-of-sync follower's fetch offset has reached the HWM."""
    return replica.followers[follower - 1].leo >= replica.hwm


@guard("isr_join")
def fetch_offset_at_leso(replica: ReplicaShape, follower: int) -> Term:
    """The out-of-sync follower's fetch offset has reached the Leader Epoch Start Offset
    (KAFKA-7128, Kafka 2.0.1 and 2.1.0: `Partition.maybeExpandIsr` at 2.0.1)."""
    return replica.followers[follower - 1].leo >= replica.leso


# `canAddReplicaToIsr` (eligibility) and `isFollowerInSync` (offsets), in Kafka's order.
ISR_JOIN = (
    alive_in_leader_metadata,
    broker_epoch_in_leader_metadata,
    fetch_offset_at_hwm,
    fetch_offset_at_leso,
)
ISR_JOIN_ZOOKEEPER = (alive_in_leader_metadata, fetch_offset_at_hwm, fetch_offset_at_leso)


def isr_join_guards(cfg: ModelConfig) -> tuple[Guard, ...]:
    """The leader's checks before it proposes a follower for the ISR."""
    return ISR_JOIN_ZOOKEEPER if cfg.options.controller == "zookeeper" else ISR_JOIN


def joins(d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int, follower: int) -> Term:
    """Whether the leader, handling a fetch from `follower` now, proposes it for the ISR: it has
    no proposal in flight, and the follower is a replica outside the ISR that passes every
    check. A leader elected uncleanly expands at once: it counts itself RECOVERED from the
    moment it leads (`metadata._as_leader`)."""
    idle = idle_leader(d, state, broker_id)
    replica = state.brokers[broker_id - 1].replica
    idle = idle if idle is False else and_(idle, d.present(replica.view))
    if idle is False:
        return False
    view = replica.view
    outside = and_(idle, d.has(view.replicas, follower), not_(d.has(view.isr, follower)))
    if outside is False:
        return False
    checks = all_pass(isr_join_guards(cfg), cfg.options.disabled_guards, replica, follower)
    return and_(outside, checks)


def maybe_expand(d: Domain, cfg: ModelConfig, state: Any, broker_id: int, follower: int) -> Any:
    """The ISR expansion of a fetch: the leader proposes the ISR with the follower added."""
    joining = joins(d, cfg, state, broker_id, follower)
    if joining is False:
        return state
    view = state.brokers[broker_id - 1].replica.view
    isr = d.union(view.isr, d.single(follower))
    return d.pick_state(joining, propose(d, state, broker_id, isr, d.recovery(view)), state)


@guard("shrink_isr")
def follower_out_of_sync(replica: ReplicaShape, follower: int) -> Term:
    """The leader drops only a follower that is not caught up: behind the leader's LEO, and
    (the step assumes it) not caught up within replica.lag.time.max.ms
    (`Partition.getOutOfSyncReplicas`, `ReplicaState.isCaughtUp`, Kafka 4.1.0)."""
    return replica.followers[follower - 1].leo < replica.leo


def shrink_enabled(
    d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int, dropped: Any
) -> Term:
    """A leader with no proposal in flight drops a non-empty set of its other ISR members, each
    out of sync, while the model's budget of shrinks lasts."""
    ok = and_(state.budget.isr_shrinks > 0, idle_leader(d, state, broker_id))
    replica = state.brokers[broker_id - 1].replica
    ok = ok if ok is False else and_(ok, d.present(replica.view))
    if ok is False:
        return False
    ok = and_(
        ok,
        not_(d.is_empty(dropped)),
        d.subset(dropped, d.minus(replica.view.isr, d.single(broker_id))),
    )
    disabled = cfg.options.disabled_guards
    for other in cfg.broker_ids:
        dropping = False if other == broker_id else d.has(dropped, other)
        if dropping is not False:  # asked only of a follower it may drop
            out_of_sync = follower_out_of_sync.passes(disabled, replica, other)
            ok = and_(ok, implies(dropping, out_of_sync))
        if ok is False:
            return False
    return ok


def shrink_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.isr_shrinks == 0:
        return
    for broker_id in cfg.broker_ids:
        replica = state.broker(broker_id).replica
        if not idle_leader(CONCRETE, state, broker_id) or replica is None or replica.view is None:
            continue
        others = sorted(replica.view.isr - {broker_id})
        for size in range(1, len(others) + 1):
            for dropped in map(frozenset, combinations(others, size)):
                if shrink_enabled(CONCRETE, cfg, state, broker_id, dropped):
                    yield Action("shrink_isr", broker_id, dropped)


def shrink_step(d: Domain, state: Any, broker_id: int, dropped: Any) -> Any:
    """Followers that fell behind or stopped fetching leave the ISR (latency rules, §2.9): their
    lag timers fired, so they are no longer caught up; the leader proposes the ISR without them."""
    replica = state.brokers[broker_id - 1].replica
    followers = tuple(
        view._replace(caught_up=and_(view.caught_up, not_(d.has(dropped, member))))
        for member, view in enumerate(replica.followers, start=1)
    )
    state = d.with_replica(
        d.spend(state, "isr_shrinks"), broker_id, replica._replace(followers=followers)
    )
    view = replica.view
    return propose(d, state, broker_id, d.minus(view.isr, dropped), d.recovery(view))


def shrink(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return shrink_step(CONCRETE, state, action.actor, action.arg)


# --- the lag timer -----------------------------------------------------------------------------


def lag_enabled(
    d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int, follower: int
) -> Term:
    """replica.lag.time.max.ms passes since a follower outside the Maximal ISR last caught up,
    while it is behind: the HWM no longer waits for it. Only where that is read (a follower the
    HWM waits for, `hwm.waits_for_caught_up_follower`); for ISR members a shrink fires it. No
    budget: time passing is not a fault."""
    broker = state.brokers[broker_id - 1]
    ok = leads(d, broker)
    replica = broker.replica
    ok = ok if ok is False else and_(ok, d.present(replica.view))
    if ok is False:
        return False
    return and_(
        ok,
        d.has(replica.view.replicas, follower),
        not_(d.has(hwm_members(cfg, replica), follower)),
        replica.followers[follower - 1].leo < replica.leo,
        waits_for_caught_up_follower.check(cfg, replica, follower),
    )


def lag_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if cfg.hwm_waits_for_caught_up_followers == "none":
        return
    for broker_id in cfg.broker_ids:
        replica = state.running_leader(broker_id)
        if replica is None or replica.view is None:
            continue
        for follower in replica.view.replicas:
            if (
                follower != broker_id
                and replica.followers[follower - 1].leo < replica.leo
                and lag_enabled(CONCRETE, cfg, state, broker_id, follower)
            ):
                yield Action("replica_lag", broker_id, follower)


def lag_step(d: Domain, state: Any, broker_id: int, follower: int) -> Any:
    """The leader no longer counts the follower as caught up."""
    replica = state.brokers[broker_id - 1].replica
    followers = list(replica.followers)
    followers[follower - 1] = followers[follower - 1]._replace(caught_up=False)
    return d.with_replica(state, broker_id, replica._replace(followers=tuple(followers)))


def lag(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    return lag_step(CONCRETE, state, action.actor, action.arg)


def propose(d: Domain, state: Any, broker_id: int, isr: Any, recovering: Any) -> Any:
    """The leader sends an AlterPartition request for the ISR (one at a time), with the broker
    epoch it knows for each member (KIP-903; NO_EPOCH_CHECK where it knows none), and counts the
    proposed members in its Maximal ISR until the answer (KIP-497)."""
    broker = state.brokers[broker_id - 1]
    replica = broker.replica
    view = replica.view

    def known_epoch(member: int) -> Term:
        if member == broker_id:
            return broker.epoch
        epoch = replica.followers[member - 1].broker_epoch
        return ite(epoch >= 0, epoch, NO_EPOCH_CHECK)

    epochs = tuple(known_epoch(member) for member in range(1, len(state.brokers) + 1))
    request = d.ap_request_for(broker_id, broker.epoch, view, isr, epochs, recovering)
    widened = replica._replace(maximal_isr=d.union(view.isr, isr))
    proposing = d.pending_proposal(widened, isr, view.partition_epoch)
    return d.with_ap_request(d.with_replica(state, broker_id, proposing), broker_id, request)


# --- the controller handles it -----------------------------------------------------------------


def handle_enabled(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """The controller has the broker's AlterPartition request to handle."""
    return d.present(d.ap_request(state, broker_id))


def handle_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, request in enumerate(state.controller.ap_requests, 1):
        if request is not None and handle_enabled(CONCRETE, state, broker_id):
            yield Action("handle_alter_partition", CONTROLLER, broker_id)


def handle_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The controller decides the broker's request with its rule and commits what it decides;
    its answer reaches the process that sent it, if that process's connection is still there
    (running, in the broker epoch it sent the request in)."""
    request = d.ap_request(state, broker_id)
    state, error = d.alter_partition(cfg, state, broker_id, request)
    state = d.with_ap_request(state, broker_id, d.no_ap_request())
    answer = d.ap_response_for(request, error, state.partition)
    broker = state.brokers[broker_id - 1]
    delivered = and_(running(broker), eq(broker.epoch, request.broker_epoch))
    if delivered is False:
        return state
    delivered_answer = d.pick_ap_response(delivered, answer, broker.ap_response)
    return d.with_broker(state, broker_id, broker._replace(ap_response=delivered_answer))


def handle(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    return handle_step(CONCRETE, cfg, state, action.arg)


# --- the leader handles the response -----------------------------------------------------------


def response_enabled(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """The controller's answer has reached the running broker."""
    broker = state.brokers[broker_id - 1]
    return and_(running(broker), d.present(broker.ap_response))


def response_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.ap_response is not None and response_enabled(CONCRETE, state, broker_id):
            yield Action("alter_partition_response", broker_id)


# Errors after which the controller says the request was not applied and the partition epoch is
# current: the leader goes back to its last committed state (Partition.handleAlterPartitionError).
ROLL_BACK = frozenset({Error.INELIGIBLE_REPLICA, Error.OPERATION_NOT_ATTEMPTED})
# Errors Kafka retries with the same proposal (`handleAlterPartitionError`'s default case,
# `AlterPartitionManager` for STALE_BROKER_EPOCH, Kafka 4.1.0). A current controller sends them
# only to a process that has since restarted, whose connection is gone (see `handle`); a lagging
# one (failover.py) answers NOT_CONTROLLER to a leader ahead of it (KAFKA-14154).
RETRY = frozenset({Error.NOT_CONTROLLER, Error.STALE_BROKER_EPOCH})
# The other errors the leader cannot fix by itself: it stays pending until newer metadata
# replaces the proposal ("awaiting the latest metadata"): FENCED_LEADER_EPOCH,
# INVALID_UPDATE_VERSION, INVALID_REQUEST, NEW_LEADER_ELECTED.


def response(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return response_step(CONCRETE, cfg, state, action.actor)


def response_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The leader handles the controller's answer as Kafka's Partition does (§2.9.2): commit an
    accepted ISR of its own leader epoch and a partition epoch not older than its own; roll back
    on INELIGIBLE_REPLICA or OPERATION_NOT_ATTEMPTED; send the proposal again on an error Kafka
    retries; otherwise keep the proposal pending (its Maximal ISR still bounds the HWM) until
    newer metadata replaces it. A response to a proposal the leader has since dropped is
    ignored."""
    broker = state.brokers[broker_id - 1]
    answer = broker.ap_response
    replica = broker.replica
    state = d.with_broker(state, broker_id, broker._replace(ap_response=d.no_ap_response()))
    present = d.present(replica)
    if present is False:
        return state
    leading = eq(replica.role, _LEADER)
    if leading is False:
        return state
    mine = and_(present, leading, *d.answers_pending(replica, answer))
    if mine is False:
        return state
    error = answer.error
    view = replica.view
    accepted = and_(
        mine,
        eq(error, d.error(Error.NONE)),
        eq(answer.leader_epoch, view.leader_epoch),
        answer.partition_epoch >= view.partition_epoch,
    )
    rolls_back = and_(mine, or_(*(eq(error, d.error(e)) for e in sorted(ROLL_BACK))))
    retries: Term = False
    if d.retriable_answers():
        retries = and_(mine, or_(*(eq(error, d.error(e)) for e in sorted(RETRY))))
    after = state
    if rolls_back is not False:
        rolled = d.with_replica(state, broker_id, d.rolled_back(replica))
        after = d.pick_state(rolls_back, rolled, after)
    if retries is not False:
        # Every proposal is RECOVERED: a leader counts itself RECOVERED from the moment it
        # leads (`metadata._as_leader`).
        isr = answer.request.isr
        again = propose(d, state, broker_id, isr, LeaderRecoveryState.RECOVERED)
        after = d.pick_state(retries, again, after)
    if accepted is not False:
        adopted = d.with_replica(state, broker_id, d.adopted(replica, answer))
        adopted = maybe_advance_hwm(d, cfg, adopted, broker_id)
        after = d.pick_state(accepted, adopted, after)
    return after


def describe_handle(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    """The controller's answer to the request: the rule's outcome, asked again of the rule."""
    assert isinstance(action.arg, int)
    request = before.controller.ap_requests[action.arg - 1]
    assert request is not None
    return outcome.describe(controller.alter_partition(controller.metadata(before, cfg), request))


def describe_response(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    answer = before.broker(action.actor).ap_response
    replica = before.broker(action.actor).replica
    assert answer is not None
    if replica is None or replica.role != Role.LEADER or replica.pending != answer.request:
        return "ignored (stale)"
    if answer.error == Error.NONE:
        return "committed"
    if answer.error in ROLL_BACK:
        return f"rolled back: {answer.error.value}"
    if answer.error in RETRY:
        return f"sent again: {answer.error.value}"
    return f"kept pending, awaiting metadata: {answer.error.value}"


# --- footprints (kafkarep/model/footprint.py) --------------------------------------------------


def lag_footprint(state: ClusterState, action: Action) -> Footprint:
    return fp.broker(action.actor)


def handle_footprint(state: ClusterState, action: Action) -> Footprint:
    """It reads the status of the broker it is about, and answers that leader."""
    assert isinstance(action.arg, int)
    return fp.CONTROLLER | fp.broker(action.arg)


def response_footprint(state: ClusterState, action: Action) -> Footprint:
    return fp.broker(action.actor) | fp.moves_hwm(state, action.actor)


FAMILIES = (
    Family(
        "shrink_isr", shrink_actions, shrink, "isr_shrinks", "the leader drops lagging followers"
    ),
    Family(
        "replica_lag",
        lag_actions,
        lag,
        None,
        "a lagging follower outside the ISR is no longer caught up",
        lambda cfg: cfg.hwm_waits_for_caught_up_followers != "none",
        footprint=lag_footprint,
    ),
    Family(
        "handle_alter_partition",
        handle_actions,
        handle,
        None,
        "the controller handles it",
        describe=describe_handle,
        footprint=handle_footprint,
    ),
    Family(
        "alter_partition_response",
        response_actions,
        response,
        None,
        "the leader commits or rolls back its proposal",
        describe=describe_response,
        footprint=response_footprint,
    ),
)
