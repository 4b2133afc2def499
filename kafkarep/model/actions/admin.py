"""Administrative requests to the controller: reassignment and elections (protocol description
§4; Kafka's `ReplicationControlManager.alterPartitionReassignments` and `electLeaders`). Each is
a fault drawing on its budget, and only a request the controller would turn into a change record
is an action (a rejected or empty one changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kafkarep.model import controller
from kafkarep.model.actions.base import CONTROLLER, Action, Family, partition_changed
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.rules import AlterReassignmentRequest, Changed, Election, ElectLeadersRequest, Outcome


def _request(action: Action) -> tuple[Callable[..., Outcome], Any]:
    if action.name == "reassign":
        return controller.alter_reassignment, AlterReassignmentRequest(action.arg)  # type: ignore[arg-type]
    if action.name == "cancel_reassignment":
        return controller.alter_reassignment, AlterReassignmentRequest(None)
    if action.name == "elect_preferred":
        return controller.elect_leaders, ElectLeadersRequest(Election.PREFERRED)
    return controller.elect_leaders, ElectLeadersRequest(Election.UNCLEAN)


BUDGETS = {
    "reassign": "reassignments",
    "cancel_reassignment": "reassignment_cancels",
    "elect_preferred": "preferred_elections",
    "elect_unclean": "unclean_elections",
}


def _actions(name: str) -> Callable[[ModelConfig, ClusterState], Iterator[Action]]:
    def actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
        if getattr(state.budget, BUDGETS[name]) == 0:
            return
        args: tuple[Any, ...] = cfg.targets if name == "reassign" else (None,)
        for arg in args:
            action = Action(name, CONTROLLER, arg)
            rule, request = _request(action)
            if isinstance(rule(controller.metadata(state, cfg), request), Changed):
                yield action

    return actions


def apply(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    rule, request = _request(action)
    state = state._replace(budget=state.budget.spend(BUDGETS[action.name]))
    return controller.commit(cfg, state, rule(controller.metadata(state, cfg), request))


FAMILIES = (
    Family(
        "reassign",
        _actions("reassign"),
        apply,
        "reassignments",
        "start a reassignment",
        describe=partition_changed,
    ),
    Family(
        "cancel_reassignment",
        _actions("cancel_reassignment"),
        apply,
        "reassignment_cancels",
        "cancel the ongoing reassignment",
        describe=partition_changed,
    ),
    Family(
        "elect_preferred",
        _actions("elect_preferred"),
        apply,
        "preferred_elections",
        "a preferred leader election",
        describe=partition_changed,
    ),
    Family(
        "elect_unclean",
        _actions("elect_unclean"),
        apply,
        "unclean_elections",
        "an unclean leader election on request",
        describe=partition_changed,
    ),
)
