"""Broker events (protocol description §2.8, §2.9.1), after ReplicationControlManagerTest."""

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import NO_LEADER
from kafkarep.rules import (
    Changed,
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    Rejected,
    Unchanged,
    UnfenceBroker,
    controlled_shutdown,
    fence_broker,
    register_broker,
    unclean_shutdown,
    unfence_broker,
)
from tests.helpers import brokers, cluster, reg


def test_fence_leader_elects_next_in_replica_order() -> None:
    """testRemoveLeaderships; protocol description §2.8."""
    p = reg([0, 2, 1], [0, 2, 1], leader=0)
    outcome = fence_broker(cluster(p, elr_enabled=False), FenceBroker(0))
    assert isinstance(outcome, Changed)
    assert (outcome.registration.leader, outcome.registration.isr) == (2, {1, 2})
    assert outcome.brokers is not None and outcome.brokers.get(0).fenced


def test_fence_outside_isr_changes_only_the_registry() -> None:
    p = reg([0, 1, 2], [0, 1], leader=0)
    outcome = fence_broker(cluster(p, elr_enabled=False), FenceBroker(2))
    assert isinstance(outcome, Unchanged)
    assert outcome.brokers is not None and outcome.brokers.get(2).fenced


def test_fence_below_min_isr_moves_broker_to_elr() -> None:
    """testEligibleLeaderReplicas_BrokerFence."""
    p = reg([0, 1, 2, 3], [0, 1, 3], leader=0, partition_epoch=1)
    outcome = fence_broker(
        cluster(p, brokers(fenced=(2,)), min_isr=3, elr_enabled=True), FenceBroker(3)
    )
    assert isinstance(outcome, Changed)
    assert (outcome.registration.isr, outcome.registration.elr) == ({0, 1}, {3})


def test_fence_last_isr_member_without_elr_keeps_it() -> None:
    """`PartitionChangeBuilder.build`: protocol description §2.8 "the last replica standing remains
    in the ISR"."""
    p = reg([1, 2, 3], [1], leader=1, partition_epoch=2)
    outcome = fence_broker(cluster(p, brokers(fenced=(2, 3)), elr_enabled=False), FenceBroker(1))
    assert isinstance(outcome, Changed)
    assert (outcome.registration.isr, outcome.registration.leader) == ({1}, NO_LEADER)


def test_controlled_shutdown_follower() -> None:
    p = reg([0, 1, 2], [0, 1, 2], leader=0)
    outcome = controlled_shutdown(cluster(p, elr_enabled=False), ControlledShutdown(2))
    assert isinstance(outcome, Changed)
    assert outcome.registration.isr == {0, 1}
    assert outcome.brokers is not None and outcome.brokers.get(2).in_controlled_shutdown


def test_unfence_only_revisits_leaderless_partitions() -> None:
    """`handleBrokerUnfenced`: an unfenced ELR member becomes leader of a leaderless partition."""
    p = reg(
        [1, 2, 3],
        [],
        leader=NO_LEADER,
        leader_epoch=1,
        partition_epoch=4,
        elr=[3],
        last_known_elr=[1],
    )
    outcome = unfence_broker(
        cluster(p, brokers(fenced=(1, 2, 3)), min_isr=2, elr_enabled=True), UnfenceBroker(3)
    )
    assert isinstance(outcome, Changed)
    r = outcome.registration
    assert (r.leader, r.isr, r.elr, r.last_known_elr) == (3, {3}, set(), set())
    led = reg([0, 1, 2, 3], [0], leader=0, elr=[1, 3])
    assert isinstance(
        unfence_broker(
            cluster(led, brokers(fenced=(1, 2, 3)), min_isr=3, elr_enabled=True), UnfenceBroker(1)
        ),
        Unchanged,
    )


def test_unclean_shutdown_last_isr_member() -> None:
    """testEligibleLeaderReplicas_UncleanShutdown: leaves ISR, not into ELR; last known leader."""
    p = reg([0, 1, 2, 3], [0], leader=0, partition_epoch=4, elr=[2])
    outcome = unclean_shutdown(
        cluster(p, brokers(fenced=(1, 2, 3)), min_isr=3, elr_enabled=True), 0
    )
    assert isinstance(outcome, Changed)
    r = outcome.registration
    assert (r.isr, r.elr, r.last_known_elr, r.leader) == (set(), {2}, {0}, NO_LEADER)
    assert outcome.brokers is not None
    again = outcome.brokers.get(0)
    assert again.fenced and again.epoch > 103 and again.incarnation == 1


def test_a_clean_restart_keeps_eligibility() -> None:
    """KAFKA-18635 (4.0.0): a broker presenting its last epoch restarted cleanly: it leaves the
    ISR as a fenced broker does (KAFKA-18106) but stays eligible (ELR); an unclean one does not."""
    p = reg([0, 1, 2], [0, 1], leader=0)
    m = cluster(p, min_isr=2, elr_enabled=True)
    clean = register_broker(m, RegisterBroker(1, 1, previous_epoch=101))
    unclean = register_broker(m, RegisterBroker(1, 1, previous_epoch=-1))
    assert isinstance(clean, Changed) and isinstance(unclean, Changed)
    assert (clean.registration.isr, clean.registration.elr) == ({0}, {1})
    assert (unclean.registration.isr, unclean.registration.elr) == ({0}, frozenset())


def test_every_new_incarnation_is_unclean_in_3_9() -> None:
    """Kafka 3.9: no clean-shutdown detection; with ELR the broker leaves ISR and ELR."""
    p = reg([0, 1, 2], [0, 1], leader=0)
    m = cluster(p, min_isr=2, elr_enabled=True, release="3.9")
    clean = register_broker(m, RegisterBroker(1, 1, previous_epoch=101))
    assert isinstance(clean, Changed)
    assert (clean.registration.isr, clean.registration.elr) == ({0}, frozenset())


def test_a_new_incarnation_leaves_the_isr_since_4_0() -> None:
    """KAFKA-18106 (4.0.0): without unclean-shutdown handling (here a metadata version before
    4.0) a new incarnation leaves the ISR as a fenced broker does; 3.9 did nothing."""
    p = reg([0, 1, 2], [0, 1], leader=0)
    before_4 = cluster(p, elr_enabled=False, unclean_shutdown_handling=False, release="3.9")
    assert isinstance(unclean_shutdown(before_4, 1), Unchanged)
    now = unclean_shutdown(cluster(p, elr_enabled=False, unclean_shutdown_handling=False), 1)
    assert isinstance(now, Changed) and now.registration.isr == {0}


def test_unknown_broker() -> None:
    p = reg([0, 1, 2], [0, 1], leader=0)
    assert fence_broker(cluster(p), FenceBroker(9)) == Rejected(
        Error.BROKER_ID_NOT_REGISTERED, "broker_events.broker_registered"
    )
