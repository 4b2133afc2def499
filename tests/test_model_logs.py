"""Log divergence and truncation (protocol description §3, the log divergence cases; Kafka
OffsetsForLeaderEpoch), and the HWM commit point (protocol description §2.7)."""

from kafkarep.model.domain import CONCRETE
from kafkarep.model.hwm import hwm_offset
from kafkarep.model.logs import (
    UNDEFINED,
    Entries,
    answer,
    diverges,
    end_offset_for_epoch,
    kip101_end_offset,
    latest_epoch,
    truncate_to,
    truncation_point,
)
from kafkarep.model.state import FollowerView, Replica, Role
from tests.helpers import reg, three_brokers


def test_end_offset_for_epoch() -> None:
    log = ((1, 1), (1, 2), (3, 3))
    assert end_offset_for_epoch(Entries(log), 1) == (1, 2)  # epoch 1 ends where epoch 3 starts
    assert end_offset_for_epoch(Entries(log), 2) == (1, 2)  # no epoch 2: the floor epoch 1
    assert end_offset_for_epoch(Entries(log), 3) == (3, 3)
    assert end_offset_for_epoch(Entries(log), 5, leader_epoch=5) == (5, 3)  # the leader's own epoch
    assert end_offset_for_epoch(Entries(()), 4) == (4, 0)


def test_follower_prefix_does_not_diverge() -> None:
    leader = ((1, 1), (1, 2), (2, 3))
    assert diverges(Entries(leader), 2, fetch_offset=2, last_epoch=1)[0] is False
    assert diverges(Entries(leader), 2, fetch_offset=0, last_epoch=0)[0] is False


def test_divergence_and_truncation() -> None:
    """A follower wrote (2,x) at offset 1 under a leader that lost it; the new leader (epoch 3)
    has epoch 1 up to offset 1 then epoch 3: the follower truncates to 1."""
    leader = ((1, 1), (3, 4))
    follower = ((1, 1), (2, 2), (2, 3))
    assert diverges(Entries(leader), 3, fetch_offset=3, last_epoch=2) == (True, 1, 1)
    assert truncation_point(Entries(follower), 1, 1) == 1


def test_truncation_to_own_epoch_end() -> None:
    """The follower's own end for the diverging epoch bounds the cut."""
    assert truncation_point(Entries(((1, 1),)), 1, 5) == 1
    assert truncation_point(Entries(((2, 1), (2, 2))), 1, 0) == 0


# --- the historical algorithms (docs/history.md) ------------------------------------------------

# KAFKA-6361's logs: broker 1 wrote value 1 in epoch 1, broker 2 value 2 at the same offset in
# epoch 2, then broker 1 led again in epoch 3 and wrote value 3.
LEADER_6361 = ((1, 1), (3, 3))
FOLLOWER_6361 = ((2, 2),)


def test_kip101_answers_from_the_leaders_epochs() -> None:
    log = ((1, 1), (1, 2), (3, 3))
    assert kip101_end_offset(log, 3) == 3  # the latest epoch: the LEO
    assert kip101_end_offset(log, 1) == 2  # the start of the next epoch
    assert kip101_end_offset(log, 2) == 2  # never had epoch 2: the start of epoch 3
    assert kip101_end_offset(log, 4) == UNDEFINED  # no later epoch
    assert kip101_end_offset(log, 0) == UNDEFINED  # nothing that early
    assert kip101_end_offset((), 1) == UNDEFINED


def test_kip101_misses_kafka_6361_and_kip279_does_not() -> None:
    told = answer("kip-101", LEADER_6361, 3, fetch_offset=1, last_epoch=2)
    assert told is None  # epoch 2 "ends" at offset 1, the follower's LEO: it keeps value 2
    told = answer("leader-epoch", LEADER_6361, 3, fetch_offset=1, last_epoch=2)
    assert told == (1, 1)
    assert truncate_to("leader-epoch", Entries(FOLLOWER_6361), 0, *told) == 0  # value 2 goes


def test_kip101_undefined_falls_back_to_the_hwm() -> None:
    told = answer("kip-101", ((1, 1),), 2, fetch_offset=2, last_epoch=3)
    assert told == (3, UNDEFINED)
    assert truncate_to("kip-101", Entries(((1, 1), (3, 2))), 1, *told) == 1


def test_high_watermark_truncation_only_sees_an_out_of_range_offset() -> None:
    assert answer("high-watermark", LEADER_6361, 3, fetch_offset=1, last_epoch=2) is None
    told = answer("high-watermark", ((1, 1),), 3, fetch_offset=2, last_epoch=1)
    assert told == (UNDEFINED, 1)
    assert truncate_to("high-watermark", Entries(((1, 1), (1, 2))), 0, *told) == 1


def test_the_epoch_cache_ignores_an_older_epoch() -> None:
    """KAFKA-6880's log: value 3 written in epoch 2 after value 1 of epoch 3."""
    log = ((3, 1), (2, 3))
    assert latest_epoch(log) == 3 and Replica(log=log).last_epoch == 3
    assert end_offset_for_epoch(Entries(log), 2) == (2, 0)  # epoch 2 ends before epoch 3 starts


def test_commit_offset_waits_for_maximal_isr() -> None:
    view = reg([1, 2, 3], [1, 2], leader=1)
    leader = Replica(
        log=((1, 1), (1, 2)),
        role=Role.LEADER,
        view=view,
        maximal_isr=frozenset({1, 2, 3}),
        followers=(FollowerView(), FollowerView(2, 1, True), FollowerView(1, 1, True)),
    )
    cfg = three_brokers({})
    assert hwm_offset(CONCRETE, cfg, leader, 1) == 1  # 3 is in the maximal ISR, has fetched 1
    committed = leader._replace(maximal_isr=frozenset({1, 2}))
    assert hwm_offset(CONCRETE, cfg, committed, 1) == 2
    unknown = leader._replace(followers=(FollowerView(), FollowerView(), FollowerView(1, 1, True)))
    assert hwm_offset(CONCRETE, cfg, unknown, 1) == 0  # a member not heard from holds it at 0
