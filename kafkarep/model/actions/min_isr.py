"""A change of the topic's `min.insync.replicas` (`[faults] min_isr_changes`), and the leader
applying it.

An operator's IncrementalAlterConfigs: the controller commits the configuration record, and
since 4.0.0 with ELR on, in the same batch, the ELR cleared (`rules/min_isr_change.py`). The
controller's rules decide under the new MinISR at once; a broker holds it once it has applied
the record: with the next partition record, or, for a leader caught up with the partition
records, on its own (`apply_min_isr`, as `apply_registrations` does for broker records). Only
the leader reads it: its acks=all admission and its HWM (`Partition.effectiveMinIsr` reads the
leader log's config, which `TopicConfigHandler` updates when the broker publishes the record,
read at 4.1.0; nothing re-evaluates the HWM then). The new value is any other from 1 to the
fewest replicas the partition may have, so that it stays Kafka's effective MinISR.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkarep.model import controller
from kafkarep.model import footprint as fp
from kafkarep.model.actions.base import CONTROLLER, Action, Family, partition_changed
from kafkarep.model.actions.metadata import caught_up_leaders
from kafkarep.model.config import ModelConfig
from kafkarep.model.footprint import Footprint
from kafkarep.model.state import ClusterState
from kafkarep.rules.min_isr_change import change_min_isr


def change_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.min_isr_changes == 0:
        return
    for value in range(1, cfg.min_isr_limit + 1):
        if value != state.controller.min_isr_now:
            yield Action("change_min_isr", CONTROLLER, value)


def change(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    c = state.controller
    state = state._replace(
        controller=c._replace(min_isr_now=action.arg),
        budget=state.budget.spend("min_isr_changes"),
    )
    return controller.commit(cfg, state, change_min_isr(controller.metadata(state, cfg)))


def apply_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    """A leader caught up with the last partition record applies a MinISR change committed
    after it."""
    for broker_id, replica in caught_up_leaders(state):
        if replica.min_isr != state.controller.min_isr_now:
            yield Action("apply_min_isr", broker_id)


def apply(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    broker = state.broker(action.actor)
    assert broker.replica is not None
    replica = broker.replica._replace(min_isr=state.controller.min_isr_now)
    return state.with_broker(action.actor, broker._replace(replica=replica))


def apply_footprint(state: ClusterState, action: Action) -> Footprint:
    return fp.meta(action.actor) | fp.CONTROLLER  # it reads the controller's MinISR


def _possible(cfg: ModelConfig) -> bool:
    return cfg.budget.min_isr_changes > 0


FAMILIES = (
    Family(
        "change_min_isr",
        change_actions,
        change,
        "min_isr_changes",
        "an operator changes the topic's min.insync.replicas",
        describe=partition_changed,
    ),
    Family(
        "apply_min_isr",
        apply_actions,
        apply,
        None,
        "a caught-up leader applies a min.insync.replicas change committed since the last "
        "partition record",
        possible=_possible,
        footprint=apply_footprint,
    ),
)
