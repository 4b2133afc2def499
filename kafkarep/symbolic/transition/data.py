"""The data plane (`kafkarep/model/actions/data.py`): produce, fetch and fetch responses."""

from __future__ import annotations

from kafkarep.model.actions.data import (
    fetch_enabled,
    fetch_response_enabled,
    fetch_response_step,
    fetch_step,
    produce_enabled,
    produce_step,
)
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import Cluster
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker


def produce(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return produce_enabled(d, enc.cfg, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return produce_step(d, enc.cfg, sym, broker)

    return [Instance("produce", broker, None, None, guard, update)]


def fetch(enc: Encoding, follower: int, leader: int) -> Instance:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return fetch_enabled(d, enc.cfg, sym, follower, leader)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return fetch_step(d, enc.cfg, sym, follower, leader)

    return Instance("fetch", follower, leader, None, guard, update)


def fetches(enc: Encoding, follower: int) -> list[Instance]:
    return [fetch(enc, follower, leader) for leader in range(1, enc.n + 1) if leader != follower]


def fetch_response(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return fetch_response_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return fetch_response_step(d, enc.cfg, sym, broker)

    return [Instance("fetch_response", broker, None, None, guard, update)]


FAMILIES: dict[str, Build] = {
    "produce": per_broker(produce),
    "fetch": per_broker(fetches),
    "fetch_response": per_broker(fetch_response),
}
