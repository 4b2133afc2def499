"""Partition reassignment: start, change in flight, cancel (protocol description §4).

Kafka's `ReplicationControlManager.alterPartitionReassignment` with `PartitionReassignmentReplicas`
(start or change) and `PartitionReassignmentRevert` (cancel). Completion happens in the change
builder (`partition_change._complete_reassignment`), on whichever request satisfies it: the start
itself, or a later AlterPartition (`PartitionChangeBuilder.completeReassignmentIfNeeded`). With
`reassignment_completion = "protocol-description"` a cancel whose reverted ISR is below MinISR
aborts unless unclean election is on (protocol description §4.5).
Written once for every domain (`kafkarep.rules.domain`); a target is a tuple of broker ids in
every domain.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard, refusal
from kafkarep.rules.outcome import Outcome
from kafkarep.rules.partition_change import (
    ChangeTargets,
    Election,
    build_record,
    committed,
    effective_min_isr,
)
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, eq, not_, or_


class AlterReassignmentRequest(NamedTuple):
    """An AlterPartitionReassignments entry: the target replicas, or None to cancel; and the
    request's `allowReplicationFactorChange` (KIP-860)."""

    target: tuple[int, ...] | None
    allow_replication_factor_change: bool = True


class ReassignmentSplit(NamedTuple):
    """What a target means against the current (possibly already grown) replica list
    (`PartitionReassignmentReplicas`)."""

    replicas: Any
    adding: Term
    removing: Term


def split(m: Metadata, target: tuple[int, ...]) -> ReassignmentSplit:
    """Removing = current - target, adding = target - current; the new list is the target in
    request order followed by the removing replicas in ascending order (Kafka's TreeSet)."""
    d = domain_of(m)
    current, wanted = d.members(m.partition.replicas), d.members(target)
    removing = d.minus(current, wanted)
    return ReassignmentSplit(d.then_ascending(target, removing), d.minus(wanted, current), removing)


def started(m: Metadata, target: tuple[int, ...]) -> ReassignmentSplit:
    """The assignment a start (or change) writes: the split, where an empty new adding (or
    removing) set leaves the old one of an ongoing reassignment in place
    (`ReplicationControlManager.changePartitionReassignment`)."""
    d, p = domain_of(m), m.partition
    new = split(m, target)
    return ReassignmentSplit(
        new.replicas,
        d.pick(d.is_empty(new.adding), p.adding, new.adding),
        d.pick(d.is_empty(new.removing), p.removing, new.removing),
    )


class Revert(NamedTuple):
    """The replicas and ISR a cancel goes back to (`PartitionReassignmentRevert`)."""

    replicas: Any
    isr: Term
    unclean: Term  # every ISR member was an adding replica: the ISR is invented


def revert(m: Metadata) -> Revert:
    d, p = domain_of(m), m.partition
    replicas = d.keep(p.replicas, lambda r: not_(d.has(p.adding, r)))
    isr = d.minus(p.isr, p.adding)
    invented = d.is_empty(isr)
    # Every ISR member was an adding replica: fall back to the first original replica.
    return Revert(replicas, d.pick(invented, d.single(d.first(replicas)), isr), invented)


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_not_empty(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """`ReplicationControlManager.validateManualPartitionAssignment`: a target needs at least one
    replica."""
    return r.target is None or len(r.target) > 0


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_without_duplicates(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """`validateManualPartitionAssignment`: no broker twice in the target."""
    return r.target is None or len(set(r.target)) == len(r.target)


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_brokers_registered(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """`validateManualPartitionAssignment`: every target broker is registered (fenced or shutting
    down is allowed)."""
    if r.target is None:
        return True
    return and_(*(m.brokers.get(b).registered for b in r.target))


@guard("reassignment", Error.INVALID_REPLICATION_FACTOR)
def replication_factor_unchanged(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """KIP-860 (4.1.0): a request that forbids it may not change the replica count: the target
    has as many replicas as the assignment (the replicas without the ones being removed, during
    a reassignment; `validatePartitionReplicationFactorUnchanged`)."""
    if r.target is None or r.allow_replication_factor_change:
        return True
    if not m.options.replication_factor_change_check:
        return True
    d, p = domain_of(m), m.partition
    assigned = d.minus(d.union(d.members(p.replicas), p.adding), p.removing)
    return eq(d.size(assigned), len(r.target))


@guard("reassignment", Error.NO_REASSIGNMENT_IN_PROGRESS)
def reassignment_in_progress(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """`ReplicationControlManager.cancelPartitionReassignment`: a cancel needs an ongoing
    reassignment."""
    d, p = domain_of(m), m.partition
    return or_(not_(d.is_empty(p.adding)), not_(d.is_empty(p.removing)))


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def revert_is_clean(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """`cancelPartitionReassignment`: a revert that must invent an ISR
    (`PartitionReassignmentRevert.unclean`) is an unclean election: only if the topic allows."""
    return or_(not_(revert(m).unclean), m.topic.unclean_leader_election)


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def revert_keeps_min_isr(m: Metadata, r: AlterReassignmentRequest) -> Term:
    """Protocol description §4.5 (protocol-description variant only): a revert below MinISR
    aborts unless unclean election is enabled. Kafka has no such check."""
    if m.options.reassignment_completion != "protocol-description":
        return True
    enough = domain_of(m).size(revert(m).isr) >= effective_min_isr(m)
    return or_(enough, m.topic.unclean_leader_election)


START_GUARDS = (
    target_not_empty,
    target_without_duplicates,
    target_brokers_registered,
    replication_factor_unchanged,
)
CANCEL_GUARDS = (reassignment_in_progress, revert_is_clean, revert_keeps_min_isr)


def alter_reassignment(m: Metadata, request: AlterReassignmentRequest) -> Outcome:
    """Start or change a reassignment (target given), or cancel one (target None)."""
    if request.target is None:
        return cancel_reassignment(m, request)
    return start_reassignment(m, request)


def start_reassignment(m: Metadata, request: AlterReassignmentRequest) -> Outcome:
    """Grow to target + removing; the builder completes at once if the ISR allows it
    (`ReplicationControlManager.changePartitionReassignment`)."""
    d = domain_of(m)
    refused = refusal(START_GUARDS, m.options.disabled_guards, d.code, m, request)
    if refused.refused is True:
        return _rejected(m, refused.error, refused.guard)
    assert request.target is not None
    new = started(m, request.target)
    targets = ChangeTargets(
        replicas=new.replicas, removing=new.removing, adding=new.adding, election=Election.ONLINE
    )
    record = build_record(m, targets, m.brokers.is_active)
    return committed(m, record, refused=refused.refused, error=refused.error)


def cancel_reassignment(m: Metadata, request: AlterReassignmentRequest) -> Outcome:
    """Revert to the original replicas, without the adding ones
    (`ReplicationControlManager.cancelPartitionReassignment`)."""
    d = domain_of(m)
    refused = refusal(CANCEL_GUARDS, m.options.disabled_guards, d.code, m, request)
    if refused.refused is True:
        return _rejected(m, refused.error, refused.guard)
    back = revert(m)
    unclean = m.topic.unclean_leader_election
    targets = ChangeTargets(
        isr=back.isr,
        replicas=back.replicas,
        adding=d.empty,
        removing=d.empty,
        election=Election.UNCLEAN if unclean else Election.ONLINE,
    )
    record = build_record(m, targets, m.brokers.is_active)
    return committed(m, record, refused=refused.refused, error=refused.error)


def _rejected(m: Metadata, error: Term, guard: str | None) -> Outcome:
    nothing = Record(domain_of(m), m.partition)
    return committed(m, nothing, refused=True, error=error, guard=guard)
