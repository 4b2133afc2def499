"""Broker lifecycle (`kafkarep/model/actions/lifecycle.py`): fencing, unfencing, controlled
shutdown, crashes and restarts. Each step's condition and what it does are the model's own,
run on the prover's domain (`Cluster`)."""

from __future__ import annotations

from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.actions.lifecycle import (
    STOPS,
    controlled_shutdown_enabled,
    controlled_shutdown_step,
    fence_enabled,
    fence_step,
    restart_enabled,
    restart_step,
    shut_down,
    shutdown_complete_enabled,
    shutdown_complete_step,
    shutdown_enabled,
    unfence_enabled,
    unfence_step,
)
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import (
    ClusterState,
)
from kafkarep.symbolic.transition.cluster import Cluster
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker


def fence(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return fence_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return fence_step(d, enc.cfg, sym, broker)

    return [Instance("fence", CONTROLLER, broker, None, guard, update)]


def unfence(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return unfence_enabled(d, enc.cfg, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return unfence_step(d, enc.cfg, sym, broker)

    return [Instance("unfence", CONTROLLER, broker, None, guard, update)]


def controlled_shutdown(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return controlled_shutdown_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return controlled_shutdown_step(d, enc.cfg, sym, broker)

    return [Instance("controlled_shutdown", broker, None, None, guard, update)]


def shutdown_complete(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return shutdown_complete_enabled(sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return shutdown_complete_step(d, enc.cfg, sym, broker)

    return [Instance("shutdown_complete", broker, None, None, guard, update)]


def crash(enc: Encoding, broker: int, lossy: bool) -> list[Instance]:
    d = Cluster(enc)
    name = "crash_lossy" if lossy else "crash"
    budget = STOPS[name][0]

    def guard(sym: ClusterState, _: Term) -> Term:
        return shutdown_enabled(sym, broker, budget)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return shut_down(d, enc.cfg, sym, broker, name)

    return [Instance(name, broker, None, None, guard, update)]


def restart(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return restart_enabled(sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return restart_step(d, enc.cfg, sym, broker)

    return [Instance("restart", broker, None, None, guard, update)]


FAMILIES: dict[str, Build] = {
    "fence": per_broker(fence),
    "unfence": per_broker(unfence),
    "controlled_shutdown": per_broker(controlled_shutdown),
    "shutdown_complete": per_broker(shutdown_complete),
    "crash": per_broker(lambda enc, b: crash(enc, b, lossy=False)),
    "crash_lossy": per_broker(lambda enc, b: crash(enc, b, lossy=True)),
    "restart": per_broker(restart),
}
