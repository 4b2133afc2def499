"""AlterPartition: the leader asks the controller to change the ISR (seed 004 §2.9.2).

Kafka's `ReplicationControlManager.alterPartition` and `validateAlterPartitionData`
(kafka-rules.md §2): the guards run in Kafka's order, so the first refusal carries Kafka's error
code. An accepted request goes through the change builder, which may also complete a reassignment
(R2.4) and, when that removes the requester, commit a new leader *and* answer NEW_LEADER_ELECTED.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.guards import first_failure, guard
from kafkarep.metadata import ClusterMetadata, LeaderRecoveryState
from kafkarep.rules.outcome import Changed, Outcome, Rejected, Unchanged
from kafkarep.rules.partition_change import ChangeTargets, Election, build

NO_EPOCH_CHECK = -1


class AlterPartitionRequest(NamedTuple):
    """One partition's entry of an AlterPartition request.

    `new_isr` pairs each proposed member with the broker epoch the leader knows for it;
    NO_EPOCH_CHECK (-1) skips the check, as Kafka does. `broker_epoch` is the requester's own
    epoch (None: not checked). `version` is the request version (0-3).
    """

    broker: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[tuple[int, int], ...]
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    broker_epoch: int | None = None
    version: int = 3

    @property
    def isr_ids(self) -> tuple[int, ...]:
        return tuple(broker for broker, _ in self.new_isr)


Args = tuple[ClusterMetadata, AlterPartitionRequest]


@guard("alter_partition", Error.STALE_BROKER_EPOCH)
def requester_epoch_current(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.1: the requester's broker epoch is its registered one (checked before anything else)."""
    if r.broker_epoch is None:
        return True
    registration = m.brokers.get(r.broker)
    return registration.registered and registration.epoch == r.broker_epoch


@guard("alter_partition", Error.NOT_CONTROLLER)
def leader_epoch_not_ahead(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.1: a leader epoch above ours means this controller may be stale."""
    return r.leader_epoch <= m.partition.leader_epoch


@guard("alter_partition", Error.NOT_CONTROLLER)
def partition_epoch_not_ahead(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.2: likewise for the partition epoch."""
    return r.partition_epoch <= m.partition.partition_epoch


@guard("alter_partition", Error.FENCED_LEADER_EPOCH)
def leader_epoch_current(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.3: the request was sent in the current leader epoch."""
    return r.leader_epoch >= m.partition.leader_epoch


@guard("alter_partition", Error.INVALID_REQUEST)
def requester_is_leader(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.4: only the current leader may alter the ISR."""
    return r.broker == m.partition.leader


@guard("alter_partition", Error.INVALID_UPDATE_VERSION)
def partition_epoch_current(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.5, seed 004 §2.9: the request is based on the current partition epoch, so a stale
    proposal cannot undo a change the controller made meanwhile."""
    return r.partition_epoch >= m.partition.partition_epoch


@guard("alter_partition", Error.INVALID_REQUEST)
def isr_within_replicas(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.6 (`Replicas.validateIsr`): members are replicas, without duplicates or negatives."""
    ids = r.isr_ids
    replicas = m.partition.replicas
    return len(set(ids)) == len(ids) and all(b >= 0 and b in replicas for b in ids)


@guard("alter_partition", Error.INVALID_REQUEST)
def isr_includes_leader(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.7: the new ISR keeps the current leader."""
    return m.partition.leader in r.isr_ids


@guard("alter_partition", Error.INVALID_REQUEST)
def recovering_isr_single(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.8: a recovering leader (after an unclean election) stays the only ISR member."""
    return r.leader_recovery_state != LeaderRecoveryState.RECOVERING or len(r.new_isr) <= 1


@guard("alter_partition", Error.INVALID_REQUEST)
def no_return_to_recovering(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.9: RECOVERED never goes back to RECOVERING."""
    return not (
        m.partition.leader_recovery_state == LeaderRecoveryState.RECOVERED
        and r.leader_recovery_state == LeaderRecoveryState.RECOVERING
    )


@guard("alter_partition", Error.INELIGIBLE_REPLICA)
def isr_members_eligible(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.10, KIP-841: every proposed member is registered, unfenced, not shutting down."""
    return all(m.brokers.is_active(b) for b in r.isr_ids)


@guard("alter_partition", Error.INELIGIBLE_REPLICA)
def isr_member_epochs_current(m: ClusterMetadata, r: AlterPartitionRequest) -> bool:
    """R2.3.10, KIP-903 (version 3 and up): each member's broker epoch, as the leader saw it in
    its fetches, is the registered one, so a replica that restarted (and may have lost its log)
    cannot be added on the strength of fetches from its previous life."""
    if r.version < 3:
        return True
    return all(e == NO_EPOCH_CHECK or m.brokers.get(b).epoch == e for b, e in r.new_isr)


GUARDS = (
    requester_epoch_current,
    leader_epoch_not_ahead,
    partition_epoch_not_ahead,
    leader_epoch_current,
    requester_is_leader,
    partition_epoch_current,
    isr_within_replicas,
    isr_includes_leader,
    recovering_isr_single,
    no_return_to_recovering,
    isr_members_eligible,
    isr_member_epochs_current,
)


def alter_partition(metadata: ClusterMetadata, request: AlterPartitionRequest) -> Outcome:
    """Validate in Kafka's order, then build; R2.4-R2.6."""
    refused = first_failure(GUARDS, metadata.options.disabled_guards, metadata, request)
    if refused is not None:
        assert refused.error is not None
        return Rejected(_by_version(refused.error, request.version), refused.qualified)
    unclean = metadata.topic.unclean_leader_election
    record = build(
        metadata,
        ChangeTargets(
            isr=frozenset(request.isr_ids),
            leader_recovery_state=request.leader_recovery_state,
            election=Election.UNCLEAN if unclean else Election.ONLINE,
        ),
        metadata.brokers.is_active,
    )
    if record is None:
        return Unchanged()
    registration = metadata.partition.apply(record)
    if record.leader is not None and record.leader != request.broker:
        # R2.6: the request completed a reassignment that moved leadership off the requester.
        return Changed(
            registration, record, error=_by_version(Error.NEW_LEADER_ELECTED, request.version)
        )
    return Changed(registration, record)


def _by_version(error: Error, version: int) -> Error:
    """Versions 0 and 1 of the request predate two error codes (R2.3.10, R2.6)."""
    if version < 2 and error == Error.INELIGIBLE_REPLICA:
        return Error.OPERATION_NOT_ATTEMPTED
    if version < 2 and error == Error.NEW_LEADER_ELECTED:
        return Error.FENCED_LEADER_EPOCH
    return error
