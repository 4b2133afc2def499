"""A broker acting on the metadata (`kafkarep/model/actions/metadata.py`): applying a partition
record, and its metadata cache taking the brokers' registrations."""

from __future__ import annotations

from kafkarep.model.actions.metadata import (
    apply_enabled,
    apply_registrations_enabled,
    apply_registrations_step,
    reset_out_of_sync_followers,
)
from kafkarep.model.hwm import maybe_advance_hwm
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import (
    FOLLOWER,
    LEADER,
    NONE,
    UNKNOWN_FOLLOWER,
    ClusterState,
    PartitionRegistration,
    Replica,
)
from kafkarep.symbolic.transition.cluster import (
    Cluster,
    nack_unacked,
    view_of,
    with_broker,
    with_replica,
)
from kafkarep.symbolic.transition.controller import record_at
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker


def apply_metadata(enc: Encoding, broker: int) -> list[Instance]:
    """The argument is the partition epoch of the record applied; with an abstract history
    (induction) it is the record itself, any record the history facts allow."""

    def guard(sym: ClusterState, partition_epoch: Term) -> Term:
        return apply_enabled(sym, broker, partition_epoch)

    def update(sym: ClusterState, partition_epoch: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        snapshot = record_at(enc, sym.metadata_log, partition_epoch)
        sym = with_broker(sym, broker, b._replace(applied_epoch=partition_epoch, initialised=True))
        return act_on(enc, sym, broker, snapshot)

    def guard_record(sym: ClusterState, snapshot: PartitionRegistration) -> Term:
        same = and_(*enc.equal(snapshot, sym.partition, PartitionRegistration))
        facts = enc.history(enc, snapshot, sym, broker) if enc.history is not None else True
        return and_(
            guard(sym, snapshot.partition_epoch),
            implies(eq(snapshot.partition_epoch, sym.partition.partition_epoch), same),
            facts,
        )

    def update_record(sym: ClusterState, snapshot: PartitionRegistration) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=snapshot.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, snapshot)

    def guard_latest(sym: ClusterState, _: Term) -> Term:
        return guard(sym, sym.partition.partition_epoch)

    def update_latest(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=sym.partition.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, sym.partition)

    if enc.abstract_history:
        return [Instance("apply_metadata", broker, None, "h", guard_record, update_record)]
    if enc.latest_metadata:
        return [Instance("apply_metadata", broker, "latest", None, guard_latest, update_latest)]
    return [Instance("apply_metadata", broker, None, "i", guard, update)]


def apply_registrations(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return apply_registrations_enabled(d, enc.cfg, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return apply_registrations_step(d, enc.cfg, sym, broker)

    return [Instance("apply_registrations", broker, None, None, guard, update)]


def act_on(
    enc: Encoding, sym: ClusterState, broker: int, snapshot: PartitionRegistration
) -> ClusterState:
    s = enc.sets
    r = sym.brokers[broker - 1].replica
    member = s.has(Terms(enc).members(snapshot.replicas), broker)
    removed = with_replica(sym, broker, enc.no_replica())
    r0 = enc.merge(r.present, r, enc.new_replica(), Replica)
    stale = and_(r.present, r.view.present, snapshot.partition_epoch < r.view.partition_epoch)
    # the leader branch
    led = as_leader(enc, r0, snapshot, broker)._replace(eligible=snapshot.eligible)
    leading_state = with_replica(sym, broker, led)
    if enc.reassigning:
        leading_state = _leading_since(sym, leading_state, broker, r, snapshot)
    leading_state = maybe_advance_hwm(Cluster(enc), enc.cfg, leading_state, broker)
    # the follower branch
    follower = nack_unacked(enc, r0)._replace(
        role=ite(snapshot.leader > 0, FOLLOWER, NONE),
        view=view_of(enc, snapshot),
        maximal_isr=snapshot.isr,
        leso=0,
        followers=(UNKNOWN_FOLLOWER,) * enc.n,
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
        eligible=enc.nobody_eligible(),
    )
    following_state = with_replica(sym, broker, follower)
    acted = enc.merge(eq(snapshot.leader, broker), leading_state, following_state)
    # a leader holding a newer registration keeps it, but its cache moves with the records
    leading = eq(r.role, LEADER)
    cached = tuple(
        ite(leading, e, old) for e, old in zip(snapshot.eligible, r.eligible, strict=True)
    )
    kept = with_replica(sym, broker, r._replace(eligible=cached))
    return enc.merge(not_(member), removed, enc.merge(stale, kept, acted))


def _leading_since(
    before: ClusterState,
    after: ClusterState,
    broker: int,
    r: Replica,
    snapshot: PartitionRegistration,
) -> ClusterState:
    """`Ghost.led_since`: a broker that becomes leader leads since the snapshot's epoch; a
    leader the snapshot keeps leading (a new epoch with the same leader) since when it did."""
    g = after.ghost
    since = list(g.led_since)
    since[broker - 1] = ite(eq(r.role, LEADER), since[broker - 1], snapshot.leader_epoch)
    return after._replace(ghost=g._replace(led_since=tuple(since)))


def as_leader(enc: Encoding, r: Replica, snapshot: PartitionRegistration, broker: int) -> Replica:
    s = enc.sets
    cfg = enc.cfg
    view = view_of(enc, snapshot)._replace(recovering=False)  # model/actions/metadata.py: `_led`
    promoted = nack_unacked(enc, r)._replace(
        role=LEADER,
        view=view,
        maximal_isr=snapshot.isr,
        leso=r.leo,
        followers=tuple(
            UNKNOWN_FOLLOWER._replace(caught_up=and_(s.has(snapshot.isr, m), m != broker))
            for m in range(1, enc.n + 1)
        ),
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
    )
    followers = r.followers
    if enc.guard_on(reset_out_of_sync_followers):
        followers = tuple(
            f._replace(
                fetched_this_epoch=and_(f.fetched_this_epoch, s.has(snapshot.isr, m)),
                caught_up=and_(s.has(snapshot.isr, m), m != broker),
            )
            for m, f in enumerate(r.followers, start=1)
        )
    new_epoch = r._replace(
        view=view,
        maximal_isr=snapshot.isr,
        leso=r.leo,
        followers=followers,
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
    )
    drop = and_(
        r.pending,
        or_(
            cfg.pending_isr_on_metadata == "reset",
            snapshot.partition_epoch > r.pending_partition_epoch,
        ),
    )
    keep = and_(r.pending, not_(drop))
    same_epoch = r._replace(
        view=view,
        maximal_isr=s.ite(keep, s.union(snapshot.isr, r.pending_isr), snapshot.isr),
        pending=keep,
        pending_isr=s.ite(keep, r.pending_isr, 0),
        pending_partition_epoch=ite(keep, r.pending_partition_epoch, 0),
    )
    return enc.merge(
        ne(r.role, LEADER),
        promoted,
        enc.merge(snapshot.leader_epoch > r.view.leader_epoch, new_epoch, same_epoch, Replica),
        Replica,
    )


FAMILIES: dict[str, Build] = {
    "apply_metadata": per_broker(apply_metadata),
    "apply_registrations": per_broker(apply_registrations),
}
