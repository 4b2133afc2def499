"""The follower's check of a fetch response's leader epoch (KAFKA-18991): since 3.9.1, 4.0.1 and
4.1.0 a response fetched in an older leader epoch is dropped; 4.0.0 compares the fetch offset
alone (`AbstractFetcherThread.processFetchRequest`, read at 4.0.0, 4.0.1, 3.9.1 and 4.1.0)."""

from __future__ import annotations

from kafkarep.model.actions.data import response_guards
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import parse_model
from tests.helpers import step


def model(kafka_version: str) -> ModelConfig:
    """Metadata version 3.5: an ISR shrink bumps the leader epoch, the leader stays."""
    return parse_model(
        {
            "cluster": {"brokers": 3, "replicas": [1, 2, 3], "isr": [1, 2, 3], "min_isr": 1},
            "rules": {"kafka_version": kafka_version, "metadata_version": "3.5"},
            "faults": {"isr_shrinks": 1},
        }
    )


def stale_response(cfg: ModelConfig) -> ClusterState:
    """Broker 2's fetch of the record is answered in leader epoch 1; then broker 1 drops broker 3
    from the ISR, which bumps the leader epoch, and broker 2 applies that before the answer
    arrives."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "fetch", 2)
    state = step(cfg, state, "shrink_isr", 1, frozenset({3}))
    state = step(cfg, state, "handle_alter_partition", 0, 1)
    assert (state.partition.leader, state.partition.leader_epoch) == (1, 2)
    state = step(cfg, state, "apply_metadata", 2, len(state.controller.log) - 1)
    response = state.broker(2).fetch_response
    assert response is not None and response.leader_epoch == 1 and response.entries
    return state


def test_since_4_0_1_a_response_of_an_older_leader_epoch_is_dropped() -> None:
    cfg = model("4.0.1")
    state = step(cfg, stale_response(cfg), "fetch_response", 2)
    assert state.broker(2).replica.log == ()  # type: ignore[union-attr]


def test_4_0_0_appends_a_response_of_an_older_leader_epoch() -> None:
    cfg = model("4.0.0")
    state = step(cfg, stale_response(cfg), "fetch_response", 2)
    assert state.broker(2).replica.log == ((1, 1),)  # type: ignore[union-attr]


def test_the_check_by_release() -> None:
    with_check = {"3.9.1", "3.9.2", "4.0.1", "4.0.2", "4.1.0", "4.4.0"}
    for release in ("3.9.1", "3.9.2", "4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.4.0"):
        names = {g.name for g in response_guards(model(release))}
        assert ("leader_epoch_matches" in names) == (release in with_check), release
