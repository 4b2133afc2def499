"""The controller drives a KIP-435 reassignment plan (seed 002) through the KRaft rules.

A model with a `[plan]` target runs it. While the partition does not hold the target, the
controller computes the next step with `kip435.next_step` from its own metadata (replicas, ISR,
MinISR, `parallel_replicas`) and starts it as a KRaft reassignment (`alter_reassignment`, R3.1).
The step's catch-up and completion are the protocol's own actions: the new replicas fetch, the
leader's AlterPartition takes them into the ISR, and the change builder completes the
reassignment (R1.1); only then is the next step computed. A step that must wait (READING_MIN_ISR_
FLOOR) is no action. Once a step has made the new preferred leader the first replica, the
controller elects it with a KRaft preferred election (R4) before the next step (KIP-435: "in the
first step we'll elect the new preferred leader"). Neither spends a budget: they are the
controller's own work, not faults. One partition, so `parallel_partitions` and
`leader_movements` (the batch collector's limits) have nothing to choose between here.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

from kafkarep.model import controller
from kafkarep.model.actions.base import CONTROLLER, Action, Family
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.state import ClusterState
from kafkarep.rules import AlterReassignmentRequest, Changed, Election, ElectLeadersRequest
from kafkarep.rules.kip435 import next_step

PREFERRED = ElectLeadersRequest(Election.PREFERRED)


class PlanSettings(NamedTuple):
    target: tuple[int, ...]
    parallel_replicas: int


@cache
def settings(cfg: ModelConfig) -> PlanSettings | None:
    target = cfg.setting("plan", "target")
    if target is None:
        return None
    return PlanSettings(tuple(target), int(cfg.setting("plan", "parallel_replicas", 1)))


def check_settings(section: dict[str, Any], broker_ids: tuple[int, ...]) -> None:
    """Validate a model's [plan] section (called when the model file is loaded)."""
    target = section.get("target")
    if target is not None:
        if not isinstance(target, list) or not target:
            raise ModelError("[plan] target must be a non-empty list of broker ids")
        for broker in target:
            if not isinstance(broker, int) or isinstance(broker, bool) or broker not in broker_ids:
                raise ModelError(
                    f"[plan] target: unknown broker id {broker!r}; brokers are "
                    f"{broker_ids[0]}..{broker_ids[-1]}"
                )
        if len(set(target)) != len(target):
            raise ModelError("[plan] target lists a broker twice")
    for key in ("parallel_replicas", "parallel_partitions", "leader_movements"):
        value = section.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ModelError(f"[plan] {key} must be an integer of at least 1")


def _underway(cfg: ModelConfig, state: ClusterState) -> PlanSettings | None:
    """The plan, when the controller may act on it: unfinished, and no step in flight."""
    if not cfg.engine_settings:
        return None  # most models: no [plan], and no hashing of the whole config per state
    plan = settings(cfg)
    p = state.partition
    if plan is None or p.reassignment_in_progress or p.replicas == plan.target:
        return None
    return plan


def _has_plan(cfg: ModelConfig) -> bool:
    return cfg.setting("plan", "target") is not None


def _election_due(cfg: ModelConfig, state: ClusterState, plan: PlanSettings) -> bool:
    p = state.partition
    if p.replicas[0] != plan.target[0] or p.leader == p.replicas[0]:
        return False
    outcome = controller.elect_leaders(controller.metadata(state, cfg), PREFERRED)
    return isinstance(outcome, Changed)


def elect_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    plan = _underway(cfg, state)
    if plan is not None and _election_due(cfg, state, plan):
        yield Action("plan_elect_preferred", CONTROLLER)


def elect(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    outcome = controller.elect_leaders(controller.metadata(state, cfg), PREFERRED)
    return controller.commit(cfg, state, outcome)


def step_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    plan = _underway(cfg, state)
    if plan is None or _election_due(cfg, state, plan):
        return
    p = state.partition
    step = next_step(plan.target, p.replicas, p.isr, cfg.min_isr, plan.parallel_replicas)
    if step is None or step.waits:
        return
    request = AlterReassignmentRequest(step.target)
    if isinstance(controller.alter_reassignment(controller.metadata(state, cfg), request), Changed):
        yield Action("plan_step", CONTROLLER, step.target)


def step(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    request = AlterReassignmentRequest(action.arg)  # type: ignore[arg-type]
    outcome = controller.alter_reassignment(controller.metadata(state, cfg), request)
    return controller.commit(cfg, state, outcome)


FAMILIES = (
    Family(
        "plan_elect_preferred",
        elect_actions,
        elect,
        None,
        "the controller elects the plan's new preferred leader",
        _has_plan,
    ),
    Family(
        "plan_step",
        step_actions,
        step,
        None,
        "the controller starts the next KIP-435 step",
        _has_plan,
    ),
)
