"""The replica state machine of the ZooKeeper-era controller (ReplicaStateChange in Kafka
Controller Internals, Apache wiki).

States: NewReplica (created by topic creation or a reassignment; it can only be made a
follower), OnlineReplica (started and assigned; it can be made leader or follower),
OfflineReplica (its broker is down), NonExistentReplica (deleted). A transition returns the
replica's new state, the partition as it then is, and the requests sent; an invalid one returns
`InvalidTransition`.

Readings where the wiki page says less than the code needs:
- NonExistentReplica -> NewReplica for a partition that has no leader yet sends no LeaderAndIsr
  (there is no "current leader and isr" to send).
- -> OfflineReplica removes the replica from the ISR only if it is in it, and never the last
  member: the ISR then still names the replica that may lead cleanly (Kafka's controller does
  this; the KRaft controller too, `PartitionChangeBuilder.build`). If the replica led, the
  partition has no leader. The ISR write bumps the leader epoch, as every controller
  leader-and-ISR write of that era.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import NamedTuple

from kafkarep.zookeeper.outcome import InvalidTransition, Request, RequestKind
from kafkarep.zookeeper.partition_states import NO_LEADER, ZkPartition


class ReplicaState(StrEnum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    NON_EXISTENT = "NonExistentReplica"


VALID_PREVIOUS: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    ReplicaState.NEW: (ReplicaState.NON_EXISTENT,),
    ReplicaState.ONLINE: (ReplicaState.NEW, ReplicaState.ONLINE, ReplicaState.OFFLINE),
    ReplicaState.OFFLINE: (ReplicaState.NEW, ReplicaState.ONLINE),
    ReplicaState.NON_EXISTENT: (ReplicaState.OFFLINE,),
}


class ReplicaTransition(NamedTuple):
    state: ReplicaState
    partition: ZkPartition
    requests: tuple[Request, ...] = ()


def check(current: ReplicaState, target: ReplicaState) -> InvalidTransition | None:
    if current in VALID_PREVIOUS[target]:
        return None
    return InvalidTransition(
        "replica", current.value, target.value, tuple(s.value for s in VALID_PREVIOUS[target])
    )


def transition(
    replica: int,
    current: ReplicaState,
    target: ReplicaState,
    partition: ZkPartition,
    live: Collection[int],
) -> ReplicaTransition | InvalidTransition:
    """Move one replica of the partition from `current` to `target`."""
    invalid = check(current, target)
    if invalid is not None:
        return invalid
    everyone = tuple(sorted(live))
    update_metadata = Request(RequestKind.UPDATE_METADATA, everyone)
    if target == ReplicaState.NEW:
        # Send LeaderAndIsr with the current leader and isr to the new replica and UpdateMetadata
        # for the partition to every live broker.
        if partition.leader_and_isr is None:
            return ReplicaTransition(target, partition, (update_metadata,))
        requests = (Request(RequestKind.LEADER_AND_ISR, (replica,)), update_metadata)
        return ReplicaTransition(target, partition, requests)
    if target == ReplicaState.ONLINE and current == ReplicaState.NEW:
        # Add the new replica to the assigned replica list if needed.
        if replica not in partition.assigned:
            partition = partition._replace(assigned=(*partition.assigned, replica))
        return ReplicaTransition(target, partition)
    if target == ReplicaState.ONLINE:
        # Send LeaderAndIsr with the current leader and isr to the replica and UpdateMetadata for
        # the partition to every live broker.
        requests = (Request(RequestKind.LEADER_AND_ISR, (replica,)), update_metadata)
        return ReplicaTransition(target, partition, requests)
    if target == ReplicaState.OFFLINE:
        return _to_offline(replica, partition, update_metadata, live)
    # OfflineReplica -> NonExistentReplica: StopReplica with deletion.
    return ReplicaTransition(
        target, partition, (Request(RequestKind.STOP_REPLICA, (replica,), True),)
    )


def _to_offline(
    replica: int, partition: ZkPartition, update_metadata: Request, live: Collection[int]
) -> ReplicaTransition:
    """Send StopReplica (without deletion) to the replica; remove it from the ISR and send
    LeaderAndIsr with the new ISR to the leader and UpdateMetadata to every live broker."""
    stop = Request(RequestKind.STOP_REPLICA, (replica,), False)
    state = partition.leader_and_isr
    if state is None or replica not in state.isr:
        return ReplicaTransition(ReplicaState.OFFLINE, partition, (stop,))
    isr = tuple(r for r in state.isr if r != replica) or state.isr
    leader = NO_LEADER if state.leader == replica else state.leader
    if (leader, isr) == (state.leader, state.isr):
        return ReplicaTransition(ReplicaState.OFFLINE, partition, (stop,))  # the last member stays
    written = state._replace(
        leader=leader, isr=isr, leader_epoch=state.leader_epoch + 1, zk_version=state.zk_version + 1
    )
    partition = partition._replace(leader_and_isr=written)
    to_leader = (leader,) if leader != NO_LEADER and leader in live else ()
    requests = (stop, Request(RequestKind.LEADER_AND_ISR, to_leader), update_metadata)
    return ReplicaTransition(ReplicaState.OFFLINE, partition, requests)
