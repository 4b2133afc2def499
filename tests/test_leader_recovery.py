"""The leader recovery state of KIP-704 on the brokers' side: after an unclean election the
record says RECOVERING, and the new leader counts itself RECOVERED from the moment it leads
(`Partition.makeLeader` since 3.2.0). It adds a follower from its first fetch, and that
AlterPartition, which carries RECOVERED, ends the partition's RECOVERING; there is no separate
"recovered" request (docs/models.md, "The leader's own checks")."""

from __future__ import annotations

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState, PartitionRegistration
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import parse_model
from tests.helpers import step

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING


def unclean_model() -> ModelConfig:
    """Broker 1 alone in the ISR; its fence elects broker 2 from outside it."""
    return parse_model(
        {
            "cluster": {
                "brokers": 3,
                "replicas": [1, 2, 3],
                "isr": [1],
                "leader": 1,
                "min_isr": 1,
                "records": 0,
            },
            "rules": {"unclean_leader_election": True},
            "faults": {"fences": 1},
        }
    )


def names(cfg: ModelConfig, state: ClusterState) -> set[str]:
    return {action.name for action, _ in successors(cfg, state)}


def view_of(state: ClusterState, broker: int) -> PartitionRegistration:
    replica = state.broker(broker).replica
    assert replica is not None and replica.view is not None
    return replica.view


def elected_uncleanly(cfg: ModelConfig) -> ClusterState:
    state = step(cfg, initial_state(cfg), "fence", 0, 1)
    assert (state.partition.leader, state.partition.isr) == (2, {2})
    assert state.partition.leader_recovery_state == RECOVERING
    state = step(cfg, state, "apply_metadata", 2, 1)
    return step(cfg, state, "apply_metadata", 3, 1)


def test_the_new_leader_counts_itself_recovered_while_the_record_says_recovering() -> None:
    cfg = unclean_model()
    state = elected_uncleanly(cfg)
    assert view_of(state, 2).leader_recovery_state == RECOVERED
    assert view_of(state, 3).leader_recovery_state == RECOVERING  # a follower's copy
    assert state.partition.leader_recovery_state == RECOVERING


def test_its_first_expansion_carries_recovered_and_ends_the_recovery() -> None:
    cfg = unclean_model()
    state = step(cfg, elected_uncleanly(cfg), "fetch", 3)
    request = state.controller.ap_requests[1]
    assert request is not None
    assert (request.new_isr, request.leader_recovery_state) == (((2, 1), (3, 1)), RECOVERED)
    state = step(cfg, state, "handle_alter_partition", 0, 2)
    assert state.partition.isr == {2, 3}
    assert state.partition.leader_recovery_state == RECOVERED


def test_no_step_reports_recovery_on_its_own() -> None:
    """No reachable state offers a separate "recovered" AlterPartition: the only request a
    recovering partition's leader sends is an ISR change."""
    cfg = unclean_model()
    state = elected_uncleanly(cfg)
    assert "recover_leader" not in names(cfg, state)
    assert not any(request is not None for request in state.controller.ap_requests)


def test_a_stale_recovering_request_is_still_refused_by_the_controller() -> None:
    """The controller's half is unchanged: a RECOVERING proposal of more than the leader is
    INVALID_REQUEST (`ReplicationControlManager.validateAlterPartitionData`), so the leader's
    RECOVERED is what lets its first expansion through."""
    cfg = unclean_model()
    state = step(cfg, elected_uncleanly(cfg), "fetch", 3)
    request = state.controller.ap_requests[1]
    assert request is not None
    requests = list(state.controller.ap_requests)
    requests[1] = request._replace(leader_recovery_state=RECOVERING)
    state = state._replace(controller=state.controller._replace(ap_requests=tuple(requests)))
    refused = step(cfg, state, "handle_alter_partition", 0, 2)
    assert refused.partition == state.partition
    answer = refused.broker(2).ap_response
    assert answer is not None and answer.error == Error.INVALID_REQUEST
