"""The controller side of the cluster model: call the controller rules (never a copy of them) and
commit what they return to the metadata log.

The rules are pure, so their results are cached: the same registration, brokers and request
recur across many cluster states.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from kafkarep import rules
from kafkarep.metadata import ClusterMetadata
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import Broker, ClusterState
from kafkarep.rules import Changed, Outcome, Rejected


def metadata(state: ClusterState, cfg: ModelConfig) -> ClusterMetadata:
    return ClusterMetadata(state.partition, state.controller.brokers, cfg.topic, cfg.options)


def _cached(rule: Callable[[ClusterMetadata, Any], Outcome]) -> Callable[..., Outcome]:
    return lru_cache(maxsize=1 << 16)(rule)


alter_partition = _cached(rules.alter_partition)
alter_reassignment = _cached(rules.alter_reassignment)
elect_leaders = _cached(rules.elect_leaders)
fence_broker = _cached(rules.fence_broker)
unfence_broker = _cached(rules.unfence_broker)
controlled_shutdown = _cached(rules.controlled_shutdown)
register_broker = _cached(rules.register_broker)


def commit(state: ClusterState, outcome: Outcome) -> ClusterState:
    """Append a committed change to the metadata log and adopt a changed broker registry."""
    if isinstance(outcome, Rejected):
        return state
    controller = state.controller
    if outcome.brokers is not None:
        controller = controller._replace(brokers=outcome.brokers)
    if isinstance(outcome, Changed):
        controller = controller._replace(log=controller.log + (outcome.registration,))
    return state._replace(controller=controller)


def compact(state: ClusterState) -> ClusterState:
    """Forget the log prefix every broker has applied: no one reads it again, so histories that
    differ only there are the same state."""
    lowest = min(b.metadata_offset for b in state.brokers)
    if lowest == 0:
        return state
    brokers = tuple(b._replace(metadata_offset=b.metadata_offset - lowest) for b in state.brokers)
    controller = state.controller._replace(log=state.controller.log[lowest:])
    return state._replace(controller=controller, brokers=brokers)


def caught_up(state: ClusterState, broker: Broker) -> bool:
    return broker.initialised and broker.metadata_offset == len(state.controller.log) - 1
