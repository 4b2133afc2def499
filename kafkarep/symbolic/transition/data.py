"""The data plane (`kafkarep/model/actions/data.py`): produce, fetch and fetch responses."""

from __future__ import annotations

from kafkarep.model.actions.data import (
    fetch_enabled,
    fetch_offset_matches,
    fetch_response_enabled,
    produce_enabled,
    response_guards,
)
from kafkarep.model.actions.lifecycle import tracks_recovery_point
from kafkarep.model.hwm import maybe_advance_hwm
from kafkarep.model.logs import diverges, truncation_point
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, imin, ite, ne, not_, or_
from kafkarep.symbolic.state import (
    FOLLOWER,
    ClusterState,
    FetchResponse,
    FollowerView,
    Replica,
)
from kafkarep.symbolic.transition.alter_partition import maybe_expand
from kafkarep.symbolic.transition.cluster import (
    Cluster,
    spend,
    with_broker,
    with_replica,
)
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker
from kafkarep.symbolic.transition.logs import cut, epochs


def produce(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return produce_enabled(d, enc.cfg, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        r = sym.brokers[broker - 1].replica
        o = r.leo
        r = r._replace(
            leo=o + 1,
            log=tuple(ite(eq(k, o), r.view.leader_epoch, e) for k, e in enumerate(r.log)),
            unacked_from=ite(r.unacked_from >= 0, r.unacked_from, o),
            received=tuple(
                enc.sets.ite(eq(k, o), enc.sets.bit(broker), x) for k, x in enumerate(r.received)
            ),
        )
        sym = spend(with_replica(sym, broker, r), "records")
        return maybe_advance_hwm(d, enc.cfg, sym, broker)

    return [Instance("produce", broker, None, None, guard, update)]


def fetch(enc: Encoding, follower: int, leader: int) -> Instance:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return fetch_enabled(d, enc.cfg, sym, follower, leader)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        fb = sym.brokers[follower - 1]
        f = fb.replica
        lr = sym.brokers[leader - 1].replica
        epoch = lr.view.leader_epoch
        diverging, d_epoch, d_end = diverges(epochs(lr), epoch, f.leo, epochs(f).latest_epoch)
        followers = list(lr.followers)
        caught_up = or_(f.leo >= lr.leo, followers[follower - 1].caught_up)
        moved = ne(followers[follower - 1].leo, f.leo)
        followers[follower - 1] = FollowerView(f.leo, fb.epoch, True, caught_up)
        fetched = with_replica(sym, leader, lr._replace(followers=tuple(followers)))
        fetched = maybe_expand(enc, fetched, leader, follower)
        fetched = enc.merge(moved, maybe_advance_hwm(d, enc.cfg, fetched, leader), fetched)
        lr1 = fetched.brokers[leader - 1].replica
        answer = FetchResponse(
            True,
            leader,
            epoch,
            f.leo,
            lr1.hwm,
            lr1.leo,
            tuple(ite(and_(f.leo <= k, k < lr1.leo), e, 0) for k, e in enumerate(lr1.log)),
            False,
            0,
            0,
        )
        refusal = FetchResponse(
            True, leader, epoch, f.leo, lr.hwm, f.leo, (0,) * enc.r, True, d_epoch, d_end
        )
        sym = enc.merge(diverging, sym, fetched)
        response = enc.merge(diverging, refusal, answer, FetchResponse)
        return with_broker(
            sym, follower, sym.brokers[follower - 1]._replace(fetch_response=response)
        )

    return Instance("fetch", follower, leader, None, guard, update)


def fetches(enc: Encoding, follower: int) -> list[Instance]:
    return [fetch(enc, follower, leader) for leader in range(1, enc.n + 1) if leader != follower]


def fetch_response(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return fetch_response_enabled(d, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        a = b.fetch_response
        r = b.replica
        sym = with_broker(sym, broker, b._replace(fetch_response=enc.no_fetch_response()))
        in_fetcher = and_(
            r.present, eq(r.role, FOLLOWER), r.view.present, eq(r.view.leader, a.leader)
        )
        applies = and_(in_fetcher, *(enc.check(g, r, a) for g in response_guards(enc.cfg)))
        # truncate at the divergence point
        at = truncation_point(epochs(r), a.diverging_epoch, a.diverging_end)
        truncated = r._replace(
            log=cut(r.log, at),
            leo=at,
            hwm=imin(r.hwm, at),
            recovery_point=(
                imin(r.recovery_point, at) if tracks_recovery_point(enc.cfg) else r.recovery_point
            ),
        )
        # append the entries after the log (at the fetch offset, unless that guard is off)
        count = a.end - a.fetch_offset
        leo = r.leo + count
        if enc.guard_on(fetch_offset_matches):
            log = tuple(
                ite(k < r.leo, e, x) for k, (e, x) in enumerate(zip(r.log, a.entries, strict=True))
            )
        else:
            log = tuple(
                ite(
                    k < r.leo,
                    e,
                    ite(k < leo, ops.select(a.entries, k - r.leo + a.fetch_offset, 0), 0),
                )
                for k, e in enumerate(r.log)
            )
        appended = r._replace(log=log, leo=leo, hwm=imin(a.hwm, leo))
        new = enc.merge(a.diverging, truncated, appended, Replica)
        sym = with_replica(sym, broker, enc.merge(applies, new, r, Replica))
        receiving = and_(applies, not_(a.diverging))
        return receive(enc, sym, broker, receiving, r.leo, leo, log)

    return [Instance("fetch_response", broker, None, None, guard, update)]


def receive(
    enc: Encoding,
    sym: ClusterState,
    broker: int,
    when: Term,
    start: Term,
    end: Term,
    log: tuple[Term, ...],
) -> ClusterState:
    """Ghost.receive: the broker appended the records at [start, end) of `log`; each one that a
    leader has written and not yet acknowledged gains it as a receiver."""
    if isinstance(when, bool) and not when:
        return sym
    s = enc.sets
    for p in range(1, enc.n + 1):
        r = sym.brokers[p - 1].replica
        received = tuple(
            s.ite(
                and_(
                    when,
                    start <= k,
                    k < end,
                    r.unacked_from >= 0,
                    r.unacked_from <= k,
                    k < r.leo,
                    eq(r.log[k], log[k]),
                ),
                s.union(x, s.bit(broker)),
                x,
            )
            for k, x in enumerate(r.received)
        )
        sym = with_replica(sym, p, r._replace(received=received))
    return sym


FAMILIES: dict[str, Build] = {
    "produce": per_broker(produce),
    "fetch": per_broker(fetches),
    "fetch_response": per_broker(fetch_response),
}
