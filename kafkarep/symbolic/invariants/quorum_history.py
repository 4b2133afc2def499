"""The history facts of the quorum argument: what the completeness proofs assume of every record
of the metadata log (and of every two), about the leader it names until that leader reaches
its epoch. They are heavier than the others, so only those proofs use them."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.model.logs import truncation_point
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.common import (
    brokers,
    candidates,
    deleted,
    holds_prefix,
    leaders_stay,
    replica,
    views_only_advance,
)
from kafkarep.symbolic.invariants.copies import (
    copy_owners,
    epoch_carriers,
    record_copy,
    registration_copies,
    still_awaited,
)
from kafkarep.symbolic.invariants.later_epochs import (
    back_alone,
    elr_and_last_known,
    holds_commits,
    lacks_committed,
    later_leaders_hold,
    left_behind,
    past_commits,
    rejoined,
    stale_bounds,
    with_elr,
)
from kafkarep.symbolic.invariants.quorum import (
    answered,
    can_fetch,
    commit_bound,
    frozen,
    has_accepted_answer,
    isr_grows_in_epoch,
    led_continuously,
    may_commit,
    nobody_past,
    refused,
)
from kafkarep.symbolic.lemmas import AnyFact, Fact, PairFact, fixing, representative
from kafkarep.symbolic.ops import Term, and_, eq, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import FOLLOWER, LEADER, ClusterState, PartitionRegistration, running
from kafkarep.symbolic.transition.cluster import with_broker
from kafkarep.symbolic.transition.logs import epochs
from kafkarep.symbolic.transition.metadata import act_on

PerBroker = Callable[[Encoding, PartitionRegistration, ClusterState, int], Term]


def _every_broker(by: PerBroker) -> Callable[[Encoding, PartitionRegistration, ClusterState], Term]:
    """A history fact made of one conjunct per broker (each the same definition: `Fact.by`)."""

    def holds(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
        return and_(*(by(enc, record, sym, b) for b in brokers(enc)))

    holds.__doc__ = by.__doc__
    return holds


def _per_broker_fact(name: str, by: PerBroker, doc: str, shared: bool = True) -> Fact:
    return Fact(name, _every_broker(by), doc, by, shared)


Nested = Callable[[Encoding, PartitionRegistration, ClusterState, int, int | None], Term]


def _nested_fact(name: str, by: Nested, doc: str, shared: bool = True) -> Fact:
    """A per-broker fact whose conjunct about broker b is made of conjuncts about b and other
    brokers: `by(..., b, fixed)` gives those about representative tuples when `fixed` is not
    None, and under a symmetric family it is shown for representative brokers b, each with
    the tuples representative once b is fixed too (`Fact.orbit`)."""

    def orbit(enc: Encoding, record: PartitionRegistration, sym: ClusterState, fixed: int) -> Term:
        return and_(
            *(
                by(enc, record, sym, b, fixing(fixed, b))
                for b in brokers(enc)
                if representative(fixed, b)
            )
        )

    def whole(enc: Encoding, record: PartitionRegistration, sym: ClusterState, b: int) -> Term:
        return by(enc, record, sym, b, None)

    whole.__doc__ = by.__doc__
    return Fact(name, _every_broker(whole), doc, whole, shared, orbit=orbit)


def _applied_as_leader_by(
    enc: Encoding,
    record: PartitionRegistration,
    sym: ClusterState,
    b: int,
    fixed: int | None = None,
) -> Term:
    """The record's leader applying it now (it has not yet) keeps `later_leaders_hold`: on
    applying a record the leader takes a new Maximal ISR and may commit what its members hold,
    so that later leaders hold what it may commit is a fact of the record. (The other quorum
    invariants and the completeness clauses are kept on applying by the invariants alone:
    asking it of the record too, as this fact once did, proves the same at twice the cost.)"""
    k = sym.brokers[b - 1]
    can = and_(eq(record.leader, b), running(k), k.applied_epoch < record.partition_epoch)
    after = with_broker(sym, b, k._replace(applied_epoch=record.partition_epoch, initialised=True))
    after = act_on(enc, after, b, record)
    return implies(can, later_leaders_hold(enc, after, fixed))


def _lagging_members(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    """`lagging_candidates` for the record: a member of the controller's ISR or ELR behind its
    leader epoch was in its ISR, if that was at MinISR."""
    s = enc.sets
    full = s.size(record.isr) >= enc.cfg.min_isr
    parts = []
    for c in brokers(enc):
        cr = replica(sym, c)
        lagging = and_(
            full,
            cr.present,
            cr.view.leader_epoch < record.leader_epoch,
            s.has(candidates(enc, sym), c),
        )
        parts.append(implies(lagging, s.has(record.isr, c)))
    return and_(*parts)


def _coming(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int
) -> tuple[Term, ...]:
    """x is the record's leader still to come: it has not reached the record's leader epoch,
    and it is not a replica the reassignment deleted (that one never will). The conjuncts, so
    that a caller's conjunction stays one flat term."""
    return (
        eq(record.leader, x),
        replica(sym, x).view.leader_epoch < record.leader_epoch,
        not_(deleted(enc, sym, x)),
    )


def _leader_holds(
    enc: Encoding,
    record: PartitionRegistration,
    sym: ClusterState,
    x: int,
    fixed: int | None = None,
) -> Term:
    """The record's leader, until it reaches the record's epoch, is a Maximal ISR member still
    able to fetch from any leader of an older epoch, or holds what that leader may commit
    (`later_leaders_hold` for the leader it will be)."""
    s = enc.sets
    parts = []
    xr = replica(sym, x)
    coming = and_(*_coming(enc, record, sym, x))
    for b in brokers(enc):
        if b == x or not representative(fixed, b):
            continue
        lr = replica(sym, b)
        for premise, members, bound in stale_bounds(enc, sym, b):
            older = and_(coming, premise, lr.view.leader_epoch < record.leader_epoch)
            fetching = and_(s.has(members, x), can_fetch(enc, sym, x, b))
            held = and_(frozen(enc, sym, b, members), holds_prefix(enc, xr, lr.log, bound))
            parts.append(implies(older, or_(fetching, held)))
    return and_(*parts)


def _lacking_leader_left(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    """`lacking_leaders_left` for the leader the record names, until it reaches its epoch."""
    return left_behind(enc, sym, _lacking_coming(enc, record, sym), lambda x: record.leader_epoch)


def _lacking_coming(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState
) -> Callable[[int], Term]:
    return lambda x: and_(*_coming(enc, record, sym, x), lacks_committed(enc, sym, x))


def _coming_left(
    enc: Encoding,
    record: PartitionRegistration,
    sym: ClusterState,
    c: int,
    lacking: Callable[[int], Term],
    epoch: Callable[[int], Term],
    fixed: int | None = None,
) -> Term:
    """The record's leader c, until it reaches the record's epoch and while a member of the
    controller's ISR or ELR other than c and the lacking broker x may still follow it, has moved
    past `epoch(x)` for every other broker x that is `lacking(x)`. (Followed only by the
    lacking broker itself, c would lead nobody who holds the committed log.) With `fixed`, for
    the brokers x that make (c, x) representative."""
    cr = replica(sym, c)
    coming = and_(eq(record.leader, c), cr.present, cr.view.leader_epoch < record.leader_epoch)
    parts = []
    for x in brokers(enc):
        if x != c and representative(fixed, c, x):
            followed = _followed(enc, record, sym, c, x)
            parts.append(
                implies(and_(coming, lacking(x), followed), cr.view.leader_epoch > epoch(x))
            )
    return and_(*parts)


def _lacking_leaders_left_later(
    enc: Encoding,
    record: PartitionRegistration,
    sym: ClusterState,
    c: int,
    fixed: int | None = None,
) -> Term:
    """`lacking_leaders_left` for the leader the record names (it was a member of the ISR or ELR
    when the record was committed), over leaders of an older epoch than the record's."""

    def lacking(x: int) -> Term:
        xr = replica(sym, x)
        return and_(
            eq(xr.role, LEADER),
            xr.view.leader_epoch < record.leader_epoch,
            lacks_committed(enc, sym, x),
        )

    def epoch(x: int) -> Term:
        return replica(sym, x).view.leader_epoch

    return _coming_left(enc, record, sym, c, lacking, epoch, fixed)


def _lacking_leader_left_by(
    enc: Encoding,
    a: PartitionRegistration,
    b: PartitionRegistration,
    sym: ClusterState,
    fixed: int | None = None,
) -> Term:
    """`lacking_leaders_left_later` for record b's leader and the leader record a names, while
    that lacks the committed log (or awaits a diverging response that cuts it) and has not
    reached a's epoch: b's leader has moved past a's epoch (it will not follow a's leader)."""
    g = sym.ghost
    lacks = _lacking_coming(enc, a, sym)

    def lacking(x: int) -> Term:
        k = sym.brokers[x - 1]
        f, r = k.fetch_response, k.replica
        cut = truncation_point(epochs(r), f.diverging_epoch, f.diverging_end) < g.true_hwm
        awaits_cut = and_(f.present, f.diverging, still_awaited(r, f), cut)
        losing = and_(*_coming(enc, a, sym, x), awaits_cut)
        return or_(lacks(x), losing)

    return and_(
        *(
            _coming_left(enc, b, sym, c, lacking, lambda x: a.leader_epoch, fixed)
            for c in brokers(enc)
            if representative(fixed, c)
        )
    )


def _stale_leader_alone(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, fixed: int | None = None
) -> Term:
    """`stale_leaders_alone` for the record; and the leader it names, until it reaches its
    epoch, is in the ISR of a registration of a later epoch only alone. (With `fixed`, the
    second for representative brokers and copies: `Fact.orbit`.)"""
    s = enc.sets
    parts = [back_alone(enc, sym, record.leader_epoch, record.leader, record.isr)]
    copies = list(zip(registration_copies(enc, sym), copy_owners(enc), strict=True))
    for x in brokers(enc):
        if not representative(fixed, x):
            continue
        coming = and_(*_coming(enc, record, sym, x))
        for (present, _, leader_epoch, leader, isr), owner in copies:
            if not representative(fixed, x, owner):
                continue
            later = and_(coming, present, leader_epoch > record.leader_epoch, s.has(isr, x))
            if enc.reassigning:  # as `back_alone`: a completion may keep x leader
                later = and_(later, ne(leader, x))
            parts.append(implies(later, s.eq(isr, s.bit(x))))
    return and_(*parts)


def _no_growth_before_leader(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """Until the record's leader reaches its epoch, no registration of that epoch has an ISR
    beyond the record's (only that leader's AlterPartition requests add members)."""
    s = enc.sets
    parts = []
    coming = and_(
        eq(record.leader, x),
        replica(sym, x).view.partition_epoch < record.partition_epoch,
        not_(deleted(enc, sym, x)),
    )
    for present, partition_epoch, leader_epoch, _, isr in registration_copies(enc, sym):
        same = and_(
            coming,
            present,
            eq(leader_epoch, record.leader_epoch),
            partition_epoch >= record.partition_epoch,
        )
        parts.append(implies(same, s.subset(isr, record.isr)))
    return and_(*parts)


def _designated_lagging(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """The record's leader, until it reaches the record's epoch, was in the ISR of every
    registration it is behind that is older than the record and at MinISR (it was a member of
    the ISR or ELR when the record was committed: `lagging_candidates` then)."""
    s = enc.sets
    parts = []
    xr = replica(sym, x)
    coming = and_(*_coming(enc, record, sym, x))
    for present, _, leader_epoch, _, isr in registration_copies(enc, sym):
        behind = and_(
            coming, present, xr.view.leader_epoch < leader_epoch, leader_epoch < record.leader_epoch
        )
        full = s.size(isr) >= enc.cfg.min_isr
        parts.append(implies(and_(behind, full), s.has(isr, x)))
    return and_(*parts)


def _followed(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int, but: int = 0
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
                replica(sym, c).present,
                replica(sym, c).view.leader_epoch <= record.leader_epoch,
            )
            for c in brokers(enc)
            if c not in (x, but)
        )
    )


def _designated_keeps(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int
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
    coming = and_(*_coming(enc, record, sym, x))
    awaited = and_(f.present, f.diverging, still_awaited(r, f))
    holding = holds_prefix(enc, r, g.committed, g.true_hwm)
    at = truncation_point(epochs(r), f.diverging_epoch, f.diverging_end)
    anyone = _followed(enc, record, sym, x)
    but = {b: _followed(enc, record, sym, x, b) for b in brokers(enc) if b != x}
    # followed by another than the leader that sent the response, while it is at the
    # response's epoch
    sent = or_(
        *(
            and_(
                eq(f.leader, b),
                or_(other, and_(replica(sym, b).view.leader_epoch > f.leader_epoch, anyone)),
            )
            for b, other in but.items()
        )
    )
    parts.append(implies(and_(coming, sent, awaited, holding), at >= g.true_hwm))
    for b in brokers(enc):
        lr = replica(sym, b)
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
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, x: int
) -> Term:
    """`candidates_past_commits` and `leaders_hold_commits` for the record's leader until it
    reaches the record's epoch, over the commits of leaders of that epoch or older."""
    r = replica(sym, x)
    coming = and_(eq(record.leader, x), r.present, r.view.leader_epoch < record.leader_epoch)
    held = and_(
        past_commits(sym, r, record.leader_epoch), holds_commits(sym, r, record.leader_epoch)
    )
    return implies(coming, held)


def _rejoined_record(
    enc: Encoding, record: PartitionRegistration, sym: ClusterState, fixed: int | None = None
) -> Term:
    """`rejoined_caught_up` between the record and every copy of the metadata in the state
    (with `fixed`, the copies and replicas of representative brokers: `Fact.orbit`)."""
    if not views_only_advance(enc):
        return True
    mine = record_copy(record)
    known = elr_and_last_known(enc, record)
    parts = []
    for (other, elr), owner in zip(with_elr(enc, sym), copy_owners(enc), strict=True):
        if representative(fixed, owner):
            parts.append(rejoined(enc, sym, mine, other, known, elr, fixed, (owner,)))
            parts.append(rejoined(enc, sym, other, mine, elr, known, fixed, (owner,)))
    return and_(*parts)


def _same_epoch_record(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    """`same_epoch_isr` for a record of a leader's epoch it has not applied: its ISR is within
    the leader's and the proposal the controller accepted, if that answer is on its way."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        r = replica(sym, x)
        a = sym.brokers[x - 1].ap_response
        newer = and_(
            eq(r.role, LEADER),
            eq(r.view.leader_epoch, record.leader_epoch),
            r.view.partition_epoch < record.partition_epoch,
        )
        accepted = and_(a.present, eq(a.error, 0))
        proposed = s.ite(and_(r.pending, accepted), r.pending_isr, 0)
        parts.append(implies(newer, s.subset(record.isr, s.union(r.view.isr, proposed))))
        # (with reassignment: the answer to its pending proposal; a stale one, to a proposal of
        # an older leadership, tells nothing of this epoch)
        answer = answered(enc, sym, x) if enc.reassigning else accepted
        answered_here = and_(
            newer,
            answer,
            eq(a.leader_epoch, record.leader_epoch),
            a.partition_epoch <= record.partition_epoch,
        )
        parts.append(implies(answered_here, s.subset(record.isr, a.isr)))
    return and_(*parts)


def _later_candidates_hold(
    enc: Encoding,
    a: PartitionRegistration,
    b: PartitionRegistration,
    sym: ClusterState,
    fixed: int | None = None,
) -> Term:
    """Of a record a and a later record b of a later leader epoch: while a's leader leads a's
    epoch without having applied a, and a's ISR passes the MinISR gate, every other member of
    b's ISR and ELR is a member of a's ISR still able to fetch from that leader, or holds its
    log up to what it could commit over a's ISR (`later_leaders_hold` for the leader once it
    applies a: b's candidates are who may lead later)."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        if not representative(fixed, x):
            continue
        xr = replica(sym, x)
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
            if c == x or not representative(fixed, x, c):
                continue
            cr = replica(sym, c)
            member = and_(premise, s.has(s.union(b.isr, b.elr), c), cr.present)
            fetching = and_(s.has(a.isr, c), can_fetch(enc, sym, c, x))
            parts.append(implies(member, or_(fetching, holds_prefix(enc, cr, xr.log, bound))))
    return and_(*parts)


def _completed(enc: Encoding, record: PartitionRegistration) -> Term:
    """The record is the one reassignment's end or later: it adds and removes nothing more,
    and the replica that left is gone from its list."""
    s = enc.sets
    moved = not_(s.eq(Terms(enc).members(record.replicas), s.of(enc.cfg.replicas)))
    return and_(s.empty(record.adding), s.empty(record.removing), moved)


def _later_within_candidates(
    enc: Encoding, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
) -> Term:
    """Of a record a and a later record b: while a's leader has not applied a (or a later
    record) and no member of a's ISR and ELR has reached a later leader epoch, b's ISR, ELR and
    leader are within a's ISR, ELR and last known leaders. Elections take the leader from the
    ISR and ELR (the last known leader from the last known ELR), and only an AlterPartition adds
    a member: one accepted at a's partition epoch or later, from a leader that had applied a
    record that recent (a's leader, or the leader of a later epoch, which reached it). Where
    only a reassignment's completion hands leadership on, b names a's leader while the
    controller's replica list does (`nobody_past`)."""
    # nobody is elected past a's leader while the replica list names it, and the ISR only grows
    # within an epoch
    kept = and_(
        nobody_past(enc, sym, a.leader, a.leader_epoch, [(True, b.leader_epoch, b.leader)]),
        isr_grows_in_epoch(enc, record_copy(a), record_copy(b)),
    )
    if leaders_stay(enc):
        # and a leader b keeps from a is kept into one new epoch, by the reassignment's end
        bumped = and_(ne(a.leader, -1), eq(a.leader, b.leader), a.leader_epoch < b.leader_epoch)
        once = and_(eq(b.leader_epoch, a.leader_epoch + 1), _completed(enc, b))
        kept = and_(kept, implies(bumped, once))
    if not views_only_advance(enc):
        return kept
    s = enc.sets
    group, behind = _candidates_behind(enc, a, sym)
    within = and_(
        s.subset(s.union(b.isr, b.elr), group),
        s.subset(b.last_known_elr, s.union(group, s.bit(-1))),  # Kafka remembers a leader of -1 too
        _leader_within(enc, b.leader, group),
    )
    return and_(kept, implies(behind, within))


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
                implies(eq(a.leader, m), replica(sym, m).view.partition_epoch < a.partition_epoch),
                implies(
                    s.has(group, m),
                    and_(
                        replica(sym, m).present, replica(sym, m).view.leader_epoch <= a.leader_epoch
                    ),
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
    if not views_only_advance(enc):
        return True
    group, behind = _candidates_behind(enc, a, sym)
    named = (
        implies(and_(present, leader_epoch > a.leader_epoch), _leader_within(enc, leader, group))
        for present, leader_epoch, leader in epoch_carriers(enc, sym)
    )
    return implies(behind, and_(*named))


def _led_continuously(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
    """`led_continuously` for the record: a record of an epoch a leader has led names it; and
    for a record that keeps its leader leading (it names it, and it leads an epoch not after the
    record's), up to the record's epoch. Only with reassignment, where a completion keeps the
    leader in a new epoch."""
    if not enc.reassigning:
        return True

    mine = [(True, record.leader_epoch, record.leader)]
    as_copy = record_copy(record)

    def kept(b: int) -> Term:
        lr = replica(sym, b)
        since = sym.ghost.led_since[b - 1]
        leads = eq(lr.role, LEADER)
        led = and_(leads, record.leader_epoch >= since, record.leader_epoch <= lr.view.leader_epoch)
        keeps = and_(eq(record.leader, b), leads, lr.view.leader_epoch <= record.leader_epoch)
        # only the leader's proposals add to the ISR: a later epoch that keeps it has an ISR
        # within the one it holds and the one it proposes
        s = enc.sets
        proposed = s.ite(and_(lr.pending, not_(refused(enc, sym, b))), lr.pending_isr, 0)
        answer = sym.brokers[b - 1].ap_response
        within = ite(
            has_accepted_answer(enc, sym, b),
            s.subset(record.isr, answer.isr),
            s.subset(record.isr, s.union(lr.view.isr, proposed)),
        )
        bumped = and_(keeps, lr.view.leader_epoch < record.leader_epoch)
        parts = [
            implies(led, eq(record.leader, b)),
            led_continuously(enc, sym, b, keeps, record.leader_epoch),
            implies(bumped, within),
        ]
        if enc.cfg.budget.reassignments == 1:
            # the one reassignment's end is the one new epoch that keeps a leader: the record
            # adds and removes nothing more, and the replica that left is gone from its list
            once = and_(
                eq(since, lr.view.leader_epoch),
                eq(record.leader_epoch, since + 1),
                _completed(enc, record),
            )
            parts.append(implies(bumped, once))
        return and_(*parts)

    # nobody elected past its leader, nor past a leader a copy of the metadata names
    copies = registration_copies(enc, sym)
    return and_(
        nobody_past(enc, sym, record.leader, record.leader_epoch),
        *(implies(c[0], nobody_past(enc, sym, c[3], c[2], mine)) for c in copies),
        *(isr_grows_in_epoch(enc, as_copy, c) for c in copies),
        *(isr_grows_in_epoch(enc, c, as_copy) for c in copies),
        *(kept(b) for b in brokers(enc)),
    )


# History facts only the completeness proofs use (they are heavier than the others).
QUORUM_FACTS: tuple[AnyFact, ...] = (
    # what applying the record does is for the apply step (and for pair facts) to know
    _nested_fact(
        "applied_as_leader",
        _applied_as_leader_by,
        "its leader may apply it safely",
        shared=False,
    ),
    Fact("lagging_members", _lagging_members, "ISR, ELR members behind were in its ISR"),
    _nested_fact("leader_holds", _leader_holds, "its leader holds what older leaders may commit"),
    Fact("lacking_leader_left", _lacking_leader_left, "its leader, without it, is left"),
    Fact(
        "stale_leader_alone",
        _stale_leader_alone,
        "stale leaders are in its ISR alone",
        orbit=_stale_leader_alone,
    ),
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
    Fact("led_continuously", _led_continuously, "its leader, kept, led every epoch before it"),
    # asked by part, as `rejoined_caught_up` (under `apply_metadata`: 60 s whole, 8 s so)
    Fact(
        "rejoined",
        _rejoined_record,
        "a replica rejoins its ISR caught up",
        by_part=True,
        orbit=_rejoined_record,
    ),
    PairFact(
        "later_candidates_hold",
        _later_candidates_hold,
        "later candidates hold what its leader may commit",
        orbit=_later_candidates_hold,
    ),
    _nested_fact(
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
        orbit=_lacking_leader_left_by,
    ),
)
