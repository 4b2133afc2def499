"""Which steps commute: the independence relation behind the explorer's sleep sets.

Two steps enabled in the same state are *independent* when neither disables the other and both
orders reach the same state. The explorer (`kernel.Expander.asleep_successors`) skips a step
that another explored path is sure to take first (docs/explorer.md, "Partial-order reduction").
A pair declared independent that is not would lose states, so the relation is conservative and
built from what each step touches, not from a list of pairs:

- the parts of brokers it reads or writes, and the controller, as a bitmask. A broker has two
  parts: its data (log, HWM, the fetch response in flight) and the rest (status, metadata
  position, role and view, the AlterPartition answer in flight, and as leader its own state and
  request slot). A fetch reads only the follower's data and its view's leader and leader epoch;
  a follower that applies a record keeping its leader epoch changes only the rest;
- what it does to the ghost state (`Ghost`, which only the properties read): add its broker to
  the receivers of the records it appends (`Ghost.receive`, a set union: two such steps
  commute); commit records (the True HWM, and the first HWM advance below MinISR); acknowledge
  or fail writes (which reads the receivers). A step commits only where a leader's HWM may move
  (`hwm.maybe_advance_hwm`), and acknowledges only when that leader has writes to acknowledge
  or fail (`hwm.nack_unacked`).

Two steps with disjoint locations and compatible ghost effects commute. The steps given a
footprint are a broker's data plane and metadata (fetch, fetch response, produce, AlterPartition
response, a metadata or registration record applied, a follower leaving the HWM's wait) and the
controller's fence, unfence and AlterPartition handling (`CHANGES_PARTITION`); every other step
(faults, elections, reassignment, failover) has none and is dependent on every step. A broker
catching up after a restart applies the log's last record, which a controller step moves, so it
reads the controller then; a metadata record is otherwise read by its partition epoch, which no
step changes (the log only grows at its end, and compaction drops what every broker applied).
`tests/test_por.py` checks every claim the search makes on the reachable states of models of
every shape, and the explorer re-checks one claim in `kernel.AUDIT_EVERY` as it runs.
"""

from __future__ import annotations

from collections.abc import Hashable

from kafkarep.model.actions.base import Action
from kafkarep.model.state import ClusterState, Role

RECEIVES = 1  # adds its broker to who received some records (Ghost.receive)
COMMITS = 2  # may move the True HWM (Ghost.committed) and record an advance below MinISR
ACKS = 4  # may acknowledge or fail writes: reads the receivers, writes the acknowledged
GHOST = 7  # the bits of a footprint that are its ghost effect
DEPENDENT = -1  # a step that commutes with nothing (no footprint)

CONTROLLER = 8  # reads or writes the controller's state (a location as a broker is)

# The controller's steps that may have a footprint: each may change the partition.
CHANGES_PARTITION = frozenset({"fence", "unfence", "handle_alter_partition"})
# The families whose steps may have a footprint (every other step is DEPENDENT)
FOOTPRINTED = CHANGES_PARTITION | {
    "fetch_response",
    "apply_metadata",
    "fetch",
    "alter_partition_response",
    "apply_registrations",
    "replica_lag",
    "produce",
}


class NotIndependent(Exception):
    """Two steps declared independent do not commute in a reachable state."""


# A footprint is one int: the brokers' bitmask << 4 | CONTROLLER | the ghost effect; DEPENDENT for
# none.
Footprint = int


def footprint(state: ClusterState, action: Action) -> Footprint:
    """What an enabled step touches in `state` (see the module docstring)."""
    name, actor = action.name, action.actor
    if name == "fetch_response":
        return _data(actor) | RECEIVES
    if name == "apply_metadata":
        log_end = _reads_log_end(state, actor)
        if _same_leader_epoch(state, action):
            return _meta(actor) | log_end
        mine = _broker(actor) | log_end
        return mine if _applies_alone(state, action) else mine | _moves_hwm(state, actor)
    if name == "fetch":
        # the follower's log and its fetch slot; its view's leader and leader epoch, which
        # only a step on its whole state changes; all of the leader
        replica = state.brokers[actor - 1].replica
        assert replica is not None and replica.view is not None
        leader = replica.view.leader
        return _data(actor) | _broker(leader) | _moves_hwm(state, leader)
    if name == "alter_partition_response":
        return _broker(actor) | _moves_hwm(state, actor)
    if name == "replica_lag":
        return _broker(actor)
    if name == "produce":
        # it appends to the leader's log, spends the records budget (which only faults and
        # produce read) and may acknowledge the write at once
        return _broker(actor) | RECEIVES | COMMITS | ACKS
    if name == "apply_registrations":
        return _broker(actor) | CONTROLLER  # it reads the broker registrations
    if name in CHANGES_PARTITION:
        # it reads the status (and the metadata position) of the broker it is about, and
        # handling an AlterPartition answers its leader
        assert isinstance(action.arg, int)
        if name == "handle_alter_partition":
            return CONTROLLER | _broker(action.arg)
        return CONTROLLER | _meta(action.arg)
    return DEPENDENT


def independent(first: Footprint, second: Footprint) -> bool:
    """Whether two steps with these footprints, enabled in one state, commute."""
    if first < 0 or second < 0 or (first >> 3) & (second >> 3):  # a broker or the controller
        return False
    if first & (COMMITS | ACKS) and second & (COMMITS | ACKS):
        return False
    return not ((first & ACKS and second & RECEIVES) or (first & RECEIVES and second & ACKS))


def sleep_key(state: ClusterState, action: Action) -> Hashable:
    """What names a step across the states of a path: the action, except that a metadata record
    is named by its partition epoch, not its position in the log (the log's applied prefix is
    compacted away, which moves positions)."""
    if action.name == "apply_metadata":
        assert isinstance(action.arg, int)
        return (action.actor, state.controller.log[action.arg].partition_epoch)
    return action


# Bits 0 to 2 of a footprint are the ghost effect, bit 3 the controller, then two per broker:
# its data (log, HWM, the fetch response in flight) and the rest (status, metadata position,
# role and view, the AlterPartition answer in flight, a leader's own state).


def _data(broker_id: int) -> int:
    return 1 << (2 * broker_id + 2)


def _meta(broker_id: int) -> int:
    return 1 << (2 * broker_id + 3)


def _broker(broker_id: int) -> int:
    return _data(broker_id) | _meta(broker_id)


def _same_leader_epoch(state: ClusterState, action: Action) -> bool:
    """A follower applies a record that keeps its leader and leader epoch (an ISR or ELR
    change): only its view and metadata position change (`metadata._as_follower`); its log, its
    HWM and the fetch response in flight stay as they are (a response is stale only from an
    older leader epoch, `reduction._quiet_responses`)."""
    assert isinstance(action.arg, int)
    snapshot = state.controller.log[action.arg]
    replica = state.brokers[action.actor - 1].replica
    return (
        replica is not None
        and replica.role == Role.FOLLOWER
        and replica.view is not None
        and replica.unacked_from < 0
        and action.actor in snapshot.replicas
        and snapshot.leader == replica.view.leader
        and snapshot.leader_epoch == replica.view.leader_epoch
    )


def _reads_log_end(state: ClusterState, broker_id: int) -> int:
    """A broker catching up after a restart applies the log's last record, which a controller's
    step moves; a lagging controller holds back the compaction its steps release."""
    if state.brokers[broker_id - 1].initialised and not state.controller.lag:
        return 0
    return CONTROLLER


def _moves_hwm(state: ClusterState, leader: int) -> int:
    """The ghost effect of a step that may move this leader's HWM or fail its writes."""
    replica = state.brokers[leader - 1].replica
    return COMMITS | ACKS if replica is not None and replica.unacked_from >= 0 else COMMITS


def _applies_alone(state: ClusterState, action: Action) -> bool:
    """The broker neither leads nor becomes the leader, and has no writes to fail: applying the
    record changes that broker only (`metadata._alone`)."""
    assert isinstance(action.arg, int)
    broker = state.brokers[action.actor - 1]
    replica = broker.replica
    return state.controller.log[action.arg].leader != action.actor and not (
        replica is not None and (replica.role == Role.LEADER or replica.unacked_from >= 0)
    )
