"""Administration (`kafkarep/model/actions/admin.py`): reassignments and leader elections."""

from __future__ import annotations

from typing import Any

from kafkarep import rules
from kafkarep.model.actions.admin import BUDGETS
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.rules import AlterReassignmentRequest, Election, ElectLeadersRequest
from kafkarep.symbolic.domain import Outcome, decided
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import spend
from kafkarep.symbolic.transition.controller import commit, metadata
from kafkarep.symbolic.transition.instance import Build, Instance


def admin(enc: Encoding, name: str) -> list[Instance]:
    budget = BUDGETS[name]
    cfg = enc.cfg

    def outcome(sym: ClusterState, target: tuple[int, ...] | None) -> Outcome:
        m = metadata(enc, sym)
        if name in ("reassign", "cancel_reassignment"):
            return decided(rules.alter_reassignment(m, AlterReassignmentRequest(target)))
        election = Election.PREFERRED if name == "elect_preferred" else Election.UNCLEAN
        return decided(rules.elect_leaders(m, ElectLeadersRequest(election)))

    out = []
    targets: tuple[Any, ...] = cfg.targets if name == "reassign" else (None,)
    for target in targets:

        def guard(sym: ClusterState, _: Term, target: Any = target) -> Term:
            return and_(getattr(sym.budget, budget) > 0, outcome(sym, target).changed)

        def update(sym: ClusterState, _: Term, target: Any = target) -> ClusterState:
            sym = spend(sym, budget)
            return commit(enc, sym, outcome(sym, target))

        out.append(Instance(name, CONTROLLER, target, None, guard, update))
    return out


FAMILIES: dict[str, Build] = {
    "reassign": lambda enc: admin(enc, "reassign"),
    "cancel_reassignment": lambda enc: admin(enc, "cancel_reassignment"),
    "elect_preferred": lambda enc: admin(enc, "elect_preferred"),
    "elect_unclean": lambda enc: admin(enc, "elect_unclean"),
}
