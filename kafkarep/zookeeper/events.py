"""The ZooKeeper-era controller's reaction to broker events and election requests, built from
the partition and replica state machines and the leader selectors of Kafka Controller Internals
(Apache wiki).

Each function has the signature of the KRaft rule it stands in for (`kafkarep.rules`), over the
same metadata values, so the cluster model runs this controller when a model says
`[rules] controller = "zookeeper"` (`kafkarep.model.controller` picks the rule):

- a fence, an unclean shutdown or the end of a controlled shutdown is a broker failure: a
  partition the broker led goes OnlinePartition -> OfflinePartition -> OnlinePartition through
  the offline selector (unclean when the topic allows it), and its replica goes to
  OfflineReplica, leaving the ISR;
- a controlled shutdown moves the leadership with the controlled-shutdown selector, or moves a
  follower replica to OfflineReplica;
- an unfence is a broker startup: its replica goes to OnlineReplica, and an offline partition
  goes to OnlinePartition through the offline selector;
- a preferred election uses the preferred selector, an unclean one the offline selector with
  unclean election on;
- a re-registration changes no partition: the ZooKeeper-era controller has no unclean-shutdown
  detection (KIP-966 is KRaft's).

The leader's own ISR changes (AlterPartition) and reassignment requests keep the KRaft rules.
The partition registration is the ZooKeeper leader-and-ISR state: its partition epoch plays the
ZooKeeper version. One event is one record, so the epochs move by one per event.
"""

from __future__ import annotations

from kafkarep import rules
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    BrokerRegistry,
    ClusterMetadata,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkarep.rules.broker_events import (
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
    broker_registered,
)
from kafkarep.rules.elections import ElectLeadersRequest
from kafkarep.rules.guards import first_failure
from kafkarep.rules.outcome import Changed, Outcome, Rejected, Unchanged
from kafkarep.rules.partition_change import Election
from kafkarep.zookeeper import leader_selectors as select
from kafkarep.zookeeper import partition_states as partitions
from kafkarep.zookeeper import replica_states as replicas
from kafkarep.zookeeper.outcome import NoLeader
from kafkarep.zookeeper.partition_states import (
    LeaderAndIsr,
    PartitionState,
    PartitionTransition,
    ZkPartition,
)
from kafkarep.zookeeper.replica_states import ReplicaState


def zk_partition(p: PartitionRegistration) -> ZkPartition:
    """The registration as the ZooKeeper-era controller holds it (ISR in assignment order)."""
    state = PartitionState.ONLINE if p.has_leader else PartitionState.OFFLINE
    isr = tuple(r for r in p.replicas if r in p.isr)
    return ZkPartition(
        state, p.replicas, LeaderAndIsr(p.leader, isr, p.leader_epoch, p.partition_epoch)
    )


def live_brokers(brokers: BrokerRegistry) -> frozenset[int]:
    """Up and not shutting down: Kafka's live brokers."""
    return frozenset(b for b in brokers.ids() if brokers.is_active(b))


def fence_broker(metadata: ClusterMetadata, event: FenceBroker) -> Outcome:
    """A broker failure (its ZooKeeper session is gone)."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, fenced=True)
    live = live_brokers(brokers)
    z = zk_partition(metadata.partition)
    assert z.leader_and_isr is not None
    if z.leader_and_isr.leader == event.broker:
        offline = partitions.to_offline(z)
        assert isinstance(offline, PartitionTransition)
        z = _elect(offline.partition, live, _offline_selector(metadata, live))
    if event.broker in z.assigned:
        moved = replicas.transition(
            event.broker, ReplicaState.ONLINE, ReplicaState.OFFLINE, z, live
        )
        assert isinstance(moved, replicas.ReplicaTransition)
        z = moved.partition
    return _outcome(metadata, brokers, z)


def controlled_shutdown(metadata: ClusterMetadata, event: ControlledShutdown) -> Outcome:
    """A partition the broker leads gets a leader from the controlled-shutdown selector (or
    keeps its leader when there is none: the shutdown waits); a follower replica goes offline."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, in_controlled_shutdown=True)
    live = live_brokers(brokers)
    z = zk_partition(metadata.partition)
    assert z.leader_and_isr is not None
    shutting_down = frozenset({event.broker})
    if z.leader_and_isr.leader == event.broker:
        z = _elect(
            z,
            live,
            lambda q: select.controlled_shutdown(q.assigned, _isr(q), live, shutting_down),
        )
    elif event.broker in _isr(z):
        moved = replicas.transition(
            event.broker, ReplicaState.ONLINE, ReplicaState.OFFLINE, z, live
        )
        assert isinstance(moved, replicas.ReplicaTransition)
        z = moved.partition
    return _outcome(metadata, brokers, z)


def unfence_broker(metadata: ClusterMetadata, event: UnfenceBroker) -> Outcome:
    """A broker startup: its replica goes OfflineReplica -> OnlineReplica (a LeaderAndIsr
    request, no write) and an offline partition goes online through the offline selector."""
    refused = _refused(metadata, event.broker)
    if refused is not None:
        return refused
    brokers = _update(metadata.brokers, event.broker, fenced=False)
    live = live_brokers(brokers)
    z = zk_partition(metadata.partition)
    if z.state == PartitionState.OFFLINE:
        z = _elect(z, live, _offline_selector(metadata, live))
    return _outcome(metadata, brokers, z)


def register_broker(metadata: ClusterMetadata, event: RegisterBroker) -> Outcome:
    """A new, fenced registration with a new broker epoch; no partition changes."""
    # the KRaft-only clean-ups of a new incarnation (KIP-966, KAFKA-18106) do not apply
    without = metadata.options._replace(
        unclean_shutdown_handling=False, new_incarnation_leaves_isr=False
    )
    return rules.register_broker(metadata._replace(options=without), event)


def elect_leaders(metadata: ClusterMetadata, request: ElectLeadersRequest) -> Outcome:
    """A preferred election (preferred selector) or an unclean one (offline selector with
    unclean election on), with the answers of KRaft's ElectLeaders
    (`ReplicationControlManager.electLeader`)."""
    p = metadata.partition
    live = live_brokers(metadata.brokers)
    z = zk_partition(p)
    if request.election == Election.PREFERRED:
        if p.replicas and p.leader == p.replicas[0]:
            return Rejected(Error.ELECTION_NOT_NEEDED, "zookeeper.preferred_already_leads")
        elected = partitions.to_online(
            z, live, lambda q: select.preferred(q.assigned, _isr(q), live)
        )
        error = Error.PREFERRED_LEADER_NOT_AVAILABLE
    elif request.election == Election.UNCLEAN:
        if p.has_leader:
            return Rejected(Error.ELECTION_NOT_NEEDED, "zookeeper.partition_has_leader")
        elected = partitions.to_online(
            z, live, lambda q: select.offline(q.assigned, _isr(q), live, True)
        )
        error = Error.ELIGIBLE_LEADERS_NOT_AVAILABLE
    else:
        return Rejected(Error.INVALID_REQUEST, "zookeeper.election_type_supported")
    if not isinstance(elected, PartitionTransition):
        assert isinstance(elected, NoLeader)  # -> OnlinePartition is valid from either state
        return Rejected(error, f"zookeeper.{elected.selector}")
    return _outcome(metadata, metadata.brokers, elected.partition)


# --- helpers ---------------------------------------------------------------------------------


def _isr(z: ZkPartition) -> tuple[int, ...]:
    assert z.leader_and_isr is not None
    return z.leader_and_isr.isr


def _offline_selector(metadata: ClusterMetadata, live: frozenset[int]) -> partitions.Selector:
    unclean = metadata.topic.unclean_leader_election
    return lambda q: select.offline(q.assigned, _isr(q), live, unclean)


def _elect(z: ZkPartition, live: frozenset[int], selector: partitions.Selector) -> ZkPartition:
    """-> OnlinePartition through the selector; a partition it finds no leader for stays."""
    elected = partitions.to_online(z, live, selector)
    if isinstance(elected, NoLeader):
        return z
    assert isinstance(elected, PartitionTransition)
    return elected.partition


def _outcome(metadata: ClusterMetadata, brokers: BrokerRegistry, z: ZkPartition) -> Outcome:
    """One change record for what the event wrote to ZooKeeper, if it wrote anything."""
    p = metadata.partition
    written = z.leader_and_isr
    assert written is not None
    if written.zk_version == p.partition_epoch:
        return Unchanged(brokers) if brokers != metadata.brokers else Unchanged()
    record = PartitionChangeRecord()
    if written.leader_epoch != p.leader_epoch:
        record = record._replace(leader=written.leader)
    if frozenset(written.isr) != p.isr:
        record = record._replace(isr=frozenset(written.isr))
    registry = brokers if brokers != metadata.brokers else None
    return Changed(p.apply(record), record, registry)


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
