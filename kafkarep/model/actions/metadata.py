"""Metadata propagation and the replica role transitions it drives (seed 004 §2.3.2, §2.10).

A broker applies any number of the controller's records at once and acts only on the resulting
materialised snapshot, so it may never see intermediate states. The replica then becomes or
stays leader or follower, in the same or a new leader epoch, or deletes its data when it is no
longer a replica (§4.3).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkarep.guards import guard
from kafkarep.metadata import PartitionRegistration
from kafkarep.model.actions.base import Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.controller import compact
from kafkarep.model.hwm import maybe_advance_hwm, nack_unacked
from kafkarep.model.state import RUNNING, UNKNOWN, ClusterState, Replica, Role


def apply_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    end = len(state.controller.log) - 1
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.status not in RUNNING:
            continue
        # A restarted broker first catches up with the metadata log before its replicas act
        # (KRaft's BrokerServer waits for the initial catch-up), so it jumps to the end.
        first = state.controller.position(broker.applied_epoch) + 1 if broker.initialised else end
        for offset in range(first, end + 1):
            yield Action("apply_metadata", broker_id, offset)


def apply_metadata(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    offset = action.arg
    assert isinstance(offset, int)
    broker = state.broker(action.actor)
    snapshot = state.controller.log[offset]
    state = state.with_broker(
        action.actor, broker._replace(applied_epoch=snapshot.partition_epoch, initialised=True)
    )
    state = act_on(cfg, state, action.actor, snapshot)
    return compact(state)


def act_on(
    cfg: ModelConfig, state: ClusterState, broker_id: int, snapshot: PartitionRegistration
) -> ClusterState:
    """The replica's reaction to a materialised snapshot of the partition metadata."""
    broker = state.broker(broker_id)
    replica = broker.replica
    if broker_id not in snapshot.replicas:
        if replica is None:
            return state
        state = nack_unacked(state, broker_id)
        return state.with_broker(broker_id, state.broker(broker_id)._replace(replica=None))
    if replica is None:
        replica = Replica()  # newly added by a reassignment: an empty log to fill by fetching
    elif replica.view is not None and snapshot.partition_epoch < replica.view.partition_epoch:
        return state  # already newer, from an AlterPartition response (§2.9.2)
    if snapshot.leader == broker_id:
        replica = _as_leader(cfg, replica, snapshot, broker_id)
        state = state.with_broker(broker_id, broker._replace(replica=replica))
        return maybe_advance_hwm(state, cfg, broker_id)
    if replica.role == Role.LEADER:
        state = nack_unacked(state, broker_id)
        replica = state.broker(broker_id).replica
        assert replica is not None
    role = Role.FOLLOWER if snapshot.leader > 0 else Role.NONE
    replica = replica._replace(
        role=role,
        view=snapshot,
        maximal_isr=snapshot.isr,
        leso=0,
        followers=(),
        pending=None,
        unacked_from=-1,
    )
    return state.with_broker(broker_id, state.broker(broker_id)._replace(replica=replica))


@guard("leader_epoch_change")
def reset_out_of_sync_followers() -> bool:
    """§2.10.3: a leader in a new leader epoch clears the last fetch of followers outside the ISR,
    so none joins the ISR before fetching in this epoch. (A step, not a predicate: switching it
    off skips the reset.)"""
    return True


def _as_leader(
    cfg: ModelConfig, replica: Replica, snapshot: PartitionRegistration, broker_id: int
) -> Replica:
    count = len(cfg.broker_ids)
    if replica.role != Role.LEADER:
        # §2.10.1: follower to leader: leave the fetcher, clear follower state, set the LESO.
        return replica._replace(
            role=Role.LEADER,
            view=snapshot,
            maximal_isr=snapshot.isr,
            leso=replica.leo,
            followers=(UNKNOWN,) * count,
            pending=None,
            unacked_from=-1,
        )
    assert replica.view is not None
    if snapshot.leader_epoch > replica.view.leader_epoch:
        # §2.10.3: leader to leader in a new leader epoch (re-elected, or a reassignment bumped
        # the epoch): out-of-sync followers lose "fetched in this leader epoch".
        followers = replica.followers
        if reset_out_of_sync_followers.enabled(cfg.options.disabled_guards):
            followers = tuple(
                view if b in snapshot.isr else view._replace(fetched_this_epoch=False)
                for b, view in enumerate(replica.followers, start=1)
            )
        return replica._replace(
            view=snapshot,
            maximal_isr=snapshot.isr,
            leso=replica.leo,
            followers=followers,
            pending=None,
        )
    # §2.10.2: same leader epoch: adopt the committed ISR. A proposal in flight that is newer
    # than this snapshot stays pending (as in the anchor spec); Kafka's Partition.makeLeader
    # drops it on any snapshot at or above its partition epoch (`pending_isr_on_metadata`).
    pending = replica.pending
    if pending is not None and (
        cfg.pending_isr_on_metadata == "reset" or snapshot.partition_epoch > pending.partition_epoch
    ):
        pending = None
    maximal = snapshot.isr if pending is None else snapshot.isr | pending.isr
    return replica._replace(view=snapshot, maximal_isr=maximal, pending=pending)


FAMILIES = (
    Family(
        "apply_metadata",
        apply_actions,
        apply_metadata,
        None,
        "a broker applies metadata records up to an offset and acts on the snapshot",
    ),
)
