"""Log divergence and truncation (the protocol's §3 log divergence cases; Kafka
OffsetsForLeaderEpoch), and the HWM commit point (seed 004 §2.7)."""

from kafkarep.model.hwm import commit_offset
from kafkarep.model.logs import diverges, end_offset_for_epoch, truncation_point
from kafkarep.model.state import FollowerView, Replica, Role
from tests.helpers import reg


def test_end_offset_for_epoch() -> None:
    log = ((1, 1), (1, 2), (3, 3))
    assert end_offset_for_epoch(log, 1) == (1, 2)  # epoch 1 ends where epoch 3 starts
    assert end_offset_for_epoch(log, 2) == (1, 2)  # no epoch 2: the floor epoch 1
    assert end_offset_for_epoch(log, 3) == (3, 3)
    assert end_offset_for_epoch(log, 5, leader_epoch=5) == (5, 3)  # the leader's own epoch
    assert end_offset_for_epoch((), 4) == (4, 0)


def test_follower_prefix_does_not_diverge() -> None:
    leader = ((1, 1), (1, 2), (2, 3))
    assert diverges(leader, 2, fetch_offset=2, last_epoch=1) is None
    assert diverges(leader, 2, fetch_offset=0, last_epoch=0) is None


def test_divergence_and_truncation() -> None:
    """A follower wrote (2,x) at offset 1 under a leader that lost it; the new leader (epoch 3)
    has epoch 1 up to offset 1 then epoch 3: the follower truncates to 1."""
    leader = ((1, 1), (3, 4))
    follower = ((1, 1), (2, 2), (2, 3))
    answer = diverges(leader, 3, fetch_offset=3, last_epoch=2)
    assert answer == (1, 1)
    assert truncation_point(follower, answer) == 1


def test_truncation_to_own_epoch_end() -> None:
    """The follower's own end for the diverging epoch bounds the cut."""
    assert truncation_point(((1, 1),), (1, 5)) == 1
    assert truncation_point(((2, 1), (2, 2)), (1, 0)) == 0


def test_commit_offset_waits_for_maximal_isr() -> None:
    view = reg([1, 2, 3], [1, 2], leader=1)
    leader = Replica(
        log=((1, 1), (1, 2)),
        role=Role.LEADER,
        view=view,
        maximal_isr=frozenset({1, 2, 3}),
        followers=(FollowerView(), FollowerView(2, 1, True), FollowerView(1, 1, True)),
    )
    assert commit_offset(leader, 1) == 1  # 3 is in the maximal ISR and has fetched 1
    assert commit_offset(leader._replace(maximal_isr=frozenset({1, 2})), 1) == 2
    unknown = leader._replace(followers=(FollowerView(), FollowerView(), FollowerView(1, 1, True)))
    assert commit_offset(unknown, 1) == 0  # a member not heard from holds it at 0
