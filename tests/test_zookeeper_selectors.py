"""The four leader selectors of Kafka Controller Internals (Apache wiki, 1.a-1.d), each line of
the page a check."""

from __future__ import annotations

from kafkarep.zookeeper import leader_selectors as select
from kafkarep.zookeeper.leader_selectors import Selection
from kafkarep.zookeeper.outcome import NoLeader

ASSIGNED = (1, 2, 3)


def test_offline_selector_prefers_a_live_isr_member() -> None:
    """a. new leader = a live replica (preferably in isr); new isr = live isr if not empty;
    receiving replicas = live assigned replicas."""
    result = select.offline(ASSIGNED, isr=(1, 3), live={2, 3}, unclean_allowed=True)
    assert result == Selection(leader=3, isr=(3,), receivers=(2, 3), unclean=False)
    # Among several live ISR members, the first assigned one.
    assert select.offline(ASSIGNED, (3, 2), {2, 3}, False) == Selection(2, (3, 2), (2, 3))


def test_offline_selector_unclean_takes_a_live_replica_outside_the_isr() -> None:
    """a. ... or just the new leader if otherwise: the ISR becomes the new leader alone."""
    result = select.offline(ASSIGNED, isr=(1,), live={2, 3}, unclean_allowed=True)
    assert result == Selection(leader=2, isr=(2,), receivers=(2, 3), unclean=True)


def test_offline_selector_without_unclean_or_live_replicas_finds_none() -> None:
    clean = select.offline(ASSIGNED, isr=(1,), live={2, 3}, unclean_allowed=False)
    assert isinstance(clean, NoLeader) and "unclean election off" in clean.reason
    dead = select.offline(ASSIGNED, isr=(1,), live=set(), unclean_allowed=True)
    assert isinstance(dead, NoLeader) and "no live replica" in dead.reason


def test_reassigned_selector() -> None:
    """b. new leader = a live reassigned replica; new isr = current isr; receiving replicas =
    reassigned replicas. Reading: the leader is also in the ISR."""
    result = select.reassigned((4, 5, 6), isr=(1, 5, 6), live={1, 5, 6})
    assert result == Selection(leader=5, isr=(1, 5, 6), receivers=(4, 5, 6))
    outside = select.reassigned((4, 5), isr=(1, 5), live={1, 4})  # 4 is live, not in the ISR
    assert isinstance(outside, NoLeader)


def test_preferred_selector() -> None:
    """c. new leader = first assigned replica (if in isr); new isr = current isr; receiving
    replicas = assigned replicas. Reading: it must be live too."""
    assert select.preferred(ASSIGNED, (2, 1), {1, 2}) == Selection(1, (2, 1), ASSIGNED)
    assert isinstance(select.preferred(ASSIGNED, (2, 3), {1, 2, 3}), NoLeader)
    assert isinstance(select.preferred(ASSIGNED, (1, 2), {2, 3}), NoLeader)


def test_controlled_shutdown_selector() -> None:
    """d. new leader = replica in isr that's not being shut down; new isr = current isr -
    shutdown replica; receiving replicas = live assigned replicas."""
    result = select.controlled_shutdown(ASSIGNED, (1, 2, 3), live={2, 3}, shutting_down={1})
    assert result == Selection(leader=2, isr=(2, 3), receivers=(2, 3))
    alone = select.controlled_shutdown(ASSIGNED, (1,), live={2, 3}, shutting_down={1})
    assert isinstance(alone, NoLeader)
