"""`sometimes` properties: steps a model should take at least once, so that a passing check is
not passing because the model never got anywhere interesting (non-vacuity)."""

from __future__ import annotations

from kafkarep.model.actions.base import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import on_partition_change, only_on, reads_after_only, sometimes


@reads_after_only
def _committed(cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState) -> bool:
    return after.ghost.true_hwm > 0


@on_partition_change
def _elr_elected(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    leader = after.partition.leader
    return leader != before.partition.leader and leader in before.partition.elr


@on_partition_change
def _reassigned(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    return (
        before.partition.reassignment_in_progress
        and not after.partition.reassignment_in_progress
        and action.name != "cancel_reassignment"
    )


@only_on("crash", "crash_lossy")
def _crash_leader(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    return action.name in ("crash", "crash_lossy") and action.actor == before.partition.leader


@on_partition_change
def _leader_changed(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    return after.partition.leader > 0 and after.partition.leader != before.partition.leader


@reads_after_only
def _below_min_isr(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> bool:
    return len(after.partition.isr) < after.controller.min_isr_now


SOMETIMES = (
    sometimes(
        "record_committed",
        "Some write becomes committed (the True HWM moves past 0).",
        "protocol description §2.7",
        _committed,
    ),
    sometimes(
        "elr_leader_elected",
        "The controller elects a member of the ELR (KIP-966 clean recovery).",
        "KIP-966",
        _elr_elected,
    ),
    sometimes(
        "reassignment_completed",
        "An ongoing reassignment completes (not by a cancel).",
        "protocol description §4",
        _reassigned,
    ),
    sometimes(
        "unclean_shutdown_hits_leader",
        "An unclean shutdown hits the broker the controller has as leader.",
        "protocol description §5 (Last Replica Standing)",
        _crash_leader,
    ),
    sometimes(
        "leader_changed",
        "Leadership moves to another broker.",
        "protocol description §2.8",
        _leader_changed,
    ),
    sometimes(
        "isr_below_min_isr",
        "The controller's ISR drops below MinISR.",
        "protocol description §2.6",
        _below_min_isr,
    ),
)
