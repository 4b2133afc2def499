"""The history facts every proof assumes of every record of the metadata log (well formed,
consistent with every copy of the metadata, one leader per epoch, written by its leader), and
what any two records satisfy together (`pair`)."""

from __future__ import annotations

from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.assignment import once_added, once_removed
from kafkarep.symbolic.invariants.common import brokers, replica, stops, views_only_advance
from kafkarep.symbolic.invariants.copies import (
    all_logs,
    assignment_copies,
    assignments_agree,
    consistent,
    copy_owners,
    epoch_carriers,
    record_copy,
    registration_copies,
)
from kafkarep.symbolic.invariants.later_epochs import elr_and_last_known, rejoined
from kafkarep.symbolic.invariants.structure import registration_shape
from kafkarep.symbolic.lemmas import AnyFact, Fact, representative
from kafkarep.symbolic.ops import Term, and_, eq, implies, not_, or_
from kafkarep.symbolic.state import LEADER, ClusterState, PartitionRegistration


def _history_shape(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    return and_(
        registration_shape(enc, record),
        record.leader_epoch <= sym.partition.leader_epoch,
        record.partition_epoch <= sym.partition.partition_epoch,
        implies(
            eq(record.leader_epoch, sym.partition.leader_epoch),
            eq(record.leader, sym.partition.leader),
        ),
    )


def _history_consistent(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, fixed: int | None = None
) -> Term:
    """The record agrees with every copy of the registration (with `fixed`, those of
    representative brokers: `Fact.orbit`)."""
    mine = record_copy(record)
    copies = zip(registration_copies(enc, sym), copy_owners(enc), strict=True)
    agree = and_(*(consistent(enc, mine, c) for c, owner in copies if representative(fixed, owner)))
    if not enc.reassigning:
        return agree
    members = Terms(enc).members(record.replicas)
    held = (True, record.partition_epoch, record.leader_epoch, members)
    return and_(
        agree,
        *(assignments_agree(enc, held, other) for other in assignment_copies(enc, sym)),
        *(deleted_for_good(enc, sym, record, b) for b in brokers(enc)),
    )


def deleted_for_good(
    enc: Encoding, sym: ClusterState, record: PartitionRegistration, b: int
) -> Term:
    """A broker without a replica: the record it applied last does not name it (as
    `replicas_well_formed` says of the controller's registration). With one reassignment
    (`assignment.once_removed`, `once_added`): an original replica without one was deleted, and
    neither a later record nor a later copy names it once one has dropped it; an added replica
    without one has applied no record naming it, is in no record's ISR or ELR, and once named is
    named by every later copy."""
    partition_epoch, members = record.partition_epoch, Terms(enc).members(record.replicas)
    applied = sym.brokers[b - 1].applied_epoch
    gone = not_(replica(sym, b).present)
    parts = [implies(and_(gone, eq(applied, partition_epoch)), not_(enc.sets.has(members, b)))]
    if enc.reassigning and once_removed(enc.cfg, b):
        later = and_(gone, partition_epoch > applied)
        parts.append(implies(later, not_(enc.sets.has(members, b))))
        # and no later copy of the metadata names it (the controller's is the latest)
        dropped = not_(enc.sets.has(members, b))
        for present, copy_epoch, _, named in assignment_copies(enc, sym):
            later_copy = and_(present, dropped, copy_epoch >= partition_epoch)
            parts.append(implies(later_copy, not_(enc.sets.has(named, b))))
    if enc.reassigning and once_added(enc.cfg, b):
        # named once, by every copy from then on; without a replica, not yet named
        named_here = enc.sets.has(members, b)
        parts.append(implies(and_(gone, named_here), partition_epoch > applied))
        # it joins the ISR only by fetching (the ELRs only from the ISR), and is never deleted
        candidates = enc.sets.union(record.isr, record.elr, record.last_known_elr)
        parts.append(implies(gone, not_(enc.sets.has(candidates, b))))
        for present, copy_epoch, _, named in assignment_copies(enc, sym):
            later_copy = and_(present, named_here, copy_epoch >= partition_epoch)
            parts.append(implies(later_copy, enc.sets.has(named, b)))
            earlier_copy = and_(present, enc.sets.has(named, b), copy_epoch <= partition_epoch)
            parts.append(implies(earlier_copy, named_here))
    return and_(*parts)


def _history_epoch_leader(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    one = and_(
        *(
            implies(and_(present, eq(leader_epoch, record.leader_epoch)), eq(leader, record.leader))
            for present, leader_epoch, leader in epoch_carriers(enc, sym)
        )
    )
    if not enc.reassigning:
        return one
    return and_(one, *(leader_span(enc, record, sym, b) for b in brokers(enc)))


def leader_span(enc: Encoding, record: PartitionRegistration, sym: ClusterState, b: int) -> Term:
    """A leader's view runs ahead of the metadata it applied only through its own accepted
    AlterPartition requests: every record from the one it applied to its view names it leader
    of the same epoch; so does every record an accepted answer in flight covers. Under
    reassignment this keeps an older record from removing a leader's replica."""
    k = sym.brokers[b - 1]
    r, a = k.replica, k.ap_response
    within = and_(
        k.applied_epoch <= record.partition_epoch, record.partition_epoch <= r.view.partition_epoch
    )
    covered = and_(
        a.request_partition_epoch < record.partition_epoch,
        record.partition_epoch <= a.partition_epoch,
    )
    unnamed = and_(not_(r.present), eq(record.partition_epoch, k.applied_epoch))
    f = k.fetch_response
    # Once a record removed its replica, every record it applies next is of a later leader epoch
    # than anything it sent as leader: its AlterPartition request, its fetch answers.
    removed_after = and_(not_(r.present), record.partition_epoch >= k.applied_epoch)
    q = sym.ap_requests[b - 1]
    sent = [(q.present, q.leader_epoch)]
    for m in brokers(enc):
        g = sym.brokers[m - 1].fetch_response
        sent.append((and_(g.present, eq(g.leader, b)), g.leader_epoch))
    older = and_(*(implies(present, epoch < record.leader_epoch) for present, epoch in sent))
    return and_(
        implies(removed_after, older),
        # a response in flight is of an epoch no later than any record its follower applies,
        # and older, once a record removed its replica (the leader epoch moves when a replica
        # leaves: `PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`)
        implies(
            and_(f.present, record.partition_epoch >= k.applied_epoch),
            and_(
                f.leader_epoch <= record.leader_epoch,
                implies(not_(r.present), f.leader_epoch < record.leader_epoch),
            ),
        ),
        # a broker without a replica applied a record that does not name it
        implies(unnamed, not_(enc.sets.has(Terms(enc).members(record.replicas), b))),
        implies(
            and_(r.present, eq(r.role, LEADER), within),
            and_(eq(record.leader, b), eq(record.leader_epoch, r.view.leader_epoch)),
        ),
        implies(
            and_(a.present, eq(a.error, 0), covered),
            and_(
                eq(record.leader, b),
                eq(record.leader_epoch, a.leader_epoch),
            ),
        ),
    )


def _history_written(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    """A record of the record's epoch exists only once its leader has led that epoch."""
    parts = []
    for log, start, end in all_logs(enc, sym):
        for o in range(enc.r):
            has = and_(start <= o, o < end, eq(log[o], record.leader_epoch))
            parts.append(
                implies(
                    has,
                    or_(
                        *(
                            and_(eq(record.leader, m), reached(enc, sym, m, record))
                            for m in brokers(enc)
                        )
                    ),
                )
            )
    return and_(*parts)


def reached(enc: Encoding, sym: ClusterState, m: int, record: PartitionRegistration) -> Term:
    """Broker m has reached the record's leader epoch. A stopped broker has no view, and remembers
    nothing: it reaches the current epoch again when it restarts and catches up with the
    metadata log first (`BrokerServer` at 4.1.0 waits for `initialCatchUpFuture`), so it counts
    as having reached it until then."""
    view, leader_epoch = replica(sym, m).view, record.leader_epoch
    if enc.reassigning and not stops(enc):
        # a leader removed from the replicas forgets its epoch with its data; it was removed by
        # a later record than this one
        removed = and_(
            not_(replica(sym, m).present),
            sym.brokers[m - 1].applied_epoch >= record.partition_epoch,
        )
        return or_(view.leader_epoch >= leader_epoch, removed)
    if not stops(enc):
        return view.leader_epoch >= leader_epoch
    return or_(
        and_(view.present, view.leader_epoch >= leader_epoch), not_(sym.brokers[m - 1].initialised)
    )


FACTS: tuple[Fact, ...] = (
    Fact("shape", _history_shape, "every record is well formed"),
    Fact(
        "consistent",
        _history_consistent,
        "records agree with the copies of the metadata",
        orbit=_history_consistent,
    ),
    Fact("epoch_leader", _history_epoch_leader, "a record names its epoch's one leader"),
    Fact("written", _history_written, "records of an epoch follow its leader"),
)


def pair(
    enc: Encoding,
    a: PartitionRegistration,
    b: PartitionRegistration,
    sym: ClusterState | None = None,
    facts: tuple[AnyFact, ...] = (),
) -> Term:
    """Two records of the metadata log agree: epochs move together, one leader per epoch; with
    reassignment, their assignments agree, and a replica one reassignment removes (adds) stays
    out (in) from the first record that drops (names) it (`deleted_for_good`). (True of every
    pair once `consistent` and `epoch_leader` hold of every record: each record met every older
    one when it was committed as the current registration.) With the state and
    the history facts `stale_leader_alone` and `no_growth_before_leader`, also what those say
    of the older record against the newer one (`_pair_state`)."""
    out = and_(
        consistent(
            enc,
            (True, a.partition_epoch, a.leader_epoch, a.leader, a.isr),
            (True, b.partition_epoch, b.leader_epoch, b.leader, b.isr),
        ),
        implies(eq(a.leader_epoch, b.leader_epoch), eq(a.leader, b.leader)),
    )
    if enc.reassigning:
        members = Terms(enc).members
        out = and_(
            out,
            assignments_agree(
                enc,
                (True, a.partition_epoch, a.leader_epoch, members(a.replicas)),
                (True, b.partition_epoch, b.leader_epoch, members(b.replicas)),
            ),
            *(
                # a replica removed (added) for good: out (in) of every later record
                implies(
                    and_(
                        older.partition_epoch < newer.partition_epoch,
                        eq(enc.sets.has(members(older.replicas), m), stays_in),
                    ),
                    eq(enc.sets.has(members(newer.replicas), m), stays_in),
                )
                for m in brokers(enc)
                for stays_in, applies in ((False, once_removed), (True, once_added))
                if applies(enc.cfg, m)
                for older, newer in ((a, b), (b, a))
            ),
        )
    names = {f.name for f in facts}
    if sym is not None and set(_PAIRED) <= names and views_only_advance(enc):
        out = and_(out, _pair_state(enc, a, b, sym), _pair_state(enc, b, a, sym))
    if sym is not None and "rejoined" in names and views_only_advance(enc):
        ta, tb = (
            (True, a.partition_epoch, a.leader_epoch, a.leader, a.isr),
            (True, b.partition_epoch, b.leader_epoch, b.leader, b.isr),
        )
        out = and_(
            out,
            rejoined(enc, sym, ta, tb, elr_and_last_known(enc, a), elr_and_last_known(enc, b)),
            rejoined(enc, sym, tb, ta, elr_and_last_known(enc, b), elr_and_last_known(enc, a)),
        )
    return out


_PAIRED = ("stale_leader_alone", "no_growth_before_leader", "lagging_members")


def _pair_state(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """`no_growth_before_leader` and `stale_leader_alone` of record a against record b. Each
    held against b when b was committed (b was then the controller's registration, a an older
    record: a newer record has a higher partition epoch, so a was committed first), and since
    then only the premise can change, from true to false: the leader of a reaching it (views
    only advance in models where `views_only_advance`)."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        xr = replica(sym, x)
        named = eq(a.leader, x)
        same = and_(
            named,
            xr.view.partition_epoch < a.partition_epoch,
            eq(b.leader_epoch, a.leader_epoch),
            b.partition_epoch >= a.partition_epoch,
        )
        parts.append(implies(same, s.subset(b.isr, a.isr)))
        later = and_(
            named,
            xr.view.leader_epoch < a.leader_epoch,
            b.leader_epoch > a.leader_epoch,
            s.has(b.isr, x),
        )
        parts.append(implies(later, s.eq(b.isr, s.bit(x))))
        # b older, behind: a's leader was a candidate behind b when a was committed
        behind = and_(
            named,
            xr.view.leader_epoch < b.leader_epoch,
            b.leader_epoch < a.leader_epoch,
            s.size(b.isr) >= enc.cfg.min_isr,
        )
        parts.append(implies(behind, s.has(b.isr, x)))
    return and_(*parts)
