"""Metadata propagation and the replica role transitions it drives (protocol description §2.3.2,
§2.10).

A broker applies any number of the controller's records at once and acts only on the resulting
materialised snapshot, so it may never see intermediate states. The replica then becomes or
stays leader or follower, in the same or a new leader epoch, or deletes its data when it is no
longer a replica (§4.3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafkarep.kafka.metadata import PartitionRegistration
from kafkarep.model import footprint as fp
from kafkarep.model.actions.base import Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.controller import compact
from kafkarep.model.domain import _LEADER, CONCRETE, Domain, leads, running
from kafkarep.model.footprint import Footprint
from kafkarep.model.hwm import maybe_advance_hwm
from kafkarep.model.shapes import ClusterShape
from kafkarep.model.state import (
    RUNNING,
    Broker,
    ClusterState,
    Replica,
    Role,
)
from kafkarep.rules.guards import guard
from kafkarep.rules.terms import Term, and_, eq, ite, ne, not_, or_


def apply_enabled(state: ClusterShape, broker_id: int, partition_epoch: Any) -> Term:
    """A running broker applies the records of the metadata log up to any later one at once. A
    restarted broker first catches up with the whole log before its replicas act (KRaft's
    BrokerServer waits for the initial catch-up), so it jumps to the end."""
    broker = state.brokers[broker_id - 1]
    latest = state.partition.partition_epoch
    first = ite(broker.initialised, broker.applied_epoch + 1, latest)
    return and_(running(broker), first <= partition_epoch, partition_epoch <= latest)


def apply_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    retained = state.controller.log
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.status not in RUNNING:
            continue
        for offset, record in enumerate(retained):
            if (  # first, a conjunct of `apply_enabled` on the model's own types (domain.py)
                not broker.initialised or record.partition_epoch > broker.applied_epoch
            ) and apply_enabled(state, broker_id, record.partition_epoch):
                yield Action("apply_metadata", broker_id, offset)


def apply_metadata(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    offset = action.arg
    assert isinstance(offset, int)
    broker_id = action.actor
    snapshot = state.controller.log[offset]
    before = state.broker(broker_id)
    after = _alone(cfg, state, broker_id, before, snapshot)
    if after is not None:
        return compact(state.with_broker(broker_id, after))
    broker = before._replace(applied_epoch=snapshot.partition_epoch, initialised=True)
    state = state.with_broker(broker_id, broker)
    controller = state.controller
    eligible, min_isr = controller.eligible[offset], controller.min_isr[offset]
    return compact(act_on(CONCRETE, cfg, state, broker_id, snapshot, eligible, min_isr))


# (id(broker), id(snapshot), broker id, the follower's options) -> (broker, snapshot, the broker
# after it applied the snapshot). A broker object is shared by every state its broker has not
# changed in since, so the same reaction recurs (84% of them, on the shipped KIP-966 model); the
# entry holds both objects, so their ids are not reused while it is cached.
_Key = tuple[int, int, int, str, bool, bool]
_REACTIONS: dict[_Key, tuple[Broker, PartitionRegistration, Broker]] = {}
_REACTIONS_LIMIT = 1 << 17


def _alone(
    cfg: ModelConfig,
    state: ClusterState,
    broker_id: int,
    before: Broker,
    snapshot: PartitionRegistration,
) -> Broker | None:
    """The broker once it has applied the snapshot, when nothing else in the state changes
    with it: it neither leads nor becomes the leader, and has no unacknowledged writes to fail
    (`act_on` reads nothing else then). Else None."""
    key = (
        id(before),
        id(snapshot),
        broker_id,
        cfg.truncation,
        cfg.offsets_for_leader_epoch,
        cfg.current_leader_epoch_in_fetch,
    )
    found = _REACTIONS.get(key)
    if found is not None and found[0] is before and found[1] is snapshot:
        return found[2]
    replica = before.replica
    if snapshot.leader == broker_id or (
        replica is not None and (replica.role == Role.LEADER or replica.unacked_from >= 0)
    ):
        return None
    broker = before._replace(applied_epoch=snapshot.partition_epoch, initialised=True)
    applied = state.with_broker(broker_id, broker)
    after = act_on(CONCRETE, cfg, applied, broker_id, snapshot, (), 0).broker(broker_id)
    if len(_REACTIONS) >= _REACTIONS_LIMIT:
        _REACTIONS.clear()
    _REACTIONS[key] = (before, snapshot, after)
    return after


def act_on(
    d: Domain,
    cfg: ModelConfig,
    state: Any,
    broker_id: int,
    snapshot: Any,
    eligible: Any,
    min_isr: Any,
) -> Any:
    """The replica's reaction to a materialised snapshot of the partition metadata its broker
    has applied (§2.10), whose metadata cache now holds `eligible` and the topic's `min_isr`:
    its data deleted if it is no longer a replica (§4.3); nothing but a leader's cache if it
    holds a newer registration, from an AlterPartition answer (§2.9.2); else it leads or
    follows in the snapshot's leader epoch."""
    replica = state.brokers[broker_id - 1].replica
    removed = not_(d.has(d.replicas_of(snapshot), broker_id))
    newer = _newer(d, replica, snapshot)
    leading = eq(snapshot.leader, broker_id)
    if removed is True:
        return _removed(d, state, broker_id)
    if newer is True:
        return _kept(d, state, broker_id, eligible, min_isr)
    if leading is True:
        return _leading(d, cfg, state, broker_id, snapshot, eligible, min_isr)
    if removed is False and newer is False and leading is False:
        return _following(d, cfg, state, broker_id, snapshot)
    out = d.pick_state(
        leading,
        _leading(d, cfg, state, broker_id, snapshot, eligible, min_isr),
        _following(d, cfg, state, broker_id, snapshot),
    )
    out = d.pick_state(newer, _kept(d, state, broker_id, eligible, min_isr), out)
    return d.pick_state(removed, _removed(d, state, broker_id), out)


def _newer(d: Domain, replica: Any, snapshot: Any) -> Term:
    """The replica already holds a newer registration, from an AlterPartition response
    (§2.9.2)."""
    present = d.present(replica)
    if present is False:
        return False
    viewed = d.present(replica.view)
    if viewed is False:
        return False
    return and_(present, viewed, snapshot.partition_epoch < replica.view.partition_epoch)


def _removed(d: Domain, state: Any, broker_id: int) -> Any:
    """No longer a replica: its unacknowledged writes fail and its data is deleted (§4.3)."""
    state = d.nack_unacked(state, broker_id)
    return d.with_replica(state, broker_id, d.no_replica())


def _kept(d: Domain, state: Any, broker_id: int, eligible: Any, min_isr: Any) -> Any:
    """A replica holding a newer registration keeps it; a leader's cache moves with the
    records."""
    replica = state.brokers[broker_id - 1].replica
    leads_now = eq(replica.role, _LEADER)
    if leads_now is False:
        return state
    cached = d.pick_replica(leads_now, d.with_cache(replica, eligible, min_isr), replica)
    return d.with_replica(state, broker_id, cached)


def _leading(
    d: Domain,
    cfg: ModelConfig,
    state: Any,
    broker_id: int,
    snapshot: Any,
    eligible: Any,
    min_isr: Any,
) -> Any:
    """The snapshot makes it leader: a new one, or the same one in the same or a new leader
    epoch; then its HWM may move."""
    replica = state.brokers[broker_id - 1].replica
    led = _as_leader(d, cfg, d.replica_or_new(replica), snapshot, broker_id)
    after = d.with_replica(state, broker_id, d.with_cache(led, eligible, min_isr))
    after = d.leads_since(state, after, broker_id, snapshot)
    return maybe_advance_hwm(d, cfg, after, broker_id)


def _following(d: Domain, cfg: ModelConfig, state: Any, broker_id: int, snapshot: Any) -> Any:
    """The snapshot leaves it a follower of its leader (of no one while it has none; a replica
    newly added by a reassignment starts with an empty log to fill by fetching). A leader that
    stops leading fails its unacknowledged writes."""
    state = d.nack_unacked(state, broker_id)
    replica = d.replica_or_new(state.brokers[broker_id - 1].replica)
    old = cfg.truncation == "high-watermark"
    if old and snapshot.leader > 0 and _new_leader(replica, snapshot):
        # Before KIP-101 a replica that becomes a follower of a new leader truncates to its HWM
        # (Kafka 0.10 `ReplicaManager.makeFollowers`), then fetches from there.
        replica = d.truncated(replica, replica.hwm)
    following = d.not_leading(replica)._replace(
        role=ite(snapshot.leader > 0, d.role(Role.FOLLOWER), d.role(Role.NONE)),
        view=d.view(snapshot),
        maximal_isr=snapshot.isr,
        leso=0,
    )
    if cfg.offsets_for_leader_epoch:  # the model's own values: `prove` refuses the option
        following = following._replace(truncating=_truncating(cfg, replica, snapshot))
    return d.with_replica(state, broker_id, following)


def _truncating(cfg: ModelConfig, replica: Replica, snapshot: PartitionRegistration) -> bool:
    """Whether a follower must ask where to truncate before it fetches again. Its fetcher starts
    a partition in the `Truncating` state when the replica follows a new leader, and since
    KIP-320 (2.1.0) in a new leader epoch too (`AbstractFetcherThread.addPartitions`, read at
    0.11.0.0, 2.0.0 and 2.7.0); it stays there until an answer completes the truncation. A log
    with no epoch to ask about is truncated to its HWM instead (`truncateToHighWatermark`), by
    the same thread, so after a fetch answer in flight is dropped too: the model asks for it,
    and the empty answer truncates nothing."""
    if snapshot.leader <= 0:
        return False
    if replica.truncating or _new_leader(replica, snapshot):
        return True
    assert replica.view is not None  # `_new_leader`
    return cfg.current_leader_epoch_in_fetch and snapshot.leader_epoch != replica.view.leader_epoch


def _new_leader(replica: Replica, snapshot: PartitionRegistration) -> bool:
    """The replica follows another leader than before (or had none: a restart, a leader)."""
    return (
        replica.role != Role.FOLLOWER
        or replica.view is None
        or replica.view.leader != snapshot.leader
    )


@guard("leader_epoch_change")
def reset_out_of_sync_followers() -> bool:
    """A leader in a new leader epoch resets its followers (`Replica.resetReplicaState`, Kafka
    4.1.0): those outside the ISR lose their last fetch, so none joins the ISR before fetching
    in this epoch, and their caught-up time, so the HWM no longer waits for them; ISR members
    count as caught up now. (A step, not a predicate: switching it off skips the reset.)"""
    return True


def _as_leader(d: Domain, cfg: ModelConfig, replica: Any, snapshot: Any, broker_id: int) -> Any:
    promotes = ne(replica.role, _LEADER)
    if promotes is True:
        return _promoted(d, cfg, replica, snapshot, broker_id)
    new_epoch = snapshot.leader_epoch > replica.view.leader_epoch
    if promotes is False and new_epoch is True:
        return _new_epoch(d, cfg, replica, snapshot, broker_id)
    if promotes is False and new_epoch is False:
        return _same_epoch(d, cfg, replica, snapshot)
    return d.pick_replica(
        promotes,
        _promoted(d, cfg, replica, snapshot, broker_id),
        d.pick_replica(
            new_epoch,
            _new_epoch(d, cfg, replica, snapshot, broker_id),
            _same_epoch(d, cfg, replica, snapshot),
        ),
    )


def _promoted(d: Domain, cfg: ModelConfig, replica: Any, snapshot: Any, broker_id: int) -> Any:
    """§2.10.1: follower to leader: leave the fetcher, clear follower state, set the LESO. A new
    leader knows nothing of its followers' logs or broker epochs; ISR members count as caught
    up now (`Replica.resetReplicaState` with isNewLeader, Kafka 4.1.0)."""
    followers = tuple(
        d.unknown_follower(and_(d.has(snapshot.isr, member), member != broker_id))
        for member in cfg.broker_ids
    )
    if cfg.offsets_for_leader_epoch:  # the model's own values: `prove` refuses the option
        replica = replica._replace(truncating=False)
    return d.no_pending(d.unacked_dropped(replica))._replace(
        role=d.role(Role.LEADER),
        view=d.led_view(snapshot),
        maximal_isr=snapshot.isr,
        leso=replica.leo,
        followers=followers,
    )


def _new_epoch(d: Domain, cfg: ModelConfig, replica: Any, snapshot: Any, broker_id: int) -> Any:
    """§2.10.3: leader to leader in a new leader epoch (re-elected, or a reassignment bumped the
    epoch): out-of-sync followers lose "fetched in this leader epoch"."""
    followers = replica.followers
    if reset_out_of_sync_followers.enabled(cfg.options.disabled_guards):
        followers = tuple(
            known._replace(
                fetched_this_epoch=and_(known.fetched_this_epoch, d.has(snapshot.isr, member)),
                caught_up=and_(d.has(snapshot.isr, member), member != broker_id),
            )
            for member, known in enumerate(replica.followers, start=1)
        )
    return d.no_pending(replica)._replace(
        view=d.led_view(snapshot),
        maximal_isr=snapshot.isr,
        leso=replica.leo,
        followers=followers,
    )


def _same_epoch(d: Domain, cfg: ModelConfig, replica: Any, snapshot: Any) -> Any:
    """§2.10.2: same leader epoch: adopt the committed ISR. A proposal in flight that is newer
    than this snapshot stays pending (as in the anchor spec); Kafka's Partition.makeLeader
    drops it on any snapshot at or above its partition epoch (`pending_isr_on_metadata`)."""
    pending = d.pending(replica)
    keep = pending
    if pending is not False:
        reset = cfg.pending_isr_on_metadata == "reset"
        drop = and_(pending, or_(reset, snapshot.partition_epoch > d.pending_epoch(replica)))
        keep = and_(pending, not_(drop))
    maximal = snapshot.isr
    if keep is not False:
        maximal = d.pick_set(keep, d.union(snapshot.isr, d.pending_isr(replica)), maximal)
    kept = d.pending_if(replica, keep)
    return kept._replace(view=d.led_view(snapshot), maximal_isr=maximal)


# --- broker records after the last partition change --------------------------------------------


def caught_up_leaders(state: ClusterState) -> Iterator[tuple[int, Replica]]:
    """The running leaders that have applied the last partition snapshot, with their replicas:
    the brokers that may apply a record committed after it on its own."""
    current = state.partition.partition_epoch
    for broker_id, broker in enumerate(state.brokers, 1):
        replica = state.running_leader(broker_id)
        if replica is not None and broker.initialised and broker.applied_epoch == current:
            yield broker_id, replica


def apply_registrations_enabled(
    d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int
) -> Term:
    """A leader caught up with the last partition record may apply the broker registration
    records committed since (fencing, unfencing, registration, controlled shutdown), which its
    ISR checks read (metadata_cache.py). Only a leader: a follower's cache is read only once it
    leads, and becoming leader means applying a newer record, which replaces it."""
    broker = state.brokers[broker_id - 1]
    ok = and_(
        broker.initialised,
        eq(broker.applied_epoch, state.partition.partition_epoch),
        leads(d, broker),
    )
    if ok is False:
        return False
    return and_(
        ok, not_(d.same_eligibility(broker.replica.eligible, d.eligibility_now(cfg, state)))
    )


def apply_registrations_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, _ in caught_up_leaders(state):
        if apply_registrations_enabled(CONCRETE, cfg, state, broker_id):
            yield Action("apply_registrations", broker_id)


def apply_registrations_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The leader's metadata cache takes every broker's registration as the controller has it."""
    replica = state.brokers[broker_id - 1].replica
    now = d.eligibility_now(cfg, state)
    return d.with_replica(state, broker_id, replica._replace(eligible=now))


def apply_registrations(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return apply_registrations_step(CONCRETE, cfg, state, action.actor)


# --- footprints (kafkarep/model/footprint.py) --------------------------------------------------


def apply_footprint(state: ClusterState, action: Action) -> Footprint:
    """A metadata record is read by its partition epoch, which no step changes (the log only
    grows at its end, and compaction drops what every broker applied); a broker catching up
    after a restart reads the log's end."""
    log_end = fp.reads_log_end(state, action.actor)
    if _same_leader_epoch(state, action):
        return fp.meta(action.actor) | log_end
    mine = fp.broker(action.actor) | log_end
    return mine if _applies_alone(state, action) else mine | fp.moves_hwm(state, action.actor)


def _same_leader_epoch(state: ClusterState, action: Action) -> bool:
    """A follower applies a record that keeps its leader and leader epoch (an ISR or ELR
    change): only its view and metadata position change (`_as_follower`); its log, its HWM and
    the fetch response in flight stay as they are (a response is stale only from an older
    leader epoch, `reduction._quiet_responses`)."""
    assert isinstance(action.arg, int)
    snapshot = state.controller.log[action.arg]
    replica = state.brokers[action.actor - 1].replica
    return (
        replica is not None
        and replica.role == Role.FOLLOWER
        and replica.view is not None
        and replica.unacked_from < 0
        and action.actor in snapshot.replicas
        and snapshot.leader == replica.view.leader
        and snapshot.leader_epoch == replica.view.leader_epoch
    )


def _applies_alone(state: ClusterState, action: Action) -> bool:
    """The broker neither leads nor becomes the leader, and has no writes to fail: applying the
    record changes that broker only (`_alone`)."""
    assert isinstance(action.arg, int)
    replica = state.brokers[action.actor - 1].replica
    return state.controller.log[action.arg].leader != action.actor and not (
        replica is not None and (replica.role == Role.LEADER or replica.unacked_from >= 0)
    )


def apply_registrations_footprint(state: ClusterState, action: Action) -> Footprint:
    return fp.broker(action.actor) | fp.CONTROLLER  # it reads the broker registrations


FAMILIES = (
    Family(
        "apply_metadata",
        apply_actions,
        apply_metadata,
        None,
        "a broker applies metadata records up to an offset and acts on the snapshot",
        footprint=apply_footprint,
    ),
    Family(
        "apply_registrations",
        apply_registrations_actions,
        apply_registrations,
        None,
        "a caught-up leader applies the broker records committed since the last snapshot",
        footprint=apply_registrations_footprint,
    ),
)
