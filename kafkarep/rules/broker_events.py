"""Broker events the controller reacts to: fence, unfence, controlled shutdown, re-registration.

Kafka's `ReplicationControlManager.handleBrokerFenced`, `handleBrokerUnfenced`,
`handleBrokerInControlledShutdown`, `handleBrokerUncleanShutdown` and
`ClusterControlManager.registerBroker` (protocol description §1.2.2, §2.8, §2.9.1). Each
touches exactly the partitions Kafka touches and runs the change builder once for them with the
same helper (Kafka's `generateLeaderAndIsrUpdates`). Written once for every domain
(`kafkarep.rules.domain`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard, refusal
from kafkarep.rules.outcome import Outcome
from kafkarep.rules.partition_change import ChangeTargets, Election, build_record, committed
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, eq, ne, not_, or_

NOBODY = -1


class FenceBroker(NamedTuple):
    broker: int


class UnfenceBroker(NamedTuple):
    broker: int


class ControlledShutdown(NamedTuple):
    broker: int


class RegisterBroker(NamedTuple):
    """A broker (re-)registers after starting. `previous_epoch` is the epoch it last held, or
    -1 after an unclean shutdown (KIP-966 `PreviousBrokerEpoch`)."""

    broker: int
    incarnation: Any  # an int, or a term in the prover's domain
    previous_epoch: Any = -1


@guard("broker_events", Error.BROKER_ID_NOT_REGISTERED)
def broker_registered(m: Metadata, broker: int) -> Term:
    """The event names a registered broker."""
    return m.brokers.get(broker).registered


def fence_broker(m: Metadata, event: FenceBroker) -> Outcome:
    """The broker leaves every ISR it is in; a partition it led gets a new leader
    (`ReplicationControlManager.handleBrokerFenced`)."""
    refused = _refused(m, event.broker)
    if refused is not None:
        return refused
    brokers = _update(m.brokers, event.broker, fenced=True)
    member = domain_of(m).has(m.partition.isr, event.broker)
    return _commit(m, brokers, member, remove=event.broker)


def controlled_shutdown(m: Metadata, event: ControlledShutdown) -> Outcome:
    """Marked shutting down (so ineligible and unacceptable), then the fencing treatment
    (`ReplicationControlManager.handleBrokerInControlledShutdown`)."""
    refused = _refused(m, event.broker)
    if refused is not None:
        return refused
    brokers = _update(m.brokers, event.broker, in_controlled_shutdown=True)
    member = domain_of(m).has(m.partition.isr, event.broker)
    return _commit(m, brokers, member, remove=event.broker)


def unfence_broker(m: Metadata, event: UnfenceBroker) -> Outcome:
    """Only a leaderless partition is revisited; a led one waits for its leader's AlterPartition
    to take the broker back (`ReplicationControlManager.handleBrokerUnfenced`)."""
    refused = _refused(m, event.broker)
    if refused is not None:
        return refused
    brokers = _update(m.brokers, event.broker, fenced=False)
    return _commit(m, brokers, eq(m.partition.leader, NOBODY), add=event.broker)


def register_broker(m: Metadata, event: RegisterBroker) -> Outcome:
    """`ClusterControlManager.registerBroker`: a new, fenced registration with a new
    broker epoch. A new incarnation first cleans up after the previous one: after an unclean
    shutdown the broker leaves ISR and ELR (`handleBrokerUncleanShutdown`); otherwise, since
    4.0.0 (KAFKA-18106), it leaves every ISR as a fenced broker does (`handleBrokerShutdown`)."""
    d, p, options = domain_of(m), m.partition, m.options
    previous = m.brokers.get(event.broker)
    renewed = or_(not_(previous.registered), ne(previous.incarnation, event.incarnation))
    # the same incarnation amends its registration: fencing, shutdown and epoch are kept
    registration = d.registration(True, False, m.brokers.next_epoch(), event.incarnation)
    if renewed is not True:
        amended = d.registration(
            previous.fenced, previous.in_controlled_shutdown, previous.epoch, event.incarnation
        )
        registration = d.pick_registration(renewed, registration, amended)
    brokers = m.brokers.with_broker(event.broker, registration)
    # 3.9: whenever the metadata version supports ELR; from 4.0.0, with ELR on
    handled = options.unclean_shutdown_handling and (
        options.elr_enabled or not options.new_incarnation_leaves_isr
    )
    unclean = and_(renewed, handled, _unclean(m, previous, event))
    touched = and_(unclean, or_(d.has(p.isr, event.broker), d.has(p.elr, event.broker)))
    if options.new_incarnation_leaves_isr:
        touched = or_(touched, and_(renewed, not_(unclean), d.has(p.isr, event.broker)))
    lost = d.pick(unclean, d.single(event.broker), d.empty)
    return _commit(m, brokers, touched, remove=event.broker, unclean_shutdown=lost)


def unclean_shutdown(m: Metadata, broker: int) -> Outcome:
    """A restart after an unclean shutdown: re-registration under a new incarnation."""
    previous = m.brokers.get(broker)
    return register_broker(m, RegisterBroker(broker, previous.incarnation + 1))


def _unclean(m: Metadata, previous: Any, event: RegisterBroker) -> Term:
    """Whether the previous incarnation's shutdown counts as unclean."""
    if m.options.unclean_shutdown_detection == "previous-epoch":
        # KAFKA-18635 (4.0.0): a broker that presents its last epoch shut down cleanly
        clean = and_(previous.registered, eq(event.previous_epoch, previous.epoch))
        return not_(clean)
    return True  # 3.9: every new incarnation counts


def _commit(
    m: Metadata,
    brokers: Any,
    when: Term,
    remove: int = NOBODY,
    add: int = NOBODY,
    unclean_shutdown: Term = None,
) -> Outcome:
    """Kafka's `generateLeaderAndIsrUpdates`, for the partition when `when` holds: drop the
    removed broker from the ISR, and elect with an acceptable-leader test that excludes it and
    admits the broker being added. `unclean_shutdown`: the brokers whose shutdown was unclean
    (they leave the ELR too)."""
    d, p = domain_of(m), m.partition
    if when is False:
        return committed(m, Record(d, p), brokers=brokers)

    def acceptable(replica: int) -> Term:
        if replica == remove:
            return False
        return True if replica == add else m.brokers.is_active(replica)

    gone = d.single(remove) if remove != NOBODY else d.empty
    unclean_topic = m.topic.unclean_leader_election
    targets = ChangeTargets(
        isr=d.minus(p.isr, gone),
        election=Election.UNCLEAN if unclean_topic else Election.ONLINE,
        unclean_shutdown_replicas=unclean_shutdown,
    )
    record = build_record(m, targets, acceptable)
    record.only_when(when)
    return committed(m, record, brokers=brokers)


def _refused(m: Metadata, broker: int) -> Outcome | None:
    d = domain_of(m)
    refused = refusal((broker_registered,), m.options.disabled_guards, d.code, m, broker)
    if refused.refused is False:
        return None
    assert refused.refused is True, "a broker event names a broker the model registers"
    nothing = Record(d, m.partition)
    return committed(m, nothing, refused=True, error=refused.error, guard=refused.guard)


def _update(brokers: Any, broker: int, **changes: Any) -> Any:
    return brokers.with_broker(broker, brokers.get(broker)._replace(**changes))
