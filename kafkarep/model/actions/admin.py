"""Administrative requests to the controller: reassignment and elections (protocol description
§4; Kafka's `ReplicationControlManager.alterPartitionReassignments` and `electLeaders`). Each is
a fault drawing on its budget, and only a request the controller would turn into a change record
is an action (a rejected or empty one changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kafkarep.model.actions.base import CONTROLLER, Action, Family, partition_changed
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE, Domain
from kafkarep.model.shapes import ClusterShape
from kafkarep.model.state import ClusterState
from kafkarep.rules import AlterReassignmentRequest, Election, ElectLeadersRequest
from kafkarep.rules.terms import Term, and_

BUDGETS = {
    "reassign": "reassignments",
    "cancel_reassignment": "reassignment_cancels",
    "elect_preferred": "preferred_elections",
    "elect_unclean": "unclean_elections",
}


def request(name: str, target: Any) -> tuple[str, Any]:
    """The controller rule (by its name in `kafkarep.rules`) and the request of an action."""
    if name == "reassign":
        return "alter_reassignment", AlterReassignmentRequest(target)
    if name == "cancel_reassignment":
        return "alter_reassignment", AlterReassignmentRequest(None)
    if name == "elect_preferred":
        return "elect_leaders", ElectLeadersRequest(Election.PREFERRED)
    return "elect_leaders", ElectLeadersRequest(Election.UNCLEAN)


def admin_enabled(d: Domain, cfg: ModelConfig, state: ClusterShape, name: str, target: Any) -> Term:
    """An administrator's request that the controller turns into a change record (a rejected or
    empty one changes nothing), while the model's budget of it lasts."""
    ok = getattr(state.budget, BUDGETS[name]) > 0
    if ok is False:
        return False
    return and_(ok, d.commits(cfg, state, *request(name, target)))


def _actions(name: str) -> Callable[[ModelConfig, ClusterState], Iterator[Action]]:
    def actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
        if getattr(state.budget, BUDGETS[name]) == 0:
            return
        targets: tuple[Any, ...] = cfg.targets if name == "reassign" else (None,)
        for target in targets:
            if admin_enabled(CONCRETE, cfg, state, name, target):
                yield Action(name, CONTROLLER, target)

    return actions


def admin_step(d: Domain, cfg: ModelConfig, state: Any, name: str, target: Any) -> Any:
    """The controller commits what it decides for the request, which spends its budget."""
    return d.commit_rule(cfg, d.spend(state, BUDGETS[name]), *request(name, target))


def apply(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return admin_step(CONCRETE, cfg, state, action.name, action.arg)


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
