"""AlterPartition: the leader asks the controller to change the ISR (protocol description §2.9.2).

Kafka's `ReplicationControlManager.alterPartition` and `validateAlterPartitionData`: the guards
run in Kafka's order, so the first refusal carries Kafka's error code. An accepted request goes
through the change builder, which may also complete a reassignment
(`PartitionChangeBuilder.completeReassignmentIfNeeded`) and, when that removes the requester,
commit a new leader *and* answer NEW_LEADER_ELECTED.
Written once for every domain (`kafkarep.rules.domain`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard, refusal
from kafkarep.rules.outcome import Outcome
from kafkarep.rules.partition_change import ChangeTargets, Election, build_record, committed
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, eq, implies, ite, ne, not_, or_

NO_EPOCH_CHECK = -1


class AlterPartitionRequest(NamedTuple):
    """One partition's entry of an AlterPartition request.

    `new_isr` pairs each proposed member with the broker epoch the leader knows for it;
    NO_EPOCH_CHECK (-1) skips the check, as Kafka does. `broker_epoch` is the requester's own
    epoch (None: not checked). `version` is the request version (0-3).

    What the rules read of a request (the prover's requests have the same properties): `isr`,
    `proposals()`, `distinct`, `size`, `recovering`.
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

    @property
    def isr(self) -> frozenset[int]:
        """The proposed ISR as a set."""
        return frozenset(self.isr_ids)

    def proposals(self) -> Iterator[tuple[Term, int, int]]:
        """(proposed, member, the broker epoch sent for it), for every member that may be
        proposed."""
        for broker, epoch in self.new_isr:
            yield True, broker, epoch

    @property
    def distinct(self) -> bool:
        """No member twice, none negative (`Replicas.validateIsr`)."""
        ids = self.isr_ids
        return len(set(ids)) == len(ids) and all(b >= 0 for b in ids)

    @property
    def size(self) -> int:
        return len(self.new_isr)

    @property
    def recovering(self) -> bool:
        """The leader recovery state the request carries: version 0 has none, so RECOVERED
        (KIP-704 added the field in version 1)."""
        return self.version >= 1 and self.leader_recovery_state == LeaderRecoveryState.RECOVERING


Request = Any  # an AlterPartitionRequest, or the prover's request with the same properties


@guard("alter_partition", Error.STALE_BROKER_EPOCH)
def requester_epoch_current(m: Metadata, r: Request) -> Term:
    """The requester's broker epoch is its registered one (checked before anything else,
    `ClusterControlManager.checkBrokerEpoch`)."""
    if r.broker_epoch is None:
        return True
    registration = m.brokers.get(r.broker)
    return and_(registration.registered, eq(registration.epoch, r.broker_epoch))


def _answers_ahead(m: Metadata) -> bool:
    """KAFKA-14154 (3.3.0): epochs ahead of the controller's get NOT_CONTROLLER. Before, in KRaft
    3.2 and older, the checks below compare each epoch for equality
    (`validateAlterPartitionData` at 3.2.0; `epochs_ahead_answer = "fenced"`)."""
    return m.options.epochs_ahead_answer == "not-controller"


@guard("alter_partition", Error.NOT_CONTROLLER)
def leader_epoch_not_ahead(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: a leader epoch above ours means this controller may be
    stale."""
    return or_(not _answers_ahead(m), r.leader_epoch <= m.partition.leader_epoch)


@guard("alter_partition", Error.NOT_CONTROLLER)
def partition_epoch_not_ahead(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: likewise for the partition epoch."""
    return or_(not _answers_ahead(m), r.partition_epoch <= m.partition.partition_epoch)


@guard("alter_partition", Error.FENCED_LEADER_EPOCH)
def leader_epoch_current(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: the request was sent in the current leader epoch."""
    if not _answers_ahead(m):
        return eq(r.leader_epoch, m.partition.leader_epoch)
    return r.leader_epoch >= m.partition.leader_epoch


@guard("alter_partition", Error.INVALID_REQUEST)
def requester_is_leader(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: only the current leader may alter the ISR."""
    return eq(r.broker, m.partition.leader)


@guard("alter_partition", Error.INVALID_UPDATE_VERSION)
def partition_epoch_current(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`, protocol description §2.9: the request is based on the
    current partition epoch, so a stale proposal cannot undo a change the controller made
    meanwhile."""
    if not _answers_ahead(m):
        return eq(r.partition_epoch, m.partition.partition_epoch)
    return r.partition_epoch >= m.partition.partition_epoch


@guard("alter_partition", Error.INVALID_REQUEST)
def isr_within_replicas(m: Metadata, r: Request) -> Term:
    """`Replicas.validateIsr`: members are replicas, without duplicates or negatives."""
    d = domain_of(m)
    return and_(r.distinct, d.subset(r.isr, d.members(m.partition.replicas)))


@guard("alter_partition", Error.INVALID_REQUEST)
def isr_includes_leader(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: the new ISR keeps the current leader."""
    return domain_of(m).has(r.isr, m.partition.leader)


@guard("alter_partition", Error.INVALID_REQUEST)
def recovering_isr_single(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: a recovering leader (after an unclean election) stays the
    only ISR member."""
    return or_(not_(r.recovering), r.size <= 1)


@guard("alter_partition", Error.INVALID_REQUEST)
def no_return_to_recovering(m: Metadata, r: Request) -> Term:
    """`validateAlterPartitionData`: RECOVERED never goes back to RECOVERING."""
    return not_(and_(not_(m.partition.recovering), r.recovering))


@guard("alter_partition", Error.INELIGIBLE_REPLICA)
def isr_members_eligible(m: Metadata, r: Request) -> Term:
    """`ineligibleReplicasForIsr`, KIP-841: every proposed member is registered, unfenced, not
    shutting down."""
    return and_(*(implies(proposed, m.brokers.is_active(b)) for proposed, b, _ in r.proposals()))


@guard("alter_partition", Error.INELIGIBLE_REPLICA)
def isr_member_epochs_current(m: Metadata, r: Request) -> Term:
    """`ineligibleReplicasForIsr`, KIP-903 (version 3 and up): each member's broker epoch, as
    the leader saw it in its fetches, is the registered one, so a replica that restarted (and
    may have lost its log) cannot be added on the strength of fetches from its previous life."""
    if r.version < 3:
        return True
    return and_(
        *(
            implies(proposed, or_(eq(e, NO_EPOCH_CHECK), eq(m.brokers.get(b).epoch, e)))
            for proposed, b, e in r.proposals()
        )
    )


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


def alter_partition(m: Metadata, r: Request) -> Outcome:
    """Validate in Kafka's order, then build (`ReplicationControlManager.alterPartition`)."""
    d = domain_of(m)

    def code(error: Error) -> Term:
        return d.code(_by_version(error, r.version))

    refused = refusal(GUARDS, m.options.disabled_guards, code, m, r)
    if refused.refused is True:
        nothing = Record(d, m.partition)
        return committed(m, nothing, refused=True, error=refused.error, guard=refused.guard)
    unclean = m.topic.unclean_leader_election
    record = build_record(
        m,
        ChangeTargets(
            isr=r.isr,
            leader_recovery_state=r.recovering,
            election=Election.UNCLEAN if unclean else Election.ONLINE,
        ),
        m.brokers.is_active,
    )
    # the request completed a reassignment that moved leadership off the requester
    # (`ReplicationControlManager.alterPartition`)
    moved = and_(record.has("leader"), ne(record.get("leader"), r.broker))
    answer = ite(moved, code(Error.NEW_LEADER_ELECTED), code(Error.NONE))
    return committed(
        m, record, refused=refused.refused, error=refused.error, guard=refused.guard, answer=answer
    )


def _by_version(error: Error, version: int) -> Error:
    """Versions 0 and 1 of the request predate two error codes (`validateAlterPartitionData`,
    `alterPartition` before Kafka 4.0)."""
    if version < 2 and error == Error.INELIGIBLE_REPLICA:
        return Error.OPERATION_NOT_ATTEMPTED
    if version < 2 and error == Error.NEW_LEADER_ELECTED:
        return Error.FENCED_LEADER_EPOCH
    return error
