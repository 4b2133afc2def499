"""Administration (`kafkarep/model/actions/admin.py`): reassignments and leader elections."""

from __future__ import annotations

from typing import Any

from kafkarep import rules
from kafkarep.model.actions.admin import BUDGETS, admin_enabled, request
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.symbolic.domain import decided
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import Cluster, spend
from kafkarep.symbolic.transition.controller import commit, metadata
from kafkarep.symbolic.transition.instance import Build, Instance


def admin(enc: Encoding, name: str) -> list[Instance]:
    budget = BUDGETS[name]
    d = Cluster(enc)
    out = []
    targets: tuple[Any, ...] = enc.cfg.targets if name == "reassign" else (None,)
    for target in targets:
        rule, made = request(name, target)

        def guard(sym: ClusterState, _: Term, target: Any = target) -> Term:
            return admin_enabled(d, enc.cfg, sym, name, target)

        def update(sym: ClusterState, _: Term, rule: str = rule, made: Any = made) -> ClusterState:
            sym = spend(sym, budget)
            return commit(enc, sym, decided(getattr(rules, rule)(metadata(enc, sym), made)))

        out.append(Instance(name, CONTROLLER, target, None, guard, update))
    return out


FAMILIES: dict[str, Build] = {
    "reassign": lambda enc: admin(enc, "reassign"),
    "cancel_reassignment": lambda enc: admin(enc, "cancel_reassignment"),
    "elect_preferred": lambda enc: admin(enc, "elect_preferred"),
    "elect_unclean": lambda enc: admin(enc, "elect_unclean"),
}
