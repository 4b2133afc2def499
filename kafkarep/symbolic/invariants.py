"""The auxiliary invariants and history facts that make the properties inductive.

Each is a named predicate over one symbolic state (or, for a history fact, over a record of the
metadata log and the current state). They are written for any model shape; the induction proves
each of them (initiation and consecution), so a wrong one shows up as a counterexample to
induction rather than as a false proof.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.symbolic import properties as props
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.lemmas import AnyFact, Fact, Invariant, PairFact
from kafkarep.symbolic.ops import Term, and_, eq, imax, imin, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import (
    FOLLOWER,
    LEADER,
    NONE,
    ClusterState,
    FetchResponse,
    PartitionRegistration,
    Replica,
    running,
)
from kafkarep.symbolic.transition.cluster import with_broker
from kafkarep.symbolic.transition.logs import truncation_point
from kafkarep.symbolic.transition.metadata import act_on

Predicate = Callable[[Encoding, ClusterState], Term]


def _clause(name: str) -> Invariant:
    clause = props.CLAUSES[name]

    def holds(enc: Encoding, sym: ClusterState) -> Term:
        return clause(enc, sym)

    return Invariant(name, holds, f"the property clause {name}")


def brokers(enc: Encoding) -> range:
    return range(1, enc.n + 1)


def every(enc: Encoding, test: Callable[[int], Term]) -> Term:
    return and_(*(test(b) for b in brokers(enc)))


def rep(sym: ClusterState, b: int) -> Replica:
    return sym.brokers[b - 1].replica


def holds_prefix(enc: Encoding, r: Replica, log: tuple[Term, ...], length: Term) -> Term:
    """The replica's log starts with the first `length` records of `log`."""
    return and_(
        r.leo >= length,
        *(implies(o < length, eq(r.log[o], log[o])) for o in range(enc.r)),
    )


def log_well_formed(enc: Encoding, log: tuple[Term, ...], leo: Term, top: Term) -> Term:
    """Epochs at least 1 and at most `top` below the LEO, zero from it, never decreasing."""
    parts = [leo >= 0, leo <= enc.r]
    for o in range(enc.r):
        parts.append(ite(o < leo, and_(log[o] >= 1, log[o] <= top), eq(log[o], 0)))
        if o + 1 < enc.r:
            parts.append(implies(o + 1 < leo, log[o] <= log[o + 1]))
    return and_(*parts)


# --- structure ----------------------------------------------------------------------------


def controller_shape(enc: Encoding, sym: ClusterState) -> Term:
    return registration_shape(enc, sym.partition)


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
        s.subset(p.elr, replicas),
        s.empty(s.inter(p.isr, p.elr)),
        s.subset(p.last_known_elr, s.union(replicas, s.bit(-1))),
        not_(p.recovering),
    ]
    if enc.cfg.options.elr_enabled:
        parts.append(implies(s.size(p.isr) >= enc.cfg.min_isr, s.empty(p.elr)))
        parts.append(implies(s.empty(s.union(p.isr, p.elr)), s.empty(p.last_known_elr)))
        # the last known leader is cleared once the partition has a leader (R1.3.5)
        parts.append(implies(ne(p.leader, -1), s.empty(p.last_known_elr)))
        if _views_only_advance(enc):
            # the last ISR member to go moves to the ELR, which only an unclean shutdown (none
            # here) or an election empties (R1.3.2, R1.3.7): no ISR and ELR only from the start
            parts.append(implies(s.empty(s.union(p.isr, p.elr)), eq(p.partition_epoch, 1)))
    return and_(*parts)


def replicas_well_formed(enc: Encoding, sym: ClusterState) -> Term:
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)

    def ok(b: int) -> Term:
        k = sym.brokers[b - 1]
        r = k.replica
        v = r.view
        if b not in enc.cfg.replicas:
            return not_(r.present)
        return and_(
            r.present,
            log_well_formed(enc, r.log, r.leo, v.leader_epoch),
            r.hwm >= 0,
            r.hwm <= r.leo,
            v.present,
            s.eq(v.replicas, replicas),
            v.leader_epoch >= 1,
            v.leader_epoch <= sym.partition.leader_epoch,
            v.partition_epoch >= 1,
            v.partition_epoch <= sym.partition.partition_epoch,
            k.applied_epoch >= 1,
            k.applied_epoch <= v.partition_epoch,
            s.subset(v.isr, replicas),
            not_(v.recovering),
            or_(
                eq(v.leader, -1),
                *(and_(eq(v.leader, m), s.has(v.isr, m)) for m in enc.cfg.replicas),
            ),
            eq(eq(r.role, LEADER), eq(v.leader, b)),
            eq(eq(r.role, NONE), eq(v.leader, -1)),
            or_(eq(r.role, LEADER), eq(r.role, FOLLOWER), eq(r.role, NONE)),
        )

    return every(enc, ok)


def leader_state(enc: Encoding, sym: ClusterState) -> Term:
    """A leader's Maximal ISR is its ISR plus its proposal; only a leader has follower state,
    a proposal or unacknowledged writes."""
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)

    def ok(b: int) -> Term:
        r = rep(sym, b)
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
                    or_(eq(f.broker_epoch, -1), eq(f.broker_epoch, sym.brokers[m - 1].epoch)),
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
                s.subset(r.pending_isr, replicas),
                r.pending_partition_epoch >= r.view.partition_epoch,
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
        r = rep(sym, b)
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
        every(enc, lambda b: rep(sym, b).hwm <= g.true_hwm),
    )


def acked_are_committed(enc: Encoding, sym: ClusterState) -> Term:
    g = sym.ghost
    from kafkarep.symbolic.ops import epochs_within

    return and_(
        *(epochs_within(p, g.committed[o], o < g.true_hwm) for o, p in enumerate(g.pos_acked))
    )


def hwm_prefix_committed(enc: Encoding, sym: ClusterState) -> Term:
    """Below its HWM a replica holds the committed records."""
    g = sym.ghost
    return every(enc, lambda b: holds_prefix(enc, rep(sym, b), g.committed, rep(sym, b).hwm))


def log_matching(enc: Encoding, sym: ClusterState) -> Term:
    """Two logs with the same record at an offset hold the same records below it (the logs of
    the replicas, of the fetch responses in flight, and the committed log)."""
    logs = _logs(enc, sym)
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
        r = rep(sym, b)
        for o in range(enc.r):
            inside = and_(r.unacked_from >= 0, r.unacked_from <= o, o < r.leo)
            for m in brokers(enc):
                if m != b:
                    holder = rep(sym, m)
                    parts.append(
                        implies(
                            and_(inside, o < holder.leo, eq(holder.log[o], r.log[o])),
                            s.has(r.received[o], m),
                        )
                    )
    return and_(*parts)


def _epoch_carriers(enc: Encoding, sym: ClusterState) -> list[tuple[Term, Term, Term]]:
    """(present, leader epoch, leader) of everything that names a leader for an epoch."""
    out = [(True, sym.partition.leader_epoch, sym.partition.leader)]
    for b in brokers(enc):
        k = sym.brokers[b - 1]
        out.append((k.replica.present, k.replica.view.leader_epoch, k.replica.view.leader))
        out.append(
            (k.fetch_response.present, k.fetch_response.leader_epoch, k.fetch_response.leader)
        )
        out.append((sym.ap_requests[b - 1].present, sym.ap_requests[b - 1].leader_epoch, b))
        out.append(
            (
                and_(k.ap_response.present, eq(k.ap_response.error, 0)),
                k.ap_response.leader_epoch,
                k.ap_response.leader,
            )
        )
    return out


def _registrations(enc: Encoding, sym: ClusterState) -> list[tuple[Term, Term, Term, Term, Term]]:
    """(present, partition epoch, leader epoch, leader, ISR) of the controller's registration
    and of every copy of one a replica acts on."""
    out = [
        (
            True,
            sym.partition.partition_epoch,
            sym.partition.leader_epoch,
            sym.partition.leader,
            sym.partition.isr,
        )
    ]
    for b in brokers(enc):
        v = rep(sym, b).view
        out.append((v.present, v.partition_epoch, v.leader_epoch, v.leader, v.isr))
        a = sym.brokers[b - 1].ap_response
        out.append(
            (and_(a.present, eq(a.error, 0)), a.partition_epoch, a.leader_epoch, a.leader, a.isr)
        )
    return out


def _consistent(enc: Encoding, a: tuple[Term, ...], b: tuple[Term, ...]) -> Term:
    """Two registrations of the same partition: epochs move together, equal partition epochs
    are the same registration."""
    p1, pe1, le1, l1, isr1 = a
    p2, pe2, le2, l2, isr2 = b
    return implies(
        and_(p1, p2),
        and_(
            implies(pe1 <= pe2, le1 <= le2),
            implies(pe2 <= pe1, le2 <= le1),
            implies(eq(pe1, pe2), and_(eq(l1, l2), enc.sets.eq(isr1, isr2))),
            _successive(enc, pe1, le1, isr1, pe2, le2, l2, isr2),
            _successive(enc, pe2, le2, isr2, pe1, le1, l1, isr1),
        ),
    )


def _successive(
    enc: Encoding, pe1: Term, le1: Term, isr1: Term, pe2: Term, le2: Term, l2: Term, isr2: Term
) -> Term:
    """Registration 2 follows registration 1 directly: a new leader epoch brings no replica
    into the ISR but the new leader, and a leader from outside the ISR is alone in it (a clean
    election keeps the ISR, one from the ELR or an unclean one leaves the leader alone: kafka
    PartitionChangeBuilder; only the leader's AlterPartition adds members)."""
    if enc.reassigning:
        return True
    s = enc.sets
    following = eq(pe2, pe1 + 1)
    elected = and_(following, ne(le2, le1))
    return and_(
        # a change moves the leader epoch by one at most (R1.2.6)
        implies(following, le2 <= le1 + 1),
        implies(
            elected,
            and_(
                s.subset(isr2, s.union(isr1, s.bit(l2))),
                # a leader from outside the ISR (ELR, unclean, last known) is alone in it
                implies(and_(ne(l2, -1), not_(s.has(isr1, l2))), s.subset(isr2, s.bit(l2))),
            ),
        ),
    )


def registrations_consistent(enc: Encoding, sym: ClusterState) -> Term:
    regs = _registrations(enc, sym)
    return and_(*(_consistent(enc, a, b) for i, a in enumerate(regs) for b in regs[i + 1 :]))


def one_leader_per_epoch(enc: Encoding, sym: ClusterState) -> Term:
    """Whoever names a leader for an epoch names the same one; and the records of a leader's
    current epoch are its own writes."""
    carriers = _epoch_carriers(enc, sym)
    parts = []
    for i, (p1, e1, l1) in enumerate(carriers):
        for p2, e2, l2 in carriers[i + 1 :]:
            parts.append(implies(and_(p1, p2, eq(e1, e2)), eq(l1, l2)))
    logs = _logs(enc, sym)
    for b in brokers(enc):
        r = rep(sym, b)
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


def _logs(enc: Encoding, sym: ClusterState) -> list[tuple[tuple[Term, ...], Term, Term]]:
    """(epochs, start, end) of every log: replicas, the committed log, and each fetch response
    as the log its follower will have after appending it."""
    out: list[tuple[tuple[Term, ...], Term, Term]] = []
    for b in brokers(enc):
        k = sym.brokers[b - 1]
        r, f = k.replica, k.fetch_response
        out.append((r.log, 0, r.leo))
        appended = tuple(ite(o < f.fetch_offset, r.log[o], f.entries[o]) for o in range(enc.r))
        applies = and_(f.present, not_(f.diverging), _awaited(r, f))
        out.append((appended, 0, ite(applies, f.end, 0)))
    out.append((sym.ghost.committed, 0, sym.ghost.true_hwm))
    return out


def _awaited(r: Replica, f: FetchResponse) -> Term:
    """The follower still waits for this response: it follows the same leader in the same
    epoch (its log cannot have changed since it fetched)."""
    return and_(
        eq(r.role, FOLLOWER), eq(r.view.leader, f.leader), eq(r.view.leader_epoch, f.leader_epoch)
    )


def fetch_responses(enc: Encoding, sym: ClusterState) -> Term:
    """A response in flight answers the follower's current position from its leader's log."""
    replicas = enc.cfg.replicas

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
            lr = rep(sym, m)
            current = and_(
                eq(f.leader, m),
                eq(lr.role, LEADER),
                eq(lr.view.leader_epoch, f.leader_epoch),
                _awaited(r, f),
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
                implies(eq(f.leader, m), rep(sym, m).view.leader_epoch >= f.leader_epoch)
                for m in brokers(enc)
            )
        )
        return implies(
            f.present,
            and_(
                leader_at_least,
                or_(*(eq(f.leader, m) for m in replicas if m != b)),
                f.leader_epoch >= 1,
                f.leader_epoch <= r.view.leader_epoch,
                implies(_awaited(r, f), eq(f.fetch_offset, r.leo)),
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
        *(end <= written for _, _, end in _logs(enc, sym)),
    )


def alter_partition_messages(enc: Encoding, sym: ClusterState) -> Term:
    """AlterPartition requests and answers in flight: at most one per leader, for its pending
    proposal when it still has one; an accepted answer names the leader and a committed ISR."""
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)

    def ok(b: int) -> Term:
        k = sym.brokers[b - 1]
        q, a, r = sym.ap_requests[b - 1], k.ap_response, k.replica
        request = implies(
            q.present,
            and_(
                not_(a.present),
                q.leader_epoch >= 1,
                q.leader_epoch <= sym.partition.leader_epoch,
                q.leader_epoch <= r.view.leader_epoch,
                q.partition_epoch >= 1,
                q.partition_epoch <= sym.partition.partition_epoch,
                s.has(q.isr, b),
                s.subset(q.isr, replicas),
                not_(q.recovering),
                eq(q.broker_epoch, k.epoch),
                implies(
                    and_(eq(r.role, LEADER), r.pending),
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
                            eq(q.member_epochs[m - 1], sym.brokers[m - 1].epoch),
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
                        not_(a.recovering),
                    ),
                ),
            ),
        )
        return and_(request, answer)

    return every(enc, ok)


# --- the quorum argument (completeness properties; inductive at N = 3, see prove.md) --------
#
# A leader advances its HWM to the smallest position, as it knows them, of its Maximal ISR. A
# member that can still fetch from it (has not moved past its epoch) bounds nothing yet: it
# will fetch before the HWM passes it. A member that has moved on bounds the HWM for good by its
# last known position. `commit_bound` is therefore the most a leader can ever commit with its
# current Maximal ISR, and the invariants below say who must hold the leader's log up to it.


def can_fetch(enc: Encoding, sym: ClusterState, m: int, leader: int) -> Term:
    """Broker m has not moved past the leader's epoch: it may still fetch from it there."""
    c, lr = rep(sym, m), rep(sym, leader)
    return or_(
        c.view.leader_epoch < lr.view.leader_epoch,
        and_(eq(c.view.leader_epoch, lr.view.leader_epoch), eq(c.role, FOLLOWER)),
    )


def commit_bound(enc: Encoding, sym: ClusterState, leader: int, members: Term) -> Term:
    """The most the leader can commit while `members` is its Maximal ISR."""
    s = enc.sets
    lr = rep(sym, leader)
    out: Term = lr.leo
    for m in brokers(enc):
        if m != leader:
            known = imax(lr.followers[m - 1].leo, 0)
            bound = ite(can_fetch(enc, sym, m, leader), lr.leo, known)
            out = ite(s.has(members, m), imin(out, bound), out)
    return out


def may_commit(enc: Encoding, isr: Term) -> Term:
    """The HWM rule's MinISR gate (KIP-966) on the ISR a leader holds (or will hold)."""
    cfg = enc.cfg
    if cfg.options.elr_enabled and cfg.guard_on("hwm.isr_at_min_isr"):
        return enc.sets.size(isr) >= cfg.min_isr
    return True


def candidates(enc: Encoding, sym: ClusterState) -> Term:
    return enc.sets.union(sym.partition.isr, sym.partition.elr)


def _quorum(
    enc: Encoding, sym: ClusterState, leader: int, members: Term, isr: Term, when: Term
) -> Term:
    """Every other member of the controller's ISR and ELR is a member of `members` still able
    to fetch from the leader, or holds the leader's log up to its commit bound over them."""
    s = enc.sets
    lr = rep(sym, leader)
    bound = commit_bound(enc, sym, leader, members)
    parts = []
    for c in brokers(enc):
        if c == leader:
            continue
        cr = rep(sym, c)
        premise = and_(
            when,
            eq(lr.role, LEADER),
            may_commit(enc, isr),
            s.has(candidates(enc, sym), c),
            running(sym.brokers[c - 1]),
            cr.present,
        )
        fetching = and_(s.has(members, c), can_fetch(enc, sym, c, leader))
        parts.append(implies(premise, or_(fetching, holds_prefix(enc, cr, lr.log, bound))))
    return and_(*parts)


def _current(
    enc: Encoding, sym: ClusterState, leader: int, members: Term, isr: Term, when: Term
) -> Term:
    """If every member of `members` can still fetch from the leader, so can every other member
    of the controller's ISR and ELR, and it is one of them (nobody was elected past it)."""
    s = enc.sets
    lr = rep(sym, leader)
    others = [m for m in brokers(enc) if m != leader]
    all_fetch = and_(*(implies(s.has(members, m), can_fetch(enc, sym, m, leader)) for m in others))
    premise = and_(when, eq(lr.role, LEADER), may_commit(enc, isr), all_fetch)
    return and_(
        *(
            implies(
                and_(premise, s.has(candidates(enc, sym), c)),
                and_(s.has(members, c), can_fetch(enc, sym, c, leader)),
            )
            for c in others
        )
    )


def _accepted(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The broker has an accepted AlterPartition answer to its pending proposal."""
    k = sym.brokers[b - 1]
    a, r = k.ap_response, k.replica
    return and_(
        a.present,
        eq(a.error, 0),
        r.pending,
        eq(r.pending_partition_epoch, a.request_partition_epoch),
        enc.sets.eq(r.pending_isr, a.request_isr),
        eq(a.leader_epoch, r.view.leader_epoch),
    )


def _answer(enc: Encoding, sym: ClusterState, b: int) -> tuple[Term, Term, Term]:
    """(Maximal ISR, ISR, condition) once the leader adopts its accepted answer."""
    isr = sym.brokers[b - 1].ap_response.isr
    return isr, isr, _accepted(enc, sym, b)


def commit_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """Over a leader's Maximal ISR (when its ISR passes the MinISR gate): `_quorum`."""
    return every(
        enc, lambda b: _quorum(enc, sym, b, rep(sym, b).maximal_isr, rep(sym, b).view.isr, True)
    )


def current_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """Over a leader's Maximal ISR (when its ISR passes the MinISR gate): `_current`."""
    return every(
        enc, lambda b: _current(enc, sym, b, rep(sym, b).maximal_isr, rep(sym, b).view.isr, True)
    )


def answer_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """`_quorum` and `_current` over the ISR of an accepted answer the leader will adopt."""
    return every(
        enc,
        lambda b: and_(
            _quorum(enc, sym, b, *_answer(enc, sym, b)),
            _current(enc, sym, b, *_answer(enc, sym, b)),
        ),
    )


def rollback_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """`_quorum` and `_current` over the ISR a leader holds while it has a proposal pending and
    not accepted: a rolled-back proposal makes it the Maximal ISR again."""

    def ok(b: int) -> Term:
        r = rep(sym, b)
        open_ = and_(r.pending, not_(_accepted(enc, sym, b)))
        return and_(
            _quorum(enc, sym, b, r.view.isr, r.view.isr, open_),
            _current(enc, sym, b, r.view.isr, r.view.isr, open_),
        )

    return every(enc, ok)


def followers_known(enc: Encoding, sym: ClusterState) -> Term:
    """What a leader knows of a follower that fetched from it and has not moved past its epoch
    is true: the follower holds the leader's log up to that position, and follows it."""
    parts = []
    for b in brokers(enc):
        lr = rep(sym, b)
        for m in brokers(enc):
            if m == b:
                continue
            f, c = lr.followers[m - 1], rep(sym, m)
            known = and_(eq(lr.role, LEADER), f.fetched_this_epoch)
            parts.append(
                implies(and_(known, can_fetch(enc, sym, m, b)), holds_prefix(enc, c, lr.log, f.leo))
            )
            parts.append(
                implies(
                    and_(known, c.view.leader_epoch <= lr.view.leader_epoch),
                    and_(eq(c.role, FOLLOWER), eq(c.view.leader, b)),
                )
            )
    return and_(*parts)


def maximal_fetched(enc: Encoding, sym: ClusterState) -> Term:
    """A leader knows the position of a Maximal ISR member only from a fetch (the flag)."""
    s = enc.sets
    parts = []
    for b in brokers(enc):
        lr = rep(sym, b)
        for m in brokers(enc):
            if m != b:
                f = lr.followers[m - 1]
                member = and_(eq(lr.role, LEADER), s.has(lr.maximal_isr, m), f.leo >= 0)
                parts.append(implies(member, f.fetched_this_epoch))
    return and_(*parts)


def pending_caught_up(enc: Encoding, sym: ClusterState) -> Term:
    """A replica a leader proposes to add has fetched in its epoch, to its HWM and its LESO;
    the proposal was sent from the registration the leader holds."""
    s = enc.sets
    parts = []
    for b in brokers(enc):
        lr = rep(sym, b)
        proposing = and_(eq(lr.role, LEADER), lr.pending)
        parts.append(implies(proposing, eq(lr.pending_partition_epoch, lr.view.partition_epoch)))
        for m in brokers(enc):
            if m == b:
                continue
            f = lr.followers[m - 1]
            added = and_(proposing, s.has(lr.pending_isr, m), not_(s.has(lr.view.isr, m)))
            parts.append(
                implies(added, and_(f.fetched_this_epoch, f.leo >= lr.hwm, f.leo >= lr.leso))
            )
    return and_(*parts)


def requests_in_flight(enc: Encoding, sym: ClusterState) -> Term:
    """An AlterPartition request in flight is its sender's pending proposal, or is stale: from
    an older leader epoch or partition epoch than the sender holds. An accepted answer's ISR is
    within the ISR requested, its partition epoch not below the one requested, its leader epoch
    not above the sender's (the controller accepts only a request of its own epochs)."""
    s = enc.sets
    parts = []
    for b in brokers(enc):
        q, r, a = sym.ap_requests[b - 1], rep(sym, b), sym.brokers[b - 1].ap_response
        current = and_(
            eq(r.role, LEADER),
            eq(q.leader_epoch, r.view.leader_epoch),
            implies(not_(r.pending), q.partition_epoch < r.view.partition_epoch),
        )
        parts.append(implies(q.present, or_(q.leader_epoch < r.view.leader_epoch, current)))
        parts.append(
            implies(
                and_(a.present, eq(a.error, 0)),
                and_(
                    s.subset(a.isr, a.request_isr),
                    a.partition_epoch >= a.request_partition_epoch,
                    a.leader_epoch <= r.view.leader_epoch,
                ),
            )
        )
    return and_(*parts)


def divergence_costs_records(enc: Encoding, sym: ClusterState) -> Term:
    """Two logs with different records at offset o hold at least o + 2 distinct records between
    them (a record is an (offset, epoch) pair, written once), so that many were written."""
    written = enc.r - sym.budget.records
    logs = _logs(enc, sym)
    parts = []
    for i, (a, _, a_end) in enumerate(logs):
        for c, _, c_end in logs[i + 1 :]:
            for o in range(enc.r):
                differ = and_(o < a_end, o < c_end, ne(a[o], c[o]))
                parts.append(implies(differ, written >= o + 2))
    # a diverging response tells of the leader's log when it answered: its records of the
    # epoch answered (below the leader's own) end at the offset answered
    for b in brokers(enc):
        k = sym.brokers[b - 1]
        f = k.fetch_response
        told = and_(
            f.present,
            f.diverging,
            _awaited(k.replica, f),
            f.diverging_end >= 1,
            f.diverging_epoch >= 1,
            f.diverging_epoch < f.leader_epoch,
        )
        parts.append(implies(told, f.diverging_end <= written))
        for a, _, a_end in logs:
            for o in range(enc.r):
                differ = and_(
                    told, eq(f.diverging_end, o + 1), o < a_end, ne(a[o], f.diverging_epoch)
                )
                parts.append(implies(differ, written >= o + 2))
    return and_(*parts)


def committed_below_leader(enc: Encoding, sym: ClusterState) -> Term:
    """The True HWM is at most the LESO or the HWM of a leader of the current epoch."""
    return every(
        enc,
        lambda b: implies(
            and_(
                eq(rep(sym, b).role, LEADER),
                eq(rep(sym, b).view.leader_epoch, sym.partition.leader_epoch),
            ),
            sym.ghost.true_hwm <= imax(rep(sym, b).leso, rep(sym, b).hwm),
        ),
    )


def followed_leader_complete(enc: Encoding, sym: ClusterState) -> Term:
    """A member of the controller's ISR or ELR follows, if anyone, a leader holding the
    committed log."""
    s = enc.sets
    g = sym.ghost
    parts = []
    for c in brokers(enc):
        cr = rep(sym, c)
        for b in brokers(enc):
            if b == c:
                continue
            lr = rep(sym, b)
            follows = and_(
                s.has(candidates(enc, sym), c),
                eq(cr.role, FOLLOWER),
                eq(lr.role, LEADER),
                eq(lr.view.leader_epoch, cr.view.leader_epoch),
            )
            parts.append(implies(follows, holds_prefix(enc, lr, g.committed, g.true_hwm)))
    return and_(*parts)


def truncation_keeps(enc: Encoding, sym: ClusterState) -> Term:
    """A diverging fetch response a follower awaits keeps the records it shares with the leader
    that sent it (while that leader still leads), and, for a member of the controller's ISR or
    ELR holding the committed log, the committed log."""
    g = sym.ghost
    parts = []
    for c in brokers(enc):
        k = sym.brokers[c - 1]
        f, r = k.fetch_response, k.replica
        at = truncation_point(enc, r.log, r.leo, f.diverging_epoch, f.diverging_end)
        awaited = and_(f.present, f.diverging, _awaited(r, f))
        member = and_(
            enc.sets.has(candidates(enc, sym), c), holds_prefix(enc, r, g.committed, g.true_hwm)
        )
        parts.append(implies(and_(awaited, member), at >= g.true_hwm))
        for b in brokers(enc):
            if b == c:
                continue
            lr = rep(sym, b)
            sender = and_(
                awaited,
                eq(f.leader, b),
                eq(lr.role, LEADER),
                eq(lr.view.leader_epoch, f.leader_epoch),
            )
            for o in range(enc.r):
                shared = and_(o < r.leo, o < lr.leo, eq(r.log[o], lr.log[o]))
                parts.append(implies(and_(sender, shared), o < at))
    return and_(*parts)


def lagging_candidates(enc: Encoding, sym: ClusterState) -> Term:
    """A member of the controller's ISR or ELR that has not reached a registration's leader
    epoch was in that registration's ISR when its ELR was empty (the ISR at MinISR): only a
    fetch in a leader epoch gets a replica into the ISR, and the ELR holds former members."""
    s = enc.sets
    parts = []
    for present, _, le, _, isr in _registrations(enc, sym)[1:]:
        full = and_(present, s.size(isr) >= enc.cfg.min_isr)
        for c in brokers(enc):
            cr = rep(sym, c)
            lagging = and_(
                full, cr.present, cr.view.leader_epoch < le, s.has(candidates(enc, sym), c)
            )
            parts.append(implies(lagging, s.has(isr, c)))
    return and_(*parts)


def fetched_in_epoch(enc: Encoding, sym: ClusterState) -> Term:
    """A follower a leader knows to have fetched from it has reached the leader's epoch."""
    parts = []
    for b in brokers(enc):
        lr = rep(sym, b)
        for m in brokers(enc):
            if m != b:
                known = and_(eq(lr.role, LEADER), lr.followers[m - 1].fetched_this_epoch)
                parts.append(implies(known, rep(sym, m).view.leader_epoch >= lr.view.leader_epoch))
    return and_(*parts)


def frozen(enc: Encoding, sym: ClusterState, leader: int, members: Term) -> Term:
    """A member has moved past the leader's epoch: the commit bound can no longer grow."""
    return or_(
        *(
            and_(enc.sets.has(members, m), not_(can_fetch(enc, sym, m, leader)))
            for m in brokers(enc)
            if m != leader
        )
    )


def leaderless_fenced(enc: Encoding, sym: ClusterState) -> Term:
    """Once the controller has changed the registration, it has no leader only when every ISR
    member is fenced (each change runs an election among the unfenced ISR members); an
    initial registration may have none. The leader is never fenced (fencing it elects
    another)."""
    s = enc.sets
    p = sym.partition
    return and_(
        implies(
            and_(eq(p.leader, -1), p.partition_epoch > 1),
            and_(*(implies(s.has(p.isr, b), sym.registry[b - 1].fenced) for b in brokers(enc))),
        ),
        *(implies(eq(p.leader, b), not_(sym.registry[b - 1].fenced)) for b in brokers(enc)),
    )


def _left_behind(
    enc: Encoding,
    sym: ClusterState,
    lacking: Callable[[int], Term],
    epoch: Callable[[int], Term],
) -> Term:
    """For every broker x that is `lacking(x)`: every other member of the controller's ISR and
    ELR has a view past `epoch(x)`."""
    s = enc.sets
    parts = []
    group = candidates(enc, sym)
    for x in brokers(enc):
        for c in brokers(enc):
            if c != x:
                candidate = and_(s.has(group, c), rep(sym, c).present)
                parts.append(
                    implies(and_(lacking(x), candidate), rep(sym, c).view.leader_epoch > epoch(x))
                )
    return and_(*parts)


def _lacks_committed(enc: Encoding, sym: ClusterState, x: int) -> Term:
    g = sym.ghost
    return and_(g.true_hwm > 0, not_(holds_prefix(enc, rep(sym, x), g.committed, g.true_hwm)))


def lacking_leaders_left(enc: Encoding, sym: ClusterState) -> Term:
    """A leader without the committed log has been left behind: every other member of the
    controller's ISR and ELR has moved past its epoch (so none will follow it)."""
    return _left_behind(
        enc,
        sym,
        lambda x: and_(eq(rep(sym, x).role, LEADER), _lacks_committed(enc, sym, x)),
        lambda x: rep(sym, x).view.leader_epoch,
    )


def _back_alone(enc: Encoding, sym: ClusterState, le: Term, isr: Term) -> Term:
    """A registration of a later epoch than a leader's has the leader in its ISR only alone."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        xr = rep(sym, x)
        stale = and_(eq(xr.role, LEADER), le > xr.view.leader_epoch, s.has(isr, x))
        parts.append(implies(stale, s.eq(isr, s.bit(x))))
    return and_(*parts)


def stale_leaders_alone(enc: Encoding, sym: ClusterState) -> Term:
    """A leader that has not applied a later epoch is in the ISR of a later registration only
    alone: it left the ISR when fenced (the only way its epoch ends here), and comes back only
    elected from the ELR (an AlterPartition adding it needs a fetch in that epoch)."""
    return and_(
        *(
            implies(present, _back_alone(enc, sym, le, isr))
            for present, _, le, _, isr in _registrations(enc, sym)
        )
    )


def same_epoch_isr(enc: Encoding, sym: ClusterState) -> Term:
    """While a leader's epoch is the controller's, the controller's ISR is within the ISR the
    leader holds and its proposal (only its AlterPartition requests add members)."""
    s = enc.sets

    def ok(b: int) -> Term:
        r = rep(sym, b)
        a = sym.brokers[b - 1].ap_response
        current = and_(eq(r.role, LEADER), eq(r.view.leader_epoch, sym.partition.leader_epoch))
        answered = and_(a.present, eq(a.error, 0), eq(a.leader_epoch, sym.partition.leader_epoch))
        proposed = s.ite(and_(r.pending, a.present, eq(a.error, 0)), r.pending_isr, 0)
        return and_(
            implies(current, s.subset(sym.partition.isr, s.union(r.view.isr, proposed))),
            implies(answered, s.subset(sym.partition.isr, a.isr)),
        )

    return every(enc, ok)


def _stale_bounds(enc: Encoding, sym: ClusterState, leader: int) -> list[tuple[Term, Term, Term]]:
    """(premise, members, commit bound) of what a leader may still commit: over its Maximal
    ISR, and over the ISR of an accepted answer it will adopt (when that ISR passes the MinISR
    gate)."""
    lr = rep(sym, leader)
    lead = eq(lr.role, LEADER)
    out = [
        (
            and_(lead, may_commit(enc, lr.view.isr)),
            lr.maximal_isr,
            commit_bound(enc, sym, leader, lr.maximal_isr),
        )
    ]
    isr, _, accepted = _answer(enc, sym, leader)
    out.append(
        (and_(lead, accepted, may_commit(enc, isr)), isr, commit_bound(enc, sym, leader, isr))
    )
    view_isr = lr.view.isr
    out.append(
        (
            and_(lead, lr.pending, not_(accepted), may_commit(enc, view_isr)),
            view_isr,
            commit_bound(enc, sym, leader, view_isr),
        )
    )
    return out


def later_leaders_hold(enc: Encoding, sym: ClusterState) -> Term:
    """What a leader may still commit is held by every leader of a later epoch (each was a
    candidate when elected, so it held it, or was a Maximal ISR member that froze the bound
    when it moved on), and a diverging response of a later epoch a follower awaits keeps it."""
    parts = []
    for b in brokers(enc):
        lr = rep(sym, b)
        for premise, members, bound in _stale_bounds(enc, sym, b):
            for c in brokers(enc):
                if c == b:
                    continue
                cr = rep(sym, c)
                later = and_(
                    premise, eq(cr.role, LEADER), cr.view.leader_epoch > lr.view.leader_epoch
                )
                parts.append(
                    implies(
                        later,
                        and_(frozen(enc, sym, b, members), holds_prefix(enc, cr, lr.log, bound)),
                    )
                )
                f = sym.brokers[c - 1].fetch_response
                truncating = and_(
                    premise,
                    f.present,
                    f.diverging,
                    _awaited(cr, f),
                    f.leader_epoch > lr.view.leader_epoch,
                    holds_prefix(enc, cr, lr.log, bound),
                )
                at = truncation_point(enc, cr.log, cr.leo, f.diverging_epoch, f.diverging_end)
                parts.append(implies(truncating, at >= bound))
    return and_(*parts)


RegistrationCopy = tuple[Term, Term, Term, Term, Term]


def _clean_elections(enc: Encoding) -> bool:
    """No election puts a replica outside the ISR and ELR in charge."""
    families = {f.name for f in enc.families}
    return not enc.cfg.topic.unclean_leader_election and "elect_unclean" not in families


def _rejoined(
    enc: Encoding,
    sym: ClusterState,
    a: RegistrationCopy,
    b: RegistrationCopy,
    elr_a: Term | None = None,
    elr_b: Term | None = None,
) -> Term:
    """Of two registrations a older than b: a replica outside a's ISR and in b's (not alone)
    joined in an epoch that it and that epoch's leader reached, or was elected from the ELR
    after a's epoch. Only its leader's AlterPartition adds a replica to the ISR, once it has
    fetched in the leader's epoch (at or after a's, at most b's); an election from the ELR or
    an unclean one leaves the leader alone in the ISR, and a clean one keeps the ISR. Where
    a's ELR and last known leader are known (`elr_a`: the controller's, a record's; or empty,
    at MinISR with a leader) and elections are clean, a replica outside all of them that is in
    b's ISR (even alone) or ELR (`elr_b`, where known) joined by a proposal: the ELR takes only
    replicas leaving the ISR, and an election only ISR, ELR or last-known members."""
    s = enc.sets
    pa, pea, lea, la, isra = a
    pb, peb, leb, _, isrb = b
    known = elr_a is not None and _clean_elections(enc)
    parts = []
    # The epoch x joined in (at most b's) is a's, whose leader proposed it from a's
    # registration or a later one (a proposal names the partition epoch it builds on), ...
    led = or_(*(and_(eq(la, m), rep(sym, m).view.partition_epoch >= pea) for m in brokers(enc)))
    for x in brokers(enc):
        xr = rep(sym, x)
        others = [m for m in brokers(enc) if m != x]
        # ... or x's current epoch (at most b's), whose leader (the one x's view names) reached
        # it, or one between a's and x's, whose leader reached it; or x was elected from the
        # ELR (alone) after a's epoch, and every other member of b's ISR joined it later.
        current = or_(
            *(
                and_(eq(xr.view.leader, m), rep(sym, m).view.leader_epoch >= xr.view.leader_epoch)
                for m in others
            )
        )
        between = or_(*(rep(sym, m).view.leader_epoch > lea for m in others))
        joined = and_(
            *(implies(s.has(isrb, m), rep(sym, m).view.leader_epoch > lea) for m in others)
        )
        proposed = or_(
            and_(xr.view.leader_epoch >= lea, led),
            and_(xr.view.leader_epoch > lea, xr.view.leader_epoch <= leb, current),
            and_(xr.view.leader_epoch > lea + 1, leb > lea, between),
        )
        elected = and_(xr.view.leader_epoch > lea, leb > lea, joined)
        ordered = and_(pa, pb, pea < peb, xr.present, xr.view.present, not_(s.has(isra, x)))
        alone = s.eq(isrb, s.bit(x))
        parts.append(implies(and_(ordered, s.has(isrb, x), not_(alone)), or_(proposed, elected)))
        inside = s.has(isrb, x) if elr_b is None else s.has(s.union(isrb, elr_b), x)
        if known:
            # outside a's ISR, ELR and last known leader, x entered by a proposal
            assert elr_a is not None
            outside = and_(ordered, not_(s.has(elr_a, x)))
            parts.append(implies(and_(outside, inside), proposed))
        elif enc.cfg.options.elr_enabled and _clean_elections(enc):
            # a's ELR is empty at MinISR, and there is no last known leader with a leader
            full = and_(s.size(isra) >= enc.cfg.min_isr, ne(la, -1))
            parts.append(implies(and_(ordered, full, inside), proposed))
    return and_(*parts)


def _with_elr(enc: Encoding, sym: ClusterState) -> list[tuple[RegistrationCopy, Term | None]]:
    """Each of `_registrations` with its ELR and last known leader, where the copy carries them
    (the controller's)."""
    regs = _registrations(enc, sym)
    return [(regs[0], _elr(enc, sym.partition))] + [(r, None) for r in regs[1:]]


def _elr(enc: Encoding, snap: PartitionRegistration) -> Term:
    return enc.sets.union(snap.elr, snap.last_known_elr)


def _commits(sym: ClusterState, floor: Term | None) -> list[tuple[int, Term, Term]]:
    """(offset, premise, leader epoch) of each committed record a leader of epoch `floor` or
    older committed (moved its HWM past; any committed record if no floor)."""
    g = sym.ghost
    out = []
    for o, epoch in enumerate(g.committed_in):
        premise = o < g.true_hwm if floor is None else and_(o < g.true_hwm, epoch <= floor)
        out.append((o, premise, epoch))
    return out


def _holds_commits(sym: ClusterState, r: Replica, floor: Term) -> Term:
    """The replica holds every record committed by a leader of epoch `floor` or older."""
    g = sym.ghost
    return and_(
        *(
            implies(premise, and_(o < r.leo, eq(r.log[o], g.committed[o])))
            for o, premise, _ in _commits(sym, floor)
        )
    )


def _past_commits(sym: ClusterState, r: Replica, floor: Term | None = None) -> Term:
    """The replica has reached the leader epoch of every commit (by a leader of epoch `floor`
    or older)."""
    return and_(
        *(
            implies(premise, r.view.leader_epoch >= epoch)
            for _, premise, epoch in _commits(sym, floor)
        )
    )


def leaders_hold_commits(enc: Encoding, sym: ClusterState) -> Term:
    """A leader holds every record a leader of its epoch or an older one committed: a later
    leader elected before the commit was covered by the committing leader
    (`later_leaders_hold`), one elected after was a candidate that had reached that epoch
    (`candidates_past_commits`) and followed only leaders holding it since."""
    g = sym.ghost

    def holds(b: int) -> Term:
        r = rep(sym, b)
        return implies(
            and_(r.present, eq(r.role, LEADER)), _holds_commits(sym, r, r.view.leader_epoch)
        )

    def kept(b: int) -> Term:
        # a diverging response such a leader sent keeps those records
        k = sym.brokers[b - 1]
        f, r = k.fetch_response, k.replica
        awaited = and_(f.present, f.diverging, _awaited(r, f))
        at = truncation_point(enc, r.log, r.leo, f.diverging_epoch, f.diverging_end)
        return and_(
            *(
                implies(and_(awaited, premise, o < r.leo, eq(r.log[o], g.committed[o])), o < at)
                for o, premise, _ in _commits(sym, f.leader_epoch)
            )
        )

    # a leader's epoch is at least its records'
    shape = [implies(p, e >= g.committed[o]) for o, p, e in _commits(sym, None)]
    return and_(every(enc, holds), every(enc, kept), *shape)


def candidates_past_commits(enc: Encoding, sym: ClusterState) -> Term:
    """Every member of the controller's ISR and ELR has reached the leader epoch of every
    commit: the committing leader's Maximal ISR covered them, each fetching in that epoch."""
    group = candidates(enc, sym)

    def past(c: int) -> Term:
        r = rep(sym, c)
        return implies(and_(enc.sets.has(group, c), r.present), _past_commits(sym, r))

    return and_(
        every(enc, past),
        *(
            implies(premise, epoch <= sym.partition.leader_epoch)
            for _, premise, epoch in _commits(sym, None)
        ),
    )


def rejoined_caught_up(enc: Encoding, sym: ClusterState) -> Term:
    """`_rejoined` of every two copies of the metadata in the state."""
    if not _views_only_advance(enc):
        return True
    regs = _with_elr(enc, sym)
    return and_(
        *(
            _rejoined(enc, sym, a, b, ea, eb)
            for i, (a, ea) in enumerate(regs)
            for j, (b, eb) in enumerate(regs)
            if i != j
        )
    )


QUORUM: tuple[Invariant, ...] = (
    Invariant("commit_quorum", commit_quorum, "ISR and ELR hold what a leader can commit"),
    Invariant("current_quorum", current_quorum, "a leader nobody left covers the ISR and ELR"),
    Invariant("answer_quorum", answer_quorum, "the same over an accepted answer's ISR"),
    Invariant("rollback_quorum", rollback_quorum, "the same over the ISR a proposal leaves"),
    Invariant("followers_known", followers_known, "a leader's knowledge of followers is true"),
    Invariant("maximal_fetched", maximal_fetched, "Maximal ISR positions come from fetches"),
    Invariant("pending_caught_up", pending_caught_up, "a replica proposed has caught up"),
    Invariant("requests_in_flight", requests_in_flight, "AlterPartition requests are pending"),
    Invariant("divergence_costs_records", divergence_costs_records, "divergent logs cost records"),
    Invariant("committed_below_leader", committed_below_leader, "the leader covers the HWM"),
    Invariant(
        "followed_leader_complete", followed_leader_complete, "ISR and ELR follow complete leaders"
    ),
    Invariant("truncation_keeps", truncation_keeps, "truncation keeps shared, committed records"),
    Invariant("lagging_candidates", lagging_candidates, "ISR, ELR members behind were in the ISR"),
    Invariant("fetched_in_epoch", fetched_in_epoch, "a follower known to have fetched is there"),
    Invariant("later_leaders_hold", later_leaders_hold, "later leaders hold what may commit"),
    Invariant("leaderless_fenced", leaderless_fenced, "no leader: the ISR is fenced"),
    Invariant("lacking_leaders_left", lacking_leaders_left, "leaders without it are left"),
    Invariant("stale_leaders_alone", stale_leaders_alone, "stale leaders come back alone"),
    Invariant("same_epoch_isr", same_epoch_isr, "the ISR grows only by its leader's proposals"),
    Invariant("rejoined_caught_up", rejoined_caught_up, "a replica rejoins the ISR caught up"),
    Invariant("leaders_hold_commits", leaders_hold_commits, "leaders hold older leaders' commits"),
    Invariant(
        "candidates_past_commits", candidates_past_commits, "ISR, ELR reached every commit's epoch"
    ),
)


AUXILIARY: tuple[Invariant, ...] = (
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
    Invariant("registrations_consistent", registrations_consistent, "copies of the metadata agree"),
    Invariant(
        "alter_partition_messages", alter_partition_messages, "AlterPartition requests, answers"
    ),
) + QUORUM


def _history_shape(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    return and_(
        registration_shape(enc, snap),
        snap.leader_epoch <= sym.partition.leader_epoch,
        snap.partition_epoch <= sym.partition.partition_epoch,
        implies(
            eq(snap.leader_epoch, sym.partition.leader_epoch), eq(snap.leader, sym.partition.leader)
        ),
    )


def _history_consistent(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    mine = (True, snap.partition_epoch, snap.leader_epoch, snap.leader, snap.isr)
    return and_(*(_consistent(enc, mine, other) for other in _registrations(enc, sym)))


def pair(
    enc: Encoding,
    a: PartitionRegistration,
    b: PartitionRegistration,
    sym: ClusterState | None = None,
    facts: tuple[AnyFact, ...] = (),
) -> Term:
    """Two records of the metadata log agree: epochs move together, one leader per epoch.
    (True of every pair once `consistent` and `epoch_leader` hold of every record: each record
    met every older one when it was committed as the current registration.) With the state and
    the history facts `stale_leader_alone` and `no_growth_before_leader`, also what those say
    of the older record against the newer one (`_pair_state`)."""
    out = and_(
        _consistent(
            enc,
            (True, a.partition_epoch, a.leader_epoch, a.leader, a.isr),
            (True, b.partition_epoch, b.leader_epoch, b.leader, b.isr),
        ),
        implies(eq(a.leader_epoch, b.leader_epoch), eq(a.leader, b.leader)),
    )
    names = {f.name for f in facts}
    if sym is not None and set(_PAIRED) <= names and _views_only_advance(enc):
        out = and_(out, _pair_state(enc, a, b, sym), _pair_state(enc, b, a, sym))
    if sym is not None and "rejoined" in names and _views_only_advance(enc):
        ta, tb = (
            (True, a.partition_epoch, a.leader_epoch, a.leader, a.isr),
            (True, b.partition_epoch, b.leader_epoch, b.leader, b.isr),
        )
        out = and_(
            out,
            _rejoined(enc, sym, ta, tb, _elr(enc, a), _elr(enc, b)),
            _rejoined(enc, sym, tb, ta, _elr(enc, b), _elr(enc, a)),
        )
    return out


_PAIRED = ("stale_leader_alone", "no_growth_before_leader", "lagging_members")
_RESETS_VIEWS = {"crash", "crash_lossy", "controlled_shutdown", "shutdown_complete", "restart"}


def _views_only_advance(enc: Encoding) -> bool:
    """No family replaces a replica's view by an older one (or none): a going offline, a
    reassignment dropping the replica."""
    return not enc.reassigning and not _RESETS_VIEWS & {f.name for f in enc.families}


def _pair_state(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """`no_growth_before_leader` and `stale_leader_alone` of record a against record b. Each
    held against b when b was committed (b was then the controller's registration, a an older
    record: a newer record has a higher partition epoch, so a was committed first), and since
    then only the premise can change, from true to false: the leader of a reaching it (views
    only advance in models where `_views_only_advance`)."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        xr = rep(sym, x)
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


def _history_epoch_leader(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    return and_(
        *(
            implies(and_(present, eq(le, snap.leader_epoch)), eq(leader, snap.leader))
            for present, le, leader in _epoch_carriers(enc, sym)
        )
    )


def _history_written(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """A record of the record's epoch exists only once its leader has led that epoch."""
    parts = []
    for log, start, end in _logs(enc, sym):
        for o in range(enc.r):
            has = and_(start <= o, o < end, eq(log[o], snap.leader_epoch))
            parts.append(
                implies(
                    has,
                    or_(
                        *(
                            and_(
                                eq(snap.leader, m),
                                rep(sym, m).view.leader_epoch >= snap.leader_epoch,
                            )
                            for m in brokers(enc)
                        )
                    ),
                )
            )
    return and_(*parts)


FACTS: tuple[Fact, ...] = (
    Fact("shape", _history_shape, "every record is well formed"),
    Fact("consistent", _history_consistent, "records agree with the copies of the metadata"),
    Fact("epoch_leader", _history_epoch_leader, "a record names its epoch's one leader"),
    Fact("written", _history_written, "records of an epoch follow its leader"),
)

PROPERTY_INVARIANTS = tuple(_clause(name) for name in props.CLAUSES)
ALL_INVARIANTS = PROPERTY_INVARIANTS + AUXILIARY


# The strengthening each property is proved with. The MinISR rule needs only the structure
# (who received what); the completeness properties also need the committed log's relation to
# the logs, the quorum argument and the history facts (docs/prove.md).
STRUCTURE = (
    "controller_shape",
    "replicas_well_formed",
    "leader_state",
    "unacknowledged",
    "committed_shape",
    "log_matching",
    "holders_received",
    "one_leader_per_epoch",
    "fetch_responses",
    "records_bound",
    "alter_partition_messages",
    "registrations_consistent",
)
COMMITTED = ("acked_are_committed", "hwm_prefix_committed") + tuple(i.name for i in QUORUM)
NEEDS: dict[str, tuple[str, ...]] = {
    "min_isr_commit": STRUCTURE,
    "leader_completeness": STRUCTURE
    + COMMITTED
    + tuple(props.clauses_of("leader_candidate_completeness")),
    "leader_candidate_completeness": STRUCTURE
    + COMMITTED
    + tuple(props.clauses_of("leader_completeness")),
}


PerBroker = Callable[[Encoding, PartitionRegistration, ClusterState, int], Term]


def _every_broker(by: PerBroker) -> Callable[[Encoding, PartitionRegistration, ClusterState], Term]:
    """A history fact made of one conjunct per broker (each the same definition: `Fact.by`)."""

    def holds(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
        return and_(*(by(enc, snap, sym, b) for b in brokers(enc)))

    holds.__doc__ = by.__doc__
    return holds


def _per_broker_fact(name: str, by: PerBroker, doc: str, shared: bool = True) -> Fact:
    return Fact(name, _every_broker(by), doc, by, shared)


def _applied_as_leader_by(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, b: int
) -> Term:
    """The record's leader applying it now (it has not yet) keeps `later_leaders_hold`: on
    applying a record the leader takes a new Maximal ISR and may commit what its members hold,
    so that later leaders hold what it may commit is a fact of the record. (The other quorum
    invariants and the completeness clauses are kept on applying by the invariants alone:
    asking it of the record too, as this fact once did, proves the same at twice the cost.)"""
    k = sym.brokers[b - 1]
    can = and_(eq(snap.leader, b), running(k), k.applied_epoch < snap.partition_epoch)
    after = with_broker(sym, b, k._replace(applied_epoch=snap.partition_epoch, initialised=True))
    after = act_on(enc, after, b, snap)
    return implies(can, later_leaders_hold(enc, after))


def _lagging_members(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """`lagging_candidates` for the record: a member of the controller's ISR or ELR behind its
    leader epoch was in its ISR, if that was at MinISR."""
    s = enc.sets
    full = s.size(snap.isr) >= enc.cfg.min_isr
    parts = []
    for c in brokers(enc):
        cr = rep(sym, c)
        lagging = and_(
            full,
            cr.present,
            cr.view.leader_epoch < snap.leader_epoch,
            s.has(candidates(enc, sym), c),
        )
        parts.append(implies(lagging, s.has(snap.isr, c)))
    return and_(*parts)


def _leader_holds(enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int) -> Term:
    """The record's leader, until it reaches the record's epoch, is a Maximal ISR member still
    able to fetch from any leader of an older epoch, or holds what that leader may commit
    (`later_leaders_hold` for the leader it will be)."""
    s = enc.sets
    parts = []
    xr = rep(sym, x)
    coming = and_(eq(snap.leader, x), xr.view.leader_epoch < snap.leader_epoch)
    for b in brokers(enc):
        if b == x:
            continue
        lr = rep(sym, b)
        for premise, members, bound in _stale_bounds(enc, sym, b):
            older = and_(coming, premise, lr.view.leader_epoch < snap.leader_epoch)
            fetching = and_(s.has(members, x), can_fetch(enc, sym, x, b))
            held = and_(frozen(enc, sym, b, members), holds_prefix(enc, xr, lr.log, bound))
            parts.append(implies(older, or_(fetching, held)))
    return and_(*parts)


def _lacking_leader_left(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """`lacking_leaders_left` for the leader the record names, until it reaches its epoch."""
    return _left_behind(enc, sym, _lacking_coming(enc, snap, sym), lambda x: snap.leader_epoch)


def _lacking_coming(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState
) -> Callable[[int], Term]:
    return lambda x: and_(
        eq(snap.leader, x),
        rep(sym, x).view.leader_epoch < snap.leader_epoch,
        _lacks_committed(enc, sym, x),
    )


def _coming_left(
    enc: Encoding,
    snap: PartitionRegistration,
    sym: ClusterState,
    c: int,
    lacking: Callable[[int], Term],
    epoch: Callable[[int], Term],
) -> Term:
    """The record's leader c, until it reaches the record's epoch and while a member of the
    controller's ISR or ELR other than c and the lacking broker x may still follow it, has moved
    past `epoch(x)` for every other broker x that is `lacking(x)`. (Followed only by the
    lacking broker itself, c would lead nobody who holds the committed log.)"""
    cr = rep(sym, c)
    coming = and_(eq(snap.leader, c), cr.present, cr.view.leader_epoch < snap.leader_epoch)
    parts = []
    for x in brokers(enc):
        if x != c:
            followed = _followed(enc, snap, sym, c, x)
            parts.append(
                implies(and_(coming, lacking(x), followed), cr.view.leader_epoch > epoch(x))
            )
    return and_(*parts)


def _lacking_leaders_left_later(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, c: int
) -> Term:
    """`lacking_leaders_left` for the leader the record names (it was a member of the ISR or ELR
    when the record was committed), over leaders of an older epoch than the record's."""

    def lacking(x: int) -> Term:
        xr = rep(sym, x)
        return and_(
            eq(xr.role, LEADER),
            xr.view.leader_epoch < snap.leader_epoch,
            _lacks_committed(enc, sym, x),
        )

    return _coming_left(enc, snap, sym, c, lacking, lambda x: rep(sym, x).view.leader_epoch)


def _lacking_leader_left_by(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """`lacking_leaders_left_later` for record b's leader and the leader record a names, while
    that lacks the committed log (or awaits a diverging response that cuts it) and has not
    reached a's epoch: b's leader has moved past a's epoch (it will not follow a's leader)."""
    g = sym.ghost
    lacks = _lacking_coming(enc, a, sym)

    def lacking(x: int) -> Term:
        k = sym.brokers[x - 1]
        f, r = k.fetch_response, k.replica
        cut = truncation_point(enc, r.log, r.leo, f.diverging_epoch, f.diverging_end) < g.true_hwm
        awaits_cut = and_(f.present, f.diverging, _awaited(r, f), cut)
        losing = and_(eq(a.leader, x), r.view.leader_epoch < a.leader_epoch, awaits_cut)
        return or_(lacks(x), losing)

    return and_(
        *(_coming_left(enc, b, sym, c, lacking, lambda x: a.leader_epoch) for c in brokers(enc))
    )


def _stale_leader_alone(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """`stale_leaders_alone` for the record; and the leader it names, until it reaches its
    epoch, is in the ISR of a registration of a later epoch only alone."""
    s = enc.sets
    parts = [_back_alone(enc, sym, snap.leader_epoch, snap.isr)]
    for x in brokers(enc):
        coming = and_(eq(snap.leader, x), rep(sym, x).view.leader_epoch < snap.leader_epoch)
        for present, _, le, _, isr in _registrations(enc, sym):
            later = and_(coming, present, le > snap.leader_epoch, s.has(isr, x))
            parts.append(implies(later, s.eq(isr, s.bit(x))))
    return and_(*parts)


def _no_growth_before_leader(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """Until the record's leader reaches its epoch, no registration of that epoch has an ISR
    beyond the record's (only that leader's AlterPartition requests add members)."""
    s = enc.sets
    parts = []
    coming = and_(eq(snap.leader, x), rep(sym, x).view.partition_epoch < snap.partition_epoch)
    for present, pe, le, _, isr in _registrations(enc, sym):
        same = and_(coming, present, eq(le, snap.leader_epoch), pe >= snap.partition_epoch)
        parts.append(implies(same, s.subset(isr, snap.isr)))
    return and_(*parts)


def _designated_lagging(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """The record's leader, until it reaches the record's epoch, was in the ISR of every
    registration it is behind that is older than the record and at MinISR (it was a member of
    the ISR or ELR when the record was committed: `lagging_candidates` then)."""
    s = enc.sets
    parts = []
    xr = rep(sym, x)
    coming = and_(eq(snap.leader, x), xr.view.leader_epoch < snap.leader_epoch)
    for present, _, le, _, isr in _registrations(enc, sym):
        behind = and_(coming, present, xr.view.leader_epoch < le, le < snap.leader_epoch)
        full = s.size(isr) >= enc.cfg.min_isr
        parts.append(implies(and_(behind, full), s.has(isr, x)))
    return and_(*parts)


def _followed(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int, but: int = 0
) -> Term:
    """Another member of the controller's ISR or ELR (not `but`) may still follow x as the
    record's leader: it has not moved past the record's epoch. Only they matter: a replica
    outside them rejoins only by fetching from the current leader (`rejoined_caught_up`)."""
    s = enc.sets
    group = candidates(enc, sym)
    return or_(
        *(
            and_(
                s.has(group, c),
                rep(sym, c).present,
                rep(sym, c).view.leader_epoch <= snap.leader_epoch,
            )
            for c in brokers(enc)
            if c not in (x, but)
        )
    )


def _designated_keeps(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """`truncation_keeps` for the record's leader until it reaches the record's epoch, while a
    member of the controller's ISR or ELR may still follow it (has not moved past that epoch;
    not counting the leader it follows, nor the sender of the response while that is still at
    the response's epoch): a diverging response it awaits keeps the committed log, if it holds
    it, and a leader it follows holds it too."""
    g = sym.ghost
    parts = []
    k = sym.brokers[x - 1]
    f, r = k.fetch_response, k.replica
    coming = and_(eq(snap.leader, x), r.view.leader_epoch < snap.leader_epoch)
    awaited = and_(f.present, f.diverging, _awaited(r, f))
    holding = holds_prefix(enc, r, g.committed, g.true_hwm)
    at = truncation_point(enc, r.log, r.leo, f.diverging_epoch, f.diverging_end)
    anyone = _followed(enc, snap, sym, x)
    but = {b: _followed(enc, snap, sym, x, b) for b in brokers(enc) if b != x}
    # followed by another than the leader that sent the response, while it is at the
    # response's epoch
    sent = or_(
        *(
            and_(
                eq(f.leader, b),
                or_(other, and_(rep(sym, b).view.leader_epoch > f.leader_epoch, anyone)),
            )
            for b, other in but.items()
        )
    )
    parts.append(implies(and_(coming, sent, awaited, holding), at >= g.true_hwm))
    for b in brokers(enc):
        lr = rep(sym, b)
        if b != x:
            follows = and_(
                coming,
                but[b],  # by another than the leader followed
                holding,
                eq(r.role, FOLLOWER),
                eq(lr.role, LEADER),
                eq(lr.view.leader_epoch, r.view.leader_epoch),
            )
            parts.append(implies(follows, holds_prefix(enc, lr, g.committed, g.true_hwm)))
    return and_(*parts)


def _designated_past_commits(
    enc: Encoding, snap: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """`candidates_past_commits` and `leaders_hold_commits` for the record's leader until it
    reaches the record's epoch, over the commits of leaders of that epoch or older."""
    r = rep(sym, x)
    coming = and_(eq(snap.leader, x), r.present, r.view.leader_epoch < snap.leader_epoch)
    held = and_(_past_commits(sym, r, snap.leader_epoch), _holds_commits(sym, r, snap.leader_epoch))
    return implies(coming, held)


def _rejoined_record(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """`rejoined_caught_up` between the record and every copy of the metadata in the state."""
    if not _views_only_advance(enc):
        return True
    mine = (True, snap.partition_epoch, snap.leader_epoch, snap.leader, snap.isr)
    parts = []
    for other, elr in _with_elr(enc, sym):
        parts.append(_rejoined(enc, sym, mine, other, _elr(enc, snap), elr))
        parts.append(_rejoined(enc, sym, other, mine, elr, _elr(enc, snap)))
    return and_(*parts)


def _same_epoch_record(enc: Encoding, snap: PartitionRegistration, sym: ClusterState) -> Term:
    """`same_epoch_isr` for a record of a leader's epoch it has not applied: its ISR is within
    the leader's and the proposal the controller accepted, if that answer is on its way."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        r = rep(sym, x)
        a = sym.brokers[x - 1].ap_response
        newer = and_(
            eq(r.role, LEADER),
            eq(r.view.leader_epoch, snap.leader_epoch),
            r.view.partition_epoch < snap.partition_epoch,
        )
        accepted = and_(a.present, eq(a.error, 0))
        proposed = s.ite(and_(r.pending, accepted), r.pending_isr, 0)
        parts.append(implies(newer, s.subset(snap.isr, s.union(r.view.isr, proposed))))
        answered = and_(
            newer,
            accepted,
            eq(a.leader_epoch, snap.leader_epoch),
            a.partition_epoch <= snap.partition_epoch,
        )
        parts.append(implies(answered, s.subset(snap.isr, a.isr)))
    return and_(*parts)


def _later_candidates_hold(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """Of a record a and a later record b of a later leader epoch: while a's leader leads a's
    epoch without having applied a, and a's ISR passes the MinISR gate, every other member of
    b's ISR and ELR is a member of a's ISR still able to fetch from that leader, or holds its
    log up to what it could commit over a's ISR (`later_leaders_hold` for the leader once it
    applies a: b's candidates are who may lead later)."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        xr = rep(sym, x)
        premise = and_(
            eq(a.leader, x),
            eq(xr.role, LEADER),
            eq(xr.view.leader_epoch, a.leader_epoch),
            xr.view.partition_epoch < a.partition_epoch,
            b.leader_epoch > a.leader_epoch,
            may_commit(enc, a.isr),
        )
        bound = commit_bound(enc, sym, x, a.isr)
        for c in brokers(enc):
            if c == x:
                continue
            cr = rep(sym, c)
            member = and_(premise, s.has(s.union(b.isr, b.elr), c), cr.present)
            fetching = and_(s.has(a.isr, c), can_fetch(enc, sym, c, x))
            parts.append(implies(member, or_(fetching, holds_prefix(enc, cr, xr.log, bound))))
    return and_(*parts)


def _later_within_candidates(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """Of a record a and a later record b: while a's leader has not applied a (or a later
    record) and no member of a's ISR and ELR has reached a later leader epoch, b's ISR, ELR and
    leader are within a's ISR, ELR and last known leaders. Elections take the leader from the
    ISR and ELR (the last known leader from the last known ELR), and only an AlterPartition adds
    a member: one accepted at a's partition epoch or later, from a leader that had applied a
    record that recent (a's leader, or the leader of a later epoch, which reached it)."""
    if not _views_only_advance(enc):
        return True
    s = enc.sets
    group, behind = _candidates_behind(enc, a, sym)
    within = and_(
        s.subset(s.union(b.isr, b.elr), group),
        s.subset(b.last_known_elr, s.union(group, s.bit(-1))),  # Kafka remembers a leader of -1 too
        _leader_within(enc, b.leader, group),
    )
    return implies(behind, within)


def _candidates_behind(
    enc: Encoding, a: PartitionRegistration, sym: ClusterState
) -> tuple[Term, Term]:
    """A record's ISR, ELR and last known leaders, and whether its leader has not applied it
    (nor a later record) and none of them has reached a later leader epoch."""
    s = enc.sets
    group = s.union(a.isr, a.elr, a.last_known_elr)
    behind = and_(
        *(
            and_(
                implies(eq(a.leader, m), rep(sym, m).view.partition_epoch < a.partition_epoch),
                implies(
                    s.has(group, m),
                    and_(rep(sym, m).present, rep(sym, m).view.leader_epoch <= a.leader_epoch),
                ),
            )
            for m in brokers(enc)
        )
    )
    return group, behind


def _leader_within(enc: Encoding, leader: Term, group: Term) -> Term:
    return or_(eq(leader, -1), *(and_(eq(leader, m), enc.sets.has(group, m)) for m in brokers(enc)))


def _later_leaders_within(enc: Encoding, a: PartitionRegistration, sym: ClusterState) -> Term:
    """`later_within_candidates` for what names a leader of a later epoch in the state (a
    view, a fetch response, a request, an AlterPartition response): each names one of the
    record's candidates, as that epoch's record does."""
    if not _views_only_advance(enc):
        return True
    group, behind = _candidates_behind(enc, a, sym)
    named = (
        implies(and_(present, le > a.leader_epoch), _leader_within(enc, leader, group))
        for present, le, leader in _epoch_carriers(enc, sym)
    )
    return implies(behind, and_(*named))


_COMPLETENESS = ("leader_completeness", "leader_candidate_completeness")

# History facts only the completeness proofs use (they are heavier than the others).
QUORUM_FACTS: tuple[AnyFact, ...] = (
    # what applying the record does is for the apply step (and for pair facts) to know
    _per_broker_fact(
        "applied_as_leader",
        _applied_as_leader_by,
        "its leader may apply it safely",
        shared=False,
    ),
    Fact("lagging_members", _lagging_members, "ISR, ELR members behind were in its ISR"),
    _per_broker_fact(
        "leader_holds", _leader_holds, "its leader holds what older leaders may commit"
    ),
    Fact("lacking_leader_left", _lacking_leader_left, "its leader, without it, is left"),
    Fact("stale_leader_alone", _stale_leader_alone, "stale leaders are in its ISR alone"),
    _per_broker_fact(
        "no_growth_before_leader", _no_growth_before_leader, "its ISR grows with its leader"
    ),
    _per_broker_fact(
        "designated_lagging", _designated_lagging, "its leader, behind, was in older ISRs"
    ),
    _per_broker_fact("designated_keeps", _designated_keeps, "its leader keeps the committed log"),
    _per_broker_fact(
        "designated_past_commits", _designated_past_commits, "its leader holds older commits"
    ),
    Fact("same_epoch_record", _same_epoch_record, "a leader's epoch grows by its proposals"),
    Fact("rejoined", _rejoined_record, "a replica rejoins its ISR caught up"),
    PairFact(
        "later_candidates_hold",
        _later_candidates_hold,
        "later candidates hold what its leader may commit",
    ),
    _per_broker_fact(
        "lacking_leaders_left_later",
        _lacking_leaders_left_later,
        "its leader has left older leaders lacking the committed log",
    ),
    PairFact(
        "later_within_candidates",
        _later_within_candidates,
        "later records keep to its candidates until one reaches its epoch",
    ),
    Fact(
        "later_leaders_within",
        _later_leaders_within,
        "what names a later leader names one of its candidates until one reaches its epoch",
    ),
    PairFact(
        "lacking_leader_left_by",
        _lacking_leader_left_by,
        "later leaders have left its leader if it lacks the committed log",
    ),
)
FACTS_FOR: dict[str, tuple[AnyFact, ...]] = {prop: QUORUM_FACTS for prop in _COMPLETENESS}


def facts_for(prop: str) -> tuple[AnyFact, ...]:
    """The history facts a property's proof assumes of every record (and proves)."""
    return FACTS + FACTS_FOR.get(prop, ())


def needed(prop: str) -> tuple[str, ...]:
    """The invariants proved together for a property: its clauses, the auxiliary invariants
    it needs, and every history fact it assumes."""
    facts = tuple(f"history.{f.name}" for f in facts_for(prop))
    return tuple(props.clauses_of(prop)) + NEEDS[prop] + facts


__all__ = [
    "ALL_INVARIANTS",
    "AUXILIARY",
    "FACTS",
    "QUORUM_FACTS",
    "facts_for",
    "ne",
    "needed",
    "pair",
]
