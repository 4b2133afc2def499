"""The quorum argument across leader epochs (`quorum` within one): what later leaders hold of
what an older one may commit; leaders without the committed log left behind; stale leaders
back in the ISR only alone; replicas rejoining the ISR caught up; and the leader epochs the
commits were made in (the history variable `Ghost.committed_in`)."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.model.logs import truncation_point
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.common import (
    brokers,
    candidates,
    deleted,
    every,
    holds_prefix,
    replica,
    views_only_advance,
)
from kafkarep.symbolic.invariants.copies import (
    RegistrationCopy,
    copy_owners,
    registration_copies,
    still_awaited,
)
from kafkarep.symbolic.invariants.quorum import (
    accepted_answer,
    commit_bound,
    frozen,
    may_commit,
    rollback_open,
)
from kafkarep.symbolic.lemmas import Invariant, representative
from kafkarep.symbolic.ops import Term, and_, eq, implies, ne, not_, or_
from kafkarep.symbolic.state import LEADER, ClusterState, PartitionRegistration, Replica
from kafkarep.symbolic.transition.logs import epochs


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


def left_behind(
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
                candidate = and_(s.has(group, c), replica(sym, c).present)
                parts.append(
                    implies(
                        and_(lacking(x), candidate), replica(sym, c).view.leader_epoch > epoch(x)
                    )
                )
    return and_(*parts)


def lacks_committed(enc: Encoding, sym: ClusterState, x: int) -> Term:
    g = sym.ghost
    return and_(g.true_hwm > 0, not_(holds_prefix(enc, replica(sym, x), g.committed, g.true_hwm)))


def lacking_leaders_left(enc: Encoding, sym: ClusterState) -> Term:
    """A leader without the committed log has been left behind: every other member of the
    controller's ISR and ELR has moved past its epoch (so none will follow it)."""
    return left_behind(
        enc,
        sym,
        lambda x: and_(eq(replica(sym, x).role, LEADER), lacks_committed(enc, sym, x)),
        lambda x: replica(sym, x).view.leader_epoch,
    )


def back_alone(
    enc: Encoding, sym: ClusterState, leader_epoch: Term, leader: Term, isr: Term
) -> Term:
    """A registration of a later epoch than a leader's has the leader in its ISR only alone
    (unless it names that leader again: a reassignment's completion keeps the leader)."""
    s = enc.sets
    parts = []
    for x in brokers(enc):
        xr = replica(sym, x)
        stale = and_(eq(xr.role, LEADER), leader_epoch > xr.view.leader_epoch, s.has(isr, x))
        if enc.reassigning:
            stale = and_(stale, ne(leader, x))
        parts.append(implies(stale, s.eq(isr, s.bit(x))))
    return and_(*parts)


def stale_leaders_alone(enc: Encoding, sym: ClusterState) -> Term:
    """A leader that has not applied a later epoch is in the ISR of a later registration of
    another leader only alone: it left the ISR when fenced (the only way its epoch ends here
    but a reassignment's completion, which keeps it leader), and comes back only elected from
    the ELR (an AlterPartition adding it needs a fetch in that epoch)."""
    return and_(
        *(
            implies(present, back_alone(enc, sym, leader_epoch, leader, isr))
            for present, _, leader_epoch, leader, isr in registration_copies(enc, sym)
        )
    )


def same_epoch_isr(enc: Encoding, sym: ClusterState) -> Term:
    """While a leader's epoch is the controller's, the controller's ISR is within the ISR the
    leader holds and its proposal (only its AlterPartition requests add members)."""
    s = enc.sets

    def ok(b: int) -> Term:
        r = replica(sym, b)
        a = sym.brokers[b - 1].ap_response
        current = and_(eq(r.role, LEADER), eq(r.view.leader_epoch, sym.partition.leader_epoch))
        answered = and_(a.present, eq(a.error, 0), eq(a.leader_epoch, sym.partition.leader_epoch))
        proposed = s.ite(and_(r.pending, a.present, eq(a.error, 0)), r.pending_isr, 0)
        return and_(
            implies(current, s.subset(sym.partition.isr, s.union(r.view.isr, proposed))),
            implies(answered, s.subset(sym.partition.isr, a.isr)),
        )

    return every(enc, ok)


def stale_bounds(enc: Encoding, sym: ClusterState, leader: int) -> list[tuple[Term, Term, Term]]:
    """(premise, members, commit bound) of what a leader may still commit: over its Maximal
    ISR, and over the ISR of an accepted answer it will adopt (when that ISR passes the MinISR
    gate)."""
    lr = replica(sym, leader)
    lead = eq(lr.role, LEADER)
    out = [
        (
            and_(lead, may_commit(enc, lr.view.isr)),
            lr.maximal_isr,
            commit_bound(enc, sym, leader, lr.maximal_isr),
        )
    ]
    isr, _, accepted = accepted_answer(enc, sym, leader)
    out.append(
        (and_(lead, accepted, may_commit(enc, isr)), isr, commit_bound(enc, sym, leader, isr))
    )
    view_isr = lr.view.isr
    out.append(
        (
            and_(lead, rollback_open(enc, sym, leader), may_commit(enc, view_isr)),
            view_isr,
            commit_bound(enc, sym, leader, view_isr),
        )
    )
    return out


def later_leaders_hold(enc: Encoding, sym: ClusterState, fixed: int | None = None) -> Term:
    """What a leader may still commit is held by every leader of a later epoch (each was a
    candidate when elected, so it held it, or was a Maximal ISR member that froze the bound
    when it moved on), and a diverging response of a later epoch a follower awaits keeps it.
    (With `fixed`, for representative pairs of brokers only: `Invariant.orbit`.)"""
    parts = []
    for b in brokers(enc):
        lr = replica(sym, b)
        for premise, members, bound in stale_bounds(enc, sym, b):
            for c in brokers(enc):
                if c == b or not representative(fixed, b, c):
                    continue
                cr = replica(sym, c)
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
                    still_awaited(cr, f),
                    f.leader_epoch > lr.view.leader_epoch,
                    holds_prefix(enc, cr, lr.log, bound),
                )
                at = truncation_point(epochs(cr), f.diverging_epoch, f.diverging_end)
                parts.append(implies(truncating, at >= bound))
    return and_(*parts)


def _clean_elections(enc: Encoding) -> bool:
    """No election puts a replica outside the ISR and ELR in charge."""
    families = {f.name for f in enc.families}
    return not enc.cfg.topic.unclean_leader_election and "elect_unclean" not in families


def rejoined(
    enc: Encoding,
    sym: ClusterState,
    a: RegistrationCopy,
    b: RegistrationCopy,
    elr_a: Term | None = None,
    elr_b: Term | None = None,
    fixed: int | None = None,
    owners: tuple[int, ...] = (),
) -> Term:
    """Of two registrations a older than b: a replica outside a's ISR and in b's (not alone)
    joined in an epoch that it and that epoch's leader reached, or was elected from the ELR
    after a's epoch. Only its leader's AlterPartition adds a replica to the ISR, once it has
    fetched in the leader's epoch (at or after a's, at most b's); an election from the ELR or
    an unclean one leaves the leader alone in the ISR, and a clean one keeps the ISR. Where
    a's ELR and last known leader are known (`elr_a`: the controller's, a record's; or empty,
    at MinISR with a leader) and elections are clean, a replica outside all of them that is in
    b's ISR (even alone) or ELR (`elr_b`, where known) joined by a proposal: the ELR takes only
    replicas leaving the ISR, and an election only ISR, ELR or last-known members. A replica a
    reassignment deleted has reached every epoch these clauses ask of its view (`deleted`: it
    applied the record that dropped it, later than every record naming it). With `fixed`, only
    for the replicas x that make (`owners` of a and b, x) representative."""
    s = enc.sets
    present_a, partition_epoch_a, leader_epoch_a, leader_a, isr_a = a
    present_b, partition_epoch_b, leader_epoch_b, _, isr_b = b
    known = elr_a is not None and _clean_elections(enc)
    parts = []
    # The epoch x joined in (at most b's) is a's, whose leader proposed it from a's
    # registration or a later one (a proposal names the partition epoch it builds on), ...
    led = or_(
        *(
            and_(
                eq(leader_a, m),
                or_(
                    replica(sym, m).view.partition_epoch >= partition_epoch_a,
                    deleted(enc, sym, m),
                ),
            )
            for m in brokers(enc)
        )
    )
    for x in brokers(enc):
        if not representative(fixed, *owners, x):
            continue
        xr = replica(sym, x)
        others = [m for m in brokers(enc) if m != x]
        # ... or x's current epoch (at most b's), whose leader (the one x's view names) reached
        # it, or one between a's and x's, whose leader reached it; or x was elected from the
        # ELR (alone) after a's epoch, and every other member of b's ISR joined it later.
        current = or_(
            *(
                and_(
                    eq(xr.view.leader, m),
                    or_(
                        replica(sym, m).view.leader_epoch >= xr.view.leader_epoch,
                        deleted(enc, sym, m),
                    ),
                )
                for m in others
            )
        )
        between = or_(
            *(
                or_(replica(sym, m).view.leader_epoch > leader_epoch_a, deleted(enc, sym, m))
                for m in others
            )
        )
        joined = and_(
            *(
                implies(
                    s.has(isr_b, m),
                    or_(replica(sym, m).view.leader_epoch > leader_epoch_a, deleted(enc, sym, m)),
                )
                for m in others
            )
        )
        proposed = or_(
            and_(xr.view.leader_epoch >= leader_epoch_a, led),
            and_(
                xr.view.leader_epoch > leader_epoch_a,
                xr.view.leader_epoch <= leader_epoch_b,
                current,
            ),
            and_(
                xr.view.leader_epoch > leader_epoch_a + 1, leader_epoch_b > leader_epoch_a, between
            ),
        )
        elected = and_(
            xr.view.leader_epoch > leader_epoch_a, leader_epoch_b > leader_epoch_a, joined
        )
        ordered = and_(
            present_a,
            present_b,
            partition_epoch_a < partition_epoch_b,
            xr.present,
            xr.view.present,
            not_(s.has(isr_a, x)),
        )
        alone = s.eq(isr_b, s.bit(x))
        parts.append(implies(and_(ordered, s.has(isr_b, x), not_(alone)), or_(proposed, elected)))
        inside = s.has(isr_b, x) if elr_b is None else s.has(s.union(isr_b, elr_b), x)
        if known:
            # outside a's ISR, ELR and last known leader, x entered by a proposal
            assert elr_a is not None
            outside = and_(ordered, not_(s.has(elr_a, x)))
            parts.append(implies(and_(outside, inside), proposed))
        elif enc.cfg.options.elr_enabled and _clean_elections(enc):
            # a's ELR is empty at MinISR, and there is no last known leader with a leader
            full = and_(s.size(isr_a) >= enc.cfg.min_isr, ne(leader_a, -1))
            parts.append(implies(and_(ordered, full, inside), proposed))
    return and_(*parts)


def with_elr(enc: Encoding, sym: ClusterState) -> list[tuple[RegistrationCopy, Term | None]]:
    """Each of `registration_copies` with its ELR and last known leader, where the copy carries them
    (the controller's)."""
    copies = registration_copies(enc, sym)
    return [(copies[0], elr_and_last_known(enc, sym.partition))] + [(r, None) for r in copies[1:]]


def elr_and_last_known(enc: Encoding, record: PartitionRegistration) -> Term:
    return enc.sets.union(record.elr, record.last_known_elr)


def _commits(sym: ClusterState, floor: Term | None) -> list[tuple[int, Term, Term]]:
    """(offset, premise, leader epoch) of each committed record a leader of epoch `floor` or
    older committed (moved its HWM past; any committed record if no floor)."""
    g = sym.ghost
    out = []
    for o, epoch in enumerate(g.committed_in):
        premise = o < g.true_hwm if floor is None else and_(o < g.true_hwm, epoch <= floor)
        out.append((o, premise, epoch))
    return out


def holds_commits(sym: ClusterState, r: Replica, floor: Term) -> Term:
    """The replica holds every record committed by a leader of epoch `floor` or older."""
    g = sym.ghost
    return and_(
        *(
            implies(premise, and_(o < r.leo, eq(r.log[o], g.committed[o])))
            for o, premise, _ in _commits(sym, floor)
        )
    )


def past_commits(sym: ClusterState, r: Replica, floor: Term | None = None) -> Term:
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
        r = replica(sym, b)
        return implies(
            and_(r.present, eq(r.role, LEADER)), holds_commits(sym, r, r.view.leader_epoch)
        )

    def kept(b: int) -> Term:
        # a diverging response such a leader sent keeps those records
        k = sym.brokers[b - 1]
        f, r = k.fetch_response, k.replica
        awaited = and_(f.present, f.diverging, still_awaited(r, f))
        at = truncation_point(epochs(r), f.diverging_epoch, f.diverging_end)
        return and_(
            *(
                implies(and_(awaited, premise, o < r.leo, eq(r.log[o], g.committed[o])), o < at)
                for o, premise, _ in _commits(sym, f.leader_epoch)
            )
        )

    # a leader's epoch is at least its records' (where a reassignment's completion keeps a
    # leader in a new epoch, its commits are of the first epoch it led in: it wrote later ones)
    shape = (
        []
        if enc.reassigning
        else [implies(p, e >= g.committed[o]) for o, p, e in _commits(sym, None)]
    )
    if enc.reassigning:
        # a leader of the controller's epoch: every commit was made in its leadership or before
        for b in brokers(enc):
            r = replica(sym, b)
            current = and_(eq(r.role, LEADER), eq(r.view.leader_epoch, sym.partition.leader_epoch))
            since = g.led_since[b - 1]
            shape += [implies(and_(p, current), e <= since) for _, p, e in _commits(sym, None)]
    return and_(every(enc, holds), every(enc, kept), *shape)


def candidates_past_commits(enc: Encoding, sym: ClusterState) -> Term:
    """Every member of the controller's ISR and ELR has reached the leader epoch of every
    commit: the committing leader's Maximal ISR covered them, each fetching in that epoch."""
    group = candidates(enc, sym)

    def past(c: int) -> Term:
        r = replica(sym, c)
        return implies(and_(enc.sets.has(group, c), r.present), past_commits(sym, r))

    return and_(
        every(enc, past),
        *(
            implies(premise, epoch <= sym.partition.leader_epoch)
            for _, premise, epoch in _commits(sym, None)
        ),
    )


def rejoined_caught_up(enc: Encoding, sym: ClusterState, fixed: int | None = None) -> Term:
    """`rejoined` of every two copies of the metadata in the state (with `fixed`, of the
    representative ones: `Invariant.orbit`)."""
    if not views_only_advance(enc):
        return True
    copies = with_elr(enc, sym)
    owners = copy_owners(enc)
    return and_(
        *(
            rejoined(enc, sym, a, b, ea, eb, fixed, (owners[i], owners[j]))
            for i, (a, ea) in enumerate(copies)
            for j, (b, eb) in enumerate(copies)
            if i != j and representative(fixed, owners[i], owners[j])
        )
    )


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "later_leaders_hold",
        later_leaders_hold,
        "later leaders hold what may commit",
        orbit=later_leaders_hold,
    ),
    Invariant("leaderless_fenced", leaderless_fenced, "no leader: the ISR is fenced"),
    Invariant("lacking_leaders_left", lacking_leaders_left, "leaders without it are left"),
    Invariant("stale_leaders_alone", stale_leaders_alone, "stale leaders come back alone"),
    Invariant("same_epoch_isr", same_epoch_isr, "the ISR grows only by its leader's proposals"),
    # asked by part: on the reassignment shape its obligation under `apply_metadata` took 215 s
    # whole (past the models' 300 s timeout beside a second worker), 18 s in its 72 parts a step
    Invariant(
        "rejoined_caught_up",
        rejoined_caught_up,
        "a replica rejoins the ISR caught up",
        by_part=True,
        orbit=rejoined_caught_up,
    ),
    Invariant("leaders_hold_commits", leaders_hold_commits, "leaders hold older leaders' commits"),
    Invariant(
        "candidates_past_commits", candidates_past_commits, "ISR, ELR reached every commit's epoch"
    ),
)
