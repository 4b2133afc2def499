"""Everything in a state that copies something else: the logs (each replica's, each fetch
response in flight as the log its follower will have, the committed log), whatever names the
leader of an epoch, and the copies of the partition registration; and how two registrations of
the partition agree."""

from __future__ import annotations

from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.common import brokers, replica, stops
from kafkarep.symbolic.ops import Term, and_, eq, implies, ite, ne, not_
from kafkarep.symbolic.state import (
    FOLLOWER,
    ClusterState,
    FetchResponse,
    PartitionRegistration,
    Replica,
)


def all_logs(enc: Encoding, sym: ClusterState) -> list[tuple[tuple[Term, ...], Term, Term]]:
    """(epochs, start, end) of every log: replicas, the committed log, and each fetch response
    as the log its follower will have after appending it."""
    out: list[tuple[tuple[Term, ...], Term, Term]] = []
    for b in brokers(enc):
        k = sym.brokers[b - 1]
        r, f = k.replica, k.fetch_response
        out.append((r.log, 0, r.leo))
        appended = tuple(ite(o < f.fetch_offset, r.log[o], f.entries[o]) for o in range(enc.r))
        applies = and_(f.present, not_(f.diverging), still_awaited(r, f))
        out.append((appended, 0, ite(applies, f.end, 0)))
    out.append((sym.ghost.committed, 0, sym.ghost.true_hwm))
    return out


def still_awaited(r: Replica, f: FetchResponse) -> Term:
    """The follower still waits for this response: it follows the same leader in the same
    epoch (its log cannot have changed since it fetched)."""
    return and_(
        eq(r.role, FOLLOWER), eq(r.view.leader, f.leader), eq(r.view.leader_epoch, f.leader_epoch)
    )


def epoch_carriers(enc: Encoding, sym: ClusterState) -> list[tuple[Term, Term, Term]]:
    """(present, leader epoch, leader) of everything that names a leader for an epoch."""
    out = [(True, sym.partition.leader_epoch, sym.partition.leader)]
    for b in brokers(enc):
        k = sym.brokers[b - 1]
        # a stopped broker's replica has no view (only with stops: elsewhere the two are one)
        viewed = k.replica.view.present if stops(enc) else k.replica.present
        out.append((viewed, k.replica.view.leader_epoch, k.replica.view.leader))
        out.append(
            (k.fetch_response.present, k.fetch_response.leader_epoch, k.fetch_response.leader)
        )
        out.append((sym.ap_requests[b - 1].present, sym.ap_requests[b - 1].leader_epoch, b))
        out.append(
            (
                and_(k.ap_response.present, eq(k.ap_response.error, 0)),
                k.ap_response.leader_epoch,
                k.ap_response.leader,
            )
        )
    return out


RegistrationCopy = tuple[Term, Term, Term, Term, Term]


def record_copy(record: PartitionRegistration) -> RegistrationCopy:
    """A record of the metadata log as a copy of the registration (`registration_copies`)."""
    return (True, record.partition_epoch, record.leader_epoch, record.leader, record.isr)


def registration_copies(enc: Encoding, sym: ClusterState) -> list[RegistrationCopy]:
    """(present, partition epoch, leader epoch, leader, ISR) of the controller's registration
    and of every copy of one a replica acts on."""
    out = [
        (
            True,
            sym.partition.partition_epoch,
            sym.partition.leader_epoch,
            sym.partition.leader,
            sym.partition.isr,
        )
    ]
    for b in brokers(enc):
        v = replica(sym, b).view
        out.append((v.present, v.partition_epoch, v.leader_epoch, v.leader, v.isr))
        a = sym.brokers[b - 1].ap_response
        out.append(
            (and_(a.present, eq(a.error, 0)), a.partition_epoch, a.leader_epoch, a.leader, a.isr)
        )
    return out


def copy_owners(enc: Encoding) -> list[int]:
    """The broker each of `registration_copies` is held by (0 for the controller's), in order:
    the brokers a conjunct about a copy names (`lemmas.representative`)."""
    return [0] + [b for b in brokers(enc) for _ in range(2)]


AssignmentCopy = tuple[Term, Term, Term, Term]


def assignment_copies(enc: Encoding, sym: ClusterState) -> list[AssignmentCopy]:
    """(present, partition epoch, leader epoch, replica set) of the controller's registration
    and of every replica's view: the copies that carry the assignment."""
    p = sym.partition
    out = [(True, p.partition_epoch, p.leader_epoch, Terms(enc).members(p.replicas))]
    for b in brokers(enc):
        r, a = replica(sym, b), sym.brokers[b - 1].ap_response
        v = r.view
        out.append((v.present, v.partition_epoch, v.leader_epoch, v.replicas))
        # An accepted answer its leader can still take is a registration with the leader's
        # replicas: an AlterPartition that keeps the leader epoch keeps the replicas.
        takes = and_(
            r.present,
            a.present,
            eq(a.error, 0),
            eq(a.leader_epoch, v.leader_epoch),
            v.partition_epoch <= a.partition_epoch,
        )
        out.append((takes, a.partition_epoch, a.leader_epoch, v.replicas))
    return out


def assignments_agree(enc: Encoding, a: AssignmentCopy, b: AssignmentCopy) -> Term:
    """Under reassignment: the same partition epoch has the same replicas, and within a leader
    epoch the replicas only grow (a replica that leaves bumps the leader epoch:
    `PartitionChangeBuilder.triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`)."""
    s = enc.sets
    present_a, partition_epoch_a, leader_epoch_a, replicas_a = a
    present_b, partition_epoch_b, leader_epoch_b, replicas_b = b
    same_epoch = eq(leader_epoch_a, leader_epoch_b)
    return implies(
        and_(present_a, present_b),
        and_(
            implies(eq(partition_epoch_a, partition_epoch_b), s.eq(replicas_a, replicas_b)),
            implies(
                and_(same_epoch, partition_epoch_a <= partition_epoch_b),
                s.subset(replicas_a, replicas_b),
            ),
            implies(
                and_(same_epoch, partition_epoch_b <= partition_epoch_a),
                s.subset(replicas_b, replicas_a),
            ),
        ),
    )


def consistent(enc: Encoding, a: RegistrationCopy, b: RegistrationCopy) -> Term:
    """Two registrations of the same partition: epochs move together, equal partition epochs
    are the same registration."""
    present_a, partition_epoch_a, leader_epoch_a, leader_a, isr_a = a
    present_b, partition_epoch_b, leader_epoch_b, leader_b, isr_b = b
    return implies(
        and_(present_a, present_b),
        and_(
            implies(partition_epoch_a <= partition_epoch_b, leader_epoch_a <= leader_epoch_b),
            implies(partition_epoch_b <= partition_epoch_a, leader_epoch_b <= leader_epoch_a),
            implies(
                eq(partition_epoch_a, partition_epoch_b),
                and_(eq(leader_a, leader_b), enc.sets.eq(isr_a, isr_b)),
            ),
            successive(enc, a, b),
            successive(enc, b, a),
        ),
    )


def successive(enc: Encoding, a: RegistrationCopy, b: RegistrationCopy) -> Term:
    """If registration b follows registration a directly: a new leader epoch brings no replica
    into the ISR but the new leader, and a leader from outside the ISR is alone in it (a clean
    election keeps the ISR, one from the ELR or an unclean one leaves the leader alone: kafka
    PartitionChangeBuilder; only the leader's AlterPartition adds members)."""
    if enc.reassigning:
        return True
    s = enc.sets
    _, partition_epoch_a, leader_epoch_a, leader_a, isr_a = a
    _, partition_epoch_b, leader_epoch_b, leader_b, isr_b = b
    following = eq(partition_epoch_b, partition_epoch_a + 1)
    elected = and_(following, ne(leader_epoch_b, leader_epoch_a))
    joined = s.subset(isr_b, s.union(isr_a, s.bit(leader_b)))
    if enc.cfg.options.leader_epoch_bump_on_isr_shrink:
        # before 3.6-IV0 an AlterPartition that drops a member bumps the leader epoch and may
        # add another in the same change (`PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded`
        # at 3.5.0; KAFKA-15021)
        joined = implies(ne(leader_b, leader_a), joined)
    return and_(
        # a change moves the leader epoch by one at most (`PartitionRegistration.merge`)
        implies(following, leader_epoch_b <= leader_epoch_a + 1),
        implies(
            elected,
            and_(
                joined,
                # a leader from outside the ISR (ELR, unclean, last known) is alone in it
                implies(
                    and_(ne(leader_b, -1), not_(s.has(isr_a, leader_b))),
                    s.subset(isr_b, s.bit(leader_b)),
                ),
            ),
        ),
    )
