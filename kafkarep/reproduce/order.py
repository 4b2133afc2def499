"""The order the steps are taken in: the trace's, or one the model's independence relation makes
equivalent.

When a step is not ready on the cluster (`steps.NotReady`), the step after it may be taken first
if the two commute in the model: both enabled in the current state and independent
(`model.independence`, the relation the explorer's partial-order reduction uses). Both orders
then reach the same state, so the trace's violation is reached either way. Swaps repeat, so a
step can move past several; the state after each step is the model's own successor, recomputed
for the order taken."""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.independence import footprint, independent, sleep_key
from kafkarep.model.state import ClusterState


class Pending(NamedTuple):
    """A step of the trace not taken yet: its number in the trace, and its name across states
    (a metadata record by its partition epoch, as the explorer names it)."""

    number: int
    key: Hashable


def pending_steps(states: list[ClusterState], actions: list[Action]) -> list[Pending]:
    return [
        Pending(number, sleep_key(state, action))
        for number, (state, action) in enumerate(zip(states, actions, strict=True), 1)
    ]


def enabled(
    cfg: ModelConfig, state: ClusterState, step: Pending
) -> tuple[Action, ClusterState] | None:
    """The step's action in `state` and the state after it, if it is enabled there."""
    for action, after in successors(cfg, state):
        if sleep_key(state, action) == step.key:
            return action, after
    return None


def may_go_first(cfg: ModelConfig, state: ClusterState, blocked: Pending, nxt: Pending) -> bool:
    """Whether `nxt` may be taken before `blocked`: both enabled in `state`, and independent."""
    first = enabled(cfg, state, blocked)
    second = enabled(cfg, state, nxt)
    if first is None or second is None:
        return False
    return independent(footprint(state, first[0]), footprint(state, second[0]))
