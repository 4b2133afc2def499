"""The controller's metadata as immutable values.

A partition registration, the change record that moves it forward, the broker registry and the
topic config (protocol description §2.3; Kafka's `PartitionRegistration`, `PartitionChangeRecord`,
`BrokerRegistration`). Every value is a NamedTuple: immutable, hashable, canonical.

Replica sets (ISR, ELR, last-known ELR, adding, removing) are frozensets; only `replicas` is ordered
(its first entry is the preferred leader). Kafka keeps the ISR as an ordered list, so it treats a
reordered ISR as a change (`PartitionRegistration`'s `isr` is an array); this model does not.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from kafkarep.common.fastreplace import fast_replace
from kafkarep.kafka.releases import NEWEST, behaviour, resolve

NO_LEADER = -1
EMPTY: frozenset[int] = frozenset()


class LeaderRecoveryState(IntEnum):
    RECOVERED = 0
    RECOVERING = 1


@fast_replace
class PartitionRegistration(NamedTuple):
    """One partition's metadata as the controller stores it (Kafka `PartitionRegistration`)."""

    replicas: tuple[int, ...]
    isr: frozenset[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    elr: frozenset[int] = EMPTY
    last_known_elr: frozenset[int] = EMPTY
    adding: frozenset[int] = EMPTY
    removing: frozenset[int] = EMPTY
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def reassignment_in_progress(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def recovering(self) -> bool:
        """The leader recovery state is RECOVERING (the rules read it as a boolean)."""
        return self.leader_recovery_state == LeaderRecoveryState.RECOVERING

    def apply(self, record: PartitionChangeRecord) -> PartitionRegistration:
        """Merge a change record (`PartitionRegistration.merge`): set fields replace; the
        partition epoch always moves, the leader epoch moves exactly when the record carries a
        leader field."""
        return PartitionRegistration(
            replicas=self.replicas if record.replicas is None else record.replicas,
            isr=self.isr if record.isr is None else record.isr,
            leader=self.leader if record.leader is None else record.leader,
            leader_epoch=self.leader_epoch + (record.leader is not None),
            partition_epoch=self.partition_epoch + 1,
            elr=self.elr if record.elr is None else record.elr,
            last_known_elr=(
                self.last_known_elr if record.last_known_elr is None else record.last_known_elr
            ),
            adding=self.adding if record.adding is None else record.adding,
            removing=self.removing if record.removing is None else record.removing,
            leader_recovery_state=(
                self.leader_recovery_state
                if record.leader_recovery_state is None
                else record.leader_recovery_state
            ),
        )


@fast_replace
class PartitionChangeRecord(NamedTuple):
    """A `PartitionChangeRecord`: each field is None for "no change" or the new value."""

    isr: frozenset[int] | None = None
    leader: int | None = None
    replicas: tuple[int, ...] | None = None
    elr: frozenset[int] | None = None
    last_known_elr: frozenset[int] | None = None
    adding: frozenset[int] | None = None
    removing: frozenset[int] | None = None
    leader_recovery_state: LeaderRecoveryState | None = None

    def is_noop(self) -> bool:
        return all(value is None for value in self)

    def changed_fields(self) -> tuple[str, ...]:
        return tuple(
            name for name, value in zip(self._fields, self, strict=True) if value is not None
        )


@fast_replace
class BrokerRegistration(NamedTuple):
    """What the controller knows of one broker (Kafka `BrokerRegistration`)."""

    registered: bool = True
    fenced: bool = False
    in_controlled_shutdown: bool = False
    epoch: int = 0
    incarnation: int = 0

    @property
    def active(self) -> bool:
        """Registered, unfenced and not shutting down (Kafka `ClusterControlManager.isActive`)."""
        return self.registered and not self.fenced and not self.in_controlled_shutdown


UNREGISTERED = BrokerRegistration(registered=False, fenced=True, epoch=-1, incarnation=-1)


class BrokerRegistry(NamedTuple):
    """Every broker's registration, sorted by broker id."""

    entries: tuple[tuple[int, BrokerRegistration], ...]

    @staticmethod
    def of(registrations: dict[int, BrokerRegistration]) -> BrokerRegistry:
        return BrokerRegistry(tuple(sorted(registrations.items())))

    def get(self, broker: int) -> BrokerRegistration:
        for broker_id, registration in self.entries:
            if broker_id == broker:
                return registration
        return UNREGISTERED

    def ids(self) -> tuple[int, ...]:
        return tuple(broker_id for broker_id, _ in self.entries)

    def is_active(self, broker: int) -> bool:
        return self.get(broker).active

    def with_broker(self, broker: int, registration: BrokerRegistration) -> BrokerRegistry:
        entries = dict(self.entries)
        entries[broker] = registration
        return BrokerRegistry.of(entries)

    def next_epoch(self) -> int:
        """Broker epochs are cluster-wide monotonic (protocol description §1.2.2): one past the
        largest."""
        return max((r.epoch for _, r in self.entries), default=0) + 1


class TopicConfig(NamedTuple):
    min_isr: int = 1
    unclean_leader_election: bool = False


_NEWEST = behaviour(NEWEST)


class RuleOptions(NamedTuple):
    """Which variant of the rules runs. The default is the newest Kafka release the oracle checks
    (`kafkarep.kafka.releases`), ELR off; `options_for_version` gives a release's and a metadata
    version's.

    `kafka_version`: the release (`kafkarep.kafka.releases`); the fields below that it decides say
        which change they follow.
    `elr_enabled`: KIP-966 eligible leader replicas (`eligible.leader.replicas.version`,
        `FeatureControlManager.isElrFeatureEnabled`).
    `leader_epoch_bump_on_isr_shrink`: metadata versions before 3.6-IV0 (KAFKA-15021,
        `PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded`).
    `leader_recovery_supported`: metadata version 3.2 and up (KIP-704; an unclean leader is
        RECOVERING, `PartitionChangeBuilder.tryElection`).
    `unclean_shutdown_handling`: metadata version 4.0 and up: a re-registration under a new
        incarnation after an unclean shutdown removes the broker from ISR and ELR (from
        Kafka 4.0.0 only with ELR on, `ReplicationControlManager.handleBrokerShutdown`).
    `new_incarnation_leaves_isr`: KAFKA-18106 (4.0.0): any other new incarnation leaves every ISR
        as a fenced broker does.
    `unclean_shutdown_detection`: "incarnation" (3.9: every new incarnation is unclean) or
        "previous-epoch" (KAFKA-18635, 4.0.0: clean when the broker presents its last epoch).
    `use_last_known_leader`: Kafka's `useLastKnownLeaderInBalancedRecovery`
        (`PartitionChangeBuilder.canElectLastKnownLeader`, `maybeUpdateLastKnownLeader`).
    `last_known_leader_acceptable`: KAFKA-19522 (4.1.0): the last known leader is elected only
        if it is acceptable (registered, unfenced, not shutting down).
    `last_known_leader_on_leaderless`: apache/kafka#20629 (4.1.1): the last known leader is
        remembered when a change leaves the partition leaderless, forgotten when one names a
        leader; before, remembered when the ISR empties.
    `reassignment_completion`: "kafka" or "protocol-description" (protocol description §4.2,
        §4.5, stricter than Kafka's `PartitionReassignmentReplicas.maybeCompleteReassignment`).
    `completion_when_adding_in_isr`: KAFKA-19975 (4.3.0): a reassignment completes once every
        adding replica is in the ISR (every target replica when it shrinks the replica count).
    `replication_factor_change_check`: KIP-860 (4.1.0): a reassignment request may forbid a
        change of the replication factor.
    `epochs_ahead_answer`: "not-controller" (KAFKA-14154, 3.3.0: an AlterPartition whose leader
        or partition epoch is ahead of the controller's is answered NOT_CONTROLLER, which the
        leader retries) or "fenced" (KRaft 3.2 and older: each epoch must equal the
        controller's, FENCED_LEADER_EPOCH or INVALID_UPDATE_VERSION otherwise, which the leader
        waits out; `ReplicationControlManager.validateAlterPartitionData` at 3.2.0 and 3.3.0).
    `disabled_guards`: named guards switched off, to seed bugs (models/mutations/).
    `controller`: "kraft", "kafka" (Kafka's own classes answer, through the oracle harness:
        `kafkarep.oracle.kafka_controller`), or "zookeeper" for the ZooKeeper-era controller's
        elections (Kafka Controller Internals, Apache wiki; `kafkarep.zookeeper.events`) in place
        of the KRaft rules' broker events and elections.
    `metadata_version`: the metadata version the version-decided fields come from.
    """

    kafka_version: str = NEWEST
    elr_enabled: bool = False
    leader_epoch_bump_on_isr_shrink: bool = False
    leader_recovery_supported: bool = True
    unclean_shutdown_handling: bool = True
    new_incarnation_leaves_isr: bool = _NEWEST.new_incarnation_leaves_isr
    use_last_known_leader: bool = True
    last_known_leader_acceptable: bool = _NEWEST.last_known_leader_acceptable
    last_known_leader_on_leaderless: bool = _NEWEST.last_known_leader_on_leaderless
    reassignment_completion: str = "kafka"
    completion_when_adding_in_isr: bool = _NEWEST.completion_when_adding_in_isr
    replication_factor_change_check: bool = _NEWEST.replication_factor_change_check
    unclean_shutdown_detection: str = _NEWEST.unclean_shutdown_detection
    epochs_ahead_answer: str = "not-controller"
    disabled_guards: frozenset[str] = EMPTY  # type: ignore[assignment]
    controller: str = "kraft"
    metadata_version: str = "4.0"  # the one the fields above come from (`options_for_version`)


METADATA_VERSIONS = ("3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0")


def options_for_version(
    metadata_version: str, elr: bool, kafka_version: str = NEWEST, **overrides: object
) -> RuleOptions:
    """The rule options a Kafka release and a metadata version imply (`kafkarep.kafka.releases`;
    `RuleOptions` names the Kafka code behind each field)."""
    if metadata_version not in METADATA_VERSIONS:
        raise ValueError(
            f"unknown metadata_version {metadata_version!r}; one of {', '.join(METADATA_VERSIONS)}"
        )
    release = resolve(kafka_version)
    major, minor = (int(part) for part in metadata_version.split("."))
    version = (major, minor)
    if elr and version < (4, 0):
        raise ValueError(f"elr needs metadata_version 4.0 or later, not {metadata_version}")
    b = behaviour(release)
    lowest = tuple(int(part) for part in b.lowest_metadata_version.split("."))
    if version < lowest:
        raise ValueError(
            f"Kafka {release} runs metadata_version {b.lowest_metadata_version} or later, "
            f"not {metadata_version}"
        )
    base = RuleOptions(
        kafka_version=release,
        elr_enabled=elr,
        leader_epoch_bump_on_isr_shrink=version < (3, 6),
        leader_recovery_supported=version >= (3, 2),
        unclean_shutdown_handling=version >= (4, 0),
        new_incarnation_leaves_isr=b.new_incarnation_leaves_isr,
        last_known_leader_acceptable=b.last_known_leader_acceptable,
        last_known_leader_on_leaderless=b.last_known_leader_on_leaderless,
        completion_when_adding_in_isr=b.completion_when_adding_in_isr,
        replication_factor_change_check=b.replication_factor_change_check,
        unclean_shutdown_detection=b.unclean_shutdown_detection,
        metadata_version=metadata_version,
    )
    return base._replace(**overrides)  # type: ignore[arg-type]


class ClusterMetadata(NamedTuple):
    """Everything a controller rule reads: the partition, the brokers, the topic, the options."""

    partition: PartitionRegistration
    brokers: BrokerRegistry
    topic: TopicConfig = TopicConfig()
    options: RuleOptions = RuleOptions()

    @property
    def effective_min_isr(self) -> int:
        """min(min.insync.replicas, replica count), counting adding and removing
        (`ReplicationControlManager.getTopicEffectiveMinIsr`)."""
        return min(self.topic.min_isr, len(self.partition.replicas))
