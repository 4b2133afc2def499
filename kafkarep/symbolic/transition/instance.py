"""One step of the transition relation: an `Instance` of an action family (its actor,
its fixed argument), with a guard and an update over symbolic states."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import NamedTuple

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState

Guard = Callable[[ClusterState, Term], Term]
Update = Callable[[ClusterState, Term], ClusterState]


class Instance(NamedTuple):
    family: str
    actor: int  # as in the concrete Action (0: the controller)
    fixed: Hashable  # the fixed part of the argument (a broker, a target), or None
    arg: str | None  # sort of the symbolic argument: "i", "s", "h" (a record) or None
    guard: Guard
    update: Update

    @property
    def broker(self) -> int | None:
        """The broker the step is about: its actor, or the broker a controller event names."""
        if self.actor > 0:
            return self.actor
        return self.fixed if isinstance(self.fixed, int) else None

    @property
    def label(self) -> str:
        parts = [self.family, str(self.actor)]
        if self.fixed is not None:
            parts.append(str(self.fixed))
        return ":".join(parts)


Build = Callable[[Encoding], list[Instance]]  # a family's instances in a model


def per_broker(build: Callable[[Encoding, int], list[Instance]]) -> Build:
    """A family with the same instances for every broker."""

    def instances(enc: Encoding) -> list[Instance]:
        return [i for b in range(1, enc.n + 1) for i in build(enc, b)]

    return instances
