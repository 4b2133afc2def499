"""Broker-id symmetry: a canonical representative of the states equal up to renaming brokers.

Only brokers outside every fixed role are interchangeable: not initial replicas (replica order
decides elections), not in a reassignment target, and with the same initial registration. A
state is renamed under every permutation of each such class, and the one with the smallest
canonical encoding represents them all (stateright's `Representative`). Sound for the `always`
properties here, which never name a broker outside a role; off unless the model file sets
`[check] symmetry = true`.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations, product

from kafkarep.kafka.metadata import BrokerRegistry, PartitionRegistration
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import encode
from kafkarep.model.state import (
    AlterPartitionResponse,
    Broker,
    ClusterState,
    DelayedFetch,
    FetchResponse,
    Ghost,
    PendingAlterPartition,
    Replica,
)
from kafkarep.rules import AlterPartitionRequest

Renaming = dict[int, int]


@cache
def symmetric_classes(cfg: ModelConfig) -> tuple[tuple[int, ...], ...]:
    fixed = set(cfg.replicas) | {b for target in cfg.targets for b in target}
    free = [b for b in cfg.broker_ids if b not in fixed]
    classes: dict[bool, list[int]] = {}
    for b in free:
        classes.setdefault(b in cfg.fenced, []).append(b)
    return tuple(tuple(c) for c in classes.values() if len(c) > 1)


@cache
def _renamings(cfg: ModelConfig) -> tuple[Renaming, ...]:
    per_class = [
        [dict(zip(c, p, strict=True)) for p in permutations(c)] for c in symmetric_classes(cfg)
    ]
    result = []
    for combo in product(*per_class):
        renaming: Renaming = {}
        for part in combo:
            renaming.update(part)
        result.append(renaming)
    return tuple(result)


def canonical(cfg: ModelConfig, state: ClusterState) -> ClusterState:
    renamings = _renamings(cfg)
    if len(renamings) <= 1:
        return state
    candidates = [rename_state(state, r) for r in renamings]
    return min(candidates, key=encode)


def _id(renaming: Renaming, b: int) -> int:
    return renaming.get(b, b)


def _ids(renaming: Renaming, ids: frozenset[int]) -> frozenset[int]:
    return frozenset(renaming.get(b, b) for b in ids)


def _partition(r: Renaming, p: PartitionRegistration) -> PartitionRegistration:
    return p._replace(
        replicas=tuple(_id(r, b) for b in p.replicas),
        isr=_ids(r, p.isr),
        leader=_id(r, p.leader),
        elr=_ids(r, p.elr),
        last_known_elr=_ids(r, p.last_known_elr),
        adding=_ids(r, p.adding),
        removing=_ids(r, p.removing),
    )


def _permute(r: Renaming, items: tuple) -> tuple:
    """Move per-broker tuple entries (indexed by id - 1) to their renamed positions."""
    out = list(items)
    for b, item in enumerate(items, 1):
        out[_id(r, b) - 1] = item
    return tuple(out)


def _request(r: Renaming, q: AlterPartitionRequest | None) -> AlterPartitionRequest | None:
    if q is None:
        return None
    return q._replace(
        broker=_id(r, q.broker), new_isr=tuple(sorted((_id(r, b), e) for b, e in q.new_isr))
    )


def _pending(r: Renaming, p: PendingAlterPartition | None) -> PendingAlterPartition | None:
    return None if p is None else p._replace(isr=_ids(r, p.isr))


def _replica(r: Renaming, x: Replica | None) -> Replica | None:
    if x is None:
        return None
    return x._replace(
        view=None if x.view is None else _partition(r, x.view),
        maximal_isr=_ids(r, x.maximal_isr),
        followers=_permute(r, x.followers) if x.followers else (),
        pending=_pending(r, x.pending),
        eligible=_permute(r, x.eligible) if x.eligible else (),
    )


def _fetch(r: Renaming, f: FetchResponse | None) -> FetchResponse | None:
    return None if f is None else f._replace(leader=_id(r, f.leader))


def _ap(r: Renaming, a: AlterPartitionResponse | None) -> AlterPartitionResponse | None:
    if a is None:
        return None
    pending = _pending(r, a.request)
    assert pending is not None
    return a._replace(request=pending, leader=_id(r, a.leader), isr=_ids(r, a.isr))


def _broker(r: Renaming, b: Broker) -> Broker:
    return b._replace(
        replica=_replica(r, b.replica),
        fetch_response=_fetch(r, b.fetch_response),
        ap_response=_ap(r, b.ap_response),
        delayed_fetch=_delayed(r, b.delayed_fetch),
    )


def _delayed(r: Renaming, d: DelayedFetch | None) -> DelayedFetch | None:
    return None if d is None else d._replace(leader=_id(r, d.leader))


def _ghost(r: Renaming, g: Ghost) -> Ghost:
    received = tuple(
        sum(1 << (_id(r, b) - 1) for b in range(1, 65) if mask >> (b - 1) & 1)
        for mask in g.received
    )
    hwm = g.hwm_below_min_isr
    return g._replace(
        received=received, hwm_below_min_isr=None if hwm is None else (_id(r, hwm[0]), hwm[1])
    )


def rename_state(state: ClusterState, r: Renaming) -> ClusterState:
    c = state.controller
    controller = c._replace(
        log=tuple(_partition(r, p) for p in c.log),
        brokers=BrokerRegistry.of({_id(r, b): reg for b, reg in c.brokers.entries}),
        ap_requests=_permute(r, tuple(_request(r, q) for q in c.ap_requests)),
        eligible=tuple(_permute(r, e) for e in c.eligible),
    )
    brokers = _permute(r, tuple(_broker(r, b) for b in state.brokers))
    return state._replace(controller=controller, brokers=brokers, ghost=_ghost(r, state.ghost))
