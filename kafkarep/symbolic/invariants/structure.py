"""The structure of a state: well-formed registrations, logs, views and roles; the committed
log; who received an unacknowledged write; copies of the metadata and logs that agree; the
messages in flight. The MinISR rule is proved with these alone."""

from __future__ import annotations

from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.assignment import Assignment, assignments, once_added
from kafkarep.symbolic.invariants.common import (
    brokers,
    every,
    holds_prefix,
    log_well_formed,
    replica,
    stops,
    views_only_advance,
)
from kafkarep.symbolic.invariants.copies import (
    all_logs,
    assignment_copies,
    assignments_agree,
    consistent,
    copy_owners,
    epoch_carriers,
    registration_copies,
    still_awaited,
)
from kafkarep.symbolic.lemmas import Invariant, representative
from kafkarep.symbolic.ops import Term, and_, epochs_within, eq, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import (
    FOLLOWER,
    LEADER,
    NONE,
    STATUSES,
    Broker,
    ClusterState,
    PartitionRegistration,
    Replica,
    running,
)


def controller_shape(enc: Encoding, sym: ClusterState) -> Term:
    shape = registration_shape(enc, sym.partition)
    if not enc.reassigning:
        return shape
    # only an active broker is elected, and fencing one moves its leadership
    # (`ReplicationControlManager.handleBrokerFenced`, 4.1.0)
    unfenced = every(
        enc, lambda b: implies(eq(sym.partition.leader, b), not_(sym.registry[b - 1].fenced))
    )
    return and_(shape, assigned(enc, sym), unfenced)


def registration_shape(enc: Encoding, p: PartitionRegistration) -> Term:
    """A partition registration is well formed (the controller's, and so every record)."""
    s = enc.sets
    replicas = Terms(enc).members(p.replicas)
    leader_ok = or_(
        eq(p.leader, -1), or_(*(and_(eq(p.leader, b), s.has(p.isr, b)) for b in brokers(enc)))
    )
    parts = [
        p.leader_epoch >= 1,
        p.partition_epoch >= 1,
        leader_ok,
        s.subset(p.isr, replicas),
        # Kafka keeps a removed replica in the ELR when a reassignment completes below MinISR
        # (`PartitionChangeBuilder.maybePopulateTargetElr` filters the target ISR, not the
        # target replicas)
        reachable_assignment(enc, p) if enc.reassigning else s.subset(p.elr, replicas),
        s.empty(s.inter(p.isr, p.elr)),
        True if enc.reassigning else s.subset(p.last_known_elr, s.union(replicas, s.bit(-1))),
        recovering_alone(enc, p.recovering, p.leader, p.isr),
    ]
    if stops(enc):
        # every change moves the partition epoch by one, a new leader epoch with it
        # (`PartitionRegistration.merge`, 4.1.0)
        parts.append(p.leader_epoch <= p.partition_epoch)
    if enc.cfg.options.elr_enabled:
        parts.append(implies(s.size(p.isr) >= enc.cfg.min_isr, s.empty(p.elr)))
        if not stops(enc):
            # the last known leader is kept for an empty ISR and ELR, which only a broker that
            # stops can leave (`PartitionChangeBuilder.maybeUpdateLastKnownLeader`)
            parts.append(implies(s.empty(s.union(p.isr, p.elr)), s.empty(p.last_known_elr)))
        if enc.cfg.min_isr == 1:
            # with MinISR 1 any ISR clears the ELR, so only the last ISR member to go enters it
            # (`PartitionChangeBuilder.maybePopulateTargetElr`, 4.1.0)
            parts.append(s.size(p.elr) <= 1)
        # the last known leader is cleared once the partition has a leader
        # (`PartitionChangeBuilder.maybeUpdateLastKnownLeader`)
        parts.append(implies(ne(p.leader, -1), s.empty(p.last_known_elr)))
        if views_only_advance(enc) and not enc.reassigning:
            # the last ISR member to go moves to the ELR, which only an unclean shutdown (none
            # here) or an election empties (`PartitionChangeBuilder.maybePopulateTargetElr`,
            # `tryElection`): no ISR and ELR only from the start (a reassignment changes a
            # partition without either)
            parts.append(implies(s.empty(s.union(p.isr, p.elr)), eq(p.partition_epoch, 1)))
    return and_(*parts)


def recovering_alone(enc: Encoding, recovering: Term, leader: Term, isr: Term) -> Term:
    """RECOVERING only where an election may be unclean (an election of the last known leader
    is one: `PartitionChangeBuilder.tryElection`), and then the ISR is its leader alone until
    the leader recovers: AlterPartition refuses to grow it (`validateAlterPartitionData`,
    `rules.alter_partition.recovering_isr_single`)."""
    if not enc.recovering:
        return not_(recovering)
    s = enc.sets
    return implies(
        recovering, and_(s.size(isr) <= 1, implies(ne(leader, -1), s.eq(isr, s.bit(leader))))
    )


def assigned(enc: Encoding, sym: ClusterState) -> Term:
    """The replica list, adding and removing sets are one of the assignments the reassignment
    rules reach from the model's within the budgets left (`assignment.assignments`); the ELR
    holds only brokers an assignment named on the way."""
    p, budget = sym.partition, sym.budget
    s = enc.sets
    return or_(
        *(
            and_(
                is_assignment(enc, p, a),
                eq(budget.reassignments, starts),
                eq(budget.reassignment_cancels, cancels),
                s.subset(p.elr, s.of(named)),
                s.subset(p.last_known_elr, s.union(s.of(named), s.bit(-1))),
            )
            for a, starts, cancels, named in assignments(enc.cfg)
        )
    )


def is_assignment(enc: Encoding, p: PartitionRegistration, a: Assignment) -> Term:
    s = enc.sets
    return and_(
        *(eq(slot, r) for slot, r in zip(p.replicas, padded(enc, a.replicas), strict=True)),
        s.eq(p.adding, s.of(a.adding)),
        s.eq(p.removing, s.of(a.removing)),
    )


def reachable_assignment(enc: Encoding, p: PartitionRegistration) -> Term:
    """A record's assignment is one the reassignment rules reach; its ELR only brokers some
    assignment names."""
    s = enc.sets
    ever = {a for a, _, _, _ in assignments(enc.cfg)}
    everyone = s.of(frozenset(b for a in ever for b in a.replicas))
    return and_(
        or_(*(is_assignment(enc, p, a) for a in sorted(ever))),
        s.subset(p.elr, everyone),
        s.subset(p.last_known_elr, s.union(everyone, s.bit(-1))),
    )


def ever_assigned(enc: Encoding) -> frozenset[int]:
    return frozenset(m for a, _, _, _ in assignments(enc.cfg) for m in a.replicas)


def padded(enc: Encoding, replicas: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(replicas) + (0,) * (enc.n - len(replicas))


def replicas_well_formed(enc: Encoding, sym: ClusterState) -> Term:
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)

    if enc.reassigning:
        return every(enc, lambda b: reassigned_replica(enc, sym, b))

    def ok(b: int) -> Term:
        k = sym.brokers[b - 1]
        r = k.replica
        v = r.view
        if b not in enc.cfg.replicas:
            return not_(r.present)
        viewed = (
            v.present,
            s.eq(v.replicas, replicas),
            v.leader_epoch >= 1,
            v.leader_epoch <= sym.partition.leader_epoch,
            v.partition_epoch >= 1,
            v.partition_epoch <= sym.partition.partition_epoch,
            k.applied_epoch >= 1,
            k.applied_epoch <= v.partition_epoch,
            s.subset(v.isr, replicas),
            recovering_alone(enc, v.recovering, v.leader, v.isr),
            implies(eq(r.role, LEADER), not_(v.recovering)),  # a leader counts itself RECOVERED
            or_(
                eq(v.leader, -1),
                *(and_(eq(v.leader, m), s.has(v.isr, m)) for m in enc.cfg.replicas),
            ),
            eq(eq(r.role, LEADER), eq(v.leader, b)),
            eq(eq(r.role, NONE), eq(v.leader, -1)),
            or_(eq(r.role, LEADER), eq(r.role, FOLLOWER), eq(r.role, NONE)),
        )
        if not stops(enc):
            return and_(
                r.present,
                log_well_formed(enc, r.log, r.leo, v.leader_epoch),
                r.hwm >= 0,
                r.hwm <= r.leo,
                r.recovery_point >= 0,
                r.recovery_point <= r.leo,
                *viewed,
            )
        top = ite(v.present, v.leader_epoch, sym.partition.leader_epoch)
        return and_(
            r.present,
            log_well_formed(enc, r.log, r.leo, top),
            r.hwm >= 0,
            r.hwm <= r.leo,
            r.recovery_point >= 0,
            r.recovery_point <= r.leo,
            k.applied_epoch >= 1,
            k.applied_epoch <= sym.partition.partition_epoch,
            or_(and_(*viewed), stopped(k)),
            broker_epochs(sym, b),
            or_(*(eq(k.status, status) for status in STATUSES)),
            implies(not_(running(k)), stopped(k)),
            # stopping fences it, a restart registers it fenced, and it is unfenced only once it
            # has caught up with the metadata
            # (`BrokerHeartbeatManager.calculateNextBrokerState`, 4.1.0)
            implies(not_(k.initialised), sym.registry[b - 1].fenced),
            # the leader is never fenced: fencing it moves the leadership
            # out of every ISR (`ReplicationControlManager.handleBrokerFenced`, 4.1.0)
            implies(sym.registry[b - 1].fenced, ne(sym.partition.leader, b)),
        )

    return every(enc, ok)


def reassigned_replica(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """Under reassignment: a broker holds a replica only once it applied a registration that
    names it, until it applies one that does not (the data is deleted: `act_on` in
    `model/actions/metadata.py`); its view then names it, in one of the assignments."""
    s = enc.sets
    k = sym.brokers[b - 1]
    r, v = k.replica, k.replica.view
    ever = sorted({a for a, _, _, _ in assignments(enc.cfg)})
    lists = sorted({s.of(frozenset(a.replicas)) for a in ever})
    named = sorted({m for a in ever for m in a.replicas})
    p = sym.partition
    metadata = and_(k.applied_epoch >= 1, k.applied_epoch <= p.partition_epoch)
    # it has none because the last record it applied does not name it (with `leader_span` in
    # the history facts, for every older record)
    unnamed = implies(
        eq(k.applied_epoch, p.partition_epoch), not_(s.has(Terms(enc).members(p.replicas), b))
    )
    # an original replica loses its replica only to a later record than the first
    original = k.applied_epoch >= 2 if b in enc.cfg.replicas else True
    none = and_(unnamed, original, *enc.equal(r, enc.no_replica(), Replica))
    if once_added(enc.cfg, b):
        # without a replica it has not yet applied a record naming it: every copy naming it
        # is later than the record it applied, and it is in no ISR, ELR or last known ELR (it
        # joins the ISR only by fetching, and the others only from the ISR)
        none = and_(
            none,
            not_(s.has(s.union(p.isr, p.elr, p.last_known_elr), b)),
            *(
                not_(s.has(s.union(replica(sym, x).view.isr, replica(sym, x).pending_isr), b))
                for x in brokers(enc)
            ),
            *(
                implies(and_(present, s.has(named, b)), copy_epoch > k.applied_epoch)
                for present, copy_epoch, _, named in assignment_copies(enc, sym)
            ),
        )
    if b not in named:
        return and_(metadata, none)
    held = and_(
        log_well_formed(enc, r.log, r.leo, v.leader_epoch),
        r.hwm >= 0,
        r.hwm <= r.leo,
        r.recovery_point >= 0,
        r.recovery_point <= r.leo,
        v.present,
        or_(*(s.eq(v.replicas, m) for m in lists)),
        s.has(v.replicas, b),
        v.leader_epoch >= 1,
        v.leader_epoch <= sym.partition.leader_epoch,
        v.partition_epoch >= 1,
        v.partition_epoch <= sym.partition.partition_epoch,
        k.applied_epoch <= v.partition_epoch,
        # only a leader's view moves ahead of the metadata it applied (an AlterPartition answer)
        implies(ne(r.role, LEADER), eq(k.applied_epoch, v.partition_epoch)),
        s.subset(v.isr, v.replicas),
        recovering_alone(enc, v.recovering, v.leader, v.isr),
        implies(eq(r.role, LEADER), not_(v.recovering)),  # a leader counts itself RECOVERED
        or_(eq(v.leader, -1), *(and_(eq(v.leader, m), s.has(v.isr, m)) for m in named)),
        eq(eq(r.role, LEADER), eq(v.leader, b)),
        eq(eq(r.role, NONE), eq(v.leader, -1)),
        or_(eq(r.role, LEADER), eq(r.role, FOLLOWER), eq(r.role, NONE)),
    )
    return and_(metadata, ite(r.present, held, none))


def stopped(k: Broker) -> Term:
    """A stopped broker's replica keeps its log (its flushed prefix, lossy) and nothing else until
    the broker, restarted, acts on its metadata again (`lifecycle.py: _stopped`)."""
    r = k.replica
    return and_(
        not_(r.view.present),
        eq(r.role, NONE),
        not_(k.initialised),
        not_(k.fetch_response.present),
    )


def broker_epochs(sym: ClusterState, b: int) -> Term:
    """A running broker's epoch is its registration's; a stopped one's is not newer."""
    k, registered = sym.brokers[b - 1], sym.registry[b - 1].epoch
    return and_(k.epoch >= 0, k.epoch <= registered, implies(running(k), eq(k.epoch, registered)))


def remembered_epoch(enc: Encoding, sym: ClusterState, epoch: Term, m: int) -> Term:
    """A broker epoch of broker m that something remembers (a leader's follower state, a request
    in flight): m's own, or an older one where brokers can restart since."""
    if stops(enc):
        return and_(epoch >= 0, epoch <= sym.brokers[m - 1].epoch)
    return eq(epoch, sym.brokers[m - 1].epoch)


def leader_state(enc: Encoding, sym: ClusterState) -> Term:
    """A leader's Maximal ISR is its ISR plus its proposal; only a leader has follower state,
    a proposal or unacknowledged writes."""
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)

    def ok(b: int) -> Term:
        r = replica(sym, b)
        lead = eq(r.role, LEADER)
        unknown = and_(
            *(
                and_(eq(f.leo, -1), eq(f.broker_epoch, -1), not_(f.fetched_this_epoch))
                for f in r.followers
            )
        )
        followers_ok = and_(
            *(
                and_(
                    f.leo >= -1,
                    f.leo <= r.leo,
                    eq(eq(f.leo, -1), eq(f.broker_epoch, -1)),
                    implies(f.fetched_this_epoch, f.leo >= 0),
                    or_(eq(f.broker_epoch, -1), remembered_epoch(enc, sym, f.broker_epoch, m)),
                )
                if m != b
                else and_(eq(f.leo, -1), eq(f.broker_epoch, -1), not_(f.fetched_this_epoch))
                for m, f in enumerate(r.followers, start=1)
            )
        )
        pending_ok = ite(
            r.pending,
            and_(
                s.has(r.pending_isr, b),
                s.subset(r.pending_isr, r.view.replicas if enc.reassigning else replicas),
                # sent from the view, dropped once a newer record arrives (`as_leader`)
                eq(r.pending_partition_epoch, r.view.partition_epoch)
                if enc.reassigning
                else r.pending_partition_epoch >= r.view.partition_epoch,
            ),
            and_(s.empty(r.pending_isr), eq(r.pending_partition_epoch, 0)),
        )
        return ite(
            lead,
            and_(
                followers_ok,
                pending_ok,
                s.eq(r.maximal_isr, s.union(r.view.isr, s.ite(r.pending, r.pending_isr, 0))),
                r.leso >= 0,
                r.leso <= r.leo,
            ),
            and_(
                unknown,
                not_(r.pending),
                s.empty(r.pending_isr),
                eq(r.pending_partition_epoch, 0),
                eq(r.unacked_from, -1),
            ),
        )

    return every(enc, ok)


def unacknowledged(enc: Encoding, sym: ClusterState) -> Term:
    """A leader's unacknowledged writes are [unacked, LEO), above its HWM; who received one
    includes the leader and every follower it knows to have fetched past it."""
    s = enc.sets

    def ok(b: int) -> Term:
        r = replica(sym, b)
        pending = r.unacked_from >= 0
        parts = [
            r.unacked_from >= -1,
            implies(pending, and_(r.unacked_from < r.leo, r.hwm <= r.unacked_from)),
        ]
        for o in range(enc.r):
            inside = and_(pending, r.unacked_from <= o, o < r.leo)
            parts.append(implies(not_(inside), s.empty(r.received[o])))
            parts.append(implies(inside, s.has(r.received[o], b)))
            for m in brokers(enc):
                if m != b:
                    parts.append(
                        implies(and_(inside, r.followers[m - 1].leo > o), s.has(r.received[o], m))
                    )
        return and_(*parts)

    return every(enc, ok)


def committed_shape(enc: Encoding, sym: ClusterState) -> Term:
    g = sym.ghost
    return and_(
        log_well_formed(enc, g.committed, g.true_hwm, sym.partition.leader_epoch),
        every(enc, lambda b: replica(sym, b).hwm <= g.true_hwm),
    )


def acked_are_committed(enc: Encoding, sym: ClusterState) -> Term:
    g = sym.ghost
    return and_(
        *(epochs_within(p, g.committed[o], o < g.true_hwm) for o, p in enumerate(g.pos_acked))
    )


def hwm_prefix_committed(enc: Encoding, sym: ClusterState) -> Term:
    """Below its HWM a replica holds the committed records."""
    g = sym.ghost
    return every(
        enc, lambda b: holds_prefix(enc, replica(sym, b), g.committed, replica(sym, b).hwm)
    )


def log_matching(enc: Encoding, sym: ClusterState) -> Term:
    """Two logs with the same record at an offset hold the same records below it (the logs of
    the replicas, of the fetch responses in flight, and the committed log)."""
    logs = all_logs(enc, sym)
    parts = []
    for i, (a, _, a_end) in enumerate(logs):
        for c, _, c_end in logs[i + 1 :]:
            for o in range(enc.r):
                same = and_(o < a_end, o < c_end, eq(a[o], c[o]))
                for below in range(o):
                    parts.append(implies(same, eq(a[below], c[below])))
    return and_(*parts)


def holders_received(enc: Encoding, sym: ClusterState) -> Term:
    """Every replica holding a leader's unacknowledged write is among its receivers."""
    s = enc.sets
    parts = []
    for b in brokers(enc):
        r = replica(sym, b)
        for o in range(enc.r):
            inside = and_(r.unacked_from >= 0, r.unacked_from <= o, o < r.leo)
            for m in brokers(enc):
                if m != b:
                    holder = replica(sym, m)
                    parts.append(
                        implies(
                            and_(inside, o < holder.leo, eq(holder.log[o], r.log[o])),
                            s.has(r.received[o], m),
                        )
                    )
    return and_(*parts)


def registrations_consistent(enc: Encoding, sym: ClusterState, fixed: int | None = None) -> Term:
    """Every two copies of the registration agree (with `fixed`, those of representative
    brokers: `Invariant.orbit`; `consistent` is symmetric and the copies are in the order of
    their brokers, so each unordered pair's orbit has a representative in that order)."""
    copies = registration_copies(enc, sym)
    owners = copy_owners(enc)
    agree = and_(
        *(
            consistent(enc, a, copies[j])
            for i, a in enumerate(copies)
            for j in range(i + 1, len(copies))
            if representative(fixed, owners[i], owners[j])
        )
    )
    if not enc.reassigning:
        return agree
    held = assignment_copies(enc, sym)
    return and_(
        agree, *(assignments_agree(enc, a, b) for i, a in enumerate(held) for b in held[i + 1 :])
    )


def one_leader_per_epoch(enc: Encoding, sym: ClusterState) -> Term:
    """Whoever names a leader for an epoch names the same one; and the records of a leader's
    current epoch are its own writes."""
    carriers = epoch_carriers(enc, sym)
    parts = []
    for i, (present_a, epoch_a, leader_a) in enumerate(carriers):
        for present_b, epoch_b, leader_b in carriers[i + 1 :]:
            parts.append(
                implies(and_(present_a, present_b, eq(epoch_a, epoch_b)), eq(leader_a, leader_b))
            )
    logs = all_logs(enc, sym)
    for b in brokers(enc):
        r = replica(sym, b)
        lead = eq(r.role, LEADER)
        for log, start, end in logs:
            for o in range(enc.r):
                parts.append(
                    implies(
                        and_(lead, start <= o, o < end, eq(log[o], r.view.leader_epoch)),
                        and_(o < r.leo, eq(r.log[o], r.view.leader_epoch)),
                    )
                )
        for o in range(enc.r):
            parts.append(
                implies(and_(lead, o < r.leo), eq(r.log[o] >= r.view.leader_epoch, o >= r.leso))
            )
    return and_(*parts)


def fetch_responses(enc: Encoding, sym: ClusterState) -> Term:
    """A response in flight answers the follower's current position from its leader's log."""
    replicas = sorted(ever_assigned(enc)) if enc.reassigning else enc.cfg.replicas
    # a stopped broker or one a reassignment removed has no view
    viewless = stops(enc) or enc.reassigning

    def ok(b: int) -> Term:
        k = sym.brokers[b - 1]
        f, r = k.fetch_response, k.replica
        entries = and_(
            *(
                ite(
                    and_(f.fetch_offset <= o, o < f.end),
                    and_(f.entries[o] >= 1, f.entries[o] <= f.leader_epoch),
                    eq(f.entries[o], 0),
                )
                for o in range(enc.r)
            )
        )
        from_leader = []
        for m in brokers(enc):
            if m == b:
                continue
            lr = replica(sym, m)
            current = and_(
                eq(f.leader, m),
                eq(lr.role, LEADER),
                eq(lr.view.leader_epoch, f.leader_epoch),
                still_awaited(r, f),
            )
            from_leader.append(
                implies(
                    current,
                    and_(
                        implies(
                            not_(f.diverging),
                            and_(
                                holds_prefix(enc, r, lr.log, f.fetch_offset),
                                f.end <= lr.leo,
                                f.hwm <= lr.hwm,
                                *(
                                    implies(
                                        and_(f.fetch_offset <= o, o < f.end),
                                        eq(f.entries[o], lr.log[o]),
                                    )
                                    for o in range(enc.r)
                                ),
                            ),
                        ),
                    ),
                )
            )
        leader_at_least = and_(
            *(
                implies(
                    and_(eq(f.leader, m), replica(sym, m).view.present if viewless else True),
                    replica(sym, m).view.leader_epoch >= f.leader_epoch,
                )
                for m in brokers(enc)
            )
        )
        return implies(
            f.present,
            and_(
                leader_at_least,
                or_(*(eq(f.leader, m) for m in replicas if m != b)),
                f.leader_epoch >= 1,
                # a replica a reassignment removed has no view; its response is of an older
                # epoch than any record it applies next (`history.leader_span`)
                implies(r.view.present, f.leader_epoch <= r.view.leader_epoch)
                if enc.reassigning
                else f.leader_epoch <= r.view.leader_epoch,
                implies(still_awaited(r, f), eq(f.fetch_offset, r.leo)),
                f.fetch_offset >= 0,
                f.fetch_offset <= f.end,
                f.end <= enc.r,
                f.hwm >= 0,
                f.hwm <= sym.ghost.true_hwm,
                implies(
                    f.diverging,
                    and_(
                        eq(f.end, f.fetch_offset),
                        f.diverging_end >= 0,
                        f.diverging_epoch >= 0,
                        f.diverging_epoch <= f.leader_epoch,
                    ),
                ),
                implies(not_(f.diverging), f.hwm <= f.end),
                entries,
                *from_leader,
            ),
        )

    return every(enc, ok)


def records_bound(enc: Encoding, sym: ClusterState) -> Term:
    """No log is longer than the number of records written so far."""
    written = enc.r - sym.budget.records
    return and_(
        sym.budget.records >= 0,
        written <= enc.r,
        *(end <= written for _, _, end in all_logs(enc, sym)),
    )


def alter_partition_messages(enc: Encoding, sym: ClusterState) -> Term:
    """AlterPartition requests and answers in flight: at most one per leader, for its pending
    proposal when it still has one; an accepted answer names the leader and a committed ISR."""
    s = enc.sets
    # under reassignment, within every broker an assignment names (the view bounds it closer)
    replicas = s.of(ever_assigned(enc) if enc.reassigning else enc.cfg.replicas)

    def ok(b: int) -> Term:
        k = sym.brokers[b - 1]
        q, a, r = sym.ap_requests[b - 1], k.ap_response, k.replica
        # a request outlives its sender's stop: it then compares with nothing the sender holds
        current = eq(q.broker_epoch, k.epoch) if stops(enc) else True
        request = implies(
            q.present,
            and_(
                not_(a.present),
                q.partition_epoch <= ite(r.present, r.view.partition_epoch, k.applied_epoch)
                if enc.reassigning
                else True,
                q.leader_epoch >= 1,
                q.leader_epoch <= sym.partition.leader_epoch,
                implies(r.view.present, q.leader_epoch <= r.view.leader_epoch)
                if stops(enc) or enc.reassigning
                else q.leader_epoch <= r.view.leader_epoch,
                q.partition_epoch >= 1,
                q.partition_epoch <= sym.partition.partition_epoch,
                s.has(q.isr, b),
                s.subset(q.isr, replicas),
                # a replica a reassignment adds is proposed only once it has fetched
                *(
                    implies(s.has(q.isr, m), replica(sym, m).present)
                    for m in brokers(enc)
                    if enc.reassigning and once_added(enc.cfg, m)
                ),
                not_(q.recovering),
                remembered_epoch(enc, sym, q.broker_epoch, b),
                implies(
                    and_(eq(r.role, LEADER), r.pending, current),
                    and_(
                        s.eq(q.isr, r.pending_isr),
                        eq(q.partition_epoch, r.pending_partition_epoch),
                        eq(q.leader_epoch, r.view.leader_epoch),
                    ),
                ),
                *(
                    ite(
                        s.has(q.isr, m),
                        or_(
                            eq(q.member_epochs[m - 1], -1),
                            remembered_epoch(enc, sym, q.member_epochs[m - 1], m),
                        ),
                        eq(q.member_epochs[m - 1], 0),
                    )
                    for m in brokers(enc)
                ),
            ),
        )
        answer = implies(
            a.present,
            and_(
                a.request_partition_epoch >= 1,
                a.request_partition_epoch <= sym.partition.partition_epoch,
                s.has(a.request_isr, b),
                s.subset(a.request_isr, replicas),
                implies(
                    and_(eq(r.role, LEADER), r.pending),
                    and_(
                        s.eq(a.request_isr, r.pending_isr),
                        eq(a.request_partition_epoch, r.pending_partition_epoch),
                    ),
                ),
                implies(
                    eq(a.error, 0),
                    and_(
                        eq(a.leader, b),
                        a.leader_epoch >= 1,
                        a.leader_epoch <= sym.partition.leader_epoch,
                        a.partition_epoch >= 1,
                        a.partition_epoch <= sym.partition.partition_epoch,
                        s.has(a.isr, b),
                        s.subset(a.isr, replicas),
                        *(
                            implies(s.has(a.isr, m), replica(sym, m).present)
                            for m in brokers(enc)
                            if enc.reassigning and once_added(enc.cfg, m)
                        ),
                        not_(a.recovering),
                    ),
                ),
            ),
        )
        if enc.reassigning:
            # an answer covers the one record its request made (none for a change that changed
            # nothing), which its leader's view has not passed
            horizon = ite(r.present, r.view.partition_epoch, k.applied_epoch)
            answer = and_(
                answer,
                implies(
                    and_(a.present, eq(a.error, 0)),
                    and_(
                        # the answer's ISR is within the replicas of the leader's view while it
                        # can take it (`copies.assignment_copies`)
                        implies(
                            and_(
                                r.present,
                                eq(a.leader_epoch, r.view.leader_epoch),
                                r.view.partition_epoch <= a.partition_epoch,
                            ),
                            s.subset(a.isr, r.view.replicas),
                        ),
                        a.request_partition_epoch <= horizon,
                        a.partition_epoch >= a.request_partition_epoch,
                        a.partition_epoch <= a.request_partition_epoch + 1,
                    ),
                ),
            )
        return and_(request, answer)

    return every(enc, ok)


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("controller_shape", controller_shape, "the controller's registration is well formed"),
    Invariant(
        "replicas_well_formed", replicas_well_formed, "logs, views and roles are well formed"
    ),
    Invariant("leader_state", leader_state, "only leaders have follower state and proposals"),
    Invariant("unacknowledged", unacknowledged, "unacknowledged writes and their receivers"),
    Invariant("committed_shape", committed_shape, "the committed log is well formed"),
    Invariant("acked_are_committed", acked_are_committed, "acknowledged writes are committed"),
    Invariant("hwm_prefix_committed", hwm_prefix_committed, "below a HWM the log is committed"),
    Invariant("log_matching", log_matching, "same record at an offset, same records below"),
    Invariant("holders_received", holders_received, "holders of a write are its receivers"),
    Invariant("one_leader_per_epoch", one_leader_per_epoch, "an epoch has one leader"),
    Invariant("fetch_responses", fetch_responses, "responses in flight answer from the leader"),
    Invariant("records_bound", records_bound, "no log is longer than the records written"),
    Invariant(
        "registrations_consistent",
        registrations_consistent,
        "copies of the metadata agree",
        orbit=registrations_consistent,
    ),
    Invariant(
        "alter_partition_messages", alter_partition_messages, "AlterPartition requests, answers"
    ),
)
