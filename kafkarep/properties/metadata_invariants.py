"""Invariants of the controller's partition metadata and of the brokers' copies of it
(protocol description §2.3, §2.8-§2.9; KIP-966; kafka-tlaplus ValidControllerIsrAndElr,
MetadataLogMatchingProperty)."""

from __future__ import annotations

from itertools import pairwise

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import always, reads_controller


@reads_controller
def isr_within_replicas(cfg: ModelConfig, state: ClusterState) -> str | None:
    p = state.partition
    outside = sorted(p.isr - set(p.replicas))
    return f"ISR member {outside[0]} is not a replica {list(p.replicas)}" if outside else None


@reads_controller
def elr_within_replicas(cfg: ModelConfig, state: ClusterState) -> str | None:
    p = state.partition
    outside = sorted(p.elr - set(p.replicas))
    return f"ELR member {outside[0]} is not a replica {list(p.replicas)}" if outside else None


@reads_controller
def isr_elr_disjoint(cfg: ModelConfig, state: ClusterState) -> str | None:
    both = sorted(state.partition.isr & state.partition.elr)
    return f"broker {both[0]} is in both ISR and ELR" if both else None


@reads_controller
def leader_in_isr(cfg: ModelConfig, state: ClusterState) -> str | None:
    p = state.partition
    if p.leader == -1 or p.leader in p.isr:
        return None
    return f"leader {p.leader} is not in the ISR {sorted(p.isr)}"


@reads_controller
def elr_empty_at_min_isr(cfg: ModelConfig, state: ClusterState) -> str | None:
    p = state.partition
    min_isr = min(state.controller.min_isr_now, len(p.replicas))  # the controller's
    if cfg.options.elr_enabled and len(p.isr) >= min_isr and p.elr:
        return f"ELR {sorted(p.elr)} is not empty with an ISR of {len(p.isr)} >= MinISR {min_isr}"
    return None


@reads_controller
def epochs_monotonic(cfg: ModelConfig, state: ClusterState) -> str | None:
    log = state.controller.log
    for before, after in pairwise(log):
        if after.partition_epoch <= before.partition_epoch:
            return f"partition epoch went {before.partition_epoch} -> {after.partition_epoch}"
        if after.leader_epoch < before.leader_epoch:
            return f"leader epoch went {before.leader_epoch} -> {after.leader_epoch}"
    return None


def brokers_follow_controller_log(cfg: ModelConfig, state: ClusterState) -> str | None:
    """What a replica acts on is a state the controller's log went through."""
    log = state.controller.log
    first = log[0].partition_epoch  # the retained log has consecutive partition epochs
    for b, broker in enumerate(state.brokers, 1):
        position = state.controller.position(broker.applied_epoch)
        if broker.initialised and not 0 <= position < len(log):
            return f"broker {b} applied epoch {broker.applied_epoch}, not in the controller's log"
        replica = broker.replica
        if replica is None or replica.view is None:
            continue
        view = replica.view
        index = view.partition_epoch - first
        known = log[index] if 0 <= index < len(log) else None
        if known is view:
            continue  # the usual case: the very record it applied
        if known is None:
            if view.partition_epoch > state.partition.partition_epoch:
                epoch = view.partition_epoch
                return f"broker {b} knows partition epoch {epoch}, ahead of the controller's"
            continue
        if (known.leader, known.leader_epoch, known.isr) != (
            view.leader,
            view.leader_epoch,
            view.isr,
        ):
            return (
                f"broker {b} holds leader {view.leader}, ISR {sorted(view.isr)} at partition epoch "
                f"{view.partition_epoch}; the controller had leader {known.leader}, "
                f"ISR {sorted(known.isr)}"
            )
    return None


METADATA = always(
    "metadata",
    """The controller's metadata is sound: ISR and ELR are replicas and disjoint, the leader is in
    the ISR (or there is none), the ELR is empty once the ISR reaches MinISR, epochs never go
    back; and every broker's copy is a state of the controller's log.""",
    "protocol description §2.3, §2.8-§2.9; KIP-966",
    isr_within_replicas=isr_within_replicas,
    elr_within_replicas=elr_within_replicas,
    isr_elr_disjoint=isr_elr_disjoint,
    leader_in_isr=leader_in_isr,
    elr_empty_at_min_isr=elr_empty_at_min_isr,
    epochs_monotonic=epochs_monotonic,
    brokers_follow_controller_log=brokers_follow_controller_log,
)
