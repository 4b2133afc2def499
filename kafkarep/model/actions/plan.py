"""The controller drives a KIP-435 reassignment plan through the KRaft rules.

A model with a `[plan]` target runs it. While the partition does not hold the target, the
controller computes the next step with `kip435.next_step` from its own metadata (replicas, ISR,
MinISR, `parallel_replicas`) and starts it as a KRaft reassignment (`alter_reassignment`,
Kafka's `ReplicationControlManager.changePartitionReassignment`). The step's catch-up and
completion are the protocol's own actions: the new replicas fetch, the leader's AlterPartition
takes them into the ISR, and the change builder completes the reassignment
(`PartitionChangeBuilder.completeReassignmentIfNeeded`); only then is the next step computed. A
step that must wait (READING_MIN_ISR_FLOOR) is no action. Once a step has made the new preferred
leader the first replica, the controller elects it with a KRaft preferred election
(`ReplicationControlManager.electLeaders`) before the next step (KIP-435: "in the first step
we'll elect the new preferred leader"). Neither spends a budget: they are the
controller's own work, not faults. One partition, so `parallel_partitions` and
`leader_movements` (the batch collector's limits) have nothing to choose between here.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import NamedTuple

from kafkarep.model import controller
from kafkarep.model.actions.base import CONTROLLER, Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.planner.kip435 import next_step
from kafkarep.rules import AlterReassignmentRequest, Changed, Election, ElectLeadersRequest

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
    min_isr = state.controller.min_isr_now
    step = next_step(plan.target, p.replicas, p.isr, min_isr, plan.parallel_replicas)
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
