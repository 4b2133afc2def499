"""The symbolic state: the cluster model's state (`kafkarep/model/state.py`) as fixed-shape
tuples of terms, one NamedTuple per concrete type and named as it is.

The abstraction (docs/prove.md explains why it is sound):

- Records are identified by (offset, leader epoch), not by value: a leader epoch has one leader,
  which appends each offset once, so two records with the same offset and epoch are the same
  record. A log is its LEO plus the epoch of the record at each offset; the committed log (the
  ghost's True HWM prefix) is the epoch of each committed offset; the positively acknowledged
  writes are, per offset, a set of epochs.
- Who has received a write not yet acknowledged (the ghost's per-value receiver sets) is kept with
  the leader that wrote it, per offset of its unacknowledged range (`Replica.received`): an
  unacknowledged write is always in the range [unacked_from, LEO) of the leader that wrote it.
- The negatively acknowledged writes are dropped (no rule or property reads them, only whether a
  write was judged, which the unacknowledged range says), and so are the witnesses of the MinISR
  flags (the property reads only whether they are set) and the ELR, last-known ELR, adding and
  removing fields of a replica's copy of the metadata (no rule of a broker reads them).
- The controller's metadata log is indexed by partition epoch (`metadata_log`, position
  partition epoch - 1): the partition epoch moves by one per record, so the concrete log's
  compaction is a relabelling. A broker's position in it is the partition epoch of the record it
  applied (`applied_epoch`).

Everything else is the concrete state field for field, with canonical values for absent parts
(no replica, no response) so that equal projections are equal tuples. Offsets, epochs, broker
epochs and budgets are integers; broker sets are bit-vectors. A log holds at most R records (R
is the model's record budget: every record is written once), so logs are R-tuples.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.model.state import Role, Status
from kafkarep.symbolic import ops
from kafkarep.symbolic.ops import Term

ERRORS = tuple(Error)
ERROR = {e: i for i, e in enumerate(ERRORS)}
STATUSES = tuple(int(s) for s in Status)
RUNNING, SHUTTING_DOWN, OFFLINE_CLEAN, OFFLINE_UNCLEAN = STATUSES
NONE, FOLLOWER, LEADER = (int(r) for r in Role)


class PartitionRegistration(NamedTuple):
    """A partition registration (the controller's, or one in its metadata log)."""

    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    elr: Term
    last_known_elr: Term
    adding: Term
    removing: Term
    recovering: Term
    replicas: tuple[Term, ...]  # N slots in order, packed, 0 for none
    # per broker: its ISR eligibility when this was committed (model/metadata_cache.py)
    eligible: tuple[Term, ...]


class BrokerRegistration(NamedTuple):
    """A broker's registration (every broker of the model is registered)."""

    fenced: Term
    in_controlled_shutdown: Term
    epoch: Term
    incarnation: Term

    @property
    def registered(self) -> bool:
        return True

    @property
    def active(self) -> Term:
        """Unfenced and not shutting down (Kafka `ClusterControlManager.isActive`)."""
        return ops.and_(ops.not_(self.fenced), ops.not_(self.in_controlled_shutdown))


class AlterPartitionRequest(NamedTuple):
    present: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    member_epochs: tuple[
        Term, ...
    ]  # by broker id - 1: the epoch sent for a member (-1: not checked)
    recovering: Term
    broker_epoch: Term


class View(NamedTuple):
    present: Term
    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    replicas: Term
    recovering: Term


class FollowerView(NamedTuple):
    leo: Term
    broker_epoch: Term
    fetched_this_epoch: Term
    caught_up: Term


class Replica(NamedTuple):
    present: Term
    leo: Term
    log: tuple[Term, ...]  # epoch of the record at each offset, 0 at and beyond the LEO
    hwm: Term
    role: Term
    view: View
    maximal_isr: Term
    leso: Term
    followers: tuple[FollowerView, ...]
    pending: Term
    pending_isr: Term
    pending_partition_epoch: Term
    unacked_from: Term
    received: tuple[Term, ...]  # receivers of each unacknowledged write of this leader, by offset
    eligible: tuple[Term, ...]  # leader only: its metadata cache's ISR eligibility, by broker
    recovery_point: Term  # the flushed prefix: what a lossy unclean shutdown keeps


class FetchResponse(NamedTuple):
    present: Term
    leader: Term
    leader_epoch: Term
    fetch_offset: Term
    hwm: Term
    end: Term
    entries: tuple[Term, ...]  # epochs at the leader's offsets [offset, end), 0 elsewhere
    diverging: Term
    diverging_epoch: Term
    diverging_end: Term


class AlterPartitionResponse(NamedTuple):
    present: Term
    request_isr: Term
    request_partition_epoch: Term
    error: Term
    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    recovering: Term


class Broker(NamedTuple):
    status: Term
    epoch: Term
    incarnation: Term
    applied_epoch: Term  # partition epoch of the metadata record it last applied
    initialised: Term
    replica: Replica
    fetch_response: FetchResponse
    ap_response: AlterPartitionResponse


class Ghost(NamedTuple):
    true_hwm: Term
    committed: tuple[Term, ...]
    pos_acked: tuple[Term, ...]  # per offset: epochs of positively acknowledged records
    ack_below_min_isr: Term
    hwm_below_min_isr: Term
    # per committed offset: the lowest leader epoch of a leader that moved its HWM past it. A
    # history variable of the proofs: no guard and no other field reads it.
    committed_in: tuple[Term, ...]
    # per broker: the leader epoch since which it has led without a break (set when it becomes
    # leader, kept when a new epoch keeps it leader, as a reassignment's completion does; read
    # only while it leads). A history variable like `committed_in`; 0 without reassignment.
    led_since: tuple[Term, ...]


class Budget(NamedTuple):
    records: Term
    fences: Term
    clean_shutdowns: Term
    unclean_shutdowns: Term
    lossy_unclean_shutdowns: Term
    isr_shrinks: Term
    reassignments: Term
    reassignment_cancels: Term
    preferred_elections: Term
    unclean_elections: Term


class ClusterState(NamedTuple):
    partition: PartitionRegistration
    metadata_log: tuple[PartitionRegistration, ...]  # by partition epoch - 1
    registry: tuple[BrokerRegistration, ...]
    ap_requests: tuple[AlterPartitionRequest, ...]
    brokers: tuple[Broker, ...]
    ghost: Ghost
    budget: Budget


FIELDS: dict[type, tuple[str, ...]] = {
    cls: cls._fields
    for cls in (
        PartitionRegistration,
        BrokerRegistration,
        AlterPartitionRequest,
        View,
        FollowerView,
        Replica,
        FetchResponse,
        AlterPartitionResponse,
        Broker,
        Ghost,
        Budget,
    )
}

# Field sorts: "b" bool, "i" int, "s" broker set, "E" epoch set, a class, or ("vec", sort, size)
# with size "N" (brokers), "R" (records) or "C" (metadata log capacity).
SORTS: dict[type, tuple[Any, ...]] = {
    PartitionRegistration: (
        "i",
        "i",
        "i",
        "s",
        "s",
        "s",
        "s",
        "s",
        "b",
        ("vec", "i", "N"),
        ("vec", "i", "N"),
    ),
    BrokerRegistration: ("b", "b", "i", "i"),
    AlterPartitionRequest: ("b", "i", "i", "s", ("vec", "i", "N"), "b", "i"),
    View: ("b", "i", "i", "i", "s", "s", "b"),
    FollowerView: ("i", "i", "b", "b"),
    Replica: (
        "b",
        "i",
        ("vec", "i", "R"),
        "i",
        "i",
        View,
        "s",
        "i",
        ("vec", FollowerView, "N"),
        "b",
        "s",
        "i",
        "i",
        ("vec", "s", "R"),
        ("vec", "i", "N"),
        "i",
    ),
    FetchResponse: ("b", "i", "i", "i", "i", "i", ("vec", "i", "R"), "b", "i", "i"),
    AlterPartitionResponse: ("b", "s", "i", "i", "i", "i", "i", "s", "b"),
    Broker: ("i", "i", "i", "i", "b", Replica, FetchResponse, AlterPartitionResponse),
    Ghost: (
        "i",
        ("vec", "i", "R"),
        ("vec", "E", "R"),
        "b",
        "b",
        ("vec", "i", "R"),
        ("vec", "i", "N"),
    ),
    Budget: ("i",) * 10,
    ClusterState: (
        PartitionRegistration,
        ("vec", PartitionRegistration, "C"),
        ("vec", BrokerRegistration, "N"),
        ("vec", AlterPartitionRequest, "N"),
        ("vec", Broker, "N"),
        Ghost,
        Budget,
    ),
}

UNKNOWN_FOLLOWER = FollowerView(-1, -1, False, False)
NO_VIEW = View(False, 0, 0, 0, 0, 0, False)


def running(b: Broker) -> Term:
    """The broker process is up (`Status.running`)."""
    return b.status <= SHUTTING_DOWN
