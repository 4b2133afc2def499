"""The quorum argument (the completeness properties; inductive at N = 3, see prove.md).

A leader advances its HWM to the smallest position, as it knows them, of its Maximal ISR. A
member that can still fetch from it (has not moved past its epoch) bounds nothing yet: it
will fetch before the HWM passes it. A member that has moved on bounds the HWM for good by its
last known position. `commit_bound` is therefore the most a leader can ever commit with its
current Maximal ISR, and the invariants below say who must hold the leader's log up to it.
"""

from __future__ import annotations

from kafkarep.model.actions.alter_partition import ROLL_BACK
from kafkarep.model.hwm import isr_at_min_isr
from kafkarep.model.logs import truncation_point
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.common import (
    brokers,
    candidates,
    every,
    holds_prefix,
    leaders_stay,
    replica,
)
from kafkarep.symbolic.invariants.copies import (
    RegistrationCopy,
    all_logs,
    registration_copies,
    still_awaited,
)
from kafkarep.symbolic.lemmas import Invariant
from kafkarep.symbolic.ops import Term, and_, eq, imax, imin, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import ERROR, FOLLOWER, LEADER, ClusterState, running
from kafkarep.symbolic.transition.logs import epochs


def can_fetch(enc: Encoding, sym: ClusterState, m: int, leader: int) -> Term:
    """Broker m has not moved past the leader's epoch: it may still fetch from it there."""
    c, lr = replica(sym, m), replica(sym, leader)
    behind = or_(
        c.view.leader_epoch < lr.view.leader_epoch,
        and_(eq(c.view.leader_epoch, lr.view.leader_epoch), eq(c.role, FOLLOWER)),
    )
    # a replica a reassignment deleted fetches no more: it bounds the HWM as one moved past
    return and_(c.present, behind) if enc.reassigning else behind


def commit_bound(enc: Encoding, sym: ClusterState, leader: int, members: Term) -> Term:
    """The most the leader can commit while `members` is its Maximal ISR."""
    s = enc.sets
    lr = replica(sym, leader)
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
    if cfg.options.elr_enabled and enc.guard_on(isr_at_min_isr):
        return enc.sets.size(isr) >= cfg.min_isr
    return True


def _quorum(
    enc: Encoding, sym: ClusterState, leader: int, members: Term, isr: Term, when: Term
) -> Term:
    """Every other member of the controller's ISR and ELR is a member of `members` still able
    to fetch from the leader, or holds the leader's log up to its commit bound over them."""
    s = enc.sets
    lr = replica(sym, leader)
    bound = commit_bound(enc, sym, leader, members)
    parts = []
    for c in brokers(enc):
        if c == leader:
            continue
        cr = replica(sym, c)
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
    lr = replica(sym, leader)
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


def _answer_to_pending(enc: Encoding, sym: ClusterState, b: int, error: Term) -> Term:
    """The controller's answer to the broker's pending proposal is on its way, with `error`."""
    k = sym.brokers[b - 1]
    a, r = k.ap_response, k.replica
    return and_(
        a.present,
        error,
        r.pending,
        eq(r.pending_partition_epoch, a.request_partition_epoch),
        enc.sets.eq(r.pending_isr, a.request_isr),
    )


def answered(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The controller has accepted the broker's pending proposal, and the answer is on its way
    (a proposal accepted is never rolled back)."""
    return _answer_to_pending(enc, sym, b, eq(sym.brokers[b - 1].ap_response.error, 0))


def has_accepted_answer(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The broker has an accepted AlterPartition answer to its pending proposal, of its own
    leader epoch (one the leader adopts; a reassignment's completion answers with a new one)."""
    a, r = sym.brokers[b - 1].ap_response, replica(sym, b)
    return and_(answered(enc, sym, b), eq(a.leader_epoch, r.view.leader_epoch))


def accepted_answer(enc: Encoding, sym: ClusterState, b: int) -> tuple[Term, Term, Term]:
    """(Maximal ISR, ISR, condition) once the leader adopts its accepted answer."""
    isr = sym.brokers[b - 1].ap_response.isr
    return isr, isr, has_accepted_answer(enc, sym, b)


def commit_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """Over a leader's Maximal ISR (when its ISR passes the MinISR gate): `_quorum`."""
    return every(
        enc,
        lambda b: _quorum(enc, sym, b, replica(sym, b).maximal_isr, replica(sym, b).view.isr, True),
    )


def current_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """Over a leader's Maximal ISR (when its ISR passes the MinISR gate): `_current`."""
    return every(
        enc,
        lambda b: _current(
            enc, sym, b, replica(sym, b).maximal_isr, replica(sym, b).view.isr, True
        ),
    )


def answer_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """`_quorum` and `_current` over the ISR of an accepted answer the leader will adopt."""
    return every(
        enc,
        lambda b: and_(
            _quorum(enc, sym, b, *accepted_answer(enc, sym, b)),
            _current(enc, sym, b, *accepted_answer(enc, sym, b)),
        ),
    )


def may_roll_back(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The leader's pending proposal may still be rolled back: the controller has not accepted
    it, and either still holds the partition epoch it was sent from (only a current request
    is refused with a roll-back error) or has sent such an error. (The controller accepting it
    with a new leader epoch, as a reassignment's completion does, leaves the leader pending
    until it applies the record: `Partition.handleAlterPartitionUpdate` at 4.1.0 ignores it.)"""
    r = replica(sym, b)
    current = r.pending_partition_epoch >= sym.partition.partition_epoch
    return and_(not_(answered(enc, sym, b)), or_(current, refused(enc, sym, b)))


def refused(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The controller has refused the leader's pending proposal with an error that rolls it
    back (`alter_partition.ROLL_BACK`), and the answer is on its way."""
    error = sym.brokers[b - 1].ap_response.error
    rolls_back = or_(*(eq(error, ERROR[e]) for e in sorted(ROLL_BACK)))
    return _answer_to_pending(enc, sym, b, rolls_back)


def rollback_quorum(enc: Encoding, sym: ClusterState) -> Term:
    """`_quorum` and `_current` over the ISR a leader holds while it has a proposal pending and
    not accepted: a rolled-back proposal makes it the Maximal ISR again."""

    def ok(b: int) -> Term:
        r = replica(sym, b)
        open_ = rollback_open(enc, sym, b)
        return and_(
            _quorum(enc, sym, b, r.view.isr, r.view.isr, open_),
            _current(enc, sym, b, r.view.isr, r.view.isr, open_),
        )

    return every(enc, ok)


def rollback_open(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """The leader has a proposal pending that may yet be rolled back, making the ISR it holds
    its Maximal ISR again (`may_roll_back`, where a reassignment's completion may accept it in
    a new leader epoch)."""
    r = replica(sym, b)
    open_ = and_(r.pending, not_(has_accepted_answer(enc, sym, b)))
    return and_(open_, may_roll_back(enc, sym, b)) if enc.reassigning else open_


def followers_known(enc: Encoding, sym: ClusterState) -> Term:
    """What a leader knows of a follower that fetched from it and has not moved past its epoch
    is true: the follower holds the leader's log up to that position, and follows it."""
    parts = []
    for b in brokers(enc):
        lr = replica(sym, b)
        for m in brokers(enc):
            if m == b:
                continue
            f, c = lr.followers[m - 1], replica(sym, m)
            known = and_(eq(lr.role, LEADER), f.fetched_this_epoch)
            fetching = can_fetch(enc, sym, m, b)
            if enc.reassigning:
                known = and_(known, c.present)  # a deleted replica's fetches are forgotten
                # one following it into a later epoch (a completion kept it leader) keeps them
                later = and_(
                    c.view.leader_epoch > lr.view.leader_epoch,
                    eq(c.role, FOLLOWER),
                    eq(c.view.leader, b),
                )
                fetching = or_(fetching, later)
            parts.append(implies(and_(known, fetching), holds_prefix(enc, c, lr.log, f.leo)))
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
        lr = replica(sym, b)
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
        lr = replica(sym, b)
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
        q, r, a = sym.ap_requests[b - 1], replica(sym, b), sym.brokers[b - 1].ap_response
        current = and_(
            eq(r.role, LEADER),
            eq(q.leader_epoch, r.view.leader_epoch),
            implies(not_(r.pending), q.partition_epoch < r.view.partition_epoch),
        )
        stale = q.leader_epoch < r.view.leader_epoch
        if enc.reassigning:
            # a replica removed by a reassignment: the removal bumped the leader epoch
            gone = and_(not_(r.present), q.leader_epoch < sym.partition.leader_epoch)
            stale = or_(stale, gone)
        parts.append(implies(q.present, or_(stale, current)))
        parts.append(
            implies(
                and_(a.present, eq(a.error, 0)),
                and_(
                    s.subset(a.isr, a.request_isr),
                    a.partition_epoch >= a.request_partition_epoch,
                    a.leader_epoch
                    <= (sym.partition.leader_epoch if enc.reassigning else r.view.leader_epoch),
                ),
            )
        )
    return and_(*parts)


def divergence_costs_records(enc: Encoding, sym: ClusterState) -> Term:
    """Two logs with different records at offset o hold at least o + 2 distinct records between
    them (a record is an (offset, epoch) pair, written once), so that many were written."""
    written = enc.r - sym.budget.records
    logs = all_logs(enc, sym)
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
            still_awaited(k.replica, f),
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
                eq(replica(sym, b).role, LEADER),
                eq(replica(sym, b).view.leader_epoch, sym.partition.leader_epoch),
            ),
            sym.ghost.true_hwm <= imax(replica(sym, b).leso, replica(sym, b).hwm),
        ),
    )


def followed_leader_complete(enc: Encoding, sym: ClusterState) -> Term:
    """A member of the controller's ISR or ELR follows, if anyone, a leader holding the
    committed log."""
    s = enc.sets
    g = sym.ghost
    parts = []
    for c in brokers(enc):
        cr = replica(sym, c)
        for b in brokers(enc):
            if b == c:
                continue
            lr = replica(sym, b)
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
        at = truncation_point(epochs(r), f.diverging_epoch, f.diverging_end)
        awaited = and_(f.present, f.diverging, still_awaited(r, f))
        member = and_(
            enc.sets.has(candidates(enc, sym), c), holds_prefix(enc, r, g.committed, g.true_hwm)
        )
        parts.append(implies(and_(awaited, member), at >= g.true_hwm))
        for b in brokers(enc):
            if b == c:
                continue
            lr = replica(sym, b)
            # (where a completion keeps a leader, any epoch of its leadership)
            sent_in = (
                and_(
                    f.leader_epoch >= sym.ghost.led_since[b - 1],
                    f.leader_epoch <= lr.view.leader_epoch,
                )
                if enc.reassigning
                else eq(lr.view.leader_epoch, f.leader_epoch)
            )
            sender = and_(awaited, eq(f.leader, b), eq(lr.role, LEADER), sent_in)
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
    for present, _, leader_epoch, _, isr in registration_copies(enc, sym)[1:]:
        full = and_(present, s.size(isr) >= enc.cfg.min_isr)
        for c in brokers(enc):
            cr = replica(sym, c)
            lagging = and_(
                full,
                cr.present,
                cr.view.leader_epoch < leader_epoch,
                s.has(candidates(enc, sym), c),
            )
            parts.append(implies(lagging, s.has(isr, c)))
    return and_(*parts)


def fetched_in_epoch(enc: Encoding, sym: ClusterState) -> Term:
    """A follower a leader knows to have fetched from it has reached the leader's epoch (the
    first of the leader's leadership where a reassignment's completion may keep it leader in a
    new one, keeping what it knows: `Replica.resetReplicaState` at Kafka 4.1.0)."""
    parts = []
    for b in brokers(enc):
        lr = replica(sym, b)
        since = sym.ghost.led_since[b - 1] if enc.reassigning else lr.view.leader_epoch
        if enc.reassigning:  # it has led since an epoch of its own, every epoch in between
            leads = eq(lr.role, LEADER)
            parts.append(implies(leads, and_(since >= 1, since <= lr.view.leader_epoch)))
            parts.append(led_continuously(enc, sym, b, leads, lr.view.leader_epoch))
            if enc.cfg.budget.reassignments == 1:
                # a new epoch keeps the leader only when a replica leaves: with one reassignment,
                # once, when it ends
                p = sym.partition
                kept = and_(leads, since < lr.view.leader_epoch)
                ended = and_(
                    eq(since, lr.view.leader_epoch - 1),
                    enc.sets.empty(p.adding),
                    enc.sets.empty(p.removing),
                    eq(sym.budget.reassignments, 0),
                    enc.sets.has(Terms(enc).members(p.replicas), b),  # the end kept it a replica
                )
                parts.append(implies(kept, ended))
        for m in brokers(enc):
            if m != b:
                known = and_(eq(lr.role, LEADER), lr.followers[m - 1].fetched_this_epoch)
                c = replica(sym, m)
                if enc.reassigning:
                    # a replica the leader knows is one its view names; deleted, it was deleted
                    # by a later record (a reassignment removes a replica for good)
                    applied = sym.brokers[m - 1].applied_epoch
                    parts.append(implies(known, enc.sets.has(lr.view.replicas, m)))
                    gone = and_(known, not_(c.present))
                    parts.append(implies(gone, applied > lr.view.partition_epoch))
                    # and by a later one than an answer the leader will adopt (the same replicas)
                    answer = sym.brokers[b - 1].ap_response
                    adopted = and_(gone, has_accepted_answer(enc, sym, b))
                    parts.append(implies(adopted, applied > answer.partition_epoch))
                    known = and_(known, c.present)
                    # known from an older epoch of its leadership: an ISR member then (the
                    # bump reset the others: `Replica.resetReplicaState` at Kafka 4.1.0)
                    older = and_(known, c.view.leader_epoch < lr.view.leader_epoch)
                    parts.append(implies(older, enc.sets.has(lr.view.isr, m)))
                parts.append(implies(known, c.view.leader_epoch >= since))
    if enc.reassigning:
        # of every leader a copy of the metadata names (its own view names a leader's)
        copies = registration_copies(enc, sym)
        parts += [implies(c[0], nobody_past(enc, sym, c[3], c[2])) for c in copies]
        parts += [isr_grows_in_epoch(enc, a, b) for a in copies for b in copies if a is not b]
        parts.append(proposals_grow(enc, sym))
    return and_(*parts)


def proposals_grow(enc: Encoding, sym: ClusterState) -> Term:
    """Where nothing shrinks the ISR (`leaders_stay`), a leader proposes only to add: its
    pending proposal holds the ISR of the registration it was built on, and so does a request
    in flight built on the controller's."""
    if not leaders_stay(enc):
        return True
    s, p = enc.sets, sym.partition
    parts = []
    for b in brokers(enc):
        r, q = replica(sym, b), sym.ap_requests[b - 1]
        built = and_(
            eq(r.role, LEADER), r.pending, eq(r.pending_partition_epoch, r.view.partition_epoch)
        )
        parts.append(implies(built, s.subset(r.view.isr, r.pending_isr)))
        current = and_(q.present, eq(q.partition_epoch, p.partition_epoch))
        parts.append(implies(current, s.subset(p.isr, q.isr)))
    return and_(*parts)


def isr_grows_in_epoch(enc: Encoding, a: RegistrationCopy, b: RegistrationCopy) -> Term:
    """Where only the one reassignment's completion hands leadership on (`leaders_stay`: no
    family fences, stops or shrinks), the ISR only grows within a leader epoch: of two copies of
    the metadata of one epoch, the later holds the earlier's ISR."""
    if not leaders_stay(enc):
        return True
    present_a, partition_epoch_a, leader_epoch_a, _, isr_a = a
    present_b, partition_epoch_b, leader_epoch_b, _, isr_b = b
    same = and_(
        present_a,
        present_b,
        eq(leader_epoch_a, leader_epoch_b),
        partition_epoch_a <= partition_epoch_b,
    )
    return implies(same, enc.sets.subset(isr_a, isr_b))


def led_continuously(
    enc: Encoding, sym: ClusterState, b: int, leads: Term, leader_epoch: Term
) -> Term:
    """While `leads`, broker b has led every epoch from its leadership's first
    (`Ghost.led_since`) to `leader_epoch`: every copy of the metadata of an epoch in between
    names it. (True where a leader reaches no epoch of another leader before it leads again, as
    in the bundled reassignment models, where completion keeps the leader.)"""
    since = sym.ghost.led_since[b - 1]
    parts = []
    for present, _, epoch, leader, _ in registration_copies(enc, sym):
        between = and_(leads, present, epoch >= since, epoch <= leader_epoch)
        parts.append(implies(between, eq(leader, b)))
    return and_(*parts)


def nobody_past(
    enc: Encoding,
    sym: ClusterState,
    leader: Term,
    epoch: Term,
    copies: list[tuple[Term, Term, Term]] | None = None,
) -> Term:
    """Where only the one reassignment's completion hands leadership on (`leaders_stay`), the
    leader of `epoch`, if the controller's replica list still names it, has had nobody elected
    past it: every copy of the metadata (or each of `copies`: present, leader epoch, leader) of
    that epoch or a later one names it."""
    if not leaders_stay(enc):
        return True
    if copies is None:
        copies = [(c[0], c[2], c[3]) for c in registration_copies(enc, sym)]
    members = Terms(enc).members(sym.partition.replicas)
    kept = or_(*(and_(eq(leader, m), enc.sets.has(members, m)) for m in brokers(enc)))
    return and_(
        *(
            implies(and_(kept, present, copy_epoch >= epoch), eq(copy_leader, leader))
            for present, copy_epoch, copy_leader in copies
        )
    )


def frozen(enc: Encoding, sym: ClusterState, leader: int, members: Term) -> Term:
    """A member has moved past the leader's epoch: the commit bound can no longer grow."""
    return or_(
        *(
            and_(enc.sets.has(members, m), not_(can_fetch(enc, sym, m, leader)))
            for m in brokers(enc)
            if m != leader
        )
    )


INVARIANTS: tuple[Invariant, ...] = (
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
)
