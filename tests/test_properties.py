"""What the property declarations claim is true: a clause marked as reading only the controller
gives the same verdict whatever the rest of the state is (engines evaluate it once per
controller state)."""

from __future__ import annotations

import itertools
import random

import pytest

from kafkarep import properties
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import StateCheck, needs_partition_change, reads
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = [
    "history/v35_last_replica_standing.toml",
    "kip966_small.toml",
    "reassignment.toml",
    "zookeeper_unclean.toml",
    "mutations/hwm_below_min_isr.toml",
]


def _states(cfg: ModelConfig, count: int) -> list[ClusterState]:
    first = initial_state(cfg)
    seen, level = {first}, [first]
    while level and len(seen) < count:
        level = [after for state in level for _, after in successors(cfg, state)]
        level = [s for s in level if not (s in seen or seen.add(s))]  # type: ignore[func-returns-value]
    return list(seen)


def _disagreements(cfg: ModelConfig, check: StateCheck, states: list[ClusterState]) -> int:
    """States whose verdict changes when everything but the controller comes from another."""
    rng = random.Random(7)
    count = 0
    for state in states:
        other = rng.choice(states)
        mixed = state._replace(brokers=other.brokers, ghost=other.ghost, budget=other.budget)
        count += (check(cfg, state) is None) != (check(cfg, mixed) is None)
    return count


CONTROLLER_ONLY: list[tuple[str, StateCheck]] = [
    (p.qualified(c), c.check)  # type: ignore[misc]
    for p in properties.ALL
    if p.kind == "always"
    for c in p.clauses
    if reads(c.check) == "controller"
]


def test_some_clauses_are_marked() -> None:
    assert len(CONTROLLER_ONLY) >= 5


@pytest.mark.parametrize("model", MODELS)
def test_controller_only_clauses_read_only_the_controller(model: str) -> None:
    cfg = load_model(ROOT / "models" / model)
    states = _states(cfg, 3000)
    for name, check in CONTROLLER_ONLY:
        assert _disagreements(cfg, check, states) == 0, name


def test_a_clause_that_reads_the_brokers_is_caught() -> None:
    """The check above can fail: a clause that also reads the brokers disagrees on mixed states
    (the test's own seeded bug)."""
    cfg = load_model(ROOT / "models" / "history" / "v35_last_replica_standing.toml")
    states = _states(cfg, 3000)

    def leader_has_written(cfg: ModelConfig, state: ClusterState) -> str | None:
        leader = state.partition.leader
        replica = state.broker(leader).replica if leader > 0 else None
        return "the leader has a record" if replica is not None and replica.log else None

    verdicts = {leader_has_written(cfg, s) is None for s in states}
    assert verdicts == {True, False}  # the clause is not vacuous here
    assert _disagreements(cfg, leader_has_written, states) > 0


def test_every_clause_is_declared_once() -> None:
    names = [p.qualified(c) for p in properties.ALL for c in p.clauses]
    assert len(names) == len(set(names))
    functions = [c.check for p in properties.ALL for c in p.clauses]
    assert all(a is not b for a, b in itertools.combinations(functions, 2))


ON_PARTITION_CHANGE = [
    (p.name, c.check)
    for p in properties.ALL
    if p.kind == "sometimes"
    for c in p.clauses
    if needs_partition_change(c.check)
]


@pytest.mark.parametrize("model", MODELS)
def test_marked_sometimes_steps_are_reached_only_by_a_partition_change(model: str) -> None:
    """Engines skip these on steps that leave the partition as it was; on every step from the
    sampled states that the check accepts, the partition changed."""
    cfg = load_model(ROOT / "models" / model)
    reached = 0
    for state in _states(cfg, 2000):
        for action, after in successors(cfg, state):
            for name, check in ON_PARTITION_CHANGE:
                if check(cfg, state, action, after):  # type: ignore[call-arg]
                    reached += 1
                    assert after.partition != state.partition, name
    assert len(ON_PARTITION_CHANGE) >= 3 and reached > 0


def test_a_step_marked_wrongly_is_caught() -> None:
    """The claim above can be false: 'a record is committed' is reached by a fetch, which leaves
    the partition as it was."""
    cfg = load_model(ROOT / "models" / "kip966_small.toml")
    check = next(c.check for p in properties.ALL for c in p.clauses if p.name == "record_committed")
    steps = [
        (state, after)
        for state in _states(cfg, 2000)
        for action, after in successors(cfg, state)
        if check(cfg, state, action, after)  # type: ignore[call-arg]
    ]
    assert any(after.partition == state.partition for state, after in steps)
