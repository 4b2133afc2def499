"""The ISR the HWM is computed over (`[rules] hwm_isr`): the Maximal ISR since KIP-497 (2.7.0),
the committed ISR in 2.6 and older, whose leader wrote the ISR to ZooKeeper itself. Under
AlterPartition the older rule lets the HWM pass a follower whose expansion is in flight, and the
controller then commits an ISR member without a committed record: why KIP-497 counts the
pending members."""

from __future__ import annotations

import pytest

from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.completeness import isr_members_complete
from kafkarep.properties.model_files import parse_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from tests.helpers import step


def model(hwm_isr: str) -> ModelConfig:
    """kip966_small's shape: ISR {1,2}, broker 3 out of sync and fenced, one record."""
    return parse_model(
        {
            "cluster": {
                "brokers": 3,
                "replicas": [1, 2, 3],
                "isr": [1, 2],
                "min_isr": 2,
                "fenced": [3],
            },
            "rules": {"elr": True, "pending_isr_on_metadata": "keep-newer", "hwm_isr": hwm_isr},
            "faults": {"fences": 1},
        }
    )


def expansion_in_flight(cfg: ModelConfig) -> ClusterState:
    """Broker 2 holds the record; broker 3, unfenced, fetches from offset 0 at the HWM 0 and the
    leader proposes ISR {1,2,3}; then broker 2's next fetch tells the leader it has the record."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "fetch", 2)
    state = step(cfg, state, "fetch_response", 2)
    state = step(cfg, state, "unfence", 0, 3)
    state = step(cfg, state, "apply_registrations", 1)
    state = step(cfg, state, "fetch", 3)
    assert state.controller.ap_requests[0] is not None  # the expansion, in flight
    return step(cfg, state, "fetch", 2)


def hwm(state: ClusterState) -> int:
    replica = state.broker(1).replica
    assert replica is not None
    return replica.hwm


def test_the_maximal_isr_holds_the_hwm_for_the_joining_follower() -> None:
    cfg = model("maximal")
    state = expansion_in_flight(cfg)
    assert hwm(state) == 0
    state = step(cfg, state, "handle_alter_partition", 0, 1)
    assert state.partition.isr == {1, 2, 3}
    assert state.ghost.true_hwm == 0  # nothing committed that broker 3 lacks
    assert isr_members_complete(cfg, state) is None


def test_the_committed_isr_lets_the_hwm_pass_it_and_the_isr_gains_a_replica_without_it() -> None:
    cfg = model("committed")
    state = expansion_in_flight(cfg)
    assert hwm(state) == 1  # over {1,2}: broker 3's proposal does not count
    state = step(cfg, state, "handle_alter_partition", 0, 1)
    assert state.partition.isr == {1, 2, 3}
    assert isr_members_complete(cfg, state) == "replica 3 in ISR has LEO 0 < true HWM 1"


def test_a_bad_value_is_one_line() -> None:
    with pytest.raises(ModelError, match='hwm_isr must be "maximal" or "committed"'):
        model("isr")


def test_prove_refuses_the_committed_isr() -> None:
    with pytest.raises(AbstractionError, match="Maximal ISR only"):
        Encoding(model("committed"))
