"""AlterPartition (`ReplicationControlManager.alterPartition`), after
ReplicationControlManagerTest."""

import pytest

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.rules import AlterPartitionRequest, Changed, Rejected, Unchanged, alter_partition
from kafkarep.rules.alter_partition import GUARDS
from tests.helpers import brokers, cluster, reg

PARTITION = reg([0, 1, 2], [0, 1, 2], leader=0, leader_epoch=5, partition_epoch=7)


def request(**kw: object) -> AlterPartitionRequest:
    fields: dict[str, object] = dict(
        broker=0, leader_epoch=5, partition_epoch=7, new_isr=((0, 100), (1, 101))
    )
    fields.update(kw)
    return AlterPartitionRequest(**fields)  # type: ignore[arg-type]


def test_shrink_accepted() -> None:
    """testShrinkAndExpandIsr: a valid shrink commits and bumps the partition epoch only."""
    outcome = alter_partition(cluster(PARTITION, elr_enabled=False), request())
    assert isinstance(outcome, Changed)
    assert outcome.registration.isr == {0, 1}
    assert (outcome.registration.leader_epoch, outcome.registration.partition_epoch) == (5, 8)


def test_same_isr_is_unchanged() -> None:
    """`alterPartition`: nothing to change is a success without a record."""
    outcome = alter_partition(
        cluster(PARTITION, elr_enabled=False), request(new_isr=((0, 100), (1, 101), (2, 102)))
    )
    assert outcome == Unchanged()


@pytest.mark.parametrize(
    ("changes", "error", "guard"),
    [
        ({"broker_epoch": 99}, Error.STALE_BROKER_EPOCH, "requester_epoch_current"),
        ({"leader_epoch": 500}, Error.NOT_CONTROLLER, "leader_epoch_not_ahead"),
        ({"partition_epoch": 8}, Error.NOT_CONTROLLER, "partition_epoch_not_ahead"),
        ({"leader_epoch": 4}, Error.FENCED_LEADER_EPOCH, "leader_epoch_current"),
        ({"broker": 1, "partition_epoch": 6}, Error.INVALID_REQUEST, "requester_is_leader"),
        ({"partition_epoch": 6}, Error.INVALID_UPDATE_VERSION, "partition_epoch_current"),
        ({"new_isr": ((0, 100), (3, 103))}, Error.INVALID_REQUEST, "isr_within_replicas"),
        ({"new_isr": ((0, 100), (0, 100))}, Error.INVALID_REQUEST, "isr_within_replicas"),
        ({"new_isr": ((1, 101),)}, Error.INVALID_REQUEST, "isr_includes_leader"),
        (
            {"leader_recovery_state": LeaderRecoveryState.RECOVERING},
            Error.INVALID_REQUEST,
            "recovering_isr_single",
        ),
        (
            {"new_isr": ((0, 100),), "leader_recovery_state": LeaderRecoveryState.RECOVERING},
            Error.INVALID_REQUEST,
            "no_return_to_recovering",
        ),
        ({"new_isr": ((0, 100), (1, 999))}, Error.INELIGIBLE_REPLICA, "isr_member_epochs_current"),
    ],
)
def test_each_validation_in_kafka_order(changes: dict, error: Error, guard: str) -> None:
    """validateAlterPartitionData: the first failing check decides the error."""
    outcome = alter_partition(cluster(PARTITION, elr_enabled=False), request(**changes))
    assert outcome == Rejected(error, f"alter_partition.{guard}")


@pytest.mark.parametrize(
    ("changes", "error", "guard"),
    [
        ({"leader_epoch": 500}, Error.FENCED_LEADER_EPOCH, "leader_epoch_current"),
        ({"partition_epoch": 8}, Error.INVALID_UPDATE_VERSION, "partition_epoch_current"),
        ({"broker": 1, "partition_epoch": 8}, Error.INVALID_REQUEST, "requester_is_leader"),
    ],
)
def test_kraft_3_2_answers_epochs_ahead_as_fenced(changes: dict, error: Error, guard: str) -> None:
    """Before KAFKA-14154 (3.3.0) `validateAlterPartitionData` compares each epoch for equality:
    a request ahead of the controller gets the errors the leader waits out, not NOT_CONTROLLER
    (read at 3.2.0; `epochs_ahead_answer = "fenced"`)."""
    metadata = cluster(PARTITION, elr_enabled=False, epochs_ahead_answer="fenced")
    assert alter_partition(metadata, request(**changes)) == Rejected(
        error, f"alter_partition.{guard}"
    )


def test_guards_are_listed_in_kafka_order() -> None:
    names = [g.name for g in GUARDS]
    assert names.index("leader_epoch_current") < names.index("requester_is_leader")
    assert names.index("requester_is_leader") < names.index("partition_epoch_current")
    assert names[0] == "requester_epoch_current"


def test_fenced_member_is_ineligible() -> None:
    """testAlterPartitionShouldRejectFencedBrokers[version=3]."""
    metadata = cluster(PARTITION, brokers(fenced=(2,)), elr_enabled=False)
    outcome = alter_partition(metadata, request(new_isr=((0, 100), (1, 101), (2, 102))))
    assert outcome == Rejected(Error.INELIGIBLE_REPLICA, "alter_partition.isr_members_eligible")


def test_old_versions_answer_operation_not_attempted() -> None:
    """testAlterPartitionShouldRejectShuttingDownBrokers[version=0]."""
    metadata = cluster(PARTITION, brokers(shutting_down=(2,)), elr_enabled=False)
    outcome = alter_partition(metadata, request(new_isr=((0, -1), (1, -1), (2, -1)), version=0))
    assert isinstance(outcome, Rejected)
    assert outcome.error == Error.OPERATION_NOT_ATTEMPTED


def test_replica_epochs_ignored_before_version_3() -> None:
    """testAlterPartitionShouldRejectBrokersWithStaleEpoch[version=2]."""
    partition = reg([0, 1, 2], [0, 1], leader=0, leader_epoch=5, partition_epoch=7)
    outcome = alter_partition(
        cluster(partition, elr_enabled=False),
        request(new_isr=((0, 100), (1, 101), (2, 999)), version=2),
    )
    assert isinstance(outcome, Changed)
    assert outcome.registration.isr == {0, 1, 2}


def test_stale_partition_epoch_accepted_when_guard_is_off() -> None:
    """The seeded bug models/mutations/ switch on: without the check a stale request commits."""
    metadata = cluster(
        PARTITION,
        elr_enabled=False,
        disabled_guards=frozenset({"alter_partition.partition_epoch_current"}),
    )
    assert isinstance(alter_partition(metadata, request(partition_epoch=6)), Changed)


def test_completing_reassignment_that_moves_leadership_commits_and_errors() -> None:
    """testReassignPartitions: NEW_LEADER_ELECTED with a committed record (`alterPartition`)."""
    partition = reg([0, 2, 1, 3], [3, 2, 1], leader=3, partition_epoch=1, adding=[0], removing=[3])
    new_isr = ((3, 103), (0, 100), (2, 102), (1, 101))
    for version, error in ((3, Error.NEW_LEADER_ELECTED), (1, Error.FENCED_LEADER_EPOCH)):
        outcome = alter_partition(
            cluster(partition, elr_enabled=False),
            AlterPartitionRequest(3, 0, 1, new_isr, version=version),
        )
        assert isinstance(outcome, Changed)
        assert outcome.error == error
        assert outcome.registration.replicas == (0, 2, 1)
        assert outcome.registration.leader == 0


def test_shrink_below_min_isr_fills_elr() -> None:
    """testEligibleLeaderReplicas_ShrinkAndExpandIsr: no MinISR check here (`alterPartition`)."""
    partition = reg([0, 1, 2], [0, 1, 2], leader=0)
    outcome = alter_partition(
        cluster(partition, min_isr=2, elr_enabled=True), AlterPartitionRequest(0, 0, 0, ((0, 100),))
    )
    assert isinstance(outcome, Changed)
    assert (outcome.registration.isr, outcome.registration.elr) == ({0}, {1, 2})
