"""Which steps commute: the independence relation behind the explorer's sleep sets.

Two steps enabled in the same state are *independent* when neither disables the other and both
orders reach the same state. The explorer (`kernel.Expander.asleep_successors`) skips a step
that another explored path is sure to take first (docs/explorer.md, "Partial-order reduction").
A pair declared independent that is not would lose states, so the relation is conservative and
built from what each step touches, not from a list of pairs: each action family declares its
footprint beside the action (`Family.footprint`, in the vocabulary of
`kafkarep/model/footprint.py`). Two steps with disjoint locations and compatible ghost effects
commute.

The steps given a footprint are a broker's data plane and metadata (fetch, fetch response,
produce, AlterPartition response, a metadata or registration record applied, a follower leaving
the HWM's wait) and the controller's fence, unfence and AlterPartition handling; every other
step (faults, elections, reassignment, failover) has none and is dependent on every step.
`tests/test_footprints.py` checks that no step writes outside its footprint, `tests/test_por.py`
every claim the search makes on the reachable states of models of every shape, and the explorer
re-checks one claim in `kernel.AUDIT_EVERY` as it runs.
"""

from __future__ import annotations

from collections.abc import Hashable

from kafkarep.model.actions import FAMILIES
from kafkarep.model.actions.base import Action
from kafkarep.model.footprint import ACKS, COMMITS, DEPENDENT, RECEIVES, Footprint
from kafkarep.model.state import ClusterState

_DECLARED = {f.name: f.footprint for f in FAMILIES if f.footprint is not None}
# The families whose steps may have a footprint (every other step is DEPENDENT)
FOOTPRINTED = frozenset(_DECLARED)


class NotIndependent(Exception):
    """Two steps declared independent do not commute in a reachable state."""


def footprint(state: ClusterState, action: Action) -> Footprint:
    """What an enabled step touches in `state`, as its family declares it."""
    declared = _DECLARED.get(action.name)
    return DEPENDENT if declared is None else declared(state, action)


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
