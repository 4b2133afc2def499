"""Each family's enabled condition decides what the explorer lists. The explorer asks it only of
the candidates that pass a cheap conjunct of it read on the model's own types
(`kafkarep/model/domain.py`); here every candidate of every family is asked, on every state of
small explorations of models `prove` does not encode too (the ZooKeeper controller, acks=1,
KIP-101's truncation, a lagging controller, a change of MinISR, clean stops), and the two lists
must be the same. A seeded skip that drops an enabled candidate is found."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from kafkarep.model import actions
from kafkarep.model.actions import Action, admin, alter_partition, data, lifecycle, metadata
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE as D
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = [
    "kip966_small.toml",
    "reassignment.toml",
    "zookeeper_unclean.toml",
    "faults/acks_1.toml",
    "faults/clean_stops.toml",
    "faults/lagging_controller.toml",
    "faults/min_isr_change.toml",
    "history/kafka_6361_single_round_truncation.toml",
    "liveness/isr_join_refused.toml",
]

Candidates = Callable[[ModelConfig, ClusterState], Iterator[Action]]


def _every(cfg: ModelConfig, state: ClusterState) -> dict[str, list[Action]]:
    """Every candidate of every family the condition accepts, asked of each."""
    ids = cfg.broker_ids
    out: dict[str, list[Action]] = {}

    def keep(name: str, action: Action, holds: Any) -> None:
        assert isinstance(holds, bool), (name, holds)
        if holds:
            out.setdefault(name, []).append(action)

    for b in ids:
        keep("produce", Action("produce", b), data.produce_enabled(D, cfg, state, b))
        for leader in ids:
            if leader != b:
                holds = data.fetch_enabled(D, cfg, state, b, leader)
                keep("fetch", Action("fetch", b), holds)
        keep(
            "fetch_response", Action("fetch_response", b), data.fetch_response_enabled(D, state, b)
        )
        for size in range(len(ids) + 1):
            for dropped in map(frozenset, combinations(ids, size)):
                holds = alter_partition.shrink_enabled(D, cfg, state, b, dropped)
                keep("shrink_isr", Action("shrink_isr", b, dropped), holds)
        if cfg.hwm_waits_for_caught_up_followers != "none":
            for f in ids:
                if f != b:
                    holds = alter_partition.lag_enabled(D, cfg, state, b, f)
                    keep("replica_lag", Action("replica_lag", b, f), holds)
        keep(
            "handle_alter_partition",
            Action("handle_alter_partition", CONTROLLER, b),
            alter_partition.handle_enabled(D, state, b),
        )
        holds = alter_partition.response_enabled(D, state, b)
        keep("alter_partition_response", Action("alter_partition_response", b), holds)
        for offset, record in enumerate(state.controller.log):
            holds = metadata.apply_enabled(state, b, record.partition_epoch)
            keep("apply_metadata", Action("apply_metadata", b, offset), holds)
        holds = metadata.apply_registrations_enabled(D, cfg, state, b)
        keep("apply_registrations", Action("apply_registrations", b), holds)
        keep("fence", Action("fence", CONTROLLER, b), lifecycle.fence_enabled(D, state, b))
        holds = lifecycle.unfence_enabled(D, cfg, state, b)
        keep("unfence", Action("unfence", CONTROLLER, b), holds)
        holds = lifecycle.controlled_shutdown_enabled(D, state, b)
        keep("controlled_shutdown", Action("controlled_shutdown", b), holds)
        holds = lifecycle.shutdown_complete_enabled(state, b)
        keep("shutdown_complete", Action("shutdown_complete", b), holds)
        for name, budget in (
            ("stop", "uncontrolled_shutdowns"),
            ("crash", "unclean_shutdowns"),
            ("crash_lossy", "lossy_unclean_shutdowns"),
        ):
            keep(name, Action(name, b), lifecycle.shutdown_enabled(state, b, budget))
        keep("restart", Action("restart", b), lifecycle.restart_enabled(state, b))
    for name in admin.BUDGETS:
        for target in cfg.targets if name == "reassign" else (None,):
            holds = admin.admin_enabled(D, cfg, state, name, target)
            keep(name, Action(name, CONTROLLER, target), holds)
    return out


def _listed(
    cfg: ModelConfig, state: ClusterState, shared: set[str], override: dict[str, Candidates]
) -> dict[str, list[Action]]:
    out: dict[str, list[Action]] = {}
    for family in actions.active(cfg):
        if family.name in shared:
            listed = list(override.get(family.name, family.actions)(cfg, state))
            if listed:
                out[family.name] = listed
    return out


def _states(cfg: ModelConfig, limit: int) -> list[ClusterState]:
    seen = {initial_state(cfg)}
    frontier = list(seen)
    while frontier and len(seen) < limit:
        following = []
        for state in frontier:
            for _, after in actions.successors(cfg, state):
                if after not in seen:
                    seen.add(after)
                    following.append(after)
        frontier = following
    return list(seen)


def _compare(
    path: Path, limit: int, override: dict[str, Candidates] | None = None
) -> tuple[int, int]:
    cfg = load_model(path)
    names = {f.name for f in actions.active(cfg)}
    compared = listed_total = 0
    for state in _states(cfg, limit):
        every = {k: v for k, v in _every(cfg, state).items() if k in names}
        listed = _listed(cfg, state, names & SHARED, override or {})
        for name in set(every) | set(listed):
            got, want = (sorted(x.get(name, []), key=repr) for x in (listed, every))
            assert got == want, f"{path.name}: {name} lists {got}, its condition accepts {want}"
            listed_total += len(got)
        compared += 1
    return compared, listed_total


SHARED = {
    "produce",
    "fetch",
    "fetch_response",
    "shrink_isr",
    "replica_lag",
    "handle_alter_partition",
    "alter_partition_response",
    "apply_metadata",
    "apply_registrations",
    "fence",
    "unfence",
    "controlled_shutdown",
    "shutdown_complete",
    "stop",
    "crash",
    "crash_lossy",
    "restart",
    *admin.BUDGETS,
}


@pytest.mark.parametrize("model", MODELS)
def test_the_explorer_lists_what_the_conditions_accept(model: str) -> None:
    compared, listed = _compare(ROOT / "models" / model, 1500)
    assert compared >= 100 and listed > compared


def test_a_skip_that_drops_an_enabled_candidate_is_found() -> None:
    """The seeded bug: the explorer skips a follower that has caught up with its leader's LEO
    (which may still have a HWM to learn, or an ISR to join)."""

    def skipping(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
        for action in data.fetch_actions(cfg, state):
            replica = state.broker(action.actor).replica
            assert replica is not None and replica.view is not None
            leader = state.broker(replica.view.leader).replica
            if leader is None or replica.leo < leader.leo:
                yield action

    with pytest.raises(AssertionError, match="fetch lists"):
        _compare(ROOT / "models" / "kip966_small.toml", 300, {"fetch": skipping})
