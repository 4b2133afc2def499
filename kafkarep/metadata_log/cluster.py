"""The cluster a metadata log builds, record by record: the broker registry, the topics and their
partitions, configs and feature levels, as Kafka's `MetadataDelta` replays them (Kafka 4.1.0).

Kafka's records map onto the rules' types: a `PartitionRecord` is a `PartitionRegistration`, a
`PartitionChangeRecord` a `PartitionChangeRecord` (null and -2 for "no change"), a broker's
`IncarnationId` a small integer in the order the log names them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.kafka.metadata import (
    EMPTY,
    METADATA_VERSIONS,
    BrokerRegistration,
    BrokerRegistry,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
    TopicConfig,
)
from kafkarep.metadata_log.dump import LogRecord

NO_LEADER_CHANGE = -2  # PartitionChangeRecord's "leader did not change"
TOPIC, BROKER = 2, 4  # ConfigResource types of ConfigRecord
# metadata.version feature levels (Kafka's MetadataVersion, 4.1.2): the first level of each
# release the rules name
_LEVELS = ((7, "3.3"), (8, "3.4"), (9, "3.5"), (12, "3.6"), (15, "3.7"), (20, "3.8"), (21, "3.9"),
           (22, "4.0"))  # fmt: skip


class PartitionKey(NamedTuple):
    topic_id: str
    partition: int


def _ids(value: Any) -> frozenset[int]:
    return frozenset(value or ())


def registration(data: dict[str, Any]) -> PartitionRegistration:
    """A `PartitionRecord`."""
    return PartitionRegistration(
        replicas=tuple(data["replicas"]),
        isr=_ids(data["isr"]),
        leader=int(data["leader"]),
        leader_epoch=int(data["leaderEpoch"]),
        partition_epoch=int(data["partitionEpoch"]),
        elr=_ids(data.get("eligibleLeaderReplicas")),
        last_known_elr=_ids(data.get("lastKnownElr")),
        adding=_ids(data.get("addingReplicas")),
        removing=_ids(data.get("removingReplicas")),
        leader_recovery_state=LeaderRecoveryState(int(data.get("leaderRecoveryState", 0))),
    )


def change_record(data: dict[str, Any]) -> PartitionChangeRecord:
    """A `PartitionChangeRecord`, each absent or null field "no change". (Directory
    assignments, KIP-858, are outside the rules and left out.)"""

    def ids(name: str) -> frozenset[int] | None:
        value = data.get(name)
        return None if value is None else frozenset(value)

    leader = int(data.get("leader", NO_LEADER_CHANGE))
    recovery = int(data.get("leaderRecoveryState", -1))
    replicas = data.get("replicas")
    return PartitionChangeRecord(
        isr=ids("isr"),
        leader=None if leader == NO_LEADER_CHANGE else leader,
        replicas=None if replicas is None else tuple(replicas),
        elr=ids("eligibleLeaderReplicas"),
        last_known_elr=ids("lastKnownElr"),
        adding=ids("addingReplicas"),
        removing=ids("removingReplicas"),
        leader_recovery_state=None if recovery < 0 else LeaderRecoveryState(recovery),
    )


class LogCluster:
    """What the log has built so far. `apply` replays one record."""

    def __init__(self) -> None:
        self.brokers: dict[int, BrokerRegistration] = {}
        self.incarnations: dict[str, int] = {}
        self.topics: dict[str, str] = {}  # topic id -> name
        self.partitions: dict[PartitionKey, PartitionRegistration] = {}
        self.configs: dict[tuple[int, str, str], str] = {}
        self.features: dict[str, int] = {}

    # --- what the rules read ---------------------------------------------------------------

    def registry(self) -> BrokerRegistry:
        return BrokerRegistry.of(dict(self.brokers))

    def topic_config(self, topic_id: str) -> TopicConfig:
        name = self.topics.get(topic_id, "")

        def config(key: str, default: str) -> str:
            for resource in ((TOPIC, name), (BROKER, "")):
                value = self.configs.get((*resource, key))
                if value is not None:
                    return value
            return default

        return TopicConfig(
            min_isr=int(config("min.insync.replicas", "1")),
            unclean_leader_election=config("unclean.leader.election.enable", "false") == "true",
        )

    def metadata_version(self) -> str:
        level = self.features.get("metadata.version", 0)
        name = METADATA_VERSIONS[0]
        for first, release in _LEVELS:
            if level >= first:
                name = release
        return name

    def elr(self) -> bool:
        return self.features.get("eligible.leader.replicas.version", 0) >= 1

    def name(self, key: PartitionKey) -> str:
        return f"{self.topics.get(key.topic_id, key.topic_id)}-{key.partition}"

    # --- replay ----------------------------------------------------------------------------

    def apply(self, record: LogRecord) -> None:
        handler = getattr(self, "_" + record.type.lower(), None)
        if handler is not None:
            handler(record.data)

    def incarnation(self, uuid: str) -> int:
        """The small integer standing for a broker's IncarnationId."""
        return self.incarnations.setdefault(uuid, len(self.incarnations) + 1)

    def _register_broker_record(self, d: dict[str, Any]) -> None:
        self.brokers[int(d["brokerId"])] = BrokerRegistration(
            registered=True,
            fenced=bool(d.get("fenced", True)),
            in_controlled_shutdown=bool(d.get("inControlledShutdown", False)),
            epoch=int(d["brokerEpoch"]),
            incarnation=self.incarnation(str(d.get("incarnationId", ""))),
        )

    def _broker_registration_change_record(self, d: dict[str, Any]) -> None:
        broker = int(d["brokerId"])
        r = self.brokers.get(broker, BrokerRegistration())
        fenced = int(d.get("fenced", 0))  # 1: fence, -1: unfence, 0: no change
        shutdown = int(d.get("inControlledShutdown", 0))
        self.brokers[broker] = r._replace(
            fenced=r.fenced if fenced == 0 else fenced == 1,
            in_controlled_shutdown=r.in_controlled_shutdown or shutdown == 1,
        )

    def _fence_broker_record(self, d: dict[str, Any]) -> None:
        broker = int(d["id"])
        self.brokers[broker] = self.brokers.get(broker, BrokerRegistration())._replace(fenced=True)

    def _unfence_broker_record(self, d: dict[str, Any]) -> None:
        broker = int(d["id"])
        self.brokers[broker] = self.brokers.get(broker, BrokerRegistration())._replace(fenced=False)

    def _unregister_broker_record(self, d: dict[str, Any]) -> None:
        self.brokers[int(d["brokerId"])] = BrokerRegistration(registered=False)

    def _topic_record(self, d: dict[str, Any]) -> None:
        self.topics[str(d["topicId"])] = str(d["name"])

    def _remove_topic_record(self, d: dict[str, Any]) -> None:
        topic = str(d["topicId"])
        self.topics.pop(topic, None)
        for key in [k for k in self.partitions if k.topic_id == topic]:
            del self.partitions[key]

    def _partition_record(self, d: dict[str, Any]) -> None:
        key = PartitionKey(str(d["topicId"]), int(d["partitionId"]))
        self.partitions[key] = registration(d)

    def _partition_change_record(self, d: dict[str, Any]) -> None:
        key = PartitionKey(str(d["topicId"]), int(d["partitionId"]))
        before = self.partitions.get(key)
        if before is not None:
            self.partitions[key] = before.apply(change_record(d))

    def _clear_elr_record(self, d: dict[str, Any]) -> None:
        """KIP-966 (Kafka 4.1): the ELR of a topic's partitions, or of all, is cleared (when
        ELR is enabled, or MinISR changes)."""
        name = str(d.get("topicName", ""))
        for key, p in self.partitions.items():
            if not name or self.topics.get(key.topic_id) == name:
                self.partitions[key] = p._replace(elr=EMPTY, last_known_elr=EMPTY)

    def _config_record(self, d: dict[str, Any]) -> None:
        key = (int(d["resourceType"]), str(d["resourceName"]), str(d["name"]))
        if d.get("value") is None:
            self.configs.pop(key, None)
        else:
            self.configs[key] = str(d["value"])

    def _feature_level_record(self, d: dict[str, Any]) -> None:
        self.features[str(d["name"])] = int(d["featureLevel"])
