"""Broker events the controller reacts to: fence, unfence, controlled shutdown, re-registration.

Kafka's `ReplicationControlManager.handleBrokerFenced`, `handleBrokerUnfenced`,
`handleBrokerInControlledShutdown`, `handleBrokerUncleanShutdown` and
`ClusterControlManager.registerBroker` (kafka-rules.md §5; seed 004 §1.2.2, §2.8, §2.9.1). Each
touches exactly the partitions Kafka touches and runs the change builder once for them with the
same helper (Kafka's `generateLeaderAndIsrUpdates`).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.guards import first_failure, guard
from kafkarep.metadata import EMPTY, BrokerRegistration, BrokerRegistry, ClusterMetadata
from kafkarep.rules.outcome import Changed, Outcome, Rejected, Unchanged
from kafkarep.rules.partition_change import ChangeTargets, Election, build

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
    incarnation: int
    previous_epoch: int = -1


@guard("broker_events", Error.BROKER_ID_NOT_REGISTERED)
def broker_registered(m: ClusterMetadata, broker: int) -> bool:
    """The event names a registered broker."""
    return m.brokers.get(broker).registered


def fence_broker(metadata: ClusterMetadata, event: FenceBroker) -> Outcome:
    """R5.1: the broker leaves every ISR it is in; a partition it led gets a new leader."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, fenced=True)
    if event.broker not in metadata.partition.isr:
        return Unchanged(brokers)
    return _commit(metadata, brokers, remove=event.broker)


def controlled_shutdown(metadata: ClusterMetadata, event: ControlledShutdown) -> Outcome:
    """R5.2: marked shutting down (so ineligible and unacceptable), then the fencing treatment."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, in_controlled_shutdown=True)
    if event.broker not in metadata.partition.isr:
        return Unchanged(brokers)
    return _commit(metadata, brokers, remove=event.broker)


def unfence_broker(metadata: ClusterMetadata, event: UnfenceBroker) -> Outcome:
    """R5.3: only a leaderless partition is revisited; a led one waits for its leader's
    AlterPartition to take the broker back."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, fenced=False)
    if metadata.partition.has_leader:
        return Unchanged(brokers)
    return _commit(metadata, brokers, add=event.broker)


def register_broker(metadata: ClusterMetadata, event: RegisterBroker) -> Outcome:
    """R5.4-R5.5: a new, fenced registration with a new broker epoch; a restart that was not
    clean removes the broker from ISR and ELR first (metadata version 4.0-IV1 and up)."""
    previous = metadata.brokers.get(event.broker)
    brokers = metadata.brokers.with_broker(
        event.broker,
        BrokerRegistration(
            registered=True,
            fenced=True,
            in_controlled_shutdown=False,
            epoch=metadata.brokers.next_epoch(),
            incarnation=event.incarnation,
        ),
    )
    if not (metadata.options.unclean_shutdown_handling and _was_unclean(metadata, previous, event)):
        return Unchanged(brokers)
    p = metadata.partition
    if event.broker not in p.isr and event.broker not in p.elr:
        return Unchanged(brokers)
    return _commit(metadata, brokers, unclean=event.broker)


def unclean_shutdown(metadata: ClusterMetadata, broker: int) -> Outcome:
    """A restart after an unclean shutdown: re-registration under a new incarnation."""
    previous = metadata.brokers.get(broker)
    return register_broker(metadata, RegisterBroker(broker, previous.incarnation + 1))


def _was_unclean(
    metadata: ClusterMetadata, previous: BrokerRegistration, event: RegisterBroker
) -> bool:
    if not previous.registered or previous.incarnation == event.incarnation:
        return False
    if metadata.options.unclean_shutdown_detection == "previous-epoch":
        return event.previous_epoch != previous.epoch
    return True  # Kafka 4.0 snapshot: every new incarnation counts (R5.4)


def _commit(
    metadata: ClusterMetadata,
    brokers: BrokerRegistry,
    remove: int = NOBODY,
    add: int = NOBODY,
    unclean: int = NOBODY,
) -> Outcome:
    """Kafka's `generateLeaderAndIsrUpdates`: drop the removed (or unclean) broker from the ISR,
    and elect with an acceptable-leader test that excludes it and admits the broker being added."""

    def acceptable(replica: int) -> bool:
        if replica in (remove, unclean):
            return False
        return replica == add or metadata.brokers.is_active(replica)

    p = metadata.partition
    targets = ChangeTargets(
        isr=p.isr - {remove, unclean},
        election=Election.UNCLEAN if metadata.topic.unclean_leader_election else Election.ONLINE,
        unclean_shutdown_replicas=frozenset({unclean}) if unclean != NOBODY else EMPTY,
    )
    record = build(metadata, targets, acceptable)
    if record is None:
        return Unchanged(brokers)
    return Changed(p.apply(record), record, brokers)


def _refused(metadata: ClusterMetadata, broker: int) -> Rejected | None:
    refused = first_failure(
        (broker_registered,), metadata.options.disabled_guards, metadata, broker
    )
    if refused is None:
        return None
    assert refused.error is not None
    return Rejected(refused.error, refused.qualified)


def _update(brokers: BrokerRegistry, broker: int, **changes: bool) -> BrokerRegistry:
    return brokers.with_broker(broker, brokers.get(broker)._replace(**changes))
