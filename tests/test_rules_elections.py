"""Elections on request (`ReplicationControlManager.electLeaders`, `electLeader`), after
ReplicationControlManagerTest."""

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import NO_LEADER, LeaderRecoveryState
from kafkarep.rules import Changed, Election, ElectLeadersRequest, Rejected, elect_leaders
from tests.helpers import brokers, cluster, reg

PREFERRED = ElectLeadersRequest(Election.PREFERRED)
UNCLEAN = ElectLeadersRequest(Election.UNCLEAN)


def test_preferred_moves_leadership() -> None:
    """testElectPreferredLeaders."""
    p = reg([1, 2, 3], [1, 2, 3], leader=2, partition_epoch=1)
    outcome = elect_leaders(cluster(p, elr_enabled=False), PREFERRED)
    assert isinstance(outcome, Changed)
    assert (outcome.registration.leader, outcome.registration.leader_epoch) == (1, 1)


def test_preferred_not_needed() -> None:
    """`electLeader`: ELECTION_NOT_NEEDED, no record."""
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    assert elect_leaders(cluster(p), PREFERRED) == Rejected(
        Error.ELECTION_NOT_NEEDED, "elections.election_needed"
    )


def test_preferred_not_available() -> None:
    """testElectPreferredLeaders: preferred replica 1 is shutting down."""
    p = reg([1, 2, 3], [2, 3], leader=2)
    m = cluster(p, brokers(shutting_down=(1,)), elr_enabled=False)
    assert elect_leaders(m, PREFERRED) == Rejected(
        Error.PREFERRED_LEADER_NOT_AVAILABLE, "elections.preferred_leader_available"
    )


def test_unclean_not_needed_with_leader() -> None:
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    outcome = elect_leaders(cluster(p), UNCLEAN)
    assert isinstance(outcome, Rejected)
    assert outcome.error == Error.ELECTION_NOT_NEEDED


def test_unclean_elects_live_replica_outside_isr() -> None:
    """testElectUncleanLeaders_WithoutElr[true]."""
    p = reg([1, 2, 3], [1], leader=NO_LEADER, leader_epoch=1, partition_epoch=3)
    m = cluster(p, brokers(fenced=(1, 3)), elr_enabled=False)
    outcome = elect_leaders(m, UNCLEAN)
    assert isinstance(outcome, Changed)
    r = outcome.registration
    assert (r.leader, r.isr, r.leader_recovery_state) == (2, {2}, LeaderRecoveryState.RECOVERING)


def test_unclean_without_live_replica() -> None:
    """testElectUncleanLeaders_WithoutElr[false]: ELIGIBLE_LEADERS_NOT_AVAILABLE."""
    p = reg([1, 2, 3], [1], leader=NO_LEADER, leader_epoch=1, partition_epoch=3)
    m = cluster(p, brokers(fenced=(1, 2, 3)), elr_enabled=False)
    assert elect_leaders(m, UNCLEAN) == Rejected(
        Error.ELIGIBLE_LEADERS_NOT_AVAILABLE, "elections.eligible_leader_available"
    )


def test_bad_election_type() -> None:
    p = reg([1, 2, 3], [1, 2, 3], leader=2)
    outcome = elect_leaders(cluster(p), ElectLeadersRequest(Election.ONLINE))
    assert outcome == Rejected(Error.INVALID_REQUEST, "elections.election_type_supported")
