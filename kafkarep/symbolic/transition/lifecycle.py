"""Broker lifecycle (`kafkarep/model/actions/lifecycle.py`): fencing, unfencing, controlled
shutdown, crashes and restarts."""

from __future__ import annotations

from kafkarep import rules
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.actions.lifecycle import (
    controlled_shutdown_enabled,
    controlled_shutdown_step,
    fence_enabled,
    fence_step,
    restart_enabled,
    shutdown_complete_enabled,
    shutdown_enabled,
    tracks_recovery_point,
    unfence_enabled,
    unfence_step,
)
from kafkarep.rules import FenceBroker, RegisterBroker
from kafkarep.symbolic.domain import decided
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, eq, imin, ite
from kafkarep.symbolic.state import (
    OFFLINE_CLEAN,
    OFFLINE_UNCLEAN,
    RUNNING,
    Broker,
    ClusterState,
    Replica,
)
from kafkarep.symbolic.transition.cluster import Cluster, spend, with_broker
from kafkarep.symbolic.transition.controller import commit, metadata
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker
from kafkarep.symbolic.transition.logs import cut


def fence_now(enc: Encoding, sym: ClusterState, broker: int) -> ClusterState:
    return commit(enc, sym, decided(rules.fence_broker(metadata(enc, sym), FenceBroker(broker))))


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


def go_offline(
    enc: Encoding, sym: ClusterState, broker: int, status: int, lose: bool
) -> ClusterState:
    """model/actions/lifecycle.py: `_go_offline`, `_stopped`."""
    b = sym.brokers[broker - 1]
    r = b.replica
    if lose:
        kept = r.recovery_point
        stopped = enc.new_replica(cut(r.log, kept), kept, imin(r.hwm, kept), kept)
    else:
        flushed = status == OFFLINE_CLEAN and tracks_recovery_point(enc.cfg)
        stopped = enc.new_replica(
            r.log, r.leo, imin(r.hwm, r.leo), r.leo if flushed else r.recovery_point
        )
    replica = enc.merge(r.present, stopped, enc.no_replica(), Replica)
    b = b._replace(
        status=status,
        initialised=False,
        replica=replica,
        fetch_response=enc.no_fetch_response(),
        ap_response=enc.no_ap_response(),
    )
    return with_broker(sym, broker, b)


def shutdown_complete(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return shutdown_complete_enabled(sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        sym = go_offline(enc, sym, broker, OFFLINE_CLEAN, lose=False)
        return fence_now(enc, sym, broker)

    return [Instance("shutdown_complete", broker, None, None, guard, update)]


def crash(enc: Encoding, broker: int, lossy: bool) -> list[Instance]:
    name = "crash_lossy" if lossy else "crash"
    budget = "lossy_unclean_shutdowns" if lossy else "unclean_shutdowns"

    def guard(sym: ClusterState, _: Term) -> Term:
        return shutdown_enabled(sym, broker, budget)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        sym = go_offline(enc, spend(sym, budget), broker, OFFLINE_UNCLEAN, lose=lossy)
        return enc.merge(sym.registry[broker - 1].fenced, sym, fence_now(enc, sym, broker))

    return [Instance(name, broker, None, None, guard, update)]


def restart(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return restart_enabled(sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        incarnation = b.incarnation + 1
        previous = ite(eq(b.status, OFFLINE_CLEAN), b.epoch, -1)
        event = RegisterBroker(broker, incarnation, previous_epoch=previous)
        sym = commit(enc, sym, decided(rules.register_broker(metadata(enc, sym), event)))
        epoch = sym.registry[broker - 1].epoch
        b = Broker(
            RUNNING,
            epoch,
            incarnation,
            b.applied_epoch,
            False,
            b.replica,
            enc.no_fetch_response(),
            enc.no_ap_response(),
        )
        return with_broker(sym, broker, b)

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
