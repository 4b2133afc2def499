"""Explain each PartitionChangeRecord of a metadata log by the rules: some request or event the
rules allow, from the state the log has built so far, must produce exactly that record.

The candidates (Kafka 4.1.0's `ReplicationControlManager`): an AlterPartition from the leader
whose ISR and leader recovery state are the record's; the fence, unfence, controlled shutdown or
registration of a broker named in the same batch (Kafka writes an event's records in one batch);
a reassignment read from the record's adding and removing replicas, or its cancellation; a
preferred or unclean election. A record that only assigns log directories (KIP-858) is outside
the rules and counted as explained.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kafkarep import rules
from kafkarep.kafka.metadata import (
    BrokerRegistry,
    ClusterMetadata,
    PartitionChangeRecord,
    PartitionRegistration,
    RuleOptions,
    TopicConfig,
    options_for_version,
)
from kafkarep.metadata_log.cluster import LogCluster, PartitionKey, change_record
from kafkarep.metadata_log.dump import Batch, LogError, LogRecord
from kafkarep.rules import Changed, Outcome, Rejected
from kafkarep.rules.elections import ElectLeadersRequest
from kafkarep.rules.partition_change import Election


class Candidate(NamedTuple):
    event: str  # e.g. "AlterPartition isr=[1,2] from leader 1", "fence of broker 2"
    verdict: str  # "produces it", or why not: the refusing guard, or the fields that differ


class Verdict(NamedTuple):
    offset: int
    partition: str
    record: dict[str, object]  # the record as the log has it
    before: PartitionRegistration | None
    explained_by: str | None  # the event that produces it; None: not explained
    candidates: tuple[Candidate, ...]


class BrokerEvent(NamedTuple):
    broker: int
    kind: str  # "fence", "unfence", "controlled_shutdown", "register"
    registry: BrokerRegistry  # the registry before the broker's record
    incarnation: int = 0  # a registration's incarnation


def validate(
    batches: list[Batch],
    kafka: str | None = None,
    partition: PartitionKey | None = None,
    guards_off: frozenset[str] = frozenset(),
) -> list[Verdict]:
    """A verdict per PartitionChangeRecord, in log order (for one partition, if given), by the
    rules of the release `kafka` (default the newest) with `guards_off` switched off."""
    cluster = LogCluster()
    verdicts: list[Verdict] = []
    for batch in batches:
        start = cluster.registry()
        events = _broker_events(batch, cluster)
        for record in batch.records:
            if record.type == "PARTITION_CHANGE_RECORD":
                key = PartitionKey(str(record.data["topicId"]), int(record.data["partitionId"]))
                if partition is None or key == partition:
                    try:
                        opts = options(cluster, kafka)._replace(disabled_guards=guards_off)
                    except ValueError as error:  # a metadata.version the release cannot run
                        raise LogError(f"offset {record.offset}: {error}") from None
                    verdicts.append(_judge(cluster, key, record, events, start, opts))
            cluster.apply(record)
    return verdicts


def _broker_events(batch: Batch, cluster: LogCluster) -> list[BrokerEvent]:
    """The broker events of a batch, each with the registry just before its record (replayed on a
    scratch copy, so the caller's cluster is untouched)."""
    scratch = LogCluster()
    scratch.brokers = dict(cluster.brokers)
    scratch.incarnations = dict(cluster.incarnations)
    events = []
    for record in batch.records:
        kind = _kind(record)
        if kind is not None:
            broker = int(record.data.get("brokerId", record.data.get("id", -1)))
            incarnation = scratch.incarnation(str(record.data.get("incarnationId", "")))
            events.append(BrokerEvent(broker, kind, scratch.registry(), incarnation))
        if record.type.endswith("BROKER_RECORD") or record.type.startswith("BROKER_"):
            scratch.apply(record)
    return events


def _kind(record: LogRecord) -> str | None:
    d = record.data
    if record.type == "REGISTER_BROKER_RECORD":
        return "register"
    if record.type == "FENCE_BROKER_RECORD":
        return "fence"
    if record.type == "UNFENCE_BROKER_RECORD":
        return "unfence"
    if record.type == "BROKER_REGISTRATION_CHANGE_RECORD":
        if int(d.get("fenced", 0)) == 1:
            return "fence"
        if int(d.get("fenced", 0)) == -1:
            return "unfence"
        if int(d.get("inControlledShutdown", 0)) == 1:
            return "controlled_shutdown"
    return None


def options(cluster: LogCluster, kafka: str | None) -> RuleOptions:
    version = cluster.metadata_version()
    elr = cluster.elr() and version >= "4.0"
    if kafka is None:
        return options_for_version(version, elr)
    return options_for_version(version, elr, kafka)


def _judge(
    cluster: LogCluster,
    key: PartitionKey,
    record: LogRecord,
    events: list[BrokerEvent],
    start: BrokerRegistry,
    opts: RuleOptions,
) -> Verdict:
    wanted = change_record(record.data)
    before = cluster.partitions.get(key)
    name = cluster.name(key)
    if before is None:
        return Verdict(record.offset, name, record.data, None, None, ())
    if wanted.is_noop():
        directories = "directory assignment (KIP-858)"
        return Verdict(record.offset, name, record.data, before, directories, ())
    topic = cluster.topic_config(key.topic_id)
    candidates = []
    now = cluster.registry()
    for event, outcome in _candidates(before, wanted, now, start, events, topic, opts):
        verdict = _compare(outcome, wanted)
        candidates.append(Candidate(event, verdict))
        if verdict == "produces it":
            return Verdict(record.offset, name, record.data, before, event, tuple(candidates))
    return Verdict(record.offset, name, record.data, before, None, tuple(candidates))


def _candidates(
    p: PartitionRegistration,
    wanted: PartitionChangeRecord,
    now: BrokerRegistry,
    start: BrokerRegistry,
    events: list[BrokerEvent],
    topic: TopicConfig,
    opts: RuleOptions,
) -> Iterator[tuple[str, Outcome]]:
    def metadata(registry: BrokerRegistry) -> ClusterMetadata:
        return ClusterMetadata(p, registry, topic, opts)

    # the leader's AlterPartition (ISR change, or the end of a recovery)
    isr = wanted.isr if wanted.isr is not None else p.isr
    recovery = wanted.leader_recovery_state
    if recovery is None:
        recovery = p.leader_recovery_state
    for registry in _distinct(now, start):
        request = rules.AlterPartitionRequest(
            broker=p.leader,
            leader_epoch=p.leader_epoch,
            partition_epoch=p.partition_epoch,
            new_isr=tuple((m, registry.get(m).epoch) for m in sorted(isr)),
            leader_recovery_state=recovery,
            broker_epoch=registry.get(p.leader).epoch,
        )
        shown = ",".join(map(str, sorted(isr)))
        yield (
            f"AlterPartition isr=[{shown}] from leader {p.leader}",
            rules.alter_partition(metadata(registry), request),
        )
    # the broker events of the same batch
    for event in events:
        m = metadata(event.registry)
        label = f"{event.kind.replace('_', ' ')} of broker {event.broker}"
        if event.kind == "fence":
            yield label, rules.fence_broker(m, rules.FenceBroker(event.broker))
        elif event.kind == "unfence":
            yield label, rules.unfence_broker(m, rules.UnfenceBroker(event.broker))
        elif event.kind == "controlled_shutdown":
            yield label, rules.controlled_shutdown(m, rules.ControlledShutdown(event.broker))
        else:
            # The log does not say which epoch the broker presented as its previous one
            # (KAFKA-18635): a clean restart presents its last epoch, an unclean one does not.
            old = event.registry.get(event.broker)
            for previous, how in ((old.epoch, "clean"), (-1, "unclean")):
                registering = rules.RegisterBroker(event.broker, event.incarnation, previous)
                yield (
                    f"{how} re-registration of broker {event.broker}",
                    rules.register_broker(m, registering),
                )
    # a reassignment or its cancellation
    m = metadata(now)
    if wanted.replicas is not None:
        removing = wanted.removing or frozenset()
        target = tuple(r for r in wanted.replicas if r not in removing)
        shown = ",".join(map(str, target))
        yield (
            f"reassignment to [{shown}]",
            rules.alter_reassignment(m, rules.AlterReassignmentRequest(target)),
        )
    if p.reassignment_in_progress:
        yield (
            "reassignment cancelled",
            rules.alter_reassignment(m, rules.AlterReassignmentRequest(None)),
        )
    # elections
    for election in (Election.PREFERRED, Election.UNCLEAN):
        yield (
            f"{election.name.lower()} election",
            rules.elect_leaders(m, ElectLeadersRequest(election)),
        )


def _distinct(*registries: BrokerRegistry) -> list[BrokerRegistry]:
    out: list[BrokerRegistry] = []
    for registry in registries:
        if registry not in out:
            out.append(registry)
    return out


def _compare(outcome: Outcome, wanted: PartitionChangeRecord) -> str:
    if isinstance(outcome, Rejected):
        return f"refused: {outcome.guard} ({outcome.error.value})"
    if not isinstance(outcome, Changed):
        return "no partition change"
    got = outcome.record
    differ = [
        f"{field}={_show(mine)} (log: {_show(theirs)})"
        for field, mine, theirs in zip(got._fields, got, wanted, strict=True)
        if mine != theirs
    ]
    return "produces it" if not differ else "differs: " + ", ".join(differ)


def _show(value: object) -> str:
    if value is None:
        return "unchanged"
    if isinstance(value, frozenset):
        return "[" + ",".join(map(str, sorted(value))) + "]"
    if isinstance(value, tuple):
        return "[" + ",".join(map(str, value)) + "]"
    if hasattr(value, "name"):
        return str(value.name)  # an enum
    return str(value)
