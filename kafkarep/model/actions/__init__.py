"""The actions of the cluster model, grouped in families, one module per protocol area.

An action family yields its enabled actions for a state, in a fixed order, and applies one.
The explorer takes every family in `FAMILIES` order, so a path is replayable from the action
indices alone; Hypothesis draws from one family at a time; the properties read the states.
Fault families spend from a budget of the model file; healing ones never do (as in kafka-tlaplus's
KIP-966 specification, which limits its perturbations and never its healing actions).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from kafkarep.model.actions import (
    admin,
    alter_partition,
    data,
    failover,
    lifecycle,
    metadata,
    min_isr,
    plan,
)
from kafkarep.model.actions.base import Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState

FAMILIES: tuple[Family, ...] = (
    *data.FAMILIES,
    *alter_partition.FAMILIES,
    *metadata.FAMILIES,
    *lifecycle.FAMILIES,
    *admin.FAMILIES,
    *min_isr.FAMILIES,
    *failover.FAMILIES,
    *plan.FAMILIES,  # last: models without a [plan] keep their action indices
)
BY_NAME = {family.name: family for family in FAMILIES}


@cache
def active(cfg: ModelConfig) -> tuple[Family, ...]:
    """The families a model can ever enable: a fault whose budget starts at 0 never is, nor a
    family that says the model cannot enable it. (Order is kept, so action indices are the same
    as over all of `FAMILIES`.)"""
    return tuple(
        f
        for f in FAMILIES
        if (f.budget is None or getattr(cfg.budget, f.budget) > 0)
        and (f.possible is None or f.possible(cfg))
    )


def enabled(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for family in active(cfg):
        yield from family.actions(cfg, state)


def apply(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return BY_NAME[action.name].apply(cfg, state, action)


def successors(cfg: ModelConfig, state: ClusterState) -> Iterator[tuple[Action, ClusterState]]:
    for family in active(cfg):
        apply_one = family.apply
        for action in family.actions(cfg, state):
            yield action, apply_one(cfg, state, action)


__all__ = ["BY_NAME", "FAMILIES", "Action", "Family", "apply", "enabled", "successors"]
