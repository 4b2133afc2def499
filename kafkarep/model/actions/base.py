"""What an action and an action family are."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import NamedTuple

from kafkarep.model.config import ModelConfig
from kafkarep.model.footprint import Declare
from kafkarep.model.state import ClusterState

CONTROLLER = 0


class Action(NamedTuple):
    """One step: the family, the acting broker (0 for the controller) and an argument."""

    name: str
    actor: int
    arg: Hashable = None

    def describe(self) -> str:
        if self.arg is None:
            return self.name
        return f"{self.name}({_show(self.arg)})"

    def actor_name(self) -> str:
        return "controller" if self.actor == CONTROLLER else f"broker {self.actor}"


def _show(value: object) -> str:
    if isinstance(value, frozenset):
        return "{" + ",".join(map(str, sorted(value))) + "}"
    if isinstance(value, tuple):
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


Describe = Callable[[ModelConfig, ClusterState, Action, ClusterState], str]
"""What a step did, in the protocol's words, from the states before and after it."""


def partition_changed(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    """The outcome of a step whose controller work shows only in the partition it writes."""
    return "partition changed" if before.partition != after.partition else "partition unchanged"


class Family(NamedTuple):
    name: str
    actions: Callable[[ModelConfig, ClusterState], Iterator[Action]]
    apply: Callable[[ModelConfig, ClusterState, Action], ClusterState]
    budget: str | None  # the fault budget it spends, None for a healing action
    doc: str
    # Whether a model can ever enable it, when that is known from the model alone (a broker
    # can only restart after a fault took it down): the explorer then never asks.
    possible: Callable[[ModelConfig], bool] | None = None
    describe: Describe | None = None  # None: the step has no outcome worth a word ("ok")
    # What a step touches (`kafkarep/model/footprint.py`), for the partial-order reduction;
    # None: it commutes with nothing.
    footprint: Declare | None = None
