"""The network and controller faults (docs/models.md#network-and-controller-faults): a fetch
answered with a prefix of the records, a fetch the network delays past the follower's restart
(KAFKA-15221), and a failover to a controller behind the metadata log (KAFKA-14154). Each step is
driven by hand from a model and checked against what Kafka's code does; the lagging controller's
seeded bug is found by the explorer (tests/test_models.py pins it) and by Hypothesis."""

from __future__ import annotations

from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.kafka.errors import Error
from kafkarep.model.actions import Action, active, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import parse_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from tests.helpers import ROOT, step
from tests.helpers import three_brokers as model


def enabled(cfg: ModelConfig, state: ClusterState) -> list[Action]:
    return [action for action, _ in successors(cfg, state)]


# --- partial fetches ---------------------------------------------------------------------------


def test_a_partial_fetch_carries_a_prefix_and_spends_its_budget() -> None:
    cfg = model({"partial_fetches": 1}, records=2)
    state = step(cfg, step(cfg, initial_state(cfg), "produce", 1), "produce", 1)
    offered = {a.arg for a in enabled(cfg, state) if a.name == "fetch_partial" and a.actor == 2}
    assert offered == {0, 1}  # a strict prefix of the two records, none included
    state = step(cfg, state, "fetch_partial", 2, 1)
    response = state.broker(2).fetch_response
    assert response is not None and len(response.entries) == 1
    assert state.budget.partial_fetches == 0
    state = step(cfg, state, "fetch_response", 2)
    follower = state.broker(2).replica
    assert follower is not None and follower.leo == 1 and follower.hwm <= 1
    assert not [a for a in enabled(cfg, state) if a.name == "fetch_partial"]


def test_without_the_budget_every_fetch_is_whole() -> None:
    cfg = model({}, records=2)
    assert "fetch_partial" not in {f.name for f in active(cfg)}


# --- a fetch delayed across the follower's restart (KAFKA-15221) ----------------------------


def _stale_fetch_arrives(**rules: Any) -> tuple[ClusterState, ClusterState]:
    """Broker 2 fetches the record, sends a fetch the network holds, loses its log in a crash and
    comes back as a new incarnation that the leader's metadata cache shows alive; then the old
    fetch, claiming offset 1 with the old broker epoch, reaches the leader."""
    cfg = model({"delayed_fetches": 1, "lossy_unclean_shutdowns": 1}, **rules)
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, step(cfg, state, "fetch", 2), "fetch_response", 2)
    state = step(cfg, state, "delay_fetch", 2)
    held = state.broker(2).delayed_fetch
    assert held is not None and held.fetch_offset == 1
    state = step(cfg, state, "crash_lossy", 2)
    state = step(cfg, state, "restart", 2)
    assert state.broker(2).epoch > held.broker_epoch
    assert state.broker(2).delayed_fetch == held  # in the network, not in the process
    # broker 2 catches up with the metadata and is unfenced; the leader applies it all
    for _ in range(10):
        names = {(a.name, a.actor, a.arg) for a in enabled(cfg, state)}
        if ("unfence", 0, 2) in names:
            state = step(cfg, state, "unfence", 0, 2)
        elif ("apply_metadata", 2, None) in {(n, b, None) for n, b, _ in names}:
            state = step(cfg, state, "apply_metadata", 2)
        elif ("apply_metadata", 1, None) in {(n, b, None) for n, b, _ in names}:
            state = step(cfg, state, "apply_metadata", 1)
        elif ("apply_registrations", 1, None) in {(n, b, None) for n, b, _ in names}:
            state = step(cfg, state, "apply_registrations", 1)
        else:
            break
    leader = state.broker(1).replica
    assert leader is not None and leader.eligible[1] == state.broker(2).epoch
    return state, step(cfg, state, "delayed_fetch_arrives", 2)


def test_a_fetch_from_a_previous_incarnation_is_refused() -> None:
    before, after = _stale_fetch_arrives()
    assert after.broker(1).replica == before.broker(1).replica
    assert after.broker(2).delayed_fetch is None


def test_without_kafka_15221_the_leader_takes_the_old_incarnations_offset() -> None:
    _, after = _stale_fetch_arrives(disable_guards=["fetch.broker_epoch_not_stale"])
    leader = after.broker(1).replica
    assert leader is not None and leader.followers[1].leo == 1
    new_log = after.broker(2).replica
    assert new_log is not None and new_log.leo == 0  # what broker 2 really has
    # KIP-903's check still keeps it out of the ISR: the fetch's broker epoch is not the cache's
    assert after.controller.ap_requests[0] is None


# --- a failover to a lagging controller (KAFKA-14154) ----------------------------------------


LAGGING = ROOT / "models" / "faults" / "lagging_controller.toml"


@pytest.mark.slow
def test_with_kraft_s_guard_a_failover_changes_nothing() -> None:
    base = parse_model(
        {
            "cluster": {"brokers": 3, "isr": [1, 2], "min_isr": 1, "records": 1},
            "faults": {"fences": 1},
        }
    )
    failing = base._replace(budget=base.budget._replace(controller_failovers=1))
    assert "controller_failover" not in {f.name for f in active(failing)}
    counts = [
        Explorer(cfg, properties.ALL, Limits()).run().distinct_states for cfg in (base, failing)
    ]
    assert counts[0] == counts[1] > 100


def test_a_lagging_controller_answers_not_controller_and_the_leader_retries() -> None:
    from kafkarep.properties.model_files import load_model

    cfg = load_model(LAGGING)
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "shrink_isr", 1, frozenset({2, 3}))
    state = step(
        cfg, step(cfg, state, "handle_alter_partition", 0, 1), "alter_partition_response", 1
    )
    state = step(cfg, state, "controller_failover", 0, 1)
    assert state.controller.decides_from.partition_epoch == state.partition.partition_epoch - 1
    # broker 2 catches up and joins: the leader proposes from a partition epoch the lagging
    # controller has not seen, and is told NOT_CONTROLLER (validateAlterPartitionData)
    state = step(cfg, step(cfg, state, "fetch", 2), "fetch_response", 2)
    state = step(cfg, state, "fetch", 2)
    request = state.controller.ap_requests[0]
    assert request is not None and request.partition_epoch == state.partition.partition_epoch
    state = step(cfg, state, "handle_alter_partition", 0, 1)
    answer = state.broker(1).ap_response
    assert answer is not None and answer.error == Error.NOT_CONTROLLER
    state = step(cfg, state, "alter_partition_response", 1)
    assert state.controller.ap_requests[0] == request  # Partition retries the same proposal
    state = step(cfg, step(cfg, state, "controller_catches_up", 0), "handle_alter_partition", 0, 1)
    assert state.partition.isr == frozenset({1, 2})


def test_prove_refuses_the_faults_it_does_not_encode() -> None:
    lagging = ["controller_failover.replayed_to_epoch_start"]
    for faults, off in (
        ({"partial_fetches": 1}, []),
        ({"delayed_fetches": 1}, []),
        ({"uncontrolled_shutdowns": 1}, []),
        ({"min_isr_changes": 1}, []),
        ({"late_sends": 1}, []),
        ({"controller_failovers": 1}, lagging),
    ):
        cfg = model(faults, disable_guards=off)
        try:
            Encoding(cfg)
        except AbstractionError as error:
            assert "does not encode" in str(error)
        else:
            raise AssertionError(f"{faults} encoded")
    Encoding(model({"controller_failovers": 1}))  # with the guard on, nothing to encode


def test_every_family_the_encoding_lacks_is_one_prove_refuses() -> None:
    """The agreement check compares every family the Z3 relation has; the families it lacks are
    exactly these faults' steps, and a model that can take them is refused above."""
    from kafkarep.model.actions import FAMILIES
    from kafkarep.symbolic.transition import BUILDERS

    lacking = {f.name for f in FAMILIES if f.name not in BUILDERS}
    plan = {f.name for f in FAMILIES if f.name.startswith("plan_")}
    assert lacking - plan == {
        "change_min_isr",
        "apply_min_isr",
        "fetch_partial",
        "delay_fetch",
        "delayed_fetch_arrives",
        "late_send",
        "offsets_for_leader_epoch",
        "controller_failover",
        "controller_catches_up",
        "stop",
    }


# --- a clean shutdown without the controller (`stop`) ------------------------------------------


def _elr_model(kafka_version: str, faults: dict[str, int]) -> ModelConfig:
    return parse_model(
        {
            "cluster": {"brokers": 3, "replicas": [1, 2, 3], "min_isr": 3, "records": 1},
            "rules": {"kafka_version": kafka_version, "metadata_version": "4.0", "elr": True},
            "faults": faults,
        }
    )


@pytest.mark.parametrize(
    ("kafka_version", "fault", "stop", "keeps_elr"),
    [
        ("4.0", {"uncontrolled_shutdowns": 1}, "stop", True),  # KAFKA-18635
        ("3.9", {"uncontrolled_shutdowns": 1}, "stop", False),  # every new incarnation unclean
        ("4.0", {"unclean_shutdowns": 1}, "crash", False),
    ],
)
def test_a_clean_stop_keeps_its_elr_place_from_4_0(
    kafka_version: str, fault: dict[str, int], stop: str, keeps_elr: bool
) -> None:
    """A broker that shuts down cleanly without a controlled shutdown keeps its log and, from
    Kafka 4.0, its ELR membership when it re-registers presenting its last broker epoch; an
    unclean shutdown, or any restart on 3.9, leaves the ELR."""
    cfg = _elr_model(kafka_version, fault)
    state = step(cfg, initial_state(cfg), stop, 2)
    assert state.partition.isr == {1, 3} and state.partition.elr == {2}
    assert state.broker(2).replica is not None
    state = step(cfg, state, "restart", 2)
    assert (state.partition.elr == {2}) is keeps_elr


def test_prove_refuses_a_model_with_clean_stops() -> None:
    with pytest.raises(AbstractionError, match="uncontrolled_shutdowns"):
        Encoding(model({"uncontrolled_shutdowns": 1}))
