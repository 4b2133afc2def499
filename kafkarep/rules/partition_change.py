"""The partition change builder: from a registration and targets to one change record.

Follows Kafka's `PartitionChangeBuilder.build` step by step, each step a function: complete a
reassignment, recompute the ELR, elect a leader, bump the leader epoch when a replica leaves,
write the ELR, ISR and last-known-leader fields, then the assignment and the leader recovery
state. `reassignment_completion = "protocol-description"` selects a reading of completion that
is not Kafka's (protocol description §4.2).

Every other controller rule (AlterPartition, reassignment, elections, broker events) ends here.
Written once for every domain (`kafkarep.rules.domain`): conditions are terms, so a step that
Kafka takes only in some states is written as a choice (`ite`, `pick`) rather than an early
return; in the concrete domain every choice is a Python value.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import NO_LEADER, LeaderRecoveryState, PartitionChangeRecord
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard
from kafkarep.rules.outcome import Decision, Outcome
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, eq, imin, ite, ne, not_, or_

AcceptableLeader = Callable[[int], Term]


class Election(IntEnum):
    ONLINE = 0
    PREFERRED = 1
    UNCLEAN = 2


class ChangeTargets(NamedTuple):
    """The builder's inputs; None keeps the current value. `leader_recovery_state` is a
    LeaderRecoveryState, or a boolean term (RECOVERING) in another domain."""

    isr: Any = None
    replicas: Any = None
    adding: Any = None
    removing: Any = None
    elr: Any = None
    last_known_elr: Any = None
    leader_recovery_state: Any = None
    election: Election = Election.ONLINE
    unclean_shutdown_replicas: Any = None


class Targets(NamedTuple):
    """The working targets as the steps of `build` refine them."""

    isr: Term
    replicas: Any
    adding: Term
    removing: Term
    elr: Term
    last_known_elr: Term


@guard("partition_change")
def unclean_shutdown_leaves_elr(m: Metadata, replica: int, unclean_shutdown: Term) -> Term:
    """A replica that may have lost unflushed data in an unclean shutdown leaves ELR (KIP-966)."""
    return not_(domain_of(m).has(unclean_shutdown, replica))


def effective_min_isr(m: Metadata) -> Term:
    """min(min.insync.replicas, replica count), counting adding and removing
    (`ReplicationControlManager.getTopicEffectiveMinIsr`)."""
    return imin(m.topic.min_isr, domain_of(m).count(m.partition.replicas))


def build_record(m: Metadata, change: ChangeTargets, acceptable: AcceptableLeader) -> Record:
    """The change record Kafka's builder emits, under construction (empty: no change,
    `PartitionChangeBuilder.changeRecordIsNoOp`)."""
    d, p, options = domain_of(m), m.partition, m.options
    t = Targets(
        isr=p.isr if change.isr is None else change.isr,
        replicas=p.replicas if change.replicas is None else change.replicas,
        adding=p.adding if change.adding is None else change.adding,
        removing=p.removing if change.removing is None else change.removing,
        elr=p.elr if change.elr is None else change.elr,
        last_known_elr=p.last_known_elr if change.last_known_elr is None else change.last_known_elr,
    )
    seed = options.reassignment_completion == "protocol-description"
    removing_before = t.removing
    t, completed = _complete_reassignment(m, t)
    unclean_shutdown = change.unclean_shutdown_replicas
    t = _populate_elr(m, t, d.empty if unclean_shutdown is None else unclean_shutdown)
    if seed:
        # Protocol description §4.2 step 3: the removed replicas leave the ELR too.
        t = t._replace(
            elr=d.pick(completed, d.minus(t.elr, removing_before), t.elr),
            last_known_elr=d.pick(
                completed, d.minus(t.last_known_elr, removing_before), t.last_known_elr
            ),
        )
    record = Record(d, p)
    t = _try_election(m, t, record, change.election, acceptable)
    # a replica leaves the set: the leader epoch moves
    # (`PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`)
    leaves = not_(d.subset(d.members(p.replicas), d.members(t.replicas)))
    record.set("leader", and_(not_(record.has("leader")), leaves), p.leader)
    if seed:  # protocol description §4.2: every completion bumps it
        record.set("leader", and_(completed, not_(record.has("leader"))), p.leader)
    _record_elr(m, t, record)
    # the ISR is written when it changed (an empty one only with ELR on;
    # `PartitionChangeBuilder.build`)
    written = or_(not_(d.is_empty(t.isr)), options.elr_enabled)
    isr_changed = and_(written, not_(d.same(t.isr, p.isr)))
    record.set("isr", and_(not_(record.has("isr")), isr_changed), t.isr)
    if options.leader_epoch_bump_on_isr_shrink:
        # before metadata version 3.6-IV0 (KAFKA-15021): a shrink bumps the epoch
        # (`PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded`)
        shrinks = and_(record.has("isr"), not_(d.subset(p.isr, record.get("isr"))))
        record.set("leader", and_(not_(record.has("leader")), shrinks), p.leader)
    _record_last_known_leader(m, record)
    _record_assignment(m, t, record)
    target = change.leader_recovery_state
    if target is not None:
        recovering = target == LeaderRecoveryState.RECOVERING if _is_state(target) else target
        record.set("recovering", ne(recovering, p.recovering), recovering)
    return record


def _is_state(value: object) -> bool:
    return isinstance(value, LeaderRecoveryState)


def build(
    m: Metadata, change: ChangeTargets, acceptable: AcceptableLeader
) -> PartitionChangeRecord | None:
    """The change record Kafka's builder emits, or None when nothing changes (concrete)."""
    return domain_of(m).change_record(build_record(m, change, acceptable))


def partition_change(m: Metadata, change: ChangeTargets) -> Outcome:
    """Run the builder with Kafka's acceptable-leader test (`ReplicationControlManager`'s
    `LeaderAcceptor`) and commit what it emits."""
    return committed(m, build_record(m, change, m.brokers.is_active))


def committed(m: Metadata, record: Record, **decision: Any) -> Any:
    """The domain's outcome of a decision (`Decision`) with this record; the codes not given
    are NONE."""
    d = domain_of(m)
    none = d.code(Error.NONE)
    decision.setdefault("error", none)
    decision.setdefault("answer", none)
    return d.outcome(m.partition, Decision(record, **decision))


def completed_replicas(d: Any, replicas: Any, removing: Term) -> Any:
    """The replicas a completed reassignment keeps: all but the removing ones, in order."""
    return d.keep(replicas, lambda r: not_(d.has(removing, r)))


def _complete_reassignment(m: Metadata, t: Targets) -> tuple[Targets, Term]:
    """Finish the reassignment when the final ISR covers the final replicas
    (`PartitionChangeBuilder.completeReassignmentIfNeeded`)."""
    d = domain_of(m)
    ongoing = or_(not_(d.is_empty(t.adding)), not_(d.is_empty(t.removing)))
    if ongoing is False:
        return t, False
    final_isr = d.minus(t.isr, t.removing)
    final_replicas = completed_replicas(d, t.replicas, t.removing)
    count = d.count(final_replicas)
    blocked = and_(not_(d.is_empty(t.removing)), or_(d.is_empty(final_isr), eq(count, 0)))
    every_target = d.subset(d.members(final_replicas), final_isr)
    if m.options.reassignment_completion == "protocol-description":
        # Protocol description §4.2: final ISR >= MinISR and every *adding* replica in it
        # (§4.1.2: a removal also needs a final replica set of at least MinISR).
        min_isr = effective_min_isr(m)
        too_few = or_(d.size(final_isr) < min_isr, count < min_isr)
        ready = and_(not_(too_few), d.subset(t.adding, final_isr))
    elif m.options.completion_when_adding_in_isr:
        # KAFKA-19975 (4.3.0): the adding replicas are in the ISR; every target replica only
        # when the replica count shrinks (PartitionReassignmentReplicas.maybeCompleteReassignment)
        shrinks = d.size(t.adding) < d.size(t.removing)
        ready = and_(d.subset(t.adding, final_isr), or_(not_(shrinks), every_target))
    else:
        ready = every_target
    completed = and_(ongoing, not_(blocked), ready)
    done = Targets(final_isr, final_replicas, d.empty, d.empty, t.elr, t.last_known_elr)
    return (
        Targets(
            d.pick(completed, done.isr, t.isr),
            d.pick_list(completed, done.replicas, t.replicas),
            d.pick(completed, d.empty, t.adding),
            d.pick(completed, d.empty, t.removing),
            t.elr,
            t.last_known_elr,
        ),
        completed,
    )


def _populate_elr(m: Metadata, t: Targets, unclean_shutdown: Term) -> Targets:
    """Below MinISR, replicas leaving the ISR join the ELR
    (`PartitionChangeBuilder.maybePopulateTargetElr`)."""
    if not m.options.elr_enabled:
        return t
    d = domain_of(m)
    at_min = d.size(t.isr) >= effective_min_isr(m)
    candidates = d.union(t.elr, m.partition.isr)
    disabled = m.options.disabled_guards
    elr = d.only(
        d.minus(candidates, t.isr),
        lambda r: unclean_shutdown_leaves_elr.passes(disabled, m, r, unclean_shutdown),
    )
    last_known = d.minus(d.minus(d.union(candidates, t.last_known_elr), t.isr), elr)
    return t._replace(
        elr=d.pick(at_min, d.empty, elr), last_known_elr=d.pick(at_min, d.empty, last_known)
    )


def _try_election(
    m: Metadata, t: Targets, record: Record, election: Election, acceptable: AcceptableLeader
) -> Targets:
    """Record the elected leader; an ELR leader becomes the ISR, an unclean one too and its
    recovery state RECOVERING (where the metadata version has it;
    `PartitionChangeBuilder.tryElection`)."""
    d, p = domain_of(m), m.partition
    leader, unclean = elect_leader(m, t, election, acceptable)
    changed = ne(leader, p.leader)
    from_elr = and_(changed, d.has(t.elr, leader))
    t = t._replace(
        isr=d.pick(from_elr, d.single(leader), t.isr),
        elr=d.pick(from_elr, d.minus(t.elr, d.single(leader)), t.elr),
    )
    record.set("leader", changed, leader)
    record.set("isr", and_(changed, unclean), d.single(leader))
    if m.options.leader_recovery_supported:
        record.set("recovering", and_(changed, unclean, not_(p.recovering)), True)
    return t


@guard("partition_change")
def elr_member_electable(m: Metadata, t: Targets, replica: int) -> Term:
    """KIP-966: with the ISR empty, a member of the ELR is a valid new leader
    (`PartitionChangeBuilder.isValidNewLeader`, Kafka 4.1.0)."""
    d = domain_of(m)
    return and_(d.is_empty(t.isr), d.has(t.elr, replica))


def elect_leader(
    m: Metadata, t: Targets, election: Election, acceptable: AcceptableLeader
) -> tuple[Term, Term]:
    """The new leader or NO_LEADER, and whether the election was unclean: the first choice, in
    Kafka's order, whose condition holds (`PartitionChangeBuilder.electLeader`)."""
    d, p, options = domain_of(m), m.partition, m.options

    def valid(replica: int) -> Term:
        # in the ISR, or in the ELR when the ISR is empty; and acceptable
        # (`PartitionChangeBuilder.isValidNewLeader`)
        in_elr = elr_member_electable.passes(options.disabled_guards, m, t, replica)
        return and_(or_(d.has(t.isr, replica), in_elr), acceptable(replica))

    choices: list[tuple[Term, Term, Term]] = []  # (condition, leader, unclean)
    replicas = list(d.slots(t.replicas))
    if election == Election.PREFERRED:
        preferred = d.first(t.replicas)
        choices.append((d.for_id(preferred, valid), preferred, False))
        choices.append((d.for_id(p.leader, valid), p.leader, False))
        candidates = replicas[1:]
    else:
        choices.append((d.for_id(p.leader, valid), p.leader, False))
        candidates = replicas
    for replica in candidates:
        choices.append((d.for_id(replica, valid), replica, False))
    if options.elr_enabled and options.use_last_known_leader:
        # the last known leader, when it is the only one known
        # (`PartitionChangeBuilder.canElectLastKnownLeader`)
        last_known = d.only_member(p.last_known_elr)
        alone = and_(d.is_empty(t.isr), d.is_empty(t.elr), eq(d.size(p.last_known_elr), 1))
        if options.last_known_leader_acceptable:
            # KAFKA-19522 (4.1.0): only if acceptable; Kafka 4.0 did not check
            alone = and_(alone, d.for_id(last_known, acceptable))
        choices.append((alone, last_known, True))
    clean = len(choices)
    if election == Election.UNCLEAN:
        for replica in replicas:
            choices.append((d.for_id(replica, acceptable), replica, True))
    leader: Term = NO_LEADER
    unclean: Term = False
    for condition, who, how in reversed(choices):
        leader = ite(condition, who, leader)
        unclean = ite(condition, how, unclean)
    if election == Election.PREFERRED:
        return leader, unclean
    prior = or_(*(condition for condition, _, _ in choices[:clean]))
    dirty = acceptable if election == Election.UNCLEAN else None
    return d.widen_election(p, t.replicas, valid, dirty, prior, (leader, unclean))


def _record_elr(m: Metadata, t: Targets, record: Record) -> None:
    """The ELR field, and the last-known ELR in its KIP-966 meaning
    (`PartitionChangeBuilder.maybeUpdateRecordElr`)."""
    d, p, options = domain_of(m), m.partition, m.options
    if options.elr_enabled:
        elr = d.pick(record.has("isr"), d.empty, t.elr)
        last_known = d.pick(record.has("isr"), d.empty, t.last_known_elr)
    else:
        elr = last_known = d.empty
    record.set("elr", not_(d.same(elr, p.elr)), elr)
    if options.use_last_known_leader:
        # the field then holds the last known leader, written later (`maybeUpdateLastKnownLeader`)
        return
    record.set("last_known_elr", not_(d.same(last_known, p.last_known_elr)), last_known)


def _record_last_known_leader(m: Metadata, record: Record) -> None:
    """Remember the last leader, forget it once there is a leader again
    (`PartitionChangeBuilder.maybeUpdateLastKnownLeader`)."""
    options = m.options
    if not (options.use_last_known_leader and options.elr_enabled):
        return
    d, p = domain_of(m), m.partition
    if options.last_known_leader_on_leaderless:
        # apache/kafka#20629 (4.1.1): when a change leaves the partition leaderless and none is
        # remembered; forgotten when a change names a leader
        named = record.has("leader")
        leaderless = and_(named, eq(record.get("leader"), NO_LEADER))
        remember = and_(leaderless, d.is_empty(p.last_known_elr))
        forget = and_(named, record.get("leader") >= 0, not_(d.is_empty(p.last_known_elr)))
        record.set("last_known_elr", remember, d.single(p.leader))
        record.set("last_known_elr", forget, d.empty)
        return
    # before 4.1.1: when the ISR empties; forgotten once the partition will have a leader
    empties = and_(record.has("isr"), d.is_empty(record.get("isr")))
    remember = and_(empties, not_(d.same(p.last_known_elr, d.single(p.leader))))
    will_have_leader = or_(
        and_(record.has("leader"), record.get("leader") >= 0),
        and_(
            ne(p.leader, NO_LEADER),
            or_(not_(record.has("leader")), ne(record.get("leader"), NO_LEADER)),
        ),
    )
    forget = and_(not_(remember), will_have_leader, not_(d.is_empty(p.last_known_elr)))
    record.set("last_known_elr", remember, d.single(p.leader))
    record.set("last_known_elr", forget, d.empty)


def _record_assignment(m: Metadata, t: Targets, record: Record) -> None:
    d, p = domain_of(m), m.partition
    moved = and_(ne(d.count(t.replicas), 0), not_(d.same_list(t.replicas, p.replicas)))
    record.set("replicas", moved, t.replicas)
    record.set("removing", not_(d.same(t.removing, p.removing)), t.removing)
    record.set("adding", not_(d.same(t.adding, p.adding)), t.adding)
