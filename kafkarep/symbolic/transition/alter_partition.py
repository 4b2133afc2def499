"""AlterPartition (`kafkarep/model/actions/alter_partition.py`): a leader proposing an ISR, the
controller handling the request, the leader handling the answer."""

from __future__ import annotations

from kafkarep.model.actions.alter_partition import (
    handle_enabled,
    handle_step,
    lag_enabled,
    lag_step,
    response_enabled,
    response_step,
    shrink_enabled,
    shrink_step,
)
from kafkarep.model.actions.alter_partition import (
    maybe_expand as expand,
)
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import (
    ClusterState,
)
from kafkarep.symbolic.transition.cluster import (
    Cluster,
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
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return response_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return response_step(d, enc.cfg, sym, broker)

    return [Instance("alter_partition_response", broker, None, None, guard, update)]


FAMILIES: dict[str, Build] = {
    "replica_lag": per_broker(replica_lag),
    "shrink_isr": per_broker(shrink_isr),
    "handle_alter_partition": per_broker(handle_alter_partition),
    "alter_partition_response": per_broker(alter_partition_response),
}
