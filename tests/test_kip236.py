"""KIP-236 interruptible reassignment: cancel and roll back to the original replicas,
and the replicas a reassignment changed in flight drops; each beside what the KRaft rules do."""

from __future__ import annotations

from kafkarep.kafka.metadata import NO_LEADER
from kafkarep.rules import AlterReassignmentRequest, Changed, alter_reassignment
from kafkarep.zookeeper.kip236 import DropSet, Ignored, Rollback, drop_set, rollback
from tests.helpers import brokers, cluster, reg

LIVE = frozenset(range(1, 10))

# --- cancel and roll back ----------------------------------------------------------------------


def test_rollback_of_the_kip_example() -> None:
    """KIP-236 motivation: original [1,2,3], new [4,5,6], leader 1 under load: revert to
    [1,2,3] and drop the new replicas."""
    result = rollback((1, 2, 3), (4, 5, 6), isr=(1, 2, 3, 4), leader=1, live=LIVE)
    assert result == Rollback(
        replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, new_leader=False, stopped=(4, 5, 6)
    )


def test_rollback_elects_from_the_original_replicas_when_the_leader_is_new() -> None:
    """Step 2: the leader 4 is not in OAR; the first live original replica in the ISR leads, and
    step 3 removes RAR - OAR from the ISR (READING_ROLLBACK_LEADER)."""
    result = rollback((1, 2, 3), (4, 5, 6), isr=(4, 2, 3), leader=4, live=LIVE - {1})
    assert isinstance(result, Rollback)
    assert (result.leader, result.new_leader, result.isr) == (2, True, (2, 3))
    # Overlapping targets: only RAR - OAR stops.
    overlap = rollback((1, 2, 3), (3, 4), isr=(1, 2, 3, 4), leader=1, live=LIVE)
    assert isinstance(overlap, Rollback) and overlap.stopped == (4,)


def test_rollback_without_a_live_original_in_sync_replica_is_refused() -> None:
    result = rollback((1, 2, 3), (4, 5, 6), isr=(4, 1), leader=4, live=LIVE - {1})
    assert isinstance(result, Ignored) and "ReassignedPartitionLeaderSelector" in result.reason


def test_kraft_cancel_restores_the_replica_set_but_not_its_order() -> None:
    """KRaft keeps no original replicas: its revert is the current list minus the adding ones
    (`PartitionReassignmentRevert`), and the current list put the removing replicas in ascending
    order (`PartitionReassignmentReplicas`). So cancelling [3,1,2] -> [4,5,6] gives [1,2,3]: the
    preferred leader changes from 3 to 1. KIP-236 stores original_replicas and restores [3,1,2]."""
    start = reg([3, 1, 2], [3, 1, 2], leader=3, leader_epoch=1, partition_epoch=1)
    meta = cluster(start, brokers(range(1, 7)))
    grown = alter_reassignment(meta, AlterReassignmentRequest((4, 5, 6)))
    assert isinstance(grown, Changed) and grown.registration.replicas == (4, 5, 6, 1, 2, 3)
    cancelled = alter_reassignment(
        meta._replace(partition=grown.registration), AlterReassignmentRequest(None)
    )
    assert isinstance(cancelled, Changed)
    kraft = cancelled.registration
    kip = rollback((3, 1, 2), (4, 5, 6), isr=(3, 1, 2), leader=3, live=LIVE)
    assert isinstance(kip, Rollback)
    assert set(kraft.replicas) == set(kip.replicas) and kraft.isr == set(kip.isr)
    assert kraft.replicas == (1, 2, 3) and kip.replicas == (3, 1, 2)
    assert kraft.leader == kip.leader == 3


# --- a reassignment changed in flight ----------------------------------------------------------


def test_kip_example_1_2_to_2_3_changed_to_2_4_drops_3() -> None:
    """KIP-236: "an initial assignment of [1,2], reassigned to [2,3] and then changed to
    [2,4] ... broker 3 will remain in the assigned replicas until broker 4 is in sync"; the
    drop set removes it at once. Assigned [1,2,3] when the change arrives, 3 not yet in sync."""
    result = drop_set((1, 2), (1, 2, 3), isr=(1, 2), leader=1, min_isr=1, new_target=(2, 4))
    assert result == DropSet(drop=(3,), kept=(1, 2), existing=(1, 2, 3))
    # READING_TOP_INCLUSIVE: the exclusive slice existing[0:top-1] keeps only [1] and would drop
    # 2, a replica of the new target [2,4].
    assert isinstance(result, DropSet)
    exclusive = [r for r in (1, 2, 3) if r not in result.existing[: len((1, 2)) - 1]]
    assert exclusive == [2, 3]


def test_kraft_keeps_the_intermediate_replica_until_completion() -> None:
    """What the KRaft rules do with the same change: 3 joins the removing replicas and leaves
    only when the reassignment completes, once 2 and 4 are in sync (`PartitionReassignmentReplicas`,
    `maybeCompleteReassignment`)."""
    start = reg([1, 2], [1, 2], leader=1, leader_epoch=1, partition_epoch=1)
    meta = cluster(start, brokers(range(1, 5)))
    first = alter_reassignment(meta, AlterReassignmentRequest((2, 3)))
    assert isinstance(first, Changed) and first.registration.replicas == (2, 3, 1)
    changed = alter_reassignment(
        meta._replace(partition=first.registration), AlterReassignmentRequest((2, 4))
    )
    assert isinstance(changed, Changed)
    p = changed.registration
    assert (p.replicas, p.adding, p.removing) == ((2, 4, 1, 3), {4}, {1, 3})


def test_reading_keep_new_target() -> None:
    """[1,2] -> [2,3] -> [3,4] with 3 in sync: the formula's candidate 3 is in the new target."""
    result = drop_set((1, 2), (1, 2, 3), isr=(1, 2, 3), leader=1, min_isr=1, new_target=(3, 4))
    assert isinstance(result, DropSet) and result.drop == ()
    literal = drop_set((1, 2), (1, 2, 3), isr=(1, 2, 3), leader=1, min_isr=1)
    assert isinstance(literal, DropSet) and literal.drop == (3,)


def test_out_of_sync_replicas_are_dropped_first() -> None:
    """existing = leader ++ isr ++ sorted(osr): with the leader and ISR [1,2,3,4] of a [1,2,3]
    -> [4,5,6] reassignment changed to [7,8,9], the top 3 are kept; the rest drop."""
    result = drop_set(
        (1, 2, 3), (1, 2, 3, 4, 5, 6), isr=(1, 2, 3, 4), leader=1, min_isr=2, new_target=(7, 8, 9)
    )
    assert isinstance(result, DropSet)
    assert (result.existing, result.kept, result.drop) == ((1, 2, 3, 4, 5, 6), (1, 2, 3), (4, 5, 6))


def test_reading_isr_order_and_a_leader_first() -> None:
    """READING_ISR_ORDER: the ISR's own order decides among in-sync replicas; the leader always
    comes first, even when the ISR lists it later."""
    result = drop_set((1, 2, 3), (1, 2, 3, 4, 5), isr=(4, 2, 5, 3), leader=3, min_isr=1)
    assert isinstance(result, DropSet)
    assert result.existing == (3, 4, 2, 5, 1) and result.drop == (1, 5)
    leaderless = drop_set((1, 2), (1, 2, 3), isr=(2, 3), leader=NO_LEADER, min_isr=1)
    assert isinstance(leaderless, DropSet) and leaderless.drop == (1,)


def test_original_smaller_than_min_isr_is_ignored() -> None:
    """Step 1.1: top = len(original) must be at least MinISR."""
    result = drop_set((1, 2), (1, 2, 3), isr=(1, 2), leader=1, min_isr=3)
    assert isinstance(result, Ignored) and "MinISR 3" in result.reason
