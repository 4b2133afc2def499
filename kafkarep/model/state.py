"""The cluster state: one partition replicated across a KRaft controller and its brokers.

Every part is an immutable NamedTuple, so a state is a canonical value (equal states are equal
tuples) and its components can be shared between states. The protocol description names the
parts:

- the controller (§1.2.1, §2.3): the metadata log of partition snapshots (a materialised change
  record each), the broker registry, and the AlterPartition requests in flight to it;
- each broker (§1.2.2, §2.2, §2.10): its status, epoch, incarnation, how far it has applied the
  metadata log, its replica of the partition, and the responses in flight to it;
- each replica (§2.2.2, §2.7, §2.9.2): its log of (leader epoch, value) records, HWM, Leader Epoch
  Start Offset, its view of the partition, and as leader its Maximal ISR, the pending
  AlterPartition and what it knows of each follower;
- `Ghost`: what only the properties read (the committed prefix, acked writes), never the rules;
- `Budget`: the fault budgets left (the model file's `[faults]`).

Broker ids run from 1 to N; per-broker tuples are indexed by id - 1.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from kafkarep.common.fastreplace import fast_replace
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    EMPTY,
    BrokerRegistry,
    LeaderRecoveryState,
    PartitionRegistration,
)
from kafkarep.rules import AlterPartitionRequest

Entry = tuple[int, int]  # (leader epoch when written, value id)
Log = tuple[Entry, ...]

# A leader's metadata cache of each broker's ISR eligibility (`metadata_cache` reads it).
Eligibility = tuple[int, ...]


def latest_epoch(log: Log) -> int:
    """The latest epoch of Kafka's leader-epoch cache for this log: an append in an epoch below
    it is not recorded (`LeaderEpochFileCache.assign`) and counts in the latest. Epochs in a log
    only grow unless a follower fetched from a broker in another leader epoch (before KIP-320),
    so this is mostly the last entry's epoch."""
    return max(e for e, _ in log) if log else 0


class Status(IntEnum):
    RUNNING = 0
    SHUTTING_DOWN = 1  # in controlled shutdown: still running, moving its leaderships away
    OFFLINE_CLEAN = 2
    OFFLINE_UNCLEAN = 3

    @property
    def running(self) -> bool:
        return self <= Status.SHUTTING_DOWN


RUNNING = frozenset({Status.RUNNING, Status.SHUTTING_DOWN})  # the broker process is up


class Role(IntEnum):
    NONE = 0  # no partition metadata acted on yet, or no leader to follow
    FOLLOWER = 1
    LEADER = 2


@fast_replace
class FollowerView(NamedTuple):
    """What a leader knows of one follower from its fetches (protocol description §2.2.2)."""

    leo: int = -1  # fetch offset of its last fetch; -1 unknown
    broker_epoch: int = -1
    fetched_this_epoch: bool = False
    # Its last caught-up time is within replica.lag.time.max.ms (Kafka's `ReplicaState
    # .lastCaughtUpTimeMs`): a clock-free stand-in, cleared by `replica_lag` or a shrink.
    caught_up: bool = False


UNKNOWN = FollowerView()


@fast_replace
class PendingAlterPartition(NamedTuple):
    """The leader's AlterPartition in flight: what it proposed, from which partition epoch."""

    isr: frozenset[int]
    partition_epoch: int


@fast_replace
class Replica(NamedTuple):
    log: Log = ()
    hwm: int = 0
    role: Role = Role.NONE
    view: PartitionRegistration | None = None  # the partition metadata this replica acts on
    maximal_isr: frozenset[int] = EMPTY  # leader only: ISR plus any proposed members
    leso: int = 0  # leader only: Leader Epoch Start Offset
    followers: tuple[FollowerView, ...] = ()  # leader only: by broker id - 1
    pending: PendingAlterPartition | None = None
    unacked_from: int = -1  # leader only: first offset of its acks=all writes not yet acked
    # leader only: its broker's metadata cache of each broker's ISR eligibility (metadata_cache)
    eligible: Eligibility = ()
    # the flushed prefix of the log (`LocalLog.recoveryPoint`): what a lossy unclean shutdown
    # keeps. Tracked only in a model with lossy unclean shutdowns (lifecycle.stopped)
    recovery_point: int = 0
    # leader only: the topic's min.insync.replicas in its broker's metadata image (the leader's
    # `LogConfig.minInSyncReplicas`, `Partition.effectiveMinIsr`)
    min_isr: int = 0
    # follower only: it must ask where to truncate before it fetches (the fetcher's `Truncating`
    # state; `[rules] offsets_for_leader_epoch`, Kafka 0.11 to 2.7)
    truncating: bool = False

    @property
    def leo(self) -> int:
        return len(self.log)

    @property
    def last_epoch(self) -> int:
        return latest_epoch(self.log)


@fast_replace
class FetchResponse(NamedTuple):
    """A leader's answer to a fetch, in flight to the follower (protocol description §2.2.2, §3)."""

    leader: int
    leader_epoch: int
    fetch_offset: int
    hwm: int
    entries: Log = ()
    diverging: tuple[int, int] | None = None  # (epoch, end offset) when the logs diverged
    # the answer to an `OffsetsForLeaderEpoch` request (`[rules] offsets_for_leader_epoch`), not
    # to a fetch: `diverging` is then the leader's (epoch, end offset) whatever it is
    epochs: bool = False


@fast_replace
class DelayedFetch(NamedTuple):
    """A follower's fetch the network holds (`[faults] delayed_fetches`): it reaches the leader
    later, perhaps after the follower restarted (KAFKA-15221). The follower's fetcher has timed
    it out and moved on, so its answer reaches no one; only the leader's handling of it counts."""

    leader: int
    leader_incarnation: int  # the leader process it was sent to (a restart closes the connection)
    leader_epoch: int
    fetch_offset: int
    last_epoch: int
    broker_epoch: int  # the sender's broker epoch when it sent it


@fast_replace
class AlterPartitionResponse(NamedTuple):
    """The controller's answer to an AlterPartition, in flight to the leader (§2.9.2)."""

    request: PendingAlterPartition
    error: Error
    leader: int = -1
    leader_epoch: int = -1
    partition_epoch: int = -1
    isr: frozenset[int] = EMPTY
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED


@fast_replace
class Broker(NamedTuple):
    status: Status
    epoch: int  # the broker epoch of its current registration
    incarnation: int
    # The partition epoch of the last snapshot it applied (-1: none to speak of, see
    # reduction.py). An epoch, not a log index: compacting the log leaves brokers as they are.
    applied_epoch: int
    initialised: bool  # False after a restart until it acts on its metadata again
    replica: Replica | None
    fetch_response: FetchResponse | None = None
    ap_response: AlterPartitionResponse | None = None
    # its fetch the network holds; kept across a restart of either side until it arrives
    delayed_fetch: DelayedFetch | None = None


@fast_replace
class Controller(NamedTuple):
    log: tuple[PartitionRegistration, ...]  # retained suffix; log[-1] is the current state
    # per log record: the brokers' ISR eligibility when it was committed (metadata_cache)
    eligible: tuple[Eligibility, ...]
    brokers: BrokerRegistry
    ap_requests: tuple[AlterPartitionRequest | None, ...]  # in flight, by broker id - 1
    # per log record: the topic's min.insync.replicas when it was committed (a broker that
    # applies it holds that one), and the MinISR in force now: a configuration record committed
    # after the last partition record (`[faults] min_isr_changes`) changes only this
    min_isr: tuple[int, ...]
    min_isr_now: int
    # The active controller has not replayed the last `lag` partition records: it decides from
    # `log[-1 - lag]` (a failover to a lagging controller, `[faults] controller_failovers`).
    lag: int = 0

    @property
    def partition(self) -> PartitionRegistration:
        return self.log[-1]

    @property
    def decides_from(self) -> PartitionRegistration:
        """The partition as the active controller knows it."""
        return self.log[-1 - self.lag]

    def position(self, partition_epoch: int) -> int:
        """Where the snapshot of this partition epoch is in the retained log (whose partition
        epochs are consecutive: every change record moves it by one)."""
        return partition_epoch - self.log[0].partition_epoch


@fast_replace
class Ghost(NamedTuple):
    """History kept for the properties only (protocol description §2.4: the True HWM)."""

    committed: tuple[int, ...] = ()  # values below the True HWM, the highest HWM any leader had
    pos_acked: frozenset[int] = EMPTY
    neg_acked: frozenset[int] = EMPTY
    received: tuple[int, ...] = ()  # per value (value - 1): bitmask of brokers that appended it
    ack_below_min_isr: tuple[int, int] | None = None  # (value, replicas holding it) if ever
    hwm_below_min_isr: tuple[int, int] | None = None  # (leader, ISR size) if ever, with ELR on

    @property
    def true_hwm(self) -> int:
        return len(self.committed)

    def receive(self, broker_id: int, entries: Log) -> Ghost:
        """Record that a broker appended these entries (the replication the MinISR rule counts;
        a later loss of unflushed data does not undo it, protocol description §2.6)."""
        if not entries:
            return self
        received = list(self.received)
        for _, value in entries:
            if value in self.pos_acked or value in self.neg_acked:
                continue  # already judged
            while len(received) < value:
                received.append(0)
            received[value - 1] |= 1 << (broker_id - 1)
        while received and received[-1] == 0:
            received.pop()
        return self._replace(received=tuple(received))

    def forget_receivers(self, values: list[int] | frozenset[int]) -> Ghost:
        """An acknowledged (or failed) write is judged once; who received it no longer matters."""
        received = list(self.received)
        for value in values:
            if value <= len(received):
                received[value - 1] = 0
        while received and received[-1] == 0:
            received.pop()
        return self._replace(received=tuple(received))

    def receivers(self, value: int) -> int:
        return bin(self.received[value - 1]).count("1") if value <= len(self.received) else 0


@fast_replace
class Budget(NamedTuple):
    """Fault budgets left; healing actions draw on none."""

    records: int = 0
    fences: int = 0
    clean_shutdowns: int = 0
    unclean_shutdowns: int = 0
    lossy_unclean_shutdowns: int = 0
    isr_shrinks: int = 0
    reassignments: int = 0
    reassignment_cancels: int = 0
    preferred_elections: int = 0
    unclean_elections: int = 0
    partial_fetches: int = 0
    delayed_fetches: int = 0
    controller_failovers: int = 0
    # a clean shutdown the controller did not approve: controlled.shutdown.enable=false, a
    # controlled shutdown that timed out, or a fenced broker's (`stop`, lifecycle.py)
    uncontrolled_shutdowns: int = 0
    # a change of the topic's min.insync.replicas (kafkarep/model/actions/min_isr.py)
    min_isr_changes: int = 0
    # a fetch response whose file slice is sent after the leader's log changed under it
    # (`late_send`, kafkarep/model/actions/data.py)
    late_sends: int = 0

    def spend(self, name: str) -> Budget:
        return self._replace(**{name: getattr(self, name) - 1})


@fast_replace
class ClusterState(NamedTuple):
    controller: Controller
    brokers: tuple[Broker, ...]
    ghost: Ghost
    budget: Budget

    def broker(self, broker_id: int) -> Broker:
        return self.brokers[broker_id - 1]

    def with_broker(self, broker_id: int, broker: Broker) -> ClusterState:
        brokers = list(self.brokers)
        brokers[broker_id - 1] = broker
        return ClusterState(self.controller, tuple(brokers), self.ghost, self.budget)

    @property
    def partition(self) -> PartitionRegistration:
        return self.controller.log[-1]

    def running_leader(self, broker_id: int) -> Replica | None:
        """The broker's replica if the broker is up and that replica leads, else None."""
        broker = self.brokers[broker_id - 1]
        replica = broker.replica
        if broker.status not in RUNNING or replica is None or replica.role != Role.LEADER:
            return None
        return replica
