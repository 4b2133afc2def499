"""What a leader's metadata cache says of the other brokers, as far as its ISR checks read it.

Kafka's leader decides by itself whether a follower may join the ISR and whether the HWM waits
for it (`Partition.isReplicaIsrEligible`, Kafka 4.1.0), from its own broker's metadata cache,
not from the controller: the follower must be unfenced and not in controlled shutdown there
(KIP-841), and the broker epoch of its fetches must be the one the cache holds (KIP-903). In
the ZooKeeper era the leader only asked whether the broker was alive (`ZkMetadataCache
.hasAliveBroker`, Kafka 3.5.0).

The cache is the metadata log up to where the broker has applied it. The model's log holds
partition snapshots, so each snapshot carries the brokers' eligibility when it was committed
(`Controller.eligible`), and a leader caught up with the last snapshot may apply the broker
records committed since (`apply_registrations`). A leader behind the log does not see broker
records that came between two partition snapshots: stricter than Kafka, which may stop between
any two records, and documented in docs/models.md.

An entry per broker id: its broker epoch when the cache shows it ISR-eligible; `FENCED` when it
is fenced or unknown; `shutting_down(epoch)` when it is in controlled shutdown (the epoch is
kept, since Kafka reads it apart from the shutdown flag).
"""

from __future__ import annotations

from typing import Any

from kafkarep.kafka.metadata import BrokerRegistry
from kafkarep.model.config import ModelConfig
from kafkarep.model.shapes import ReplicaShape
from kafkarep.model.state import Eligibility
from kafkarep.rules.guards import guard
from kafkarep.rules.terms import Term, and_, eq, ite, not_, or_

FENCED = -1  # fenced, or not registered: no alive broker epoch in the cache


def shutting_down(epoch: Term) -> Term:
    """An alive broker in controlled shutdown: its epoch, encoded below FENCED."""
    return -2 - epoch


def alive_epoch(entry: Term) -> Term:
    """The broker epoch the cache holds for an alive broker (`getAliveBrokerEpoch`), else -1."""
    return ite(entry >= 0, entry, ite(entry <= -2, -2 - entry, -1))


def entry(registration: Any, zookeeper: bool) -> Term:
    """A broker's entry in a cache that has applied its registration (a `BrokerRegistration`,
    or the prover's terms for one)."""
    fenced = or_(not_(registration.registered), registration.fenced)
    stopping = and_(registration.in_controlled_shutdown, not zookeeper)
    epoch = registration.epoch
    return ite(fenced, FENCED, ite(stopping, shutting_down(epoch), epoch))


def eligibility(registry: BrokerRegistry, brokers: int, zookeeper: bool) -> Eligibility:
    """Each broker's entry, by id - 1, from a broker registry."""
    return tuple(entry(registry.get(b), zookeeper) for b in range(1, brokers + 1))


# --- the leader's checks (`Partition.isReplicaIsrEligible`, Kafka 4.1.0) ------------------------


@guard("isr_join")
def alive_in_leader_metadata(replica: ReplicaShape, follower: int) -> Term:
    """The leader's own metadata cache shows the follower unfenced and not in controlled
    shutdown (KIP-841; in the ZooKeeper era: alive)."""
    return replica.eligible[follower - 1] >= 0


@guard("isr_join")
def broker_epoch_in_leader_metadata(replica: ReplicaShape, follower: int) -> Term:
    """The broker epoch of the follower's fetches is the alive broker epoch the leader's cache
    holds (`isBrokerEpochIsrEligible`, KIP-903, Kafka 3.5.0; KRaft only): fetches from an
    incarnation the leader has not seen registered do not count."""
    cached = alive_epoch(replica.eligible[follower - 1])
    return and_(cached >= 0, eq(cached, replica.followers[follower - 1].broker_epoch))


def isr_eligible(cfg: ModelConfig, replica: ReplicaShape, follower: int) -> Term:
    """Both checks, as the ISR join and the HWM's wait read them (a switched-off one passes)."""
    disabled = cfg.options.disabled_guards
    return and_(
        alive_in_leader_metadata.passes(disabled, replica, follower),
        or_(
            cfg.options.controller == "zookeeper",
            broker_epoch_in_leader_metadata.passes(disabled, replica, follower),
        ),
    )
