"""The MinISR commit rule (protocol description §2.6; KIP-966)."""

from __future__ import annotations

from typing import Any

from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE, Domain
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import always, predicate
from kafkarep.rules.terms import Term, not_


def _min_isr(cfg: ModelConfig) -> str:
    """MinISR as the leader held it: the model's, unless a change may have moved it."""
    return "the leader's MinISR" if cfg.budget.min_isr_changes else f"MinISR {cfg.min_isr}"


def acks_hold(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    """No acks=all write was positively acknowledged before it reached MinISR replicas."""
    return not_(d.flagged(state.ghost.ack_below_min_isr))


def hwm_holds(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    """No leader advanced the HWM with an ISR below MinISR (ELR on)."""
    return not_(d.flagged(state.ghost.hwm_below_min_isr))


@predicate(acks_hold)
def acks_on_min_isr(cfg: ModelConfig, state: ClusterState) -> str | None:
    seen = state.ghost.ack_below_min_isr
    if acks_hold(CONCRETE, cfg, state):
        return None
    assert seen is not None
    value, holders = seen
    return (
        f"write {value} was positively acked after reaching {holders} replica(s) < {_min_isr(cfg)}"
    )


@predicate(hwm_holds)
def hwm_at_min_isr(cfg: ModelConfig, state: ClusterState) -> str | None:
    seen = state.ghost.hwm_below_min_isr
    if hwm_holds(CONCRETE, cfg, state):
        return None
    assert seen is not None
    leader, size = seen
    return f"leader {leader} advanced the HWM with an ISR of {size} < {_min_isr(cfg)} (ELR on)"


MIN_ISR_COMMIT = always(
    "min_isr_commit",
    """An acks=all write is positively acknowledged only once it has reached at least MinISR
    replicas (a replica that later loses unflushed data still counts: storage is asynchronous);
    with ELR on, the HWM advances only while the leader's ISR is at least MinISR, the condition
    under which the Maximal ISR covers every replica the controller may elect. MinISR is the
    leader's: the one its broker's metadata image holds, which may not yet hold a change the
    controller committed.""",
    "protocol description §2.6-§2.7; KIP-966",
    acks=acks_on_min_isr,
    hwm=hwm_at_min_isr,
)
