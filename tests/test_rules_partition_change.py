"""The change builder (Kafka's `PartitionChangeBuilder`), after its PartitionChangeBuilderTest."""

from kafkarep.kafka.metadata import NO_LEADER, LeaderRecoveryState
from kafkarep.rules import Changed, ChangeTargets, Election, Unchanged, build, partition_change
from tests.helpers import brokers, cluster, reg

# PartitionChangeBuilderTest's fixture: replicas [2, 1, 3], ISR [2, 1, 3], leader 1, 3 fenced.
FENCED_3 = brokers(range(1, 5), fenced=(3,))


def base(**kw: object) -> Changed | Unchanged:
    partition = reg([2, 1, 3], [2, 1, 3], leader=1, leader_epoch=100, partition_epoch=200)
    outcome = partition_change(
        cluster(partition, FENCED_3, min_isr=2, elr_enabled=False),
        ChangeTargets(**kw),  # type: ignore[arg-type]
    )
    assert isinstance(outcome, Changed | Unchanged)
    return outcome


def test_no_change_emits_no_record() -> None:
    """testNoChange: nothing set, current leader still valid (`changeRecordIsNoOp`)."""
    assert base() == Unchanged()


def test_isr_shrink_does_not_bump_leader_epoch() -> None:
    """testIsrChangeDoesntBumpLeaderEpoch: from 3.6 an ISR shrink only bumps the partition epoch."""
    outcome = base(isr=frozenset({2, 1}))
    assert isinstance(outcome, Changed)
    assert outcome.registration.isr == {1, 2}
    assert (outcome.registration.leader_epoch, outcome.registration.partition_epoch) == (100, 201)


def test_isr_shrink_bumps_leader_epoch_before_3_6() -> None:
    """testLeaderEpochBumpOnIsrShrink[3.4-IV0]: KAFKA-15021
    (`triggerLeaderEpochBumpForIsrShrinkIfNeeded`)."""
    partition = reg([2, 1, 3], [2, 1, 3], leader=1, leader_epoch=100, partition_epoch=200)
    metadata = cluster(
        partition, FENCED_3, min_isr=2, elr_enabled=False, leader_epoch_bump_on_isr_shrink=True
    )
    outcome = partition_change(metadata, ChangeTargets(isr=frozenset({2, 1})))
    assert isinstance(outcome, Changed)
    assert outcome.record.leader == 1
    assert outcome.registration.leader_epoch == 101


def test_leader_leaving_isr_elects_first_valid_replica() -> None:
    """testIsrChangeAndLeaderChange: replica order decides (`electAnyLeader`)."""
    outcome = base(isr=frozenset({2, 3}))
    assert isinstance(outcome, Changed)
    assert outcome.registration.leader == 2
    assert outcome.registration.leader_epoch == 101


def test_online_election_never_leaves_isr() -> None:
    """testElectLeader: only fenced 3 is in the target ISR, so no leader (`isValidNewLeader`)."""
    outcome = base(isr=frozenset({3}))
    assert isinstance(outcome, Changed)
    assert outcome.registration.leader == NO_LEADER
    assert outcome.registration.leader_epoch == 101


def test_unclean_election_sets_isr_and_recovering() -> None:
    """testUncleanLeaderElection: first acceptable replica, ISR reset to it, RECOVERING."""
    outcome = base(isr=frozenset({3}), election=Election.UNCLEAN)
    assert isinstance(outcome, Changed)
    assert outcome.registration.leader == 2
    assert outcome.registration.isr == {2}
    assert outcome.registration.leader_recovery_state == LeaderRecoveryState.RECOVERING


def test_preferred_election_picks_first_replica() -> None:
    """testElectLeader with PREFERRED: replica 2 is first and valid (`electPreferredLeader`)."""
    outcome = base(election=Election.PREFERRED)
    assert isinstance(outcome, Changed)
    assert outcome.registration.leader == 2


def test_replica_leaving_bumps_leader_epoch_even_with_same_leader() -> None:
    """testLeaderEpochBumpOnNewReplicaSetDisjoint
    (`triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`)."""
    outcome = base(replicas=(2, 1, 4))
    assert isinstance(outcome, Changed)
    assert outcome.record.leader == 1
    assert outcome.registration.leader_epoch == 101


def test_reordering_replicas_keeps_leader_epoch() -> None:
    """testReassignmentRearrangesReplicas
    (`triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`)."""
    outcome = base(replicas=(3, 2, 1))
    assert isinstance(outcome, Changed)
    assert outcome.registration.replicas == (3, 2, 1)
    assert outcome.registration.leader_epoch == 100


def test_elr_filled_when_isr_drops_below_min_isr() -> None:
    """testEligibleLeaderReplicas_IsrShrinkBelowMinISR (`maybePopulateTargetElr`)."""
    partition = reg([1, 2, 3, 4], [1, 2, 3, 4], leader=1, leader_epoch=100, partition_epoch=200)
    metadata = cluster(
        partition, FENCED_3, min_isr=3, elr_enabled=True, use_last_known_leader=False
    )
    outcome = partition_change(metadata, ChangeTargets(isr=frozenset({1, 2})))
    assert isinstance(outcome, Changed)
    assert outcome.registration.elr == {3, 4}


def test_elr_member_elected_when_isr_empty() -> None:
    """testEligibleLeaderReplicas_ElrCanBeElected: the ELR leader becomes the ISR
    (`tryElection`)."""
    partition = reg([1, 2, 3, 4], [1], leader=1, leader_epoch=100, partition_epoch=200, elr=[3])
    metadata = cluster(partition, brokers(range(1, 5), fenced=(1,)), min_isr=3, elr_enabled=True)
    outcome = partition_change(
        metadata, ChangeTargets(isr=frozenset(), election=Election.PREFERRED)
    )
    assert isinstance(outcome, Changed)
    assert (outcome.registration.leader, outcome.registration.isr) == (3, {3})
    assert outcome.registration.elr == {1}


def test_unclean_shutdown_replica_leaves_elr_unless_guard_is_off() -> None:
    """testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr, and the seeded bug."""
    partition = reg([1, 2, 3, 4], [1], leader=1, leader_epoch=100, partition_epoch=200, elr=[2, 3])
    targets = ChangeTargets(unclean_shutdown_replicas=frozenset({3}))
    metadata = cluster(
        partition, FENCED_3, min_isr=3, elr_enabled=True, use_last_known_leader=False
    )
    outcome = partition_change(metadata, targets)
    assert isinstance(outcome, Changed)
    assert outcome.registration.elr == {2}
    mutated = metadata._replace(
        options=metadata.options._replace(
            disabled_guards=frozenset({"partition_change.unclean_shutdown_leaves_elr"})
        )
    )
    assert partition_change(mutated, targets) == Unchanged()


def test_last_known_leader_recorded_when_isr_empties() -> None:
    """`maybeUpdateLastKnownLeader`: an empty ISR remembers the leader before the change."""
    partition = reg([1, 2, 3], [1], leader=1, leader_epoch=1, partition_epoch=3, elr=[2, 3])
    metadata = cluster(
        partition, brokers(range(1, 4), fenced=(1, 2, 3)), min_isr=2, elr_enabled=True
    )
    record = build(metadata, ChangeTargets(isr=frozenset()), lambda b: False)
    assert record is not None
    assert record.last_known_elr == {1}
    assert record.leader == NO_LEADER


def test_last_known_leader_elected_only_if_acceptable() -> None:
    """`canElectLastKnownLeader`: Kafka 4.0 elects the last known leader even while fenced,
    uncleanly; KAFKA-19522 (4.1.0) elects it only if acceptable."""
    partition = reg(
        [1, 2, 3], [], leader=NO_LEADER, leader_epoch=2, partition_epoch=5, last_known_elr=[1]
    )
    fenced = brokers(range(1, 4), fenced=(1, 2, 3))
    metadata = cluster(partition, fenced, min_isr=2, elr_enabled=True, release="4.0")
    outcome = partition_change(metadata, ChangeTargets())
    assert isinstance(outcome, Changed)
    assert outcome.registration.leader == 1
    assert outcome.registration.leader_recovery_state == LeaderRecoveryState.RECOVERING
    later = cluster(partition, fenced, min_isr=2, elr_enabled=True, release="4.1")
    assert isinstance(partition_change(later, ChangeTargets()), Unchanged)


def test_elr_disabled_clears_leftover_elr() -> None:
    """`maybeUpdateRecordElr`: with ELR off any builder run empties a leftover ELR."""
    partition = reg([1, 2, 3], [1, 2], leader=1, elr=[3])
    outcome = partition_change(cluster(partition, min_isr=3, elr_enabled=False), ChangeTargets())
    assert isinstance(outcome, Changed)
    assert outcome.registration.elr == frozenset()


def test_elr_off_never_empties_isr() -> None:
    """`build`: the last ISR member stays when it is removed and ELR is off."""
    partition = reg([1, 2, 3], [1], leader=1)
    outcome = partition_change(
        cluster(partition, brokers(range(1, 4), fenced=(1,)), elr_enabled=False),
        ChangeTargets(isr=frozenset()),
    )
    assert isinstance(outcome, Changed)
    assert outcome.registration.isr == {1}
    assert outcome.registration.leader == NO_LEADER
