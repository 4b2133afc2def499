"""Liveness: good things eventually happen, under weak fairness of the healing families
(`fairness.py`).

The seven liveness properties of the public KIP-966 specification (`LivenessSpec` in
Vanlightly/kafka-tlaplus `kip-966/kip_966_properties.tla`), in the model's own terms, with
KIP-966's availability claim and a return to full replication. Each is checked on the explored
graph by the explorer (`engines/liveness.py`): a violation is a lasso, a path to a cycle that
fair behaviour may follow forever without the goal.

The model has no request timeouts: Kafka answers an acks=all write still waiting when its
produce request's timeout expires with REQUEST_TIMED_OUT (`DelayedProduce`, Kafka
4.1.0), which would make every write "answered". `write_answered` asks for more: an answer from
replication or from the leader giving up its leadership, never from a timer.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkarep.model.config import ModelConfig
from kafkarep.model.controller import caught_up
from kafkarep.model.state import RUNNING, Broker, ClusterState
from kafkarep.properties.base import eventually, leads_to


def brokers(cfg: ModelConfig) -> tuple[str, ...]:
    return tuple(f"broker {b}" for b in cfg.broker_ids)


def values(cfg: ModelConfig) -> tuple[str, ...]:
    return tuple(f"value {v}" for v in range(1, cfg.records + 1))


def partition(cfg: ModelConfig) -> tuple[str, ...]:
    return ("the partition",)


def _always(cfg: ModelConfig, state: ClusterState) -> int:
    return -1  # every subject


# --- brokers ---------------------------------------------------------------------------------


def _offline(cfg: ModelConfig, state: ClusterState) -> int:
    return _mask(b.status not in RUNNING for b in state.brokers)


def _running_unfenced(cfg: ModelConfig, state: ClusterState) -> int:
    registry = state.controller.brokers
    return _mask(
        b.status in RUNNING and not registry.get(i).fenced for i, b in enumerate(state.brokers, 1)
    )


def _fenced(cfg: ModelConfig, state: ClusterState) -> int:
    registry = state.controller.brokers
    return _mask(registry.get(b).fenced for b in cfg.broker_ids)


def _unfenced(cfg: ModelConfig, state: ClusterState) -> int:
    return ~_fenced(cfg, state)


def _proposing(cfg: ModelConfig, state: ClusterState) -> int:
    """The replicas with an AlterPartition proposal pending."""
    return _mask(b.replica is not None and b.replica.pending is not None for b in state.brokers)


def _not_proposing(cfg: ModelConfig, state: ClusterState) -> int:
    return ~_proposing(cfg, state)


# --- the partition ---------------------------------------------------------------------------


def _metadata_converged(cfg: ModelConfig, state: ClusterState) -> int:
    """Every broker is up and has applied the controller's latest partition record."""
    return int(all(b.status in RUNNING and caught_up(state, b) for b in state.brokers))


def _reassigning(cfg: ModelConfig, state: ClusterState) -> int:
    return int(state.partition.reassignment_in_progress)


def _not_reassigning(cfg: ModelConfig, state: ClusterState) -> int:
    return int(not state.partition.reassignment_in_progress)


def _elr_member_ready(cfg: ModelConfig, state: ClusterState) -> int:
    """KIP-966's premise: the ISR is empty and an ELR member is up, registered and unfenced."""
    partition = state.partition
    if partition.isr or partition.has_leader:
        return 0
    registry = state.controller.brokers
    return int(any(_runs(state, e) and registry.get(e).active for e in sorted(partition.elr)))


def _has_leader(cfg: ModelConfig, state: ClusterState) -> int:
    return int(state.partition.has_leader)


def _in_sync(cfg: ModelConfig, state: ClusterState) -> int:
    """Every replica of the assignment is in the ISR, led by a broker that is up."""
    partition = state.partition
    leader = partition.leader
    return int(
        partition.has_leader and _runs(state, leader) and set(partition.replicas) <= partition.isr
    )


# --- written values --------------------------------------------------------------------------


def _waiting(cfg: ModelConfig, state: ClusterState) -> int:
    """The values of acks=all writes a leader holds unanswered (from its `unacked_from`)."""
    mask = 0
    for broker in state.brokers:
        replica = broker.replica
        if replica is not None and replica.unacked_from >= 0:
            for _, value in replica.log[replica.unacked_from :]:
                mask |= _bit(value)
    return mask


def _answered(cfg: ModelConfig, state: ClusterState) -> int:
    return ~_waiting(cfg, state)


def _acked(cfg: ModelConfig, state: ClusterState) -> int:
    return _mask(v in state.ghost.pos_acked for v in range(1, cfg.records + 1))


def _on_every_replica(cfg: ModelConfig, state: ClusterState) -> int:
    """The values every replica of the current assignment has in its log."""
    mask = -1
    for b in state.partition.replicas:
        broker = _known(state, b)
        replica = broker.replica if broker is not None else None
        held = 0
        for _, value in replica.log if replica is not None else ():
            held |= _bit(value)
        mask &= held
    return mask


# The masks answer on any state, also one that breaks other invariants (tests/test_clauses_total):
# a broker id the model has not is no broker, a value it never writes is no subject.


def _known(state: ClusterState, broker_id: int) -> Broker | None:
    return state.brokers[broker_id - 1] if 1 <= broker_id <= len(state.brokers) else None


def _runs(state: ClusterState, broker_id: int) -> bool:
    broker = _known(state, broker_id)
    return broker is not None and broker.status in RUNNING


def _bit(value: int) -> int:
    return 1 << (value - 1) if value >= 1 else 0


def _mask(flags: Iterable[bool]) -> int:
    mask = 0
    for bit, flag in enumerate(flags):
        if flag:
            mask |= 1 << bit
    return mask


SPEC = "Vanlightly/kafka-tlaplus kip-966/kip_966_properties.tla"

LIVENESS = (
    leads_to(
        "eventually_runs",
        "A broker that is down eventually runs again, unfenced (EventuallyRuns).",
        SPEC,
        brokers,
        _offline,
        _running_unfenced,
    ),
    leads_to(
        "eventually_unfenced",
        "A fenced broker is eventually unfenced (EventuallyUnfenced).",
        SPEC,
        brokers,
        _fenced,
        _unfenced,
    ),
    leads_to(
        "alter_partition_settles",
        "A leader's pending AlterPartition proposal is eventually settled, committed or given up "
        "(AlterPartitionEpochEventuallyReachedOrZero).",
        SPEC,
        brokers,
        _proposing,
        _not_proposing,
    ),
    leads_to(
        "metadata_converges",
        "Infinitely often, every broker runs and has applied the controller's latest partition "
        "record (EventuallyMetadataConverges).",
        SPEC,
        partition,
        _always,
        _metadata_converged,
    ),
    leads_to(
        "write_answered",
        "An acks=all write is eventually answered, positively or negatively, without a timeout "
        "(EventuallyWriteIsAcceptedOrRejected).",
        SPEC,
        values,
        _waiting,
        _answered,
    ),
    leads_to(
        "acked_write_replicated",
        "A positively acknowledged write eventually is in the log of every replica of the "
        "assignment (EventuallyAcknowledgedValueFullyReplicated).",
        SPEC,
        values,
        _acked,
        _on_every_replica,
    ),
    leads_to(
        "reassignment_completes",
        "An ongoing reassignment eventually ends (EventuallyReassignmentCompletes).",
        SPEC,
        partition,
        _reassigning,
        _not_reassigning,
    ),
    leads_to(
        "leader_elected_from_elr",
        "Once the ISR is empty and an ELR member is up and unfenced, a leader is eventually "
        "elected (KIP-966's availability claim: the ELR is a set of clean leader candidates).",
        "KIP-966",
        partition,
        _elr_member_ready,
        _has_leader,
    ),
    eventually(
        "replicas_in_sync",
        "Every fair behaviour reaches a state where every replica is in the ISR under a running "
        "leader: faults are finite, so the cluster returns to full replication.",
        "KIP-966; protocol description §2.8",
        partition,
        _in_sync,
    ),
)
