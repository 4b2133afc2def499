"""Reading and replacing the parts of a symbolic state, as the concrete state's methods do
(`ClusterState.with_broker`, `Budget.spend`, `Replica.last_epoch`, ...)."""

from __future__ import annotations

from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq
from kafkarep.symbolic.state import (
    LEADER,
    AlterPartitionRequest,
    Broker,
    ClusterState,
    PartitionRegistration,
    Replica,
    View,
    running,
)


def with_broker(sym: ClusterState, broker: int, b: Broker) -> ClusterState:
    brokers = list(sym.brokers)
    brokers[broker - 1] = b
    return sym._replace(brokers=tuple(brokers))


def with_replica(sym: ClusterState, broker: int, r: Replica) -> ClusterState:
    return with_broker(sym, broker, sym.brokers[broker - 1]._replace(replica=r))


def with_ap_request(sym: ClusterState, broker: int, request: AlterPartitionRequest) -> ClusterState:
    requests = list(sym.ap_requests)
    requests[broker - 1] = request
    return sym._replace(ap_requests=tuple(requests))


def spend(sym: ClusterState, budget: str) -> ClusterState:
    return sym._replace(budget=sym.budget._replace(**{budget: getattr(sym.budget, budget) - 1}))


def leader_replica(b: Broker) -> Term:
    r = b.replica
    return and_(running(b), r.present, eq(r.role, LEADER))


def view_of(enc: Encoding, snapshot: PartitionRegistration) -> View:
    return View(
        True,
        snapshot.leader,
        snapshot.leader_epoch,
        snapshot.partition_epoch,
        snapshot.isr,
        Terms(enc).members(snapshot.replicas),
        snapshot.recovering,
    )
