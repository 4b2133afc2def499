"""The controller rules over symbolic partition registrations.

A second writing of `kafkarep.rules` (the change builder, AlterPartition, broker events,
reassignment, elections) in terms of `ops`, step for step and in the same order, so that a
reader can hold one against the other. It is never trusted: the agreement test runs both on every
(state, action) pair of small models and requires the same result. Guards switched off by a model
(`disable_guards`) pass here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import ERROR, Encoding, Reg, Snap
from kafkarep.symbolic.ops import Term, and_, eq, imin, ite, ne, not_, or_

ONLINE, PREFERRED, UNCLEAN = 0, 1, 2
Acceptable = Callable[[int], Term]  # for a constant broker id


class Targets(NamedTuple):
    isr: Term
    replicas: tuple[Term, ...]
    adding: Term
    removing: Term
    elr: Term
    last_known_elr: Term


class Record:
    """A PartitionChangeRecord under construction: each field has a presence flag."""

    FIELDS = ("isr", "leader", "replicas", "elr", "lke", "adding", "removing", "recovering")

    def __init__(self, enc: Encoding, p: Snap) -> None:
        self.enc = enc
        self.present: dict[str, Term] = dict.fromkeys(self.FIELDS, False)
        self.value: dict[str, Term] = {
            "isr": 0,
            "leader": 0,
            "replicas": p.replicas,
            "elr": 0,
            "lke": 0,
            "adding": 0,
            "removing": 0,
            "recovering": False,
        }

    def set(self, field: str, when: Term, value: Term) -> None:
        if isinstance(when, bool) and not when:
            return
        self.present[field] = or_(self.present[field], when)
        old = self.value[field]
        if field == "replicas":
            self.value[field] = tuple(ite(when, v, o) for v, o in zip(value, old, strict=True))
        elif field in ("leader", "recovering"):
            self.value[field] = ite(when, value, old)
        else:
            self.value[field] = self.enc.sets.ite(when, value, old)

    def has(self, field: str) -> Term:
        return self.present[field]

    def get(self, field: str) -> Term:
        return self.value[field]

    def noop(self) -> Term:
        return not_(or_(*self.present.values()))


# --- replica lists -------------------------------------------------------------------------


def replica_set(enc: Encoding, slots: tuple[Term, ...]) -> Term:
    return enc.sets.union(*(enc.sets.bit(r) for r in slots))


def replica_count(slots: tuple[Term, ...]) -> Term:
    if all(isinstance(r, int) for r in slots):
        return sum(1 for r in slots if r != 0)
    return sum((ite(ne(r, 0), 1, 0) for r in slots), start=0)


def same_replicas(a: tuple[Term, ...], b: tuple[Term, ...]) -> Term:
    return and_(*(eq(x, y) for x, y in zip(a, b, strict=True)))


def keep_replicas(slots: tuple[Term, ...], keep: Callable[[Term], Term]) -> tuple[Term, ...]:
    """The replicas for which `keep` holds, in order, packed."""
    n = len(slots)
    kept = [and_(ne(r, 0), keep(r)) for r in slots]
    out: list[Term] = []
    for j in range(n):
        value: Term = 0
        before: Term = 0  # kept slots before slot i
        choices = []
        for i in range(n):
            choices.append((and_(kept[i], eq(before, j)), slots[i]))
            before = before + ite(kept[i], 1, 0)
        for cond, slot in reversed(choices):
            value = ite(cond, slot, value)
        out.append(value)
    return tuple(out)


def ordered_members(enc: Encoding, s: Term) -> tuple[Term, ...]:
    """The brokers of a set in ascending order, packed into N slots."""
    ids = tuple(range(1, enc.n + 1))
    return keep_replicas(ids, lambda r: enc.sets.has(s, r))


def effective_min_isr(enc: Encoding, p: Snap) -> Term:
    return imin(enc.cfg.min_isr, replica_count(p.replicas))


def active(regs: tuple[Reg, ...], broker: int) -> Term:
    if not 1 <= broker <= len(regs):
        return False
    r = regs[broker - 1]
    return and_(not_(r.fenced), not_(r.shutdown))


def for_id(enc: Encoding, broker: Term, test: Acceptable) -> Term:
    """test(broker) for a symbolic broker id (false for -1 and 0)."""
    if isinstance(broker, int):
        return test(broker)
    return or_(*(and_(eq(broker, k), test(k)) for k in range(1, enc.n + 1)))


def only_member(enc: Encoding, s: Term) -> Term:
    """The member of a one-element set."""
    out: Term = -1
    for k in range(enc.n, 0, -1):
        out = ite(enc.sets.has(s, k), k, out)
    return out


# --- the change builder (rules/partition_change.py) -----------------------------------------


def targets_of(p: Snap) -> Targets:
    return Targets(p.isr, p.replicas, p.adding, p.removing, p.elr, p.last_known_elr)


def build(
    enc: Encoding,
    p: Snap,
    t: Targets,
    election: int,
    acceptable: Acceptable,
    unclean_shutdown: int | None = None,
    target_recovering: Term | None = None,
) -> Record:
    options = enc.cfg.options
    s = enc.sets
    seed = options.reassignment_completion == "seed-000"
    removing_before = t.removing
    t, completed = _complete_reassignment(enc, p, t)
    t = _populate_elr(enc, p, t, unclean_shutdown)
    if seed:
        t = t._replace(
            elr=s.ite(completed, s.minus(t.elr, removing_before), t.elr),
            last_known_elr=s.ite(
                completed, s.minus(t.last_known_elr, removing_before), t.last_known_elr
            ),
        )
    record = Record(enc, p)
    t = _try_election(enc, p, t, record, election, acceptable)
    record.set(
        "leader",
        and_(
            not_(record.has("leader")),
            not_(s.subset(replica_set(enc, p.replicas), replica_set(enc, t.replicas))),
        ),
        p.leader,
    )
    if seed:
        record.set("leader", and_(completed, not_(record.has("leader"))), p.leader)
    _record_elr(enc, p, t, record)
    record.set(
        "isr",
        and_(
            not_(record.has("isr")),
            or_(not_(s.empty(t.isr)), options.elr_enabled),
            s.ne(t.isr, p.isr),
        ),
        t.isr,
    )
    if options.leader_epoch_bump_on_isr_shrink:
        record.set(
            "leader",
            and_(
                not_(record.has("leader")),
                record.has("isr"),
                not_(s.subset(p.isr, record.get("isr"))),
            ),
            p.leader,
        )
    _record_last_known_leader(enc, p, record)
    record.set(
        "replicas",
        and_(ne(replica_count(t.replicas), 0), not_(same_replicas(t.replicas, p.replicas))),
        t.replicas,
    )
    record.set("removing", s.ne(t.removing, p.removing), t.removing)
    record.set("adding", s.ne(t.adding, p.adding), t.adding)
    if target_recovering is not None:
        record.set("recovering", ne(target_recovering, p.recovering), target_recovering)
    return record


def apply(enc: Encoding, p: Snap, record: Record) -> Snap:
    s = enc.sets

    def pick(field: str, old: Term) -> Term:
        if field in ("isr", "elr", "lke", "adding", "removing"):
            return s.ite(record.has(field), record.get(field), old)
        return ite(record.has(field), record.get(field), old)

    return Snap(
        leader=pick("leader", p.leader),
        leader_epoch=p.leader_epoch + ite(record.has("leader"), 1, 0),
        partition_epoch=p.partition_epoch + 1,
        isr=pick("isr", p.isr),
        elr=pick("elr", p.elr),
        last_known_elr=pick("lke", p.last_known_elr),
        adding=pick("adding", p.adding),
        removing=pick("removing", p.removing),
        recovering=pick("recovering", p.recovering),
        replicas=tuple(
            ite(record.has("replicas"), new, old)
            for new, old in zip(record.get("replicas"), p.replicas, strict=True)
        ),
    )


def _complete_reassignment(enc: Encoding, p: Snap, t: Targets) -> tuple[Targets, Term]:
    s = enc.sets
    ongoing = or_(not_(s.empty(t.adding)), not_(s.empty(t.removing)))
    if isinstance(ongoing, bool) and not ongoing:
        return t, False
    final_isr = s.minus(t.isr, t.removing)
    final_replicas = keep_replicas(t.replicas, lambda r: not_(s.has(t.removing, r)))
    count = replica_count(final_replicas)
    blocked = and_(not_(s.empty(t.removing)), or_(s.empty(final_isr), eq(count, 0)))
    if enc.cfg.options.reassignment_completion == "seed-000":
        min_isr = effective_min_isr(enc, p)
        ready = not_(
            or_(s.size(final_isr) < min_isr, count < min_isr, not_(s.subset(t.adding, final_isr)))
        )
    else:
        ready = s.subset(replica_set(enc, final_replicas), final_isr)
    completed = and_(ongoing, not_(blocked), ready)
    done = Targets(final_isr, final_replicas, 0, 0, t.elr, t.last_known_elr)
    return (
        Targets(
            s.ite(completed, done.isr, t.isr),
            tuple(ite(completed, a, b) for a, b in zip(done.replicas, t.replicas, strict=True)),
            s.ite(completed, 0, t.adding),
            s.ite(completed, 0, t.removing),
            t.elr,
            t.last_known_elr,
        ),
        completed,
    )


def _populate_elr(enc: Encoding, p: Snap, t: Targets, unclean_shutdown: int | None) -> Targets:
    options = enc.cfg.options
    if not options.elr_enabled:
        return t
    s = enc.sets
    at_min = s.size(t.isr) >= effective_min_isr(enc, p)
    candidates = s.union(t.elr, p.isr)
    elr = s.minus(candidates, t.isr)
    if unclean_shutdown is not None and options.guard_on(
        "partition_change.unclean_shutdown_leaves_elr"
    ):
        elr = s.minus(elr, s.bit(unclean_shutdown))
    last_known = s.minus(s.minus(s.union(candidates, t.last_known_elr), t.isr), elr)
    return t._replace(elr=s.ite(at_min, 0, elr), last_known_elr=s.ite(at_min, 0, last_known))


def _try_election(
    enc: Encoding, p: Snap, t: Targets, record: Record, election: int, acceptable: Acceptable
) -> Targets:
    s = enc.sets
    leader, unclean = elect_leader(enc, p, t, election, acceptable)
    changed = ne(leader, p.leader)
    from_elr = and_(changed, s.has(t.elr, leader))
    t = t._replace(
        isr=s.ite(from_elr, s.bit(leader), t.isr),
        elr=s.ite(from_elr, s.minus(t.elr, s.bit(leader)), t.elr),
    )
    record.set("leader", changed, leader)
    record.set("isr", and_(changed, unclean), s.bit(leader))
    if enc.cfg.options.leader_recovery_supported:
        record.set("recovering", and_(changed, unclean, not_(p.recovering)), True)
    return t


def elect_leader(
    enc: Encoding, p: Snap, t: Targets, election: int, acceptable: Acceptable
) -> tuple[Term, Term]:
    """(leader or -1, whether the election was unclean), R1.2.2-R1.2.4."""
    s = enc.sets
    options = enc.cfg.options
    isr, elr, replicas = t.isr, t.elr, t.replicas

    def valid(r: int) -> Term:
        return and_(or_(s.has(isr, r), and_(s.empty(isr), s.has(elr, r))), acceptable(r))

    choices: list[tuple[Term, Term, Term]] = []  # (condition, leader, unclean), first wins
    if election == PREFERRED:
        choices.append((for_id(enc, replicas[0], valid), replicas[0], False))
        choices.append((for_id(enc, p.leader, valid), p.leader, False))
        candidates = replicas[1:]
    else:
        choices.append((for_id(enc, p.leader, valid), p.leader, False))
        candidates = replicas
    for r in candidates:
        choices.append((for_id(enc, r, valid), r, False))
    if options.elr_enabled and options.use_last_known_leader:
        last_known = and_(s.empty(isr), s.empty(elr), eq(s.size(p.last_known_elr), 1))
        choices.append((last_known, only_member(enc, p.last_known_elr), True))
    clean_choices = len(choices)
    if election == UNCLEAN:
        for r in replicas:
            choices.append((for_id(enc, r, acceptable), r, True))
    leader: Term = -1
    unclean: Term = False
    for cond, who, how in reversed(choices):
        leader = ite(cond, who, leader)
        unclean = ite(cond, how, unclean)
    if enc.free_elections and election != PREFERRED:
        prior = or_(*(cond for cond, _, _ in choices[:clean_choices]))
        dirty = acceptable if election == UNCLEAN else None
        leader, unclean = free_choice(enc, p, replicas, valid, dirty, prior, (leader, unclean))
    return leader, unclean


def free_choice(
    enc: Encoding,
    p: Snap,
    replicas: tuple[Term, ...],
    valid: Acceptable,
    unclean_ok: Acceptable | None,
    prior: Term,
    first: tuple[Term, Term],
) -> tuple[Term, Term]:
    """Any eligible replica rather than the first in order (see `Encoding.free_elections`): a
    free choice wins where the first eligible would have, if it is eligible too; in an unclean
    election, any acceptable replica where no clean choice was (`prior`: none was found)."""
    leader, unclean = first
    choice = ops.int_var(f"choice!{next(enc.choices)}")
    ids = [r for r in replicas if not (isinstance(r, int) and r <= 0)]

    def chosen(test: Acceptable) -> Term:
        return or_(*(and_(eq(choice, r), for_id(enc, r, test)) for r in ids))

    if unclean_ok is not None:
        dirty = and_(not_(prior), chosen(unclean_ok))
        leader, unclean = ite(dirty, choice, leader), ite(dirty, True, unclean)
    clean = and_(not_(for_id(enc, p.leader, valid)), chosen(valid))
    return ite(clean, choice, leader), ite(clean, False, unclean)


def _record_elr(enc: Encoding, p: Snap, t: Targets, record: Record) -> None:
    options = enc.cfg.options
    s = enc.sets
    if not options.elr_enabled:
        elr: Term = 0
        last_known: Term = 0
    else:
        elr = s.ite(record.has("isr"), 0, t.elr)
        last_known = s.ite(record.has("isr"), 0, t.last_known_elr)
    record.set("elr", s.ne(elr, p.elr), elr)
    if options.use_last_known_leader:
        return
    record.set("lke", s.ne(last_known, p.last_known_elr), last_known)


def _record_last_known_leader(enc: Encoding, p: Snap, record: Record) -> None:
    options = enc.cfg.options
    if not (options.use_last_known_leader and options.elr_enabled):
        return
    s = enc.sets
    remember = and_(
        record.has("isr"), s.empty(record.get("isr")), s.ne(p.last_known_elr, s.bit(p.leader))
    )
    will_have_leader = or_(
        and_(record.has("leader"), record.get("leader") >= 0),
        and_(ne(p.leader, -1), or_(not_(record.has("leader")), ne(record.get("leader"), -1))),
    )
    forget = and_(not_(remember), will_have_leader, not_(s.empty(p.last_known_elr)))
    record.set("lke", remember, s.bit(p.leader))
    record.set("lke", forget, 0)


# --- outcomes ---------------------------------------------------------------------------------


class Outcome(NamedTuple):
    changed: Term  # a record was committed
    partition: Snap  # the registration after (p when not changed)
    rejected: Term
    error: Term  # ERROR index: the refusal, NEW_LEADER_ELECTED on a committed one, or NONE


def committed(enc: Encoding, p: Snap, record: Record, error: Term = ERROR[Error.NONE]) -> Outcome:
    changed = not_(record.noop())
    new = apply(enc, p, record)
    return Outcome(changed, merge_snap(enc, changed, new, p), False, error)


def merge_snap(enc: Encoding, c: Term, a: Snap, b: Snap) -> Snap:
    return enc.merge(c, a, b, Snap)


def first_refusal(enc: Encoding, checks: list[tuple[str, Error, Term]]) -> tuple[Term, Term]:
    """(refused, error index) for guards checked in order; switched-off guards pass."""
    refused: Term = False
    error: Term = ERROR[Error.NONE]
    for name, code, passes in reversed(checks):
        if not enc.cfg.options.guard_on(name):
            continue
        error = ite(passes, error, ERROR[code])
        refused = or_(not_(passes), refused)
    return refused, error


# --- AlterPartition (rules/alter_partition.py) -------------------------------------------------


def alter_partition(
    enc: Encoding,
    p: Snap,
    regs: tuple[Reg, ...],
    broker: int,
    req_le: Term,
    req_pe: Term,
    req_isr: Term,
    req_epochs: tuple[Term, ...],
    req_recovering: Term,
    req_broker_epoch: Term,
) -> Outcome:
    s = enc.sets
    n = enc.n
    members = range(1, n + 1)
    area = "alter_partition."
    checks = [
        (area + "requester_epoch_current", Error.STALE_BROKER_EPOCH,
         eq(regs[broker - 1].epoch, req_broker_epoch)),
        (area + "leader_epoch_not_ahead", Error.NOT_CONTROLLER, req_le <= p.leader_epoch),
        (area + "partition_epoch_not_ahead", Error.NOT_CONTROLLER, req_pe <= p.partition_epoch),
        (area + "leader_epoch_current", Error.FENCED_LEADER_EPOCH, req_le >= p.leader_epoch),
        (area + "requester_is_leader", Error.INVALID_REQUEST, eq(p.leader, broker)),
        (area + "partition_epoch_current", Error.INVALID_UPDATE_VERSION,
         req_pe >= p.partition_epoch),
        (area + "isr_within_replicas", Error.INVALID_REQUEST,
         s.subset(req_isr, replica_set(enc, p.replicas))),
        (area + "isr_includes_leader", Error.INVALID_REQUEST, s.has(req_isr, p.leader)),
        (area + "recovering_isr_single", Error.INVALID_REQUEST,
         or_(not_(req_recovering), s.size(req_isr) <= 1)),
        (area + "no_return_to_recovering", Error.INVALID_REQUEST,
         not_(and_(not_(p.recovering), req_recovering))),
        (area + "isr_members_eligible", Error.INELIGIBLE_REPLICA,
         and_(*(ops.implies(s.has(req_isr, k), active(regs, k)) for k in members))),
        (area + "isr_member_epochs_current", Error.INELIGIBLE_REPLICA,
         and_(*(
             ops.implies(
                 s.has(req_isr, k),
                 or_(eq(req_epochs[k - 1], -1), eq(regs[k - 1].epoch, req_epochs[k - 1])),
             )
             for k in members
         ))),
    ]  # fmt: skip
    refused, error = first_refusal(enc, checks)
    election = UNCLEAN if enc.cfg.topic.unclean_leader_election else ONLINE
    record = build(
        enc,
        p,
        targets_of(p)._replace(isr=req_isr),
        election,
        lambda r: active(regs, r),
        target_recovering=req_recovering,
    )
    moved = and_(record.has("leader"), ne(record.get("leader"), broker))
    outcome = committed(enc, p, record, ite(moved, ERROR[Error.NEW_LEADER_ELECTED], error))
    return Outcome(
        and_(not_(refused), outcome.changed),
        merge_snap(enc, refused, p, outcome.partition),
        refused,
        ite(refused, error, outcome.error),
    )


# --- broker events (rules/broker_events.py) ----------------------------------------------------


def broker_change(
    enc: Encoding,
    p: Snap,
    regs: tuple[Reg, ...],
    remove: int = -1,
    add: int = -1,
    unclean: int = -1,
) -> Outcome:
    """Kafka's generateLeaderAndIsrUpdates for one broker event (`_commit`); `regs` is the
    registry before the event."""

    def acceptable(r: int) -> Term:
        if r in (remove, unclean):
            return False
        return True if r == add else active(regs, r)

    s = enc.sets
    gone = s.union(s.bit(remove) if remove > 0 else 0, s.bit(unclean) if unclean > 0 else 0)
    election = UNCLEAN if enc.cfg.topic.unclean_leader_election else ONLINE
    record = build(
        enc,
        p,
        targets_of(p)._replace(isr=s.minus(p.isr, gone)),
        election,
        acceptable,
        unclean_shutdown=unclean if unclean > 0 else None,
    )
    return committed(enc, p, record)


def unchanged(p: Snap) -> Outcome:
    return Outcome(False, p, False, ERROR[Error.NONE])


def pick(enc: Encoding, c: Term, a: Outcome, b: Outcome) -> Outcome:
    return Outcome(
        ite(c, a.changed, b.changed),
        merge_snap(enc, c, a.partition, b.partition),
        ite(c, a.rejected, b.rejected),
        ite(c, a.error, b.error),
    )


def fence_broker(enc: Encoding, p: Snap, regs: tuple[Reg, ...], broker: int) -> Outcome:
    return pick(
        enc, enc.sets.has(p.isr, broker), broker_change(enc, p, regs, remove=broker), unchanged(p)
    )


def controlled_shutdown(enc: Encoding, p: Snap, regs: tuple[Reg, ...], broker: int) -> Outcome:
    return fence_broker(enc, p, regs, broker)


def unfence_broker(enc: Encoding, p: Snap, regs: tuple[Reg, ...], broker: int) -> Outcome:
    return pick(enc, eq(p.leader, -1), broker_change(enc, p, regs, add=broker), unchanged(p))


def register_unclean(enc: Encoding, p: Snap, regs: tuple[Reg, ...], broker: int) -> Outcome:
    """The partition side of a registration found unclean (R5.4)."""
    s = enc.sets
    member = or_(s.has(p.isr, broker), s.has(p.elr, broker))
    return pick(enc, member, broker_change(enc, p, regs, unclean=broker), unchanged(p))


# --- reassignment and elections (rules/reassignment.py, rules/elections.py) --------------------


def start_reassignment(
    enc: Encoding, p: Snap, regs: tuple[Reg, ...], target: tuple[int, ...]
) -> Outcome:
    s = enc.sets
    target_set = s.of(target)
    current = replica_set(enc, p.replicas)
    removing = s.minus(current, target_set)
    adding = s.minus(target_set, current)
    tail = ordered_members(enc, removing)
    # The target in request order, then the removed replicas ascending, in N slots.
    slots: list[Term] = list(target) + list(tail[: enc.n - len(target)])
    new_replicas = tuple(slots[: enc.n])
    t = Targets(
        p.isr,
        new_replicas,
        s.ite(s.empty(adding), p.adding, adding),
        s.ite(s.empty(removing), p.removing, removing),
        p.elr,
        p.last_known_elr,
    )
    record = build(enc, p, t, ONLINE, lambda r: active(regs, r))
    return committed(enc, p, record)


def cancel_reassignment(enc: Encoding, p: Snap, regs: tuple[Reg, ...]) -> Outcome:
    s = enc.sets
    options = enc.cfg.options
    unclean_topic = enc.cfg.topic.unclean_leader_election
    replicas = keep_replicas(p.replicas, lambda r: not_(s.has(p.adding, r)))
    isr = s.minus(p.isr, p.adding)
    invented = s.empty(isr)
    back_isr = s.ite(invented, s.bit(replicas[0]), isr)
    checks = [
        ("reassignment.reassignment_in_progress", Error.NO_REASSIGNMENT_IN_PROGRESS,
         or_(not_(s.empty(p.adding)), not_(s.empty(p.removing)))),
        ("reassignment.revert_is_clean", Error.INVALID_REPLICA_ASSIGNMENT,
         or_(not_(invented), unclean_topic)),
        ("reassignment.revert_keeps_min_isr", Error.INVALID_REPLICA_ASSIGNMENT,
         True if options.reassignment_completion != "seed-000"
         else or_(s.size(back_isr) >= effective_min_isr(enc, p), unclean_topic)),
    ]  # fmt: skip
    refused, error = first_refusal(enc, checks)
    t = Targets(back_isr, replicas, 0, 0, p.elr, p.last_known_elr)
    record = build(enc, p, t, UNCLEAN if unclean_topic else ONLINE, lambda r: active(regs, r))
    outcome = committed(enc, p, record)
    return Outcome(
        and_(not_(refused), outcome.changed),
        merge_snap(enc, refused, p, outcome.partition),
        refused,
        error,
    )


def elect_leaders(enc: Encoding, p: Snap, regs: tuple[Reg, ...], election: int) -> Outcome:
    if election == PREFERRED:
        needed = not_(and_(ne(p.replicas[0], 0), eq(p.leader, p.replicas[0])))
    else:
        needed = eq(p.leader, -1)
    checks = [("elections.election_needed", Error.ELECTION_NOT_NEEDED, needed)]
    refused, error = first_refusal(enc, checks)
    record = build(enc, p, targets_of(p), election, lambda r: active(regs, r))
    outcome = committed(enc, p, record)
    return Outcome(
        and_(not_(refused), outcome.changed),
        merge_snap(enc, refused, p, outcome.partition),
        refused,
        error,
    )
