"""The partition change builder: from a registration and targets to one change record.

Follows Kafka's `PartitionChangeBuilder.build` (kafka-rules.md §1) step by step, each step a
function: complete a reassignment (§1.1), recompute ELR (§1.3), elect a leader (§1.2), bump the
leader epoch when a replica leaves (§1.4), write the ELR, ISR and last-known-leader fields (§1.3,
§1.5), then the assignment and the leader recovery state. Seed 004 §2.8-§2.9 describe the same
rules in prose; seed 000 §4.2 describes completion differently, which `reassignment_completion =
"seed-000"` selects.

Every other controller rule (AlterPartition, reassignment, elections, broker events) ends here.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import NamedTuple

from kafkarep.guards import guard
from kafkarep.metadata import (
    EMPTY,
    NO_LEADER,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkarep.rules.outcome import Changed, Unchanged

AcceptableLeader = Callable[[int], bool]


class Election(IntEnum):
    ONLINE = 0
    PREFERRED = 1
    UNCLEAN = 2


class ChangeTargets(NamedTuple):
    """The builder's inputs; None keeps the current value."""

    isr: frozenset[int] | None = None
    replicas: tuple[int, ...] | None = None
    adding: frozenset[int] | None = None
    removing: frozenset[int] | None = None
    elr: frozenset[int] | None = None
    last_known_elr: frozenset[int] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None
    election: Election = Election.ONLINE
    unclean_shutdown_replicas: frozenset[int] = EMPTY


class _Targets(NamedTuple):
    """The working targets as the steps of `build` refine them."""

    isr: frozenset[int]
    replicas: tuple[int, ...]
    adding: frozenset[int]
    removing: frozenset[int]
    elr: frozenset[int]
    last_known_elr: frozenset[int]


@guard("partition_change")
def unclean_shutdown_leaves_elr(replica: int, unclean_shutdown: frozenset[int]) -> bool:
    """A replica that may have lost unflushed data in an unclean shutdown leaves ELR (KIP-966)."""
    return replica not in unclean_shutdown


def build(
    metadata: ClusterMetadata, change: ChangeTargets, acceptable: AcceptableLeader
) -> PartitionChangeRecord | None:
    """The change record Kafka's builder emits, or None when nothing changes (R0.3)."""
    p, options = metadata.partition, metadata.options
    t = _Targets(
        isr=p.isr if change.isr is None else change.isr,
        replicas=p.replicas if change.replicas is None else change.replicas,
        adding=p.adding if change.adding is None else change.adding,
        removing=p.removing if change.removing is None else change.removing,
        elr=p.elr if change.elr is None else change.elr,
        last_known_elr=p.last_known_elr if change.last_known_elr is None else change.last_known_elr,
    )
    removing_before = t.removing
    t, completed = _complete_reassignment(metadata, t)
    t = _populate_elr(metadata, t, change.unclean_shutdown_replicas)
    if completed and options.reassignment_completion == "seed-000":
        # Seed 000 §4.2 step 3: the removed replicas leave the ELR too.
        t = t._replace(
            elr=t.elr - removing_before, last_known_elr=t.last_known_elr - removing_before
        )

    record = PartitionChangeRecord()
    t, record = _try_election(metadata, t, record, change.election, acceptable)
    if record.leader is None and not set(p.replicas) <= set(t.replicas):
        record = record._replace(leader=p.leader)  # R1.4.2b: a replica leaves the set
    if completed and options.reassignment_completion == "seed-000" and record.leader is None:
        record = record._replace(leader=p.leader)  # seed 000 §4.2: every completion bumps it
    record = _record_elr(metadata, t, record)
    if record.isr is None and (t.isr or options.elr_enabled) and t.isr != p.isr:
        record = record._replace(isr=t.isr)  # R1.5.1
    if (
        options.leader_epoch_bump_on_isr_shrink
        and record.leader is None
        and record.isr is not None
        and not p.isr <= record.isr
    ):
        record = record._replace(leader=p.leader)  # R1.4.2c, KAFKA-15021
    record = _record_last_known_leader(metadata, record)
    record = _record_assignment(p, t, record)
    target_state = change.leader_recovery_state
    if target_state is not None and target_state != p.leader_recovery_state:
        record = record._replace(leader_recovery_state=target_state)
    return None if record.is_noop() else record


def partition_change(metadata: ClusterMetadata, change: ChangeTargets) -> Changed | Unchanged:
    """Run the builder with Kafka's acceptable-leader test (R0.4) and commit what it emits."""
    record = build(metadata, change, metadata.brokers.is_active)
    return commit(metadata.partition, record)


def commit(
    partition: PartitionRegistration, record: PartitionChangeRecord | None
) -> Changed | Unchanged:
    if record is None:
        return Unchanged()
    return Changed(partition.apply(record), record)


def _complete_reassignment(metadata: ClusterMetadata, t: _Targets) -> tuple[_Targets, bool]:
    """R1.1: finish the reassignment when the final ISR covers the final replicas."""
    if not (t.adding or t.removing):
        return t, False
    final_isr = t.isr - t.removing
    final_replicas = tuple(r for r in t.replicas if r not in t.removing)
    if t.removing and (not final_isr or not final_replicas):
        return t, False
    if metadata.options.reassignment_completion == "seed-000":
        # Seed 000 §4.2: final ISR >= MinISR and every *adding* replica in it (§4.1.2: a removal
        # also needs a final replica set of at least MinISR).
        min_isr = metadata.effective_min_isr
        if len(final_isr) < min_isr or len(final_replicas) < min_isr or not t.adding <= final_isr:
            return t, False
    elif not set(final_replicas) <= final_isr:
        return t, False
    return t._replace(isr=final_isr, replicas=final_replicas, adding=EMPTY, removing=EMPTY), True


def _populate_elr(
    metadata: ClusterMetadata, t: _Targets, unclean_shutdown: frozenset[int]
) -> _Targets:
    """R1.3.1-R1.3.2: below MinISR, replicas leaving the ISR join the ELR."""
    if not metadata.options.elr_enabled:
        return t
    if len(t.isr) >= metadata.effective_min_isr:
        return t._replace(elr=EMPTY, last_known_elr=EMPTY)
    candidates = t.elr | metadata.partition.isr
    disabled = metadata.options.disabled_guards
    elr = frozenset(
        r
        for r in candidates - t.isr
        if unclean_shutdown_leaves_elr.passes(disabled, r, unclean_shutdown)
    )
    last_known = (candidates | t.last_known_elr) - t.isr - elr
    return t._replace(elr=elr, last_known_elr=last_known)


def _try_election(
    metadata: ClusterMetadata,
    t: _Targets,
    record: PartitionChangeRecord,
    election: Election,
    acceptable: AcceptableLeader,
) -> tuple[_Targets, PartitionChangeRecord]:
    """R1.2.5: record the elected leader; an ELR leader becomes the ISR, an unclean one too."""
    p = metadata.partition
    leader, unclean = elect_leader(metadata, t.isr, t.elr, t.replicas, election, acceptable)
    if leader == p.leader:
        return t, record
    if leader in t.elr:
        t = t._replace(isr=frozenset({leader}), elr=t.elr - {leader})
    record = record._replace(leader=leader)
    if unclean:
        record = record._replace(isr=frozenset({leader}))
        if (
            p.leader_recovery_state != LeaderRecoveryState.RECOVERING
            and metadata.options.leader_recovery_supported
        ):
            record = record._replace(leader_recovery_state=LeaderRecoveryState.RECOVERING)
    return t, record


def elect_leader(
    metadata: ClusterMetadata,
    isr: frozenset[int],
    elr: frozenset[int],
    replicas: tuple[int, ...],
    election: Election,
    acceptable: AcceptableLeader,
) -> tuple[int, bool]:
    """R1.2.2-R1.2.4: (new leader or NO_LEADER, whether the election was unclean)."""
    p = metadata.partition

    def valid(replica: int) -> bool:
        # R1.2.1: in the ISR, or in the ELR when the ISR is empty; and acceptable.
        return (replica in isr or (not isr and replica in elr)) and acceptable(replica)

    if election == Election.PREFERRED:
        if replicas and valid(replicas[0]):
            return replicas[0], False
        if valid(p.leader):
            return p.leader, False
        candidates = replicas[1:]
    else:
        if valid(p.leader):
            return p.leader, False
        candidates = replicas
    for replica in candidates:
        if valid(replica):
            return replica, False
    if _can_elect_last_known_leader(metadata, isr, elr):
        # Quirk of Kafka 4.0 (R1.2.4): the last known leader's acceptability is not checked.
        return next(iter(p.last_known_elr)), True
    if election == Election.UNCLEAN:
        for replica in replicas:
            if acceptable(replica):
                return replica, True
    return NO_LEADER, False


def _can_elect_last_known_leader(
    metadata: ClusterMetadata, isr: frozenset[int], elr: frozenset[int]
) -> bool:
    options = metadata.options
    return (
        options.elr_enabled
        and options.use_last_known_leader
        and not isr
        and not elr
        and len(metadata.partition.last_known_elr) == 1
    )


def _record_elr(
    metadata: ClusterMetadata, t: _Targets, record: PartitionChangeRecord
) -> PartitionChangeRecord:
    """R1.3.3-R1.3.4, R1.3.6: the ELR field, and the last-known ELR in its KIP-966 meaning."""
    p, options = metadata.partition, metadata.options
    elr, last_known = t.elr, t.last_known_elr
    if record.isr is not None or not options.elr_enabled:
        elr, last_known = EMPTY, EMPTY
    if elr != p.elr:
        record = record._replace(elr=elr)
    if options.use_last_known_leader:
        return record  # the field then holds the last known leader, written later (R1.3.5)
    if last_known != p.last_known_elr:
        record = record._replace(last_known_elr=last_known)
    return record


def _record_last_known_leader(
    metadata: ClusterMetadata, record: PartitionChangeRecord
) -> PartitionChangeRecord:
    """R1.3.5: remember the leader when the ISR empties; forget it once there is a leader."""
    p, options = metadata.partition, metadata.options
    if not (options.use_last_known_leader and options.elr_enabled):
        return record
    if record.isr is not None and not record.isr and p.last_known_elr != frozenset({p.leader}):
        return record._replace(last_known_elr=frozenset({p.leader}))
    will_have_leader = (record.leader is not None and record.leader >= 0) or (
        p.leader != NO_LEADER and record.leader != NO_LEADER
    )
    if will_have_leader and p.last_known_elr:
        return record._replace(last_known_elr=EMPTY)
    return record


def _record_assignment(
    p: PartitionRegistration, t: _Targets, record: PartitionChangeRecord
) -> PartitionChangeRecord:
    if t.replicas and t.replicas != p.replicas:
        record = record._replace(replicas=t.replicas)
    if t.removing != p.removing:
        record = record._replace(removing=t.removing)
    if t.adding != p.adding:
        record = record._replace(adding=t.adding)
    return record
