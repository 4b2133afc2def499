"""Partition reassignment: start, change in flight, cancel (seed 000 §4; kafka-rules.md §3).

Kafka's `ReplicationControlManager.alterPartitionReassignment` with `PartitionReassignmentReplicas`
(start or change) and `PartitionReassignmentRevert` (cancel). Completion happens in the change
builder (`partition_change._complete_reassignment`), on whichever request satisfies it: the start
itself, or a later AlterPartition (R1.1.5). With `reassignment_completion = "seed-000"` a cancel
whose reverted ISR is below MinISR aborts unless unclean election is on (seed 000 §4.5).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.guards import first_failure, guard
from kafkarep.metadata import EMPTY, ClusterMetadata
from kafkarep.rules.outcome import Outcome, Rejected
from kafkarep.rules.partition_change import ChangeTargets, Election, build, commit


class AlterReassignmentRequest(NamedTuple):
    """An AlterPartitionReassignments entry: the target replicas, or None to cancel."""

    target: tuple[int, ...] | None


class ReassignmentSplit(NamedTuple):
    """R3.1.2: what a target means against the current (possibly already grown) replica list."""

    replicas: tuple[int, ...]
    adding: frozenset[int]
    removing: frozenset[int]


def split(current: tuple[int, ...], target: tuple[int, ...]) -> ReassignmentSplit:
    """Removing = current - target, adding = target - current; the new list is the target in
    request order followed by the removing replicas in ascending order (Kafka's TreeSet)."""
    removing = sorted(set(current) - set(target))
    adding = frozenset(target) - frozenset(current)
    return ReassignmentSplit(tuple(target) + tuple(removing), adding, frozenset(removing))


class Revert(NamedTuple):
    """R3.2.2: the replicas and ISR a cancel goes back to."""

    replicas: tuple[int, ...]
    isr: frozenset[int]
    unclean: bool


def revert(metadata: ClusterMetadata) -> Revert:
    p = metadata.partition
    replicas = tuple(r for r in p.replicas if r not in p.adding)
    isr = p.isr - p.adding
    if not isr:
        # Every ISR member was an adding replica: fall back to the first original replica.
        return Revert(replicas, frozenset(replicas[:1]), True)
    return Revert(replicas, isr, False)


Args = tuple[ClusterMetadata, AlterReassignmentRequest]


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_not_empty(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """R3.1.1: a target needs at least one replica."""
    return r.target is None or len(r.target) > 0


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_without_duplicates(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """R3.1.1: no broker twice in the target."""
    return r.target is None or len(set(r.target)) == len(r.target)


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def target_brokers_registered(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """R3.1.1: every target broker is registered (fenced or shutting down is allowed)."""
    return r.target is None or all(m.brokers.get(b).registered for b in r.target)


@guard("reassignment", Error.NO_REASSIGNMENT_IN_PROGRESS)
def reassignment_in_progress(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """R3.2.1: a cancel needs an ongoing reassignment."""
    return m.partition.reassignment_in_progress


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def revert_is_clean(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """R3.2.2: a revert that must invent an ISR is an unclean election: only if the topic allows."""
    return not revert(m).unclean or m.topic.unclean_leader_election


@guard("reassignment", Error.INVALID_REPLICA_ASSIGNMENT)
def revert_keeps_min_isr(m: ClusterMetadata, r: AlterReassignmentRequest) -> bool:
    """Seed 000 §4.5 (seed-000 variant only): a revert below MinISR aborts unless unclean
    election is enabled. Kafka has no such check."""
    if m.options.reassignment_completion != "seed-000":
        return True
    return len(revert(m).isr) >= m.effective_min_isr or m.topic.unclean_leader_election


START_GUARDS = (target_not_empty, target_without_duplicates, target_brokers_registered)
CANCEL_GUARDS = (reassignment_in_progress, revert_is_clean, revert_keeps_min_isr)


def alter_reassignment(metadata: ClusterMetadata, request: AlterReassignmentRequest) -> Outcome:
    """Start or change a reassignment (target given), or cancel one (target None)."""
    if request.target is None:
        return cancel_reassignment(metadata, request)
    return start_reassignment(metadata, request)


def start_reassignment(metadata: ClusterMetadata, request: AlterReassignmentRequest) -> Outcome:
    """R3.1: grow to target + removing; the builder completes at once if the ISR allows it."""
    refused = first_failure(START_GUARDS, metadata.options.disabled_guards, metadata, request)
    if refused is not None:
        assert refused.error is not None
        return Rejected(refused.error, refused.qualified)
    assert request.target is not None
    p = metadata.partition
    new = split(p.replicas, request.target)
    # R3.1.3: each target only when it applies, so an empty new adding (or removing) list
    # leaves the old one of an ongoing reassignment in place.
    targets = ChangeTargets(
        replicas=new.replicas if new.replicas != p.replicas else None,
        removing=new.removing or None,
        adding=new.adding or None,
        election=Election.ONLINE,
    )
    return commit(p, build(metadata, targets, metadata.brokers.is_active))


def cancel_reassignment(metadata: ClusterMetadata, request: AlterReassignmentRequest) -> Outcome:
    """R3.2: revert to the original replicas, without the adding ones."""
    refused = first_failure(CANCEL_GUARDS, metadata.options.disabled_guards, metadata, request)
    if refused is not None:
        assert refused.error is not None
        return Rejected(refused.error, refused.qualified)
    back = revert(metadata)
    unclean = metadata.topic.unclean_leader_election
    targets = ChangeTargets(
        isr=back.isr,
        replicas=back.replicas,
        adding=EMPTY,
        removing=EMPTY,
        election=Election.UNCLEAN if unclean else Election.ONLINE,
    )
    return commit(metadata.partition, build(metadata, targets, metadata.brokers.is_active))
