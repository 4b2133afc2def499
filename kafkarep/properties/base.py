"""What a property is: a name, a kind, named clauses, one paragraph of intent, a source."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkarep.model.actions.base import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState

StateCheck = Callable[[ModelConfig, ClusterState], str | None]
StepCheck = Callable[[ModelConfig, ClusterState, Action, ClusterState], bool]

# The clauses marked below (a set, not an attribute on the function: compiled functions take none)
_READS_CONTROLLER: set[StateCheck] = set()
_ON_PARTITION_CHANGE: set[StepCheck] = set()


def reads_controller(check: StateCheck) -> StateCheck:
    """Marks a state clause that reads only the model and `state.controller` (not the brokers,
    the ghost state or the budgets): an engine may evaluate it once per controller state.
    tests/test_properties.py checks the claim on reachable states."""
    _READS_CONTROLLER.add(check)
    return check


def on_partition_change(check: StepCheck) -> StepCheck:
    """Marks a `sometimes` step that can only be reached by a step that changes the partition
    (it compares the partition before and after): an engine skips it on the other steps.
    tests/test_properties.py checks the claim on reachable steps."""
    _ON_PARTITION_CHANGE.add(check)
    return check


def needs_partition_change(check: StateCheck | StepCheck) -> bool:
    return check in _ON_PARTITION_CHANGE


def reads(check: StateCheck | StepCheck) -> str:
    """What a clause reads: "controller" (see `reads_controller`) or the whole "state"."""
    return "controller" if check in _READS_CONTROLLER else "state"


class Clause(NamedTuple):
    name: str
    check: StateCheck | StepCheck


class Property(NamedTuple):
    name: str
    kind: str  # "always" or "sometimes"
    clauses: tuple[Clause, ...]
    doc: str
    source: str

    def qualified(self, clause: Clause) -> str:
        return f"{self.name}.{clause.name}"


def always(name: str, doc: str, source: str, **clauses: StateCheck) -> Property:
    return Property(name, "always", tuple(Clause(n, c) for n, c in clauses.items()), doc, source)


def sometimes(name: str, doc: str, source: str, check: StepCheck) -> Property:
    return Property(name, "sometimes", (Clause("reached", check),), doc, source)
