"""A change of min.insync.replicas (`[faults] min_isr_changes`): since Kafka 4.0.0 (KAFKA-16540)
the controller clears the ELR in the same batch; the leader follows the new MinISR once its
broker applied the configuration record (docs/models.md, "Faults")."""

from __future__ import annotations

from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from tests.helpers import ROOT, step

HISTORY = ROOT / "models" / "history" / "kafka_16540_min_isr_change_keeps_elr.toml"


def model(**rules: Any) -> ModelConfig:
    """Two brokers under MinISR 2 with ELR; fencing the leader puts it in the ELR."""
    return parse_model(
        {
            "cluster": {"brokers": 2, "replicas": [1, 2], "isr": [1, 2], "min_isr": 2},
            "rules": {"metadata_version": "4.0", "elr": True, **rules},
            "faults": {"fences": 2, "min_isr_changes": 1},
        }
    )


def fenced_leader(cfg: ModelConfig) -> ClusterState:
    """Broker 1 fenced: broker 2 leads alone, broker 1 in the ELR, both applied it."""
    state = step(cfg, initial_state(cfg), "fence", 0, 1)
    state = step(cfg, state, "apply_metadata", 1, 1)
    state = step(cfg, state, "apply_metadata", 2, 1)
    assert (state.partition.isr, state.partition.elr) == ({2}, {1})
    return state


def leader_min_isr(state: ClusterState, broker: int) -> int:
    replica = state.broker(broker).replica
    assert replica is not None
    return replica.min_isr


def can(cfg: ModelConfig, state: ClusterState, name: str, actor: int) -> bool:
    return any(a.name == name and a.actor == actor for a, _ in successors(cfg, state))


def test_a_change_clears_the_elr_in_a_partition_record_since_4_0() -> None:
    cfg = model()
    before = fenced_leader(cfg)
    after = step(cfg, before, "change_min_isr", 0, 1)
    p, q = before.partition, after.partition
    assert (after.partition.elr, after.partition.last_known_elr) == (set(), set())
    assert q.partition_epoch == p.partition_epoch + 1
    assert (q.leader, q.leader_epoch, q.isr) == (p.leader, p.leader_epoch, p.isr)
    assert after.controller.min_isr_now == 1
    assert after.controller.min_isr[-1] == 1  # the clearing record carries the new MinISR


def test_3_9_keeps_the_elr_and_commits_no_partition_record() -> None:
    cfg = model(kafka_version="3.9")
    before = fenced_leader(cfg)
    after = step(cfg, before, "change_min_isr", 0, 1)
    assert after.partition is before.partition
    assert after.partition.elr == {1}
    assert after.controller.min_isr_now == 1


def test_the_leader_follows_the_new_min_isr_once_its_broker_applied_it() -> None:
    """Under MinISR 2 the lone leader refuses acks=all writes; the controller's change alone
    does not let it write, its broker applying the record does."""
    cfg = model(kafka_version="3.9")  # no partition record: the leader applies the change alone
    state = step(cfg, fenced_leader(cfg), "change_min_isr", 0, 1)
    assert leader_min_isr(state, 2) == 2
    assert not can(cfg, state, "produce", 2)
    state = step(cfg, state, "apply_min_isr", 2)
    assert leader_min_isr(state, 2) == 1
    assert not can(cfg, state, "apply_min_isr", 2)
    state = step(cfg, state, "produce", 2)
    assert state.broker(2).replica.hwm == 1  # type: ignore[union-attr]


def test_a_broker_applying_the_clearing_record_takes_the_new_min_isr_with_it() -> None:
    cfg = model()
    state = step(cfg, fenced_leader(cfg), "change_min_isr", 0, 1)
    assert not can(cfg, state, "apply_min_isr", 2)  # not caught up: the record comes first
    state = step(cfg, state, "apply_metadata", 2, len(state.controller.log) - 1)
    assert leader_min_isr(state, 2) == 1


def test_a_change_offers_every_other_effective_value() -> None:
    cfg = model()
    values = [a.arg for a, _ in successors(cfg, initial_state(cfg)) if a.name == "change_min_isr"]
    assert values == [1]  # 2 is the current one; 3 is above the two replicas


def test_the_history_pair_differs_in_the_fix_alone() -> None:
    """KAFKA-16540 at its releases: 3.9.2 keeps the ELR and loses an acknowledged write; 4.0.2
    holds, and 4.0.2 with the clearing switched off explores 3.9.2's states and violations."""
    bug = load_model(HISTORY)
    fixed = load_model(HISTORY.with_name("kafka_16540_min_isr_change_keeps_elr_fixed.toml"))
    undone = fixed._replace(
        options=fixed.options._replace(disabled_guards=frozenset({"min_isr_change.clears_elr"}))
    )
    runs = [Explorer(cfg, properties.ALL, Limits(max_depth=12)).run() for cfg in (bug, undone)]
    assert runs[0].distinct_states == runs[1].distinct_states == 10954
    found = [{n: d.depth for n, d in r.violations.items()} for r in runs]
    assert found[0] == found[1]
    assert found[0]["no_committed_record_lost.acked_writes"] == 12
    assert found[0]["metadata.elr_empty_at_min_isr"] == 2
    assert Explorer(fixed, properties.ALL, Limits(max_depth=12)).run().violations == {}


def test_the_fix_holds_where_the_bug_loses_a_write() -> None:
    """The seeded bug: the same bounds with the clearing on find no violation to depth 12."""
    fixed = load_model(ROOT / "models" / "faults" / "min_isr_change.toml")
    result = Explorer(fixed, properties.ALL, Limits(max_depth=12)).run()
    assert result.violations == {}


def test_a_change_with_a_lagging_controller_is_refused() -> None:
    with pytest.raises(ModelError, match="min_isr_changes cannot be combined"):
        parse_model(
            {
                "cluster": {"brokers": 2, "replicas": [1, 2], "isr": [1, 2]},
                "faults": {"min_isr_changes": 1, "controller_failovers": 1},
            }
        )


def test_prove_refuses_a_model_with_min_isr_changes() -> None:
    with pytest.raises(AbstractionError, match="min_isr_changes"):
        Encoding(model())
