"""Every property clause is total: on any state, including one that breaks other invariants (an
HWM past the LEO, an ISR outside the replicas, a leader that is no broker, a pending proposal on
a follower...), an `always` clause answers None or a witness sentence, a `sometimes` step a
bool, a liveness mask an int; never an exception. A rule change that breaks one invariant must
give the user a counterexample of the property it breaks, not an internal error of another.

The states are reachable states of a few models, corrupted field by field with Hypothesis. The
one structural promise a state keeps is its shape: a non-empty controller log (its last record
is the partition) and one broker per broker id of the model. Every field of the nested
NamedTuples of `kafkarep/model/state.py` is corrupted (`test_every_field_is_corrupted` keeps the
strategies in step with the state)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterator
from functools import cache
from itertools import combinations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    BrokerRegistration,
    BrokerRegistry,
    LeaderRecoveryState,
    PartitionRegistration,
)
from kafkarep.model import actions
from kafkarep.model.actions import Action, data
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import replay_path
from kafkarep.model.state import (
    AlterPartitionResponse,
    Broker,
    Budget,
    ClusterState,
    Controller,
    DelayedFetch,
    FetchResponse,
    FollowerView,
    Ghost,
    PendingAlterPartition,
    Replica,
    Role,
    Status,
)
from kafkarep.properties.base import MaskCheck, StateCheck, StepCheck
from kafkarep.properties.log_matching import stable_prefixes_agree
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.rules import AlterPartitionRequest
from tests.helpers import ROOT, reachable

MODELS = (
    "kip966_small.toml",
    "reassignment.toml",
    "history/v35_last_replica_standing.toml",
    "zookeeper_unclean.toml",
)
CI = bool(os.environ.get("CI"))
FAST = settings(
    max_examples=400,
    deadline=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ALWAYS: list[tuple[str, StateCheck]] = [
    (p.qualified(c), c.check)  # type: ignore[misc]
    for p in properties.ALL
    if p.kind == "always"
    for c in p.clauses
]
SOMETIMES: list[tuple[str, StepCheck]] = [
    (p.name, c.check)  # type: ignore[misc]
    for p in properties.ALL
    if p.kind == "sometimes"
    for c in p.clauses
]
MASKS: list[tuple[str, MaskCheck]] = [
    (p.qualified(c), c.check)  # type: ignore[misc]
    for p in properties.LIVENESS
    for c in p.clauses
]


# --- reachable states --------------------------------------------------------------------------


@cache
def sample(model: str) -> tuple[ModelConfig, tuple[ClusterState, ...]]:
    cfg = load_model(ROOT / "models" / model)
    return cfg, tuple(dict.fromkeys(reachable(cfg, walks=8, length=30, seed=3, levels=2)))


# --- corrupting one field ----------------------------------------------------------------------

ids = st.integers(-2, 6)  # broker ids: in range, 0, -1 (no leader), beyond the model's brokers
small = st.integers(-2, 8)  # offsets, epochs, counts
values = st.integers(-1, 4)  # value ids, 0 and below included
id_sets = st.frozensets(ids, max_size=4)
logs = st.lists(st.tuples(st.integers(-1, 4), values), max_size=6).map(tuple)
pairs = st.none() | st.tuples(small, small)


def registrations() -> st.SearchStrategy[PartitionRegistration]:
    return st.builds(
        PartitionRegistration,
        replicas=st.lists(ids, max_size=5).map(tuple),
        isr=id_sets,
        leader=ids,
        leader_epoch=small,
        partition_epoch=small,
        elr=id_sets,
        last_known_elr=id_sets,
        adding=id_sets,
        removing=id_sets,
        leader_recovery_state=st.sampled_from(LeaderRecoveryState),
    )


PENDING = st.builds(PendingAlterPartition, isr=id_sets, partition_epoch=small)
REGISTRATION_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "replicas": st.lists(ids, max_size=5).map(tuple),
    "isr": id_sets,
    "leader": ids,
    "leader_epoch": small,
    "partition_epoch": small,
    "elr": id_sets,
    "last_known_elr": id_sets,
    "adding": id_sets,
    "removing": id_sets,
    "leader_recovery_state": st.sampled_from(LeaderRecoveryState),
}
REPLICA_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "log": logs,
    "hwm": small,
    "role": st.sampled_from(Role),
    "view": st.none() | registrations(),
    "maximal_isr": id_sets,
    "leso": small,
    "followers": st.lists(
        st.builds(
            FollowerView,
            leo=small,
            broker_epoch=small,
            fetched_this_epoch=st.booleans(),
            caught_up=st.booleans(),
        ),
        max_size=5,
    ).map(tuple),
    "pending": st.none() | PENDING,
    "unacked_from": small,
    "eligible": st.lists(small, max_size=5).map(tuple),
    "recovery_point": small,
    "min_isr": small,
    "truncating": st.booleans(),
}
BROKER_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "status": st.sampled_from(Status),
    "epoch": small,
    "incarnation": small,
    "applied_epoch": small,
    "initialised": st.booleans(),
    "replica": st.none() | st.builds(Replica, log=logs, hwm=small, role=st.sampled_from(Role)),
    "fetch_response": st.none()
    | st.builds(
        FetchResponse,
        leader=ids,
        leader_epoch=small,
        fetch_offset=small,
        hwm=small,
        entries=logs,
        diverging=pairs,
    ),
    "ap_response": st.none()
    | st.builds(
        AlterPartitionResponse,
        request=PENDING,
        error=st.sampled_from(Error),
        leader=ids,
        leader_epoch=small,
        partition_epoch=small,
        isr=id_sets,
    ),
    "delayed_fetch": st.none()
    | st.builds(
        DelayedFetch,
        leader=ids,
        leader_incarnation=small,
        leader_epoch=small,
        fetch_offset=small,
        last_epoch=small,
        broker_epoch=small,
    ),
}
CONTROLLER_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "log": st.lists(registrations(), min_size=1, max_size=4).map(tuple),
    "eligible": st.lists(st.lists(small, max_size=4).map(tuple), max_size=4).map(tuple),
    "brokers": st.lists(
        st.tuples(
            ids,
            st.builds(
                BrokerRegistration,
                registered=st.booleans(),
                fenced=st.booleans(),
                in_controlled_shutdown=st.booleans(),
                epoch=small,
                incarnation=small,
            ),
        ),
        max_size=5,
    ).map(lambda entries: BrokerRegistry(tuple(entries))),  # unsorted, repeated ids too
    "ap_requests": st.lists(
        st.none()
        | st.builds(
            AlterPartitionRequest,
            broker=ids,
            leader_epoch=small,
            partition_epoch=small,
            new_isr=st.lists(st.tuples(ids, small), max_size=4).map(tuple),
        ),
        max_size=5,
    ).map(tuple),
    "lag": small,
    "min_isr": st.lists(small, max_size=4).map(tuple),
    "min_isr_now": small,
}
GHOST_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "committed": st.lists(values, max_size=5).map(tuple),
    "pos_acked": st.frozensets(values, max_size=4),
    "neg_acked": st.frozensets(values, max_size=4),
    "received": st.lists(st.integers(-1, 15), max_size=5).map(tuple),
    "ack_below_min_isr": pairs,
    "hwm_below_min_isr": pairs,
}
BUDGET_FIELDS: dict[str, st.SearchStrategy[Any]] = {name: small for name in Budget._fields}


Corruption = Callable[[st.DrawFn, ClusterState], ClusterState]


def _field(draw: st.DrawFn, value: Any, fields: dict[str, st.SearchStrategy[Any]]) -> Any:
    name = draw(st.sampled_from(sorted(fields)))
    return value._replace(**{name: draw(fields[name])})


def _broker(draw: st.DrawFn, state: ClusterState) -> int:
    return draw(st.integers(1, len(state.brokers)))


def replica_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    b = _broker(draw, state)
    broker = state.broker(b)
    replica = _field(draw, broker.replica or Replica(), REPLICA_FIELDS)
    return state.with_broker(b, broker._replace(replica=replica))


def broker_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    b = _broker(draw, state)
    return state.with_broker(b, _field(draw, state.broker(b), BROKER_FIELDS))


def registration_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    """A field of one record of the controller's log, mostly the partition (its last)."""
    log = list(state.controller.log)
    index = draw(st.sampled_from([-1, -1, *range(len(log))]))
    log[index] = _field(draw, log[index], REGISTRATION_FIELDS)
    return state._replace(controller=state.controller._replace(log=tuple(log)))


def controller_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    return state._replace(controller=_field(draw, state.controller, CONTROLLER_FIELDS))


def ghost_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    return state._replace(ghost=_field(draw, state.ghost, GHOST_FIELDS))


def budget_field(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    return state._replace(budget=_field(draw, state.budget, BUDGET_FIELDS))


# --- breaking an invariant the rules keep (what a changed rule breaks first) -------------------


def _replica(draw: st.DrawFn, state: ClusterState) -> tuple[int, Replica]:
    b = _broker(draw, state)
    return b, state.broker(b).replica or Replica()


def _set_replica(state: ClusterState, b: int, replica: Replica) -> ClusterState:
    return state.with_broker(b, state.broker(b)._replace(replica=replica))


def _set_partition(state: ClusterState, **fields: Any) -> ClusterState:
    log = state.controller.log
    partition = log[-1]._replace(**fields)
    return state._replace(controller=state.controller._replace(log=(*log[:-1], partition)))


def hwm_past_leo(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    b, replica = _replica(draw, state)
    return _set_replica(state, b, replica._replace(hwm=replica.leo + draw(st.integers(1, 3))))


def log_cut_below_hwm(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    """A log loses records its HWM still covers (the leader's log emptied, among others)."""
    b, replica = _replica(draw, state)
    keep = draw(st.integers(0, max(replica.leo - 1, 0)))
    return _set_replica(state, b, replica._replace(log=replica.log[:keep]))


def leader_not_a_broker(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    leader = draw(st.sampled_from([0, -2, len(state.brokers) + 1, len(state.brokers) + 3]))
    return _set_partition(state, leader=leader, isr=state.partition.isr | {leader})


def leader_not_a_replica(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    p = state.partition
    return _set_partition(state, replicas=tuple(r for r in p.replicas if r != p.leader))


def members_out_of_range(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    """An ISR or ELR member, a replica or a reassignment target that is no broker."""
    p = state.partition
    stranger = draw(st.sampled_from([0, -2, len(state.brokers) + 1, len(state.brokers) + 4]))
    field = draw(st.sampled_from(["isr", "elr", "last_known_elr", "adding", "removing"]))
    changed = _set_partition(state, **{field: getattr(p, field) | {stranger}})
    return (
        _set_partition(changed, replicas=(*p.replicas, stranger))
        if draw(st.booleans())
        else changed
    )


def pending_on_a_follower(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    b, replica = _replica(draw, state)
    pending = draw(PENDING)
    return _set_replica(state, b, replica._replace(role=Role.FOLLOWER, pending=pending))


def unacked_past_leo(draw: st.DrawFn, state: ClusterState) -> ClusterState:
    b, replica = _replica(draw, state)
    return _set_replica(state, b, replica._replace(unacked_from=replica.leo + draw(small)))


CORRUPTIONS: tuple[Corruption, ...] = (
    replica_field,
    replica_field,  # the replicas are what most clauses read
    broker_field,
    registration_field,
    registration_field,
    controller_field,
    ghost_field,
    budget_field,
    hwm_past_leo,
    log_cut_below_hwm,
    leader_not_a_broker,
    leader_not_a_replica,
    members_out_of_range,
    pending_on_a_follower,
    unacked_past_leo,
)


@st.composite
def corrupted(
    draw: st.DrawFn, corruptions: tuple[Corruption, ...] = CORRUPTIONS
) -> tuple[ModelConfig, ClusterState, ClusterState]:
    """A model, one of its reachable states, and that state with one or two fields corrupted."""
    cfg, states = sample(draw(st.sampled_from(MODELS)))
    state = draw(st.sampled_from(states))
    bad = state
    for _ in range(draw(st.integers(1, 2))):
        bad = draw(st.sampled_from(corruptions))(draw, bad)
    return cfg, state, bad


def test_every_field_is_corrupted() -> None:
    assert set(REPLICA_FIELDS) == set(Replica._fields)
    assert set(BROKER_FIELDS) == set(Broker._fields)
    assert set(REGISTRATION_FIELDS) == set(PartitionRegistration._fields)
    assert set(CONTROLLER_FIELDS) == set(Controller._fields)
    assert set(GHOST_FIELDS) == set(Ghost._fields)
    assert set(BUDGET_FIELDS) == set(Budget._fields)
    assert set(ClusterState._fields) == {"controller", "brokers", "ghost", "budget"}


# --- the clauses on corrupted states -----------------------------------------------------------


@FAST
@given(corrupted())
def test_always_clauses_are_total(case: tuple[ModelConfig, ClusterState, ClusterState]) -> None:
    cfg, _, state = case
    for name, check in ALWAYS:
        verdict = check(cfg, state)
        assert verdict is None or (isinstance(verdict, str) and verdict), name


@FAST
@given(corrupted())
def test_sometimes_steps_are_total(case: tuple[ModelConfig, ClusterState, ClusterState]) -> None:
    cfg, before, after = case
    for action in (Action("crash", 1), Action("fetch", 2), Action("cancel_reassignment", 0)):
        for name, check in SOMETIMES:
            assert isinstance(check(cfg, before, action, after), bool), name
            assert isinstance(check(cfg, after, action, before), bool), name


@FAST
@given(corrupted())
def test_liveness_masks_are_total(case: tuple[ModelConfig, ClusterState, ClusterState]) -> None:
    cfg, _, state = case
    for name, check in MASKS:
        assert isinstance(check(cfg, state), int), name


# --- Log Matching where a log is shorter than its HWM ------------------------------------------


def _slices_agree(state: ClusterState) -> bool:
    """The clause's verdict as first written: the logs cut at both HWMs are equal."""
    stable = [b.replica for b in state.brokers if b.replica is not None and b.replica.hwm > 0]
    return all(
        a.log[: min(a.hwm, b.hwm)] == b.log[: min(a.hwm, b.hwm)] for a, b in combinations(stable, 2)
    )


@FAST
@given(corrupted((replica_field, hwm_past_leo, log_cut_below_hwm)))
def test_log_matching_keeps_its_verdict(
    case: tuple[ModelConfig, ClusterState, ClusterState],
) -> None:
    """The same verdict as the logs cut at both HWMs compared, on every state: only the witness
    of a log shorter than the bound changed (it used to be an IndexError)."""
    cfg, _, state = case
    assert (stable_prefixes_agree(cfg, state) is None) == _slices_agree(state)


def _with_replicas(state: ClusterState, *replicas: Replica) -> ClusterState:
    for b, replica in enumerate(replicas, 1):
        state = state.with_broker(b, state.broker(b)._replace(replica=replica))
    return state


def test_a_missing_record_below_both_hwms_is_a_violation() -> None:
    cfg, states = sample("kip966_small.toml")
    state = _with_replicas(
        states[0],
        Replica(log=((1, 1), (1, 2)), hwm=2),
        Replica(log=((1, 1),), hwm=2),  # its LEO 1 < its HWM 2
        Replica(log=(), hwm=0),
    )
    assert stable_prefixes_agree(cfg, state) == (
        "replica 2 has no record at offset 1 below both HWMs (its LEO 1 < its HWM 2); "
        "replica 1 has (epoch, value) (1, 2)"
    )


def test_a_log_shorter_than_its_hwm_alone_is_no_log_matching_violation() -> None:
    """Replicas that hold the same records, both short of their HWMs, do not disagree: that their
    logs end below their HWMs is another invariant's business."""
    cfg, states = sample("kip966_small.toml")
    short = Replica(log=((1, 1),), hwm=3)
    state = _with_replicas(states[0], short, short, Replica(log=((1, 1), (1, 2)), hwm=1))
    assert stable_prefixes_agree(cfg, state) is None


def test_differing_records_are_still_named() -> None:
    cfg, states = sample("kip966_small.toml")
    state = _with_replicas(
        states[0], Replica(log=((1, 1),), hwm=1), Replica(log=((2, 1),), hwm=1), Replica()
    )
    assert stable_prefixes_agree(cfg, state) == (
        "replicas 1 and 2 differ at offset 0 below both HWMs: (epoch, value) (1, 1) vs (2, 1)"
    )


# --- a rule change that lets a follower's HWM pass its log end ---------------------------------


def appended_past_leo(d: Any, cfg: ModelConfig, replica: Any, response: Any) -> Any:
    """`data._appended` with a seeded bug: the follower adopts the leader's HWM whole, not
    bounded by its own log end (`min(response.hwm, len(log))`)."""
    return d.append_entries(replica, response)._replace(hwm=response.hwm)


def fetch_response_past_leo(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """`data.fetch_response` with that bug."""
    real = data._appended
    data._appended = appended_past_leo
    try:
        return data.fetch_response(cfg, state, action)
    finally:
        data._appended = real


@pytest.fixture
def follower_hwm_past_leo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    families = tuple(
        f._replace(apply=fetch_response_past_leo) if f.name == "fetch_response" else f
        for f in actions.FAMILIES
    )
    monkeypatch.setattr(actions, "FAMILIES", families)
    monkeypatch.setattr(actions, "BY_NAME", {f.name: f for f in families})
    actions.active.cache_clear()  # it holds the families of each model it was asked about
    yield
    monkeypatch.undo()
    actions.active.cache_clear()


def test_a_follower_hwm_past_its_log_end_is_a_counterexample(follower_hwm_past_leo: None) -> None:
    """The user's case: kip966_small.toml with a partial fetch, and a rule change that lets a
    follower take the leader's HWM beyond its own log end. The explorer reports Log Matching
    broken, with a witness, where it used to fail with an IndexError in the clause."""
    raw = tomllib.loads((ROOT / "models" / "kip966_small.toml").read_text())
    raw["faults"]["partial_fetches"] = 1
    raw["check"]["liveness"] = False
    raw["expect"] = {}
    cfg = parse_model(raw, "kip966_small_partial_fetch.toml")
    result = Explorer(cfg, properties.ALL, Limits(), stop_when_found=["log_matching"]).run()
    found = result.violations["log_matching.stable_prefix"]
    assert found.witness is not None
    assert "has no record at offset 0 below both HWMs" in found.witness
    final = replay_path(cfg, found.path).final
    assert stable_prefixes_agree(cfg, final) == found.witness
    assert any(b.replica is not None and b.replica.hwm > b.replica.leo for b in final.brokers)
