"""The ZooKeeper-era partition and replica state machines, following Kafka Controller Internals
(Apache wiki) line by line: every valid transition does what the page lists, every other pair is
a rejection naming both states."""

from __future__ import annotations

from itertools import product

import pytest

from kafkarep.zookeeper import leader_selectors as select
from kafkarep.zookeeper import partition_states as ps
from kafkarep.zookeeper import replica_states as rs
from kafkarep.zookeeper.outcome import InvalidTransition, NoLeader, Request, RequestKind
from kafkarep.zookeeper.partition_states import (
    LeaderAndIsr,
    PartitionState,
    PartitionTransition,
    ZkPartition,
)
from kafkarep.zookeeper.replica_states import ReplicaState, ReplicaTransition

P = PartitionState
R = RequestKind
LIVE = frozenset({1, 2, 3, 4})

# The wiki page's "Valid state transitions", written out here rather than read from the module.
SEED_PARTITION_TRANSITIONS = {
    (P.NON_EXISTENT, P.NEW),
    (P.NEW, P.ONLINE),
    (P.ONLINE, P.ONLINE),
    (P.OFFLINE, P.ONLINE),
    (P.NEW, P.OFFLINE),
    (P.ONLINE, P.OFFLINE),
    (P.OFFLINE, P.NON_EXISTENT),
}
SEED_REPLICA_TRANSITIONS = {
    (ReplicaState.NON_EXISTENT, ReplicaState.NEW),
    (ReplicaState.NEW, ReplicaState.ONLINE),
    (ReplicaState.ONLINE, ReplicaState.ONLINE),
    (ReplicaState.OFFLINE, ReplicaState.ONLINE),
    (ReplicaState.NEW, ReplicaState.OFFLINE),
    (ReplicaState.ONLINE, ReplicaState.OFFLINE),
    (ReplicaState.OFFLINE, ReplicaState.NON_EXISTENT),
}


def online(leader: int = 1, isr: tuple[int, ...] = (1, 2, 3)) -> ZkPartition:
    return ZkPartition(P.ONLINE, (1, 2, 3), LeaderAndIsr(leader, isr, 5, 9))


def test_state_names_are_the_seeds() -> None:
    assert [s.value for s in P] == [
        "NonExistentPartition",
        "NewPartition",
        "OnlinePartition",
        "OfflinePartition",
    ]
    assert {s.value for s in ReplicaState} == {
        "NewReplica",
        "OnlineReplica",
        "OfflineReplica",
        "NonExistentReplica",
    }


@pytest.mark.parametrize(("current", "target"), list(product(P, P)))
def test_partition_transition_validity(current: PartitionState, target: PartitionState) -> None:
    found = ps.check(current, target)
    if (current, target) in SEED_PARTITION_TRANSITIONS:
        assert found is None
    else:
        assert isinstance(found, InvalidTransition)
        assert current.value in found.message and target.value in found.message
        assert found.machine == "partition"


@pytest.mark.parametrize(("current", "target"), list(product(ReplicaState, ReplicaState)))
def test_replica_transition_validity(current: ReplicaState, target: ReplicaState) -> None:
    found = rs.check(current, target)
    if (current, target) in SEED_REPLICA_TRANSITIONS:
        assert found is None
    else:
        assert isinstance(found, InvalidTransition)
        assert current.value in found.message and target.value in found.message


def test_invalid_transition_functions_reject_without_change() -> None:
    """Each transition function refuses from a wrong state, naming both states."""
    new = ZkPartition(P.NEW, (1, 2))
    cases = [
        ps.to_new(online(), (1, 2)),
        ps.to_online(ZkPartition(), LIVE),
        ps.to_offline(ZkPartition(P.OFFLINE, (1,))),
        ps.to_non_existent(new),
        rs.transition(1, ReplicaState.NON_EXISTENT, ReplicaState.ONLINE, online(), LIVE),
        rs.transition(1, ReplicaState.OFFLINE, ReplicaState.OFFLINE, online(), LIVE),
    ]
    messages = [c.message for c in cases if isinstance(c, InvalidTransition)]
    assert len(messages) == len(cases)
    assert messages[1] == (
        "invalid partition state transition NonExistentPartition -> OnlinePartition; "
        "OnlinePartition is reached only from NewPartition, OnlinePartition, OfflinePartition"
    )


# --- partition transitions ---------------------------------------------------------------------


def test_non_existent_to_new_loads_the_assigned_replicas() -> None:
    """1. 从zk加载已被分配好的副本到controller的缓存: no leader or ISR yet."""
    result = ps.to_new(ZkPartition(), (3, 1, 2))
    assert result == PartitionTransition(ZkPartition(P.NEW, (3, 1, 2), None))


def test_new_to_online_first_isr_replica_leads() -> None:
    """1. the first replica in the ISR leads, leader and ISR written to zk; 2. LeaderAndIsr to
    every live replica, UpdateMetadata to every live broker. Broker 3 is down."""
    result = ps.to_online(ZkPartition(P.NEW, (3, 1, 2)), live={1, 2, 4})
    assert isinstance(result, PartitionTransition)
    assert result.partition == ZkPartition(P.ONLINE, (3, 1, 2), LeaderAndIsr(1, (1, 2), 0, 0))
    assert result.requests == (
        Request(R.LEADER_AND_ISR, (1, 2)),
        Request(R.UPDATE_METADATA, (1, 2, 4)),
    )
    assert isinstance(ps.to_online(ZkPartition(P.NEW, (3,)), live={1}), NoLeader)


@pytest.mark.parametrize("state", [P.ONLINE, P.OFFLINE])
def test_online_or_offline_to_online_runs_the_selector(state: PartitionState) -> None:
    """1. a selector picks the leader, the ISR and who receives LeaderAndIsr; written to zk
    (a new leader epoch); 2. the requests go out."""
    p = online(leader=1)._replace(state=state)
    result = ps.to_online(p, {2, 3}, lambda q: select.offline(q.assigned, (1, 2, 3), {2, 3}, False))
    assert isinstance(result, PartitionTransition)
    assert result.partition.state == P.ONLINE
    assert result.partition.leader_and_isr == LeaderAndIsr(2, (2, 3), 6, 10)
    assert result.requests == (
        Request(R.LEADER_AND_ISR, (2, 3)),
        Request(R.UPDATE_METADATA, (2, 3)),
    )
    failed = ps.to_online(p, set(), lambda q: select.offline(q.assigned, (1,), set(), False))
    assert isinstance(failed, NoLeader)


@pytest.mark.parametrize("state", [P.NEW, P.ONLINE])
def test_new_or_online_to_offline_is_only_marked(state: PartitionState) -> None:
    """1. partition 的状态被标记为offline: nothing else changes."""
    p = online()._replace(state=state)
    assert ps.to_offline(p) == PartitionTransition(p._replace(state=P.OFFLINE))


def test_offline_to_non_existent_is_only_marked() -> None:
    p = online()._replace(state=P.OFFLINE)
    assert ps.to_non_existent(p) == PartitionTransition(p._replace(state=P.NON_EXISTENT))


# --- replica transitions -----------------------------------------------------------------------


def test_non_existent_to_new_replica_gets_leader_and_isr() -> None:
    """1. LeaderAndIsr with the current leader and isr to the new replica, UpdateMetadata to every
    live broker. A partition without a leader yet has none to send."""
    result = rs.transition(4, ReplicaState.NON_EXISTENT, ReplicaState.NEW, online(), LIVE)
    assert result == ReplicaTransition(
        ReplicaState.NEW,
        online(),
        (Request(R.LEADER_AND_ISR, (4,)), Request(R.UPDATE_METADATA, (1, 2, 3, 4))),
    )
    fresh = ZkPartition(P.NEW, (1, 2))
    result = rs.transition(1, ReplicaState.NON_EXISTENT, ReplicaState.NEW, fresh, LIVE)
    assert isinstance(result, ReplicaTransition)
    assert [r.kind for r in result.requests] == [R.UPDATE_METADATA]


def test_new_to_online_replica_joins_the_assignment_if_needed() -> None:
    """1. add the new replica to the assigned replica list if needed."""
    result = rs.transition(4, ReplicaState.NEW, ReplicaState.ONLINE, online(), LIVE)
    assert isinstance(result, ReplicaTransition) and result.partition.assigned == (1, 2, 3, 4)
    again = rs.transition(2, ReplicaState.NEW, ReplicaState.ONLINE, online(), LIVE)
    assert isinstance(again, ReplicaTransition) and again.partition == online()


@pytest.mark.parametrize("current", [ReplicaState.ONLINE, ReplicaState.OFFLINE])
def test_online_or_offline_to_online_replica(current: ReplicaState) -> None:
    """1. LeaderAndIsr with the current leader and isr to the replica, UpdateMetadata to every
    live broker; the partition is unchanged."""
    result = rs.transition(3, current, ReplicaState.ONLINE, online(), LIVE)
    assert result == ReplicaTransition(
        ReplicaState.ONLINE,
        online(),
        (Request(R.LEADER_AND_ISR, (3,)), Request(R.UPDATE_METADATA, (1, 2, 3, 4))),
    )


@pytest.mark.parametrize("current", [ReplicaState.NEW, ReplicaState.ONLINE])
def test_to_offline_replica_stops_and_leaves_the_isr(current: ReplicaState) -> None:
    """1. StopReplica without deletion; 2. removed from the ISR, LeaderAndIsr with the new ISR to
    the leader, UpdateMetadata to every live broker."""
    result = rs.transition(2, current, ReplicaState.OFFLINE, online(), LIVE - {2})
    assert result == ReplicaTransition(
        ReplicaState.OFFLINE,
        ZkPartition(P.ONLINE, (1, 2, 3), LeaderAndIsr(1, (1, 3), 6, 10)),
        (
            Request(R.STOP_REPLICA, (2,), delete=False),
            Request(R.LEADER_AND_ISR, (1,)),
            Request(R.UPDATE_METADATA, (1, 3, 4)),
        ),
    )


def test_offline_replica_readings_leader_and_last_member() -> None:
    """Readings: the leader going offline leaves the partition leaderless; the last ISR member
    stays in the ISR; a replica outside the ISR only gets StopReplica."""
    leader = rs.transition(1, ReplicaState.ONLINE, ReplicaState.OFFLINE, online(), LIVE)
    assert isinstance(leader, ReplicaTransition)
    assert leader.partition.leader_and_isr == LeaderAndIsr(-1, (2, 3), 6, 10)
    last = rs.transition(1, ReplicaState.ONLINE, ReplicaState.OFFLINE, online(1, (1,)), LIVE)
    assert isinstance(last, ReplicaTransition)
    assert last.partition.leader_and_isr == LeaderAndIsr(-1, (1,), 6, 10)
    outside = rs.transition(3, ReplicaState.ONLINE, ReplicaState.OFFLINE, online(1, (1, 2)), LIVE)
    assert isinstance(outside, ReplicaTransition) and outside.partition == online(1, (1, 2))
    assert outside.requests == (Request(R.STOP_REPLICA, (3,), delete=False),)


def test_offline_to_non_existent_replica_is_deleted() -> None:
    """1. StopReplica with deletion."""
    result = rs.transition(3, ReplicaState.OFFLINE, ReplicaState.NON_EXISTENT, online(), LIVE)
    assert result == ReplicaTransition(
        ReplicaState.NON_EXISTENT, online(), (Request(R.STOP_REPLICA, (3,), delete=True),)
    )
