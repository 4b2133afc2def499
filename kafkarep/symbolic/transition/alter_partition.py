"""AlterPartition (`kafkarep/model/actions/alter_partition.py`): a leader proposing an ISR, the
controller handling the request, the leader handling the answer."""

from __future__ import annotations

from kafkarep.kafka.errors import Error
from kafkarep.model.actions.alter_partition import (
    ROLL_BACK,
    handle_enabled,
    handle_step,
    lag_enabled,
    lag_step,
    response_enabled,
    shrink_enabled,
    shrink_step,
)
from kafkarep.model.actions.alter_partition import (
    maybe_expand as expand,
)
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.hwm import maybe_advance_hwm
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, or_
from kafkarep.symbolic.state import (
    ERROR,
    LEADER,
    ClusterState,
)
from kafkarep.symbolic.transition.cluster import (
    Cluster,
    with_broker,
    with_replica,
)
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker


def maybe_expand(enc: Encoding, sym: ClusterState, broker: int, follower: int) -> ClusterState:
    """The model's `maybe_expand` on the prover's domain."""
    return expand(Cluster(enc), enc.cfg, sym, broker, follower)


def shrink_isr(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, dropped: Term) -> Term:
        return shrink_enabled(d, enc.cfg, sym, broker, dropped)

    def update(sym: ClusterState, dropped: Term) -> ClusterState:
        return shrink_step(d, sym, broker, dropped)

    return [Instance("shrink_isr", broker, None, "s", guard, update)]


def replica_lag(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)
    out = []
    for follower in range(1, enc.n + 1):
        if follower == broker:
            continue

        def guard(sym: ClusterState, _: Term, follower: int = follower) -> Term:
            return lag_enabled(d, enc.cfg, sym, broker, follower)

        def update(sym: ClusterState, _: Term, follower: int = follower) -> ClusterState:
            return lag_step(d, sym, broker, follower)

        out.append(Instance("replica_lag", broker, follower, None, guard, update))
    return out


def handle_alter_partition(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return handle_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return handle_step(d, enc.cfg, sym, broker)

    return [Instance("handle_alter_partition", CONTROLLER, broker, None, guard, update)]


def alter_partition_response(enc: Encoding, broker: int) -> list[Instance]:
    s = enc.sets
    d = Cluster(enc)
    roll_back = [ERROR[e] for e in sorted(ROLL_BACK)]

    def guard(sym: ClusterState, _: Term) -> Term:
        return response_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        a = b.ap_response
        r = b.replica
        sym = with_broker(sym, broker, b._replace(ap_response=enc.no_ap_response()))
        mine = and_(
            r.present,
            eq(r.role, LEADER),
            r.pending,
            s.eq(r.pending_isr, a.request_isr),
            eq(r.pending_partition_epoch, a.request_partition_epoch),
        )
        rolls_back = and_(mine, or_(*(eq(a.error, e) for e in roll_back)))
        accepted = and_(
            mine,
            eq(a.error, ERROR[Error.NONE]),
            eq(a.leader_epoch, r.view.leader_epoch),
            a.partition_epoch >= r.view.partition_epoch,
        )
        cleared = r._replace(pending=False, pending_isr=0, pending_partition_epoch=0)
        rolled = cleared._replace(maximal_isr=r.view.isr)
        view = r.view._replace(
            isr=a.isr, partition_epoch=a.partition_epoch, recovering=a.recovering
        )
        adopted = maybe_advance_hwm(
            Cluster(enc),
            enc.cfg,
            with_replica(sym, broker, cleared._replace(view=view, maximal_isr=a.isr)),
            broker,
        )
        after_roll_back = with_replica(sym, broker, rolled)
        return enc.merge(accepted, adopted, enc.merge(rolls_back, after_roll_back, sym))

    return [Instance("alter_partition_response", broker, None, None, guard, update)]


FAMILIES: dict[str, Build] = {
    "replica_lag": per_broker(replica_lag),
    "shrink_isr": per_broker(shrink_isr),
    "handle_alter_partition": per_broker(handle_alter_partition),
    "alter_partition_response": per_broker(alter_partition_response),
}
