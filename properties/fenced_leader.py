"""A property a Kafka developer adds with a change: the controller never names a fenced broker as
the partition's leader.

KAFKA-19522 (Kafka 4.1.0) changed `PartitionChangeBuilder.canElectLastKnownLeader`: with Eligible
Leader Replicas on (KIP-966) and the ISR and ELR both empty, the controller may elect the *last
known leader*, and up to 4.0 it did so without asking whether that broker is acceptable
(registered, unfenced, not shutting down). The built-in properties are about data (a leader that
lacks a committed record); what the change itself promises is about metadata, so its author
states it here and checks it against the rules before and after:

- models/user_properties/fenced_leader_kafka_4_0.toml: Kafka 4.0's rules: violated at depth 2
  (the only ISR member crashes; as it re-registers, fenced, it is elected);
- models/user_properties/fenced_leader_kafka_19522.toml: the same with the change: holds, and
  `last_known_leader_elected` is still reached, once the broker is unfenced.

The module's contract (docs/user-properties.md): `PROPERTIES`, a tuple of properties made with
`always(...)` and `sometimes(...)`, whose names are not a built-in property's.
"""

from __future__ import annotations

from typing import Any

from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.model.actions.base import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE, Domain
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import always, predicate, sometimes
from kafkarep.rules.terms import Term, and_, eq, not_, or_

KAFKA_19522 = (
    "KAFKA-19522 (Kafka 4.1.0): PartitionChangeBuilder.canElectLastKnownLeader elects the last "
    "known leader only if isAcceptableLeader; ClusterControlManager.isActive"
)


def leader_acceptable(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    """No leader, or a leader the controller has registered and unfenced: written over a domain
    (`kafkarep/model/domain.py`), so that `kafkarep prove` proves it too."""
    leader = state.partition.leader
    no_leader = eq(leader, -1)
    if no_leader is True:
        return True

    def unfenced(broker: int) -> Term:
        registration = d.broker_registration(state, broker)
        return and_(registration.registered, not_(registration.fenced))

    return or_(no_leader, d.for_id(leader, unfenced))


@predicate(leader_acceptable)
def controller(cfg: ModelConfig, state: ClusterState) -> str | None:
    """The partition's leader in the controller's metadata is a registered, unfenced broker."""
    if leader_acceptable(CONCRETE, cfg, state):
        return None
    partition = state.partition
    if not state.controller.brokers.get(partition.leader).registered:
        return f"leader {partition.leader} is not a registered broker"
    return (
        f"leader {partition.leader} (leader epoch {partition.leader_epoch}) is fenced in the "
        "controller's broker registry"
    )


def last_known_leader_elected(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    """A step elects the last known leader: the partition had no leader, and the broker it
    remembered as its last leader now leads, elected uncleanly (RECOVERING), as the fallback
    elects it (not from the ISR or ELR, which elect cleanly)."""
    old, new = before.partition, after.partition
    return (
        old.leader == -1
        and new.leader != -1
        and new.leader in old.last_known_elr
        and new.leader_recovery_state == LeaderRecoveryState.RECOVERING
    )


PROPERTIES = (
    always(
        "fenced_broker_not_leader",
        "The controller never names a fenced (or unregistered) broker as the partition's leader.",
        KAFKA_19522,
        controller=controller,
    ),
    sometimes(
        "last_known_leader_elected",
        "KIP-966's last-known-leader fallback elects a leader (the change must not remove it).",
        "KIP-966; PartitionChangeBuilder.canElectLastKnownLeader",
        last_known_leader_elected,
    ),
)
