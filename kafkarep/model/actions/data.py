"""The data plane: produce (acks=all, or acks=1 with `[cluster] acks`), follower fetch and the
fetch response (protocol description §2.2, §2.5-§2.7; log divergence as in its §3).

A fetch is one step for the request and the leader's handling of it (which may propose the
follower for the ISR, as Kafka's `Partition.updateFollowerFetchState` does), and another for the
response, so a response can arrive after the follower has moved to a new leader epoch. A fetch
the leader would refuse (stale or unknown leader epoch) changes nothing, so it is not an action.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafkarep.kafka.releases import behaviour
from kafkarep.model import footprint as fp
from kafkarep.model.actions.alter_partition import joins, maybe_expand
from kafkarep.model.actions.base import Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import _FOLLOWER, CONCRETE, Domain, follows, leads, running
from kafkarep.model.footprint import Footprint
from kafkarep.model.hwm import maybe_advance_hwm
from kafkarep.model.logs import (
    answer,
    divergence,
    epoch_end,
    truncate_to,
    truncation_completes,
)
from kafkarep.model.metadata_cache import alive_epoch
from kafkarep.model.shapes import BrokerShape, ClusterShape, ReplicaShape, ResponseShape
from kafkarep.model.state import (
    RUNNING,
    ClusterState,
    DelayedFetch,
    FetchResponse,
    Log,
    Replica,
    Role,
)
from kafkarep.rules.guards import Guard, guard
from kafkarep.rules.terms import Term, and_, eq, imin, ite, ne, not_, or_

# --- produce ---------------------------------------------------------------------------------


def produce_enabled(d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int) -> Term:
    """A leader appends a producer's write while the model has records left to write. Kafka
    refuses acks=all writes while the ISR is below MinISR (NotEnoughReplicas, §2.6); acks=1
    writes it appends whatever the ISR (`Partition.appendRecordsToLeader`)."""
    broker = state.brokers[broker_id - 1]
    ok = and_(state.budget.records > 0, leads(d, broker))
    replica = broker.replica
    ok = ok if ok is False else and_(ok, d.present(replica.view))
    if ok is False or cfg.acks != "all":
        return ok
    return and_(ok, d.size(replica.view.isr) >= d.min_isr(replica))


def produce_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.records == 0:
        return
    for broker_id in cfg.broker_ids:
        leader = state.running_leader(broker_id)
        if leader is not None and produce_enabled(CONCRETE, cfg, state, broker_id):
            yield Action("produce", broker_id)


def produce(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return produce_step(CONCRETE, cfg, state, action.actor)


def produce_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The leader appends the write in its leader epoch. An acks=all write waits for the HWM to
    pass it, and the leader is its first receiver; an acks=1 write was answered by the append."""
    replica = state.brokers[broker_id - 1].replica
    offset = replica.leo
    written = d.write(cfg, state, replica)
    if cfg.acks == "all":
        unacked = replica.unacked_from
        written = written._replace(unacked_from=ite(unacked >= 0, unacked, offset))
    state = d.with_replica(d.spend(state, "records"), broker_id, written)
    if cfg.acks == "all":
        state = d.received_by_writer(state, broker_id, offset)
    return maybe_advance_hwm(d, cfg, state, broker_id)


# --- fetch -----------------------------------------------------------------------------------


def fetch_enabled(
    d: Domain, cfg: ModelConfig, state: ClusterShape, follower_id: int, leader_id: int
) -> Term:
    """A running follower with no response in flight fetches from the leader its view names,
    which serves it: a running leader in the follower's leader epoch (KIP-320, unless the model
    predates it) that has it as a replica. A fetch that could change nothing is left out: the
    same log and HWM, the leader already knowing it, and no ISR join to propose."""
    ok = _serves(d, cfg, state, follower_id, leader_id)
    if ok is False:
        return False
    follower = state.brokers[follower_id - 1]
    replica = follower.replica
    if cfg.offsets_for_leader_epoch and not truncation_complete.passes(
        cfg.options.disabled_guards, replica
    ):
        return False
    leader = state.brokers[leader_id - 1]
    changes = not_(_converged(d, leader.replica, replica, follower, follower_id))
    if changes is True:
        return ok
    return and_(ok, or_(changes, joins(d, cfg, state, leader_id, follower_id)))


def _serves(
    d: Domain, cfg: ModelConfig, state: ClusterShape, follower_id: int, leader_id: int
) -> Term:
    """A running follower with no response in flight asks the leader its view names, which
    serves it: a running leader in the follower's leader epoch (KIP-320, unless the model
    predates it) that has it as a replica."""
    follower = state.brokers[follower_id - 1]
    ok = and_(follows(d, follower), not_(d.present(follower.fetch_response)))
    replica = follower.replica
    ok = ok if ok is False else and_(ok, d.present(replica.view))
    ok = ok if ok is False else and_(ok, eq(replica.view.leader, leader_id))
    leader = state.brokers[leader_id - 1]
    ok = ok if ok is False else and_(ok, leads(d, leader))
    ok = ok if ok is False else and_(ok, d.present(leader.replica.view))
    if ok is False:
        return False
    view = leader.replica.view
    return and_(ok, _same_leader_epoch(cfg, view, replica.view), d.has(view.replicas, follower_id))


@guard("fetch")
def truncation_complete(replica: Replica) -> bool:
    """Where the follower asks where to truncate with a request of its own
    (`offsets_for_leader_epoch`), it fetches a partition only once its truncation has completed:
    the fetcher builds fetches for partitions in the `Fetching` state alone, and takes a fetch's
    answer only in it (`PartitionFetchState.isReadyForFetch`, read at 2.0.0 and 2.7.0). The
    answer to a fetch names no divergence then, so this is what keeps a follower from appending
    after records the new leader does not have."""
    return not replica.truncating


def fetch_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        replica = broker.replica
        if (  # first, conjuncts of `fetch_enabled` on the model's own types (domain.py)
            broker.fetch_response is not None
            or replica is None
            or replica.role != Role.FOLLOWER
            or replica.view is None
        ):
            continue
        if fetch_enabled(CONCRETE, cfg, state, broker_id, replica.view.leader):
            yield Action("fetch", broker_id)


def _same_leader_epoch(cfg: ModelConfig, leader: Any, follower: Any) -> Term:
    """KIP-320 (Kafka 2.1): a fetch carries the follower's current leader epoch and the leader
    serves only its own (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH). Before it, a leader served
    any follower that fetched from it. (The leader's and the follower's views.)"""
    if not cfg.current_leader_epoch_in_fetch:
        return True
    return eq(leader.leader_epoch, follower.leader_epoch)


def _converged(
    d: Domain, leader: ReplicaShape, follower: ReplicaShape, broker: BrokerShape, broker_id: int
) -> Term:
    """Nothing a fetch could change: same log and HWM, and the leader already knows it."""
    return and_(
        d.same_log(follower, leader),
        eq(follower.hwm, leader.hwm),
        d.knows(leader, broker_id, follower.leo, broker.epoch),
    )


def fetch(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """A `fetch_partial` answer carries only the first `action.arg` of the records that
    follow."""
    replica = state.broker(action.actor).replica
    assert replica is not None and replica.view is not None
    if action.name == "fetch_partial":
        state = state._replace(budget=state.budget.spend("partial_fetches"))
    state = fetch_step(CONCRETE, cfg, state, action.actor, replica.view.leader)
    if action.name == "fetch_partial":
        assert isinstance(action.arg, int)
        follower = state.broker(action.actor)
        response = follower.fetch_response
        assert response is not None
        response = response._replace(entries=response.entries[: action.arg])
        state = state.with_broker(action.actor, follower._replace(fetch_response=response))
    return state


def fetch_step(d: Domain, cfg: ModelConfig, state: Any, follower_id: int, leader_id: int) -> Any:
    """The follower asks from its LEO, the leader its view names answers (protocol description
    §2.2.2), and the answer is in flight back to it."""
    follower = state.brokers[follower_id - 1]
    replica = follower.replica
    last_epoch = d.entries(replica).latest_epoch
    state, response = serve(
        d, cfg, state, leader_id, follower_id, replica.leo, last_epoch, follower.epoch
    )
    follower = state.brokers[follower_id - 1]
    return d.with_broker(state, follower_id, follower._replace(fetch_response=response))


def serve(
    d: Domain,
    cfg: ModelConfig,
    state: Any,
    leader_id: int,
    follower_id: int,
    fetch_offset: Any,
    last_epoch: Any,
    broker_epoch: Any,
) -> tuple[Any, Any]:
    """The leader handles a fetch (`Partition.fetchRecords`, Kafka 4.1.0): where the logs
    diverge it answers with the divergence point and records nothing (KAFKA-13141, unless
    `leader_counts_diverging_fetch`); otherwise it records the follower's fetch state, which may
    propose it for the ISR, then the HWM, and answers with the records after the fetch
    offset. Returns (the state, the answer)."""
    leader = state.brokers[leader_id - 1].replica
    epoch = leader.view.leader_epoch
    log = d.entries(leader)
    asked = fetch_truncation(cfg)
    diverging, at_epoch, end = divergence(asked, log, epoch, fetch_offset, last_epoch)
    recorded = state
    if diverging is not True or cfg.leader_counts_diverging_fetch:
        recorded = _record_fetch(d, cfg, state, leader_id, follower_id, fetch_offset, broker_epoch)
    if diverging is True:
        refused = recorded if cfg.leader_counts_diverging_fetch else state
        hwm = refused.brokers[leader_id - 1].replica.hwm
        return refused, d.refusal(leader_id, epoch, fetch_offset, hwm, at_epoch, end)
    served = recorded.brokers[leader_id - 1].replica
    answer = d.fetch_answer(leader_id, epoch, fetch_offset, served)
    if diverging is False:
        return recorded, answer
    # on terms, both: a diverging answer leaves the state as it was (the prover encodes no
    # `leader_counts_diverging_fetch`)
    refusal = d.refusal(leader_id, epoch, fetch_offset, leader.hwm, at_epoch, end)
    return d.pick_state(diverging, state, recorded), d.pick_response(diverging, refusal, answer)


def fetch_truncation(cfg: ModelConfig) -> str:
    """How the leader's answer to a fetch tells the follower to truncate (`logs.answer`). Where
    the follower asks with a request of its own (`offsets_for_leader_epoch`), a fetch is
    answered OFFSET_OUT_OF_RANGE only, when it asks beyond the leader's LEO, and the follower
    then truncates to that LEO (`AbstractFetcherThread.handleOutOfRangeError`, read at 2.1.0 and
    2.7.0): that is the answer of the HWM era's algorithm."""
    return "high-watermark" if cfg.offsets_for_leader_epoch else cfg.truncation


def _record_fetch(
    d: Domain,
    cfg: ModelConfig,
    state: Any,
    leader_id: int,
    follower_id: int,
    fetch_offset: Any,
    broker_epoch: Any,
) -> Any:
    """The leader records the follower's fetch state (`Partition.updateFollowerFetchState`)."""
    leader = state.brokers[leader_id - 1].replica
    followers = list(leader.followers)
    known = followers[follower_id - 1]
    # Caught up now if it asks from the leader's LEO (`Replica.updateFetchStateOrThrow`);
    # Kafka's second case, caught up as of the previous fetch, is left out (stricter).
    caught_up = or_(fetch_offset >= leader.leo, known.caught_up)
    moved = ne(known.leo, fetch_offset)
    followers[follower_id - 1] = d.follower_view(fetch_offset, broker_epoch, True, caught_up)
    state = d.with_replica(state, leader_id, leader._replace(followers=tuple(followers)))
    # Kafka's order (`Partition.updateFollowerFetchState`, 4.1.0): the ISR join first, then
    # the HWM, and that only if the follower's LEO moved.
    state = maybe_expand(d, cfg, state, leader_id, follower_id)
    if moved is False:
        return state
    return d.pick_state(moved, maybe_advance_hwm(d, cfg, state, leader_id), state)


def partial_fetch_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    """A fetch whose answer stops early: the response's size limit (`replica.fetch.max.bytes`,
    `replica.fetch.response.max.bytes`) is shared by the partitions of one fetch, and only the
    first partition is sure of one batch (`ReplicaManager.readFromLog`, `minOneMessage`, Kafka
    4.1.0; KIP-74). So a partition's answer may carry any prefix of what follows, none included."""
    if state.budget.partial_fetches == 0:
        return
    for action in fetch_actions(cfg, state):
        replica = state.broker(action.actor).replica
        assert replica is not None and replica.view is not None
        leader = state.broker(replica.view.leader).replica
        assert leader is not None and leader.view is not None
        epoch = leader.view.leader_epoch
        told = answer(fetch_truncation(cfg), leader.log, epoch, replica.leo, replica.last_epoch)
        if told is not None:
            continue
        for count in range(leader.leo - replica.leo):
            yield Action("fetch_partial", action.actor, count)


# --- a fetch the network delays --------------------------------------------------------------


def delay_fetch_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    """A follower sends a fetch the network holds. Its fetcher times it out
    (`request.timeout.ms`) and fetches again; the request may still reach the leader later."""
    if state.budget.delayed_fetches == 0:
        return
    for broker_id, broker in enumerate(state.brokers, 1):
        replica = broker.replica
        if (
            broker.status not in RUNNING
            or broker.delayed_fetch is not None
            or replica is None
            or replica.role != Role.FOLLOWER
        ):
            continue
        assert replica.view is not None
        if state.running_leader(replica.view.leader) is not None:
            yield Action("delay_fetch", broker_id)


def delay_fetch(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    broker = state.broker(action.actor)
    replica = broker.replica
    assert replica is not None and replica.view is not None
    leader = replica.view.leader
    request = DelayedFetch(
        leader,
        state.broker(leader).incarnation,
        replica.view.leader_epoch,
        replica.leo,
        replica.last_epoch,
        broker.epoch,
    )
    state = state._replace(budget=state.budget.spend("delayed_fetches"))
    return state.with_broker(action.actor, broker._replace(delayed_fetch=request))


@guard("fetch")
def broker_epoch_not_stale(leader: Replica, follower: int, request: DelayedFetch) -> bool:
    """The leader refuses a fetch whose broker epoch is older than the alive one its metadata
    cache holds for the follower (`Replica.updateFetchStateOrThrow`, KAFKA-15221, Kafka 3.7.0;
    KRaft only): a fetch from a previous incarnation does not update the follower's state."""
    cached = alive_epoch(leader.eligible[follower - 1])
    return request.broker_epoch == -1 or cached <= request.broker_epoch


def arrive_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.delayed_fetch is not None:
            yield Action("delayed_fetch_arrives", broker_id)


def arrive(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """The leader handles the delayed fetch if the process it was sent to still leads in the
    fetch's leader epoch (KIP-320) and the follower is still a replica; the answer is dropped."""
    broker = state.broker(action.actor)
    request = broker.delayed_fetch
    assert request is not None
    state = state.with_broker(action.actor, broker._replace(delayed_fetch=None))
    leader = state.running_leader(request.leader)
    if (
        leader is None
        or leader.view is None
        or state.broker(request.leader).incarnation != request.leader_incarnation
        or (cfg.current_leader_epoch_in_fetch and leader.view.leader_epoch != request.leader_epoch)
        or action.actor not in leader.view.replicas
    ):
        return state
    if cfg.options.controller != "zookeeper" and not broker_epoch_not_stale.passes(
        cfg.options.disabled_guards, leader, action.actor, request
    ):
        return state
    state, _ = serve(
        CONCRETE,
        cfg,
        state,
        request.leader,
        action.actor,
        request.fetch_offset,
        request.last_epoch,
        request.broker_epoch,
    )
    return state


# --- OffsetsForLeaderEpoch (Kafka 0.11.0 to 2.7.x) -------------------------------------------


def epochs_request_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    """A follower that must truncate asks the leader its view names for the end offset of its
    last leader epoch (`[rules] offsets_for_leader_epoch`): the fetcher sends
    `OffsetsForLeaderEpoch` for its partitions in the `Truncating` state before it fetches them
    (`AbstractFetcherThread.maybeTruncate`, read at 0.11.0.0, 2.0.0 and 2.7.0)."""
    for broker_id, broker in enumerate(state.brokers, 1):
        replica = broker.replica
        if replica is None or not replica.truncating or replica.view is None:
            continue
        if _serves(CONCRETE, cfg, state, broker_id, replica.view.leader):
            yield Action("offsets_for_leader_epoch", broker_id)


def epochs_request(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """The leader answers with the end offset of the follower's last epoch in its own log: the
    largest epoch it has at or below it and where that ends (KIP-279, 2.0.0;
    `Partition.lastOffsetForLeaderEpoch`), or KIP-101's single look-up (0.11.0 to 1.1.x)."""
    broker = state.broker(action.actor)
    replica = broker.replica
    assert replica is not None and replica.view is not None
    leader_id = replica.view.leader
    leader = state.broker(leader_id).replica
    assert leader is not None and leader.view is not None
    epoch = leader.view.leader_epoch
    told = epoch_end(cfg.truncation, leader.log, epoch, replica.last_epoch)
    answer = FetchResponse(leader_id, epoch, replica.leo, leader.hwm, (), told, epochs=True)
    return state.with_broker(action.actor, broker._replace(fetch_response=answer))


def describe_epochs_request(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    response = after.broker(action.actor).fetch_response
    assert response is not None and response.diverging is not None
    epoch, end = response.diverging
    return f"end offset of epoch {epoch}: {'undefined' if end < 0 else end}"


# --- a response sent after the leader's log changed (KAFKA-18723) ----------------------------


def late_send_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    """A fetch response is sent after the log it was read from changed. The leader's read
    (`UnifiedLog.read`) gives a slice of a segment file by position, and the network thread
    sends the file's bytes only later (`FileRecords.writeTo`, zero-copy; read at 4.0.0 and
    4.1.0): if the broker truncated its log and appended other records in between (it lost
    leadership and now follows a leader whose log differs), the slice holds those. A send whose
    file became shorter than the slice fails (`writeTo` throws), so the answer is lost."""
    if state.budget.late_sends == 0:
        return
    for broker_id, broker in enumerate(state.brokers, 1):
        response = broker.fetch_response
        if response is None or response.diverging is not None or not response.entries:
            continue
        sender = state.broker(response.leader)
        replica = sender.replica
        if sender.status not in RUNNING or replica is None:
            continue
        end = response.fetch_offset + len(response.entries)
        if replica.leo >= end and _slice(replica.log, response) != response.entries:
            yield Action("late_send", broker_id)


def _slice(log: Log, response: FetchResponse) -> Log:
    """What the sender's log holds now where the response's records were. The model takes a
    record's file position to be its offset (every batch one record of one size)."""
    return log[response.fetch_offset : response.fetch_offset + len(response.entries)]


def late_send(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    broker = state.broker(action.actor)
    response = broker.fetch_response
    assert response is not None
    sender = state.broker(response.leader).replica
    assert sender is not None
    response = response._replace(entries=_slice(sender.log, response))
    state = state._replace(budget=state.budget.spend("late_sends"))
    return state.with_broker(action.actor, broker._replace(fetch_response=response))


def describe_late_send(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    response = after.broker(action.actor).fetch_response
    assert response is not None
    epochs = ", ".join(str(epoch) for epoch, _ in response.entries)
    start = response.fetch_offset
    return f"leader {response.leader} sends from offset {start} what it holds now: epochs {epochs}"


# --- fetch response --------------------------------------------------------------------------


def in_fetcher(d: Domain, replica: Any, response: Any) -> Term:
    """The partition is still in the fetcher of the broker that answered (a replica that became
    leader, or follows another broker, left that fetcher and the response is dropped)."""
    present = d.present(replica)
    if present is False:
        return False
    following = eq(replica.role, _FOLLOWER)
    if following is False:
        return False
    viewed = d.present(replica.view)
    if viewed is False:
        return False
    return and_(present, following, viewed, eq(replica.view.leader, response.leader))


# The response guards are asked only of a replica still in that leader's fetcher (`in_fetcher`),
# and are written over `kafkarep.rules.terms`: the prover runs them on its own terms.


@guard("fetch_response")
def leader_epoch_matches(replica: ReplicaShape, response: ResponseShape) -> Term:
    """A response counts only in the leader epoch it was fetched in: after a leader epoch bump
    (the same leader re-elected, a reassignment) an old response may carry records or a
    divergence point from a log that has since changed (KAFKA-18991, `checks_response_epoch`)."""
    assert replica.view is not None  # `in_fetcher`
    return eq(replica.view.leader_epoch, response.leader_epoch)


@guard("fetch_response")
def fetch_offset_matches(replica: ReplicaShape, response: ResponseShape) -> Term:
    """A response counts only for the fetch position the follower still has."""
    return eq(replica.leo, response.fetch_offset)


def checks_response_epoch(cfg: ModelConfig) -> bool:
    """The follower compares a response's leader epoch with its own: since KAFKA-18991 (3.9.1,
    4.0.1, 4.1.0, `AbstractFetcherThread.processFetchRequest`), where the fetch carries one
    (KIP-320); 4.0.0 and every release before 3.9.1 compare the fetch offset alone."""
    return (
        cfg.current_leader_epoch_in_fetch
        and behaviour(cfg.options.kafka_version).follower_checks_response_epoch
    )


def response_guards(cfg: ModelConfig) -> tuple[Guard, ...]:
    """The checks a fetch response passes, in order, after `in_fetcher`."""
    if checks_response_epoch(cfg):
        return (leader_epoch_matches, fetch_offset_matches)
    return (fetch_offset_matches,)


def epochs_answer_guards(cfg: ModelConfig) -> tuple[Guard, ...]:
    """The checks an `OffsetsForLeaderEpoch` answer passes: since KIP-320 (2.1.0) the fetcher
    truncates only if the partition is still in the leader epoch it asked in
    (`AbstractFetcherThread.truncateToEpochEndOffsets`, read at 2.1.0 and 2.7.0)."""
    if cfg.current_leader_epoch_in_fetch:
        return (leader_epoch_matches, fetch_offset_matches)
    return (fetch_offset_matches,)


def guards_of(cfg: ModelConfig, response: FetchResponse) -> tuple[Guard, ...]:
    return epochs_answer_guards(cfg) if response.epochs else response_guards(cfg)


def in_state_for(cfg: ModelConfig, replica: Replica, response: FetchResponse) -> bool:
    """Where the follower asks with `OffsetsForLeaderEpoch`, a fetch's answer counts only once
    its truncation completed (`truncation_complete`, in `AbstractFetcherThread
    .processFetchRequest`), and that request's answer only while it truncates."""
    if not cfg.offsets_for_leader_epoch:
        return True
    if response.epochs:
        return replica.truncating
    return bool(truncation_complete.passes(cfg.options.disabled_guards, replica))


def fetch_response_enabled(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """A response has reached the running follower."""
    broker = state.brokers[broker_id - 1]
    return and_(running(broker), d.present(broker.fetch_response))


def fetch_response_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.fetch_response is not None and fetch_response_enabled(CONCRETE, state, broker_id):
            yield Action("fetch_response", broker_id)


def fetch_response(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return fetch_response_step(CONCRETE, cfg, state, action.actor)


def fetch_response_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """A follower still in that leader's fetcher, whose response passes its checks, truncates
    at the divergence point, or appends the records and adopts the leader's HWM within its
    log (protocol description §2.2, §3)."""
    broker = state.brokers[broker_id - 1]
    response = broker.fetch_response
    replica = broker.replica
    handled = broker._replace(fetch_response=d.no_fetch_response())
    fetching = in_fetcher(d, replica, response)
    if fetching is False:
        return d.with_broker(state, broker_id, handled)
    if cfg.offsets_for_leader_epoch:  # the model's own values: `prove` refuses the option
        if not in_state_for(cfg, replica, response):
            return d.with_broker(state, broker_id, handled)
        if response.epochs:
            return _epochs_answered(cfg, state, broker_id)
    disabled = cfg.options.disabled_guards
    checks = [g.passes(disabled, replica, response) for g in response_guards(cfg)]
    applies = and_(fetching, *checks)
    if applies is False:
        return d.with_broker(state, broker_id, handled)
    diverging = d.diverging(response)
    appends = not_(diverging)
    truncated = _truncated(d, cfg, replica, response) if diverging is not False else replica
    appended = _appended(d, cfg, replica, response) if appends is not False else replica
    new = d.pick_replica(applies, d.pick_replica(diverging, truncated, appended), replica)
    state = d.with_broker(state, broker_id, handled._replace(replica=new))
    if cfg.acks == "all" and appends is not False:  # who holds a write matters to acks=all only
        state = d.receive(state, broker_id, and_(applies, appends), replica, appended)
    return state


def _truncated(d: Domain, cfg: ModelConfig, replica: Any, response: Any) -> Any:
    """The follower's log cut where the leader's answer says it diverges (`logs.truncate_to`)."""
    epoch, end = d.divergence(response)
    log = d.entries(replica)
    algorithm = fetch_truncation(cfg)
    if cfg.offsets_for_leader_epoch and response.epochs:
        algorithm = cfg.truncation
    return d.truncated(replica, truncate_to(algorithm, log, replica.hwm, epoch, end))


def _epochs_answered(cfg: ModelConfig, state: ClusterState, broker_id: int) -> ClusterState:
    """The follower truncates where the leader's `OffsetsForLeaderEpoch` answer says and fetches
    from there, or, when the answer named an epoch it does not have, asks again
    (`logs.truncation_completes`)."""
    broker = state.broker(broker_id)
    response, replica = broker.fetch_response, broker.replica
    assert response is not None and response.diverging is not None and replica is not None
    handled = broker._replace(fetch_response=None)
    disabled = cfg.options.disabled_guards
    if not all(g.passes(disabled, replica, response) for g in epochs_answer_guards(cfg)):
        return state.with_broker(broker_id, handled)
    complete = truncation_completes(cfg.truncation, replica.log, response.diverging[0])
    truncated = _truncated(CONCRETE, cfg, replica, response)._replace(truncating=not complete)
    return state.with_broker(broker_id, handled._replace(replica=truncated))


def _appended(d: Domain, cfg: ModelConfig, replica: Any, response: Any) -> Any:
    """The response's records appended (those the release takes, `appendable`), and the leader's
    HWM adopted within the log."""
    appended = d.append_entries(replica, appendable(cfg, replica, response))
    return appended._replace(hwm=imin(response.hwm, appended.leo))


@guard("fetch_response")
def batch_epoch_within_fetch(replica: Replica, entry: tuple[int, int]) -> bool:
    """A follower appends a batch only if its partition leader epoch is at most the leader epoch
    it fetched in, and skips every batch after the first that is not (KAFKA-18723:
    `UnifiedLog.append`, `hasHigherPartitionLeaderEpoch`, given the fetch state's leader epoch
    by `ReplicaFetcherThread.processPartitionData`; read at 3.9.1, 4.0.1 and 4.1.0, absent at
    3.9.0 and 4.0.0). Such a batch comes from a leader whose log changed between its handling
    of the fetch and the sending of the file slice it read (`late_send`)."""
    assert replica.view is not None  # `in_fetcher`
    return entry[0] <= replica.view.leader_epoch


def appendable(cfg: ModelConfig, replica: Any, response: Any) -> Any:
    """The response as the follower appends it: cut before a batch of a newer leader epoch
    where the release skips those (`batch_epoch_within_fetch`). Only a late send carries such a
    batch, so without that fault the response is taken whole (the prover, which encodes no late
    send, never asks)."""
    if (
        not cfg.budget.late_sends
        or not behaviour(cfg.options.kafka_version).follower_skips_newer_batches
    ):
        return response
    disabled = cfg.options.disabled_guards
    kept = 0
    for entry in response.entries:
        if not batch_epoch_within_fetch.passes(disabled, replica, entry):
            break
        kept += 1
    if kept == len(response.entries):
        return response
    return response._replace(entries=response.entries[:kept])


def _proposed_by(leader: int, before: ClusterState, after: ClusterState) -> bool:
    """The step made the leader send an AlterPartition request."""
    return (
        before.controller.ap_requests[leader - 1] is None
        and after.controller.ap_requests[leader - 1] is not None
    )


def describe_fetch(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    """What the leader answered, in the words of the truncation algorithm in force."""
    response = after.broker(action.actor).fetch_response
    assert response is not None
    if response.diverging is not None:
        epoch, end = response.diverging
        if fetch_truncation(cfg) == "high-watermark":
            return f"offset out of range: leader's LEO {end}"
        if cfg.truncation == "kip-101":
            return f"end offset of epoch {epoch}: {'undefined' if end < 0 else end}"
        return f"diverging epoch {epoch} end {end}"
    served = f"{len(response.entries)} record(s), HWM {response.hwm}"
    if _proposed_by(response.leader, before, after):
        return served + f"; leader {response.leader} proposes it for the ISR"
    return served


def describe_response(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    """What the follower did with the response: dropped (and by which guard), truncated or
    appended."""
    response = before.broker(action.actor).fetch_response
    replica = before.broker(action.actor).replica
    assert response is not None
    if replica is None or not in_fetcher(CONCRETE, replica, response):
        return "dropped: no longer in that leader's fetcher"
    if not in_state_for(cfg, replica, response):
        return "dropped: " + ("no longer truncating" if response.epochs else "truncating first")
    for check in guards_of(cfg, response):
        if check.refuses_always(cfg.options.disabled_guards):
            return f"dropped: {check.name} made to refuse (seeded bug)"
        if not check.check(replica, response):
            enabled = check.enabled(cfg.options.disabled_guards)
            return f"{'dropped' if enabled else 'APPLIED (guard off)'}: {check.name} fails"
    if response.diverging is not None:
        after_replica = after.broker(action.actor).replica
        to = f" to {after_replica.leo}" if after_replica is not None else ""
        if response.epochs:
            again = after_replica is not None and after_replica.truncating
            return f"truncate{to}" + ("; asks again" if again else "; fetches")
        if cfg.truncation == "leader-epoch" and not cfg.offsets_for_leader_epoch:
            return f"truncate{to} (diverging epoch {response.diverging[0]})"
        return f"truncate{to}"
    taken = len(appendable(cfg, replica, response).entries)
    skipped = len(response.entries) - taken
    if skipped:
        return f"append {taken}, skip {skipped} of a newer leader epoch (KAFKA-18723)"
    return f"append {taken}"


def describe_arrival(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    held = before.broker(action.actor).delayed_fetch
    assert held is not None
    leader = held.leader
    if before.broker(leader).replica == after.broker(leader).replica:
        return "refused or ignored by the leader"
    handled = f"leader {leader} records offset {held.fetch_offset}"
    if _proposed_by(leader, before, after):
        return handled + " and proposes it for the ISR"
    return handled


# --- footprints (kafkarep/model/footprint.py) --------------------------------------------------


def produce_footprint(state: ClusterState, action: Action) -> Footprint:
    """It appends to the leader's log, spends the records budget (which only faults and produce
    read) and may acknowledge the write at once."""
    return fp.broker(action.actor) | fp.RECEIVES | fp.COMMITS | fp.ACKS


def fetch_footprint(state: ClusterState, action: Action) -> Footprint:
    """The follower's log and its fetch slot; its view's leader and leader epoch, which only a
    step on its whole state changes; all of the leader."""
    replica = state.brokers[action.actor - 1].replica
    assert replica is not None and replica.view is not None
    leader = replica.view.leader
    return fp.data(action.actor) | fp.broker(leader) | fp.moves_hwm(state, leader)


def fetch_response_footprint(state: ClusterState, action: Action) -> Footprint:
    return fp.data(action.actor) | fp.RECEIVES


FAMILIES = (
    Family(
        "produce",
        produce_actions,
        produce,
        "records",
        "the leader appends a producer's write",
        footprint=produce_footprint,
    ),
    Family(
        "fetch",
        fetch_actions,
        fetch,
        None,
        "a follower fetches; the leader answers",
        describe=describe_fetch,
        footprint=fetch_footprint,
    ),
    Family(
        "fetch_response",
        fetch_response_actions,
        fetch_response,
        None,
        "a follower handles its fetch response",
        describe=describe_response,
        footprint=fetch_response_footprint,
    ),
    Family(
        "fetch_partial",
        partial_fetch_actions,
        fetch,
        "partial_fetches",
        "a follower fetches; the answer carries a prefix of the records",
        describe=describe_fetch,
    ),
    Family(
        "delay_fetch",
        delay_fetch_actions,
        delay_fetch,
        "delayed_fetches",
        "the network holds a follower's fetch",
    ),
    Family(
        "offsets_for_leader_epoch",
        epochs_request_actions,
        epochs_request,
        None,
        "a follower asks where to truncate; the leader answers",
        lambda cfg: cfg.offsets_for_leader_epoch,
        describe_epochs_request,
    ),
    Family(
        "late_send",
        late_send_actions,
        late_send,
        "late_sends",
        "a fetch response is sent after the leader's log changed under it",
        describe=describe_late_send,
    ),
    Family(
        "delayed_fetch_arrives",
        arrive_actions,
        arrive,
        None,
        "a delayed fetch reaches the leader",
        lambda cfg: cfg.budget.delayed_fetches > 0,
        describe_arrival,
    ),
)
