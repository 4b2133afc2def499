"""A leader's handling of a fetch whose logs diverge (KAFKA-13141): since 2.8.1 and 3.0.0 it
answers with the diverging epoch and records nothing; 2.8.0's leader recorded the follower at
its fetch offset, and could propose it for the ISR with a log that differs below the HWM
(`leader_counts_diverging_fetch`; models/history/kafka_13141_diverging_fetch_counted.toml)."""

from __future__ import annotations

import pytest

from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.completeness import isr_members_complete
from kafkarep.properties.model_files import parse_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from tests.helpers import step


def model(counts: bool) -> ModelConfig:
    return parse_model(
        {
            "cluster": {"brokers": 2, "replicas": [1, 2], "isr": [1, 2], "records": 2},
            "rules": {"leader_counts_diverging_fetch": counts},
            "faults": {"fences": 1},
        }
    )


def diverged(cfg: ModelConfig) -> ClusterState:
    """Broker 1 appends record 1 in epoch 1 and is fenced; broker 2 leads alone and commits
    record 2 at the same offset in epoch 2; broker 1 is unfenced and fetches from offset 1."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "fence", 0, 1)
    state = step(cfg, state, "apply_metadata", 1, 1)
    state = step(cfg, state, "apply_metadata", 2, 1)
    state = step(cfg, state, "produce", 2)
    assert state.ghost.committed == (2,)
    state = step(cfg, state, "unfence", 0, 1)
    state = step(cfg, state, "apply_registrations", 2)
    state = step(cfg, state, "fetch", 1)
    response = state.broker(1).fetch_response
    assert response is not None and response.diverging == (1, 0)
    return state


def test_the_leader_records_nothing_of_a_diverging_fetch() -> None:
    state = diverged(model(False))
    leader = state.broker(2).replica
    assert leader is not None and leader.followers[0].leo == -1
    assert state.controller.ap_requests[1] is None


def test_2_8_0_counts_it_and_the_diverged_follower_joins_the_isr() -> None:
    cfg = model(True)
    state = diverged(cfg)
    leader = state.broker(2).replica
    assert leader is not None and leader.followers[0].leo == 1
    state = step(cfg, state, "handle_alter_partition", 0, 2)
    assert state.partition.isr == {1, 2}
    assert isr_members_complete(cfg, state) == (
        "replica 1 in ISR has value 1 at offset 0, where the committed value is 2"
    )


def test_prove_refuses_it() -> None:
    with pytest.raises(AbstractionError, match="leader_counts_diverging_fetch"):
        Encoding(model(True))
