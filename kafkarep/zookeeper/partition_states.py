"""The partition state machine of the ZooKeeper-era controller (PartitionStateChange in Kafka
Controller Internals, Apache wiki).

States: NonExistentPartition (never created, or deleted), NewPartition (replicas assigned, no
leader or ISR yet), OnlinePartition (a leader was elected), OfflinePartition (the elected leader
died). Each valid transition is a function from the partition to the new partition and the
requests it sends; an invalid one returns `InvalidTransition`.

Readings where the wiki page says less than the code needs:
- NewPartition -> OnlinePartition takes "the first replica in the ISR" as leader; the ISR of a
  new partition is its live assigned replicas, in assignment order (the page does not say where
  it comes from; Kafka's controller takes the live assigned replicas).
- Every leader-and-ISR write to ZooKeeper bumps the ZooKeeper version, and an election bumps the
  leader epoch (the first leader gets epoch 0).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from enum import StrEnum
from typing import NamedTuple

from kafkarep.zookeeper.leader_selectors import Selection
from kafkarep.zookeeper.outcome import InvalidTransition, NoLeader, Request, RequestKind

NO_LEADER = -1


class PartitionState(StrEnum):
    NON_EXISTENT = "NonExistentPartition"
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"


# The states each state is reached from (the wiki page's "Valid state transitions").
VALID_PREVIOUS: dict[PartitionState, tuple[PartitionState, ...]] = {
    PartitionState.NEW: (PartitionState.NON_EXISTENT,),
    PartitionState.ONLINE: (PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE),
    PartitionState.OFFLINE: (PartitionState.NEW, PartitionState.ONLINE),
    PartitionState.NON_EXISTENT: (PartitionState.OFFLINE,),
}


class LeaderAndIsr(NamedTuple):
    """What ZooKeeper holds in /brokers/topics/[topic]/partitions/[partition]/state."""

    leader: int
    isr: tuple[int, ...]
    leader_epoch: int
    zk_version: int


class ZkPartition(NamedTuple):
    state: PartitionState = PartitionState.NON_EXISTENT
    assigned: tuple[int, ...] = ()
    leader_and_isr: LeaderAndIsr | None = None


class PartitionTransition(NamedTuple):
    partition: ZkPartition
    requests: tuple[Request, ...] = ()
    selection: Selection | None = None


Selector = Callable[[ZkPartition], Selection | NoLeader]


def check(current: PartitionState, target: PartitionState) -> InvalidTransition | None:
    """None when `current -> target` is a valid transition."""
    if current in VALID_PREVIOUS[target]:
        return None
    return InvalidTransition(
        "partition", current.value, target.value, tuple(s.value for s in VALID_PREVIOUS[target])
    )


def to_new(p: ZkPartition, assigned: tuple[int, ...]) -> PartitionTransition | InvalidTransition:
    """NonExistentPartition -> NewPartition: load the assigned replicas from ZooKeeper into the
    controller's cache."""
    invalid = check(p.state, PartitionState.NEW)
    if invalid is not None:
        return invalid
    return PartitionTransition(ZkPartition(PartitionState.NEW, tuple(assigned), None))


def to_online(
    p: ZkPartition, live: Collection[int], selector: Selector | None = None
) -> PartitionTransition | InvalidTransition | NoLeader:
    """NewPartition -> OnlinePartition: the first replica of the ISR leads; write leader and ISR to
    ZooKeeper; LeaderAndIsr to every live replica, UpdateMetadata to every live broker.
    OnlinePartition, OfflinePartition -> OnlinePartition: the selector picks the leader, the ISR
    and the replicas to receive LeaderAndIsr; write them; send the requests."""
    invalid = check(p.state, PartitionState.ONLINE)
    if invalid is not None:
        return invalid
    everyone = tuple(sorted(live))
    if p.state == PartitionState.NEW:
        isr = tuple(r for r in p.assigned if r in live)
        if not isr:
            return NoLeader("NewPartition", f"no live assigned replica among {list(p.assigned)}")
        written = LeaderAndIsr(isr[0], isr, 0, 0)
        selection = Selection(isr[0], isr, isr)
    else:
        if selector is None:
            raise ValueError(f"{p.state.value} -> OnlinePartition needs a leader selector")
        chosen = selector(p)
        if isinstance(chosen, NoLeader):
            return chosen
        selection = chosen
        old = p.leader_and_isr
        epoch, version = (old.leader_epoch + 1, old.zk_version + 1) if old else (0, 0)
        written = LeaderAndIsr(selection.leader, selection.isr, epoch, version)
    requests = (
        Request(RequestKind.LEADER_AND_ISR, selection.receivers),
        Request(RequestKind.UPDATE_METADATA, everyone),
    )
    partition = ZkPartition(PartitionState.ONLINE, p.assigned, written)
    return PartitionTransition(partition, requests, selection)


def to_offline(p: ZkPartition) -> PartitionTransition | InvalidTransition:
    """NewPartition, OnlinePartition -> OfflinePartition: the partition is marked offline."""
    invalid = check(p.state, PartitionState.OFFLINE)
    if invalid is not None:
        return invalid
    return PartitionTransition(p._replace(state=PartitionState.OFFLINE))


def to_non_existent(p: ZkPartition) -> PartitionTransition | InvalidTransition:
    """OfflinePartition -> NonExistentPartition: the partition is marked NonExistentPartition."""
    invalid = check(p.state, PartitionState.NON_EXISTENT)
    if invalid is not None:
        return invalid
    return PartitionTransition(p._replace(state=PartitionState.NON_EXISTENT))
