"""Reassignment (protocol description §4), after ReplicationControlManagerTest,
PartitionReassignmentReplicasTest and PartitionReassignmentRevertTest."""

from kafkarep.kafka.errors import Error
from kafkarep.rules import (
    AlterPartitionRequest,
    AlterReassignmentRequest,
    Changed,
    Rejected,
    alter_partition,
    alter_reassignment,
)
from kafkarep.rules.reassignment import split
from tests.helpers import brokers, cluster, reg


def test_split_orders_target_then_removing() -> None:
    """PartitionReassignmentReplicasTest.testRemovals / testAdditions."""
    m = cluster(reg([3, 2, 1, 0], [3, 2, 1, 0], leader=3))
    assert split(m, (3, 1)) == ((3, 1, 0, 2), frozenset(), frozenset({0, 2}))
    assert split(m, (3, 2, 1, 0, 4, 5)) == ((3, 2, 1, 0, 4, 5), {4, 5}, frozenset())


def test_seed_example_1_move_one_replica() -> None:
    """Protocol description §4.4.1: grow, then one AlterPartition catches up and completes at
    once."""
    start = reg([1, 2, 3], [1, 2], leader=1, leader_epoch=1, partition_epoch=2)
    grown = alter_reassignment(
        cluster(start, elr_enabled=False), AlterReassignmentRequest((1, 2, 4))
    )
    assert isinstance(grown, Changed)
    g = grown.registration
    assert (g.replicas, g.isr, g.adding, g.removing) == ((1, 2, 4, 3), {1, 2}, {4}, {3})
    assert (g.leader_epoch, g.partition_epoch) == (1, 3)
    done = alter_partition(
        cluster(g, elr_enabled=False),
        AlterPartitionRequest(1, 1, 3, ((1, 101), (2, 102), (4, 104))),
    )
    assert isinstance(done, Changed)
    d = done.registration
    assert (d.replicas, d.isr, d.adding, d.removing) == ((1, 2, 4), {1, 2, 4}, set(), set())
    assert (d.leader_epoch, d.partition_epoch) == (2, 4)


def test_seed_example_2_kafka_waits_for_every_target_replica() -> None:
    """Protocol description §4.4 Example 2 step 6 diverges: Kafka needs 3 in the ISR too
    (`PartitionReassignmentReplicas.maybeCompleteReassignment`)."""
    p = reg(
        [1, 2, 3, 4, 5], [1, 4, 5], leader=5, leader_epoch=1, partition_epoch=4, removing=[4, 5]
    )
    request = AlterPartitionRequest(5, 1, 4, ((1, 101), (2, 102), (4, 104), (5, 105)))
    kafka = alter_partition(cluster(p, brokers(range(1, 6)), min_isr=2, elr_enabled=False), request)
    assert isinstance(kafka, Changed)
    assert kafka.registration.removing == {4, 5}  # still ongoing
    seed = alter_partition(
        cluster(
            p,
            brokers(range(1, 6)),
            min_isr=2,
            elr_enabled=False,
            reassignment_completion="protocol-description",
        ),
        request,
    )
    assert isinstance(seed, Changed)
    s = seed.registration
    assert (s.replicas, s.isr, s.removing) == ((1, 2, 3), {1, 2}, set())
    assert s.leader == 1  # Kafka's election order; the description names 2
    assert seed.error == Error.NEW_LEADER_ELECTED


def test_kafka_completion_ignores_min_isr_but_seed_does_not() -> None:
    """`maybeCompleteReassignment`: [1,2,3] -> [1] completes at once below MinISR 2; protocol
    description §4.1.2 refuses."""
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    kafka = alter_reassignment(
        cluster(p, min_isr=2, elr_enabled=False), AlterReassignmentRequest((1,))
    )
    assert isinstance(kafka, Changed)
    assert kafka.registration.replicas == (1,)
    seed = alter_reassignment(
        cluster(p, min_isr=2, elr_enabled=False, reassignment_completion="protocol-description"),
        AlterReassignmentRequest((1,)),
    )
    assert isinstance(seed, Changed)
    assert seed.registration.removing == {2, 3}


def test_seed_completion_bumps_leader_epoch_on_add_only() -> None:
    """Protocol description §4.1.3 bumps the epochs on completion; Kafka bumps only the partition
    epoch."""
    p = reg([1, 2, 3, 4], [1, 2, 3], leader=1, partition_epoch=1, adding=[4])
    request = AlterPartitionRequest(1, 0, 1, ((1, 101), (2, 102), (3, 103), (4, 104)))
    for variant, epoch in (("kafka", 0), ("protocol-description", 1)):
        outcome = alter_partition(
            cluster(p, elr_enabled=False, reassignment_completion=variant), request
        )
        assert isinstance(outcome, Changed)
        assert outcome.registration.leader_epoch == epoch


def test_invalid_targets_rejected() -> None:
    """testCancelReassignPartitions and validateManualPartitionAssignment."""
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    m = cluster(p, brokers(range(5), unregistered=(4,)), elr_enabled=False)
    for target, guard in (
        ((), "target_not_empty"),
        ((1, 1, 2), "target_without_duplicates"),
        ((1, 2, 4), "target_brokers_registered"),
    ):
        assert alter_reassignment(m, AlterReassignmentRequest(target)) == Rejected(
            Error.INVALID_REPLICA_ASSIGNMENT, f"reassignment.{guard}"
        )


def test_cancel_without_reassignment() -> None:
    """`cancelPartitionReassignment`: NO_REASSIGNMENT_IN_PROGRESS."""
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    assert alter_reassignment(cluster(p), AlterReassignmentRequest(None)) == Rejected(
        Error.NO_REASSIGNMENT_IN_PROGRESS, "reassignment.reassignment_in_progress"
    )


def test_cancel_reverts_and_bumps_leader_epoch() -> None:
    """testReassignPartitions: the revert drops adding replica 0 (`PartitionReassignmentRevert`)."""
    p = reg([0, 2, 1, 3], [3, 2, 1], leader=3, partition_epoch=1, adding=[0], removing=[3])
    outcome = alter_reassignment(cluster(p, elr_enabled=False), AlterReassignmentRequest(None))
    assert isinstance(outcome, Changed)
    r = outcome.registration
    assert (r.replicas, r.isr, r.leader, r.leader_epoch, r.partition_epoch) == (
        (2, 1, 3),
        {1, 2, 3},
        3,
        1,
        2,
    )


def test_unclean_revert_needs_unclean_election() -> None:
    """PartitionReassignmentRevertTest.testIsrSpecialCase."""
    p = reg(
        [4, 5, 3, 2, 1],
        [4, 5],
        leader=3,
        leader_epoch=100,
        partition_epoch=200,
        adding=[4, 5],
        removing=[2],
    )
    refused = alter_reassignment(
        cluster(p, brokers(range(6)), elr_enabled=False), AlterReassignmentRequest(None)
    )
    assert refused == Rejected(Error.INVALID_REPLICA_ASSIGNMENT, "reassignment.revert_is_clean")
    allowed = alter_reassignment(
        cluster(p, brokers(range(6)), unclean=True, elr_enabled=False),
        AlterReassignmentRequest(None),
    )
    assert isinstance(allowed, Changed)
    assert (allowed.registration.replicas, allowed.registration.isr) == ((3, 2, 1), {3})


def test_seed_cancel_below_min_isr_aborts() -> None:
    """Protocol description §4.5: a revert below MinISR aborts unless unclean election is on;
    Kafka accepts."""
    p = reg([4, 3, 2, 1], [4, 3], leader=3, adding=[4], removing=[1, 2])
    assert isinstance(
        alter_reassignment(
            cluster(p, min_isr=2, elr_enabled=False), AlterReassignmentRequest(None)
        ),
        Changed,
    )
    seed = alter_reassignment(
        cluster(p, min_isr=2, elr_enabled=False, reassignment_completion="protocol-description"),
        AlterReassignmentRequest(None),
    )
    assert seed == Rejected(Error.INVALID_REPLICA_ASSIGNMENT, "reassignment.revert_keeps_min_isr")
