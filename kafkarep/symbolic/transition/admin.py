"""Administration (`kafkarep/model/actions/admin.py`): reassignments and leader elections."""

from __future__ import annotations

from typing import Any

from kafkarep.model.actions.admin import admin_enabled, admin_step
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import Cluster
from kafkarep.symbolic.transition.instance import Build, Instance


def admin(enc: Encoding, name: str) -> list[Instance]:
    d = Cluster(enc)
    out = []
    targets: tuple[Any, ...] = enc.cfg.targets if name == "reassign" else (None,)
    for target in targets:

        def guard(sym: ClusterState, _: Term, target: Any = target) -> Term:
            return admin_enabled(d, enc.cfg, sym, name, target)

        def update(sym: ClusterState, _: Term, target: Any = target) -> ClusterState:
            return admin_step(d, enc.cfg, sym, name, target)

        out.append(Instance(name, CONTROLLER, target, None, guard, update))
    return out


FAMILIES: dict[str, Build] = {
    "reassign": lambda enc: admin(enc, "reassign"),
    "cancel_reassignment": lambda enc: admin(enc, "cancel_reassignment"),
    "elect_preferred": lambda enc: admin(enc, "elect_preferred"),
    "elect_unclean": lambda enc: admin(enc, "elect_unclean"),
}
