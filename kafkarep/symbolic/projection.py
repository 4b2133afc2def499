"""The projection of a concrete state (`kafkarep.model.state`) on the symbolic state (`state`
says what it keeps and how).
"""

from __future__ import annotations

from typing import Any

from kafkarep import rules
from kafkarep.kafka import metadata
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.model import state as concrete
from kafkarep.model.metadata_cache import Eligibility
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from kafkarep.symbolic.state import (
    ERROR,
    NO_VIEW,
    UNKNOWN_FOLLOWER,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    BrokerRegistration,
    Budget,
    ClusterState,
    FetchResponse,
    FollowerView,
    Ghost,
    PartitionRegistration,
    Replica,
    View,
)


def registration(
    enc: Encoding, p: metadata.PartitionRegistration, eligible: Eligibility
) -> PartitionRegistration:
    s = enc.sets
    return PartitionRegistration(
        p.leader,
        p.leader_epoch,
        p.partition_epoch,
        s.of(p.isr),
        s.of(p.elr),
        s.of(p.last_known_elr),
        s.of(p.adding),
        s.of(p.removing),
        p.leader_recovery_state == LeaderRecoveryState.RECOVERING,
        tuple(p.replicas) + (0,) * (enc.n - len(p.replicas)),
        eligible,
    )


def project(
    enc: Encoding,
    state: concrete.ClusterState,
    locs: dict[int, tuple[int, int]],
    committed_in: tuple[int, ...] = (),
    led_since: tuple[int, ...] | None = None,
) -> ClusterState:
    """The symbolic state of a concrete one. `locs` gives each value's (offset, epoch),
    recorded when it was written (the concrete state does not keep a lost record's epoch);
    `committed_in` and `led_since` the history variables `Ghost.committed_in` and
    `Ghost.led_since`, recorded along the path (`led_since` only with reassignment; without
    it, each leader counts as leading since its own epoch)."""
    log = state.controller.log
    base = log[0].partition_epoch
    for i, p in enumerate(log):
        if p.partition_epoch != base + i:
            raise AbstractionError("metadata log partition epochs are not consecutive")
    eligible = state.controller.eligible
    metadata_log = (enc.blank_registration(),) * (base - 1) + tuple(
        registration(enc, p, e) for p, e in zip(log, eligible, strict=True)
    )
    registry = []
    for b in range(1, enc.n + 1):
        r = state.controller.brokers.get(b)
        if not r.registered:
            raise AbstractionError(f"broker {b} is not registered")
        registry.append(
            BrokerRegistration(r.fenced, r.in_controlled_shutdown, r.epoch, r.incarnation)
        )
    ap_requests = tuple(
        _ap_request(enc, b, q) for b, q in enumerate(state.controller.ap_requests, start=1)
    )
    brokers = tuple(
        _broker(enc, state, b, broker, locs) for b, broker in enumerate(state.brokers, 1)
    )
    g = state.ghost
    committed = [0] * enc.r
    for o, v in enumerate(g.committed):
        offset, epoch = locs[v]
        if offset != o:
            raise AbstractionError(f"committed value {v} at offset {o}, written at {offset}")
        committed[o] = epoch
    pos_acked: list[frozenset[int]] = [frozenset()] * enc.r
    for v in g.pos_acked:
        offset, epoch = locs[v]
        pos_acked[offset] = pos_acked[offset] | {epoch}
    ghost = Ghost(
        g.true_hwm,
        tuple(committed),
        tuple(pos_acked),
        g.ack_below_min_isr is not None,
        g.hwm_below_min_isr is not None,
        tuple(committed_in[: enc.r]) + (0,) * (enc.r - len(committed_in)),
        _led_since(enc, state, led_since),
    )
    return ClusterState(
        registration(enc, state.partition, eligible[-1]),
        metadata_log,
        tuple(registry),
        ap_requests,
        brokers,
        ghost,
        Budget(*(getattr(state.budget, f) for f in Budget._fields)),
    )


def _ap_request(
    enc: Encoding, b: int, q: rules.AlterPartitionRequest | None
) -> AlterPartitionRequest:
    if q is None:
        return enc.no_ap_request()
    if q.broker != b or q.version != 3 or q.broker_epoch is None:
        raise AbstractionError("an AlterPartition request the model does not send")
    member_epochs = [0] * enc.n
    for member, epoch in q.new_isr:
        member_epochs[member - 1] = epoch
    return AlterPartitionRequest(
        True,
        q.leader_epoch,
        q.partition_epoch,
        enc.sets.of(q.isr_ids),
        tuple(member_epochs),
        q.leader_recovery_state == LeaderRecoveryState.RECOVERING,
        q.broker_epoch,
    )


def _log(
    enc: Encoding, entries: Any, start: int, locs: dict[int, tuple[int, int]]
) -> tuple[int, ...]:
    out = [0] * enc.r
    for k, (epoch, value) in enumerate(entries):
        o = start + k
        if locs.get(value) != (o, epoch) or o >= enc.r:
            raise AbstractionError(
                f"record {value} at offset {o} epoch {epoch} was written as {locs.get(value)}"
            )
        out[o] = epoch
    return tuple(out)


def _broker(
    enc: Encoding,
    state: concrete.ClusterState,
    b: int,
    broker: concrete.Broker,
    locs: dict[int, tuple[int, int]],
) -> Broker:
    return Broker(
        int(broker.status),
        broker.epoch,
        broker.incarnation,
        broker.applied_epoch,
        broker.initialised,
        _replica(enc, state, broker.replica, locs),
        _fetch_response(enc, broker.fetch_response, locs),
        _ap_response(enc, broker.ap_response),
    )


def _led_since(
    enc: Encoding, state: concrete.ClusterState, recorded: tuple[int, ...] | None
) -> tuple[int, ...]:
    if not enc.reassigning:
        return (0,) * enc.n
    if recorded is not None:
        return recorded
    since = []
    for broker in state.brokers:
        r = broker.replica
        view = r.view if r is not None and r.role == concrete.Role.LEADER else None
        since.append(view.leader_epoch if view is not None else 0)
    return tuple(since)


def _replica(
    enc: Encoding,
    state: concrete.ClusterState,
    r: concrete.Replica | None,
    locs: dict[int, tuple[int, int]],
) -> Replica:
    if r is None:
        return enc.no_replica()
    s = enc.sets
    view = NO_VIEW
    if r.view is not None:
        v = r.view
        view = View(
            True,
            v.leader,
            v.leader_epoch,
            v.partition_epoch,
            s.of(v.isr),
            s.of(v.replicas),
            v.leader_recovery_state == LeaderRecoveryState.RECOVERING,
        )
    followers = (
        tuple(
            FollowerView(f.leo, f.broker_epoch, f.fetched_this_epoch, f.caught_up)
            for f in r.followers
        )
        if r.followers
        else (UNKNOWN_FOLLOWER,) * enc.n
    )
    received = [0] * enc.r
    if r.unacked_from >= 0:
        if r.role != concrete.Role.LEADER:
            raise AbstractionError("unacknowledged writes on a replica that is not leader")
        for o in range(r.unacked_from, r.leo):
            value = r.log[o][1]
            mask = state.ghost.received[value - 1] if value <= len(state.ghost.received) else 0
            received[o] = mask << 1
    return Replica(
        True,
        r.leo,
        _log(enc, r.log, 0, locs),
        r.hwm,
        int(r.role),
        view,
        s.of(r.maximal_isr),
        r.leso,
        followers,
        r.pending is not None,
        s.of(r.pending.isr) if r.pending is not None else 0,
        r.pending.partition_epoch if r.pending is not None else 0,
        r.unacked_from,
        tuple(received),
        r.eligible or enc.nobody_eligible(),
        r.recovery_point,
    )


def _fetch_response(
    enc: Encoding, f: concrete.FetchResponse | None, locs: dict[int, tuple[int, int]]
) -> FetchResponse:
    if f is None:
        return enc.no_fetch_response()
    return FetchResponse(
        True,
        f.leader,
        f.leader_epoch,
        f.fetch_offset,
        f.hwm,
        f.fetch_offset + len(f.entries),
        _log(enc, f.entries, f.fetch_offset, locs),
        f.diverging is not None,
        f.diverging[0] if f.diverging is not None else 0,
        f.diverging[1] if f.diverging is not None else 0,
    )


def _ap_response(
    enc: Encoding, a: concrete.AlterPartitionResponse | None
) -> AlterPartitionResponse:
    if a is None:
        return enc.no_ap_response()
    s = enc.sets
    return AlterPartitionResponse(
        True,
        s.of(a.request.isr),
        a.request.partition_epoch,
        ERROR[a.error],
        a.leader,
        a.leader_epoch,
        a.partition_epoch,
        s.of(a.isr),
        a.leader_recovery_state == LeaderRecoveryState.RECOVERING,
    )


def comparable(sym: ClusterState) -> ClusterState:
    """A projection with the metadata records no broker can apply again blanked out (the
    concrete state has compacted them away)."""
    low = min(b.applied_epoch for b in sym.brokers)
    blank = PartitionRegistration(0, 0, 0, 0, 0, 0, 0, 0, False, (), ())
    return sym._replace(
        metadata_log=tuple(blank if k + 1 < low else h for k, h in enumerate(sym.metadata_log))
    )
