"""What a property is: a name, a kind, named clauses, one paragraph of intent, a source."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kafkarep.model.actions.base import Action
    from kafkarep.model.config import ModelConfig
    from kafkarep.model.state import ClusterState

StateCheck = Callable[["ModelConfig", "ClusterState"], "str | None"]
StepCheck = Callable[["ModelConfig", "ClusterState", "Action", "ClusterState"], bool]


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
