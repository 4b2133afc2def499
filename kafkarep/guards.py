"""Named guards: the small predicates that let a rule or an action go ahead.

Every guard has a qualified name (`area.name`) and, for controller rules, the Kafka error it
answers with. Guards are registered once, here, so a model file can switch one off by name to seed
a bug (`disable_guards = ["alter_partition.partition_epoch_current"]`), and an unknown name is an
input error rather than a silent no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from kafkarep.errors import Error


class Guard(NamedTuple):
    area: str
    name: str
    error: Error | None
    check: Callable[..., bool]
    doc: str
    qualified: str  # "area.name", kept: the explorer asks millions of times

    def enabled(self, disabled: frozenset[str]) -> bool:
        """False when a model switched this guard off (to seed a bug)."""
        return self.qualified not in disabled

    def passes(self, disabled: frozenset[str], *args: Any) -> bool:
        """True when the predicate holds, or when the guard is switched off."""
        return self.check(*args) or self.qualified in disabled


_REGISTRY: dict[str, Guard] = {}


def guard(area: str, error: Error | None = None) -> Callable[[Callable[..., bool]], Guard]:
    """Register the decorated predicate as the guard `area.<function name>`."""

    def register(check: Callable[..., bool]) -> Guard:
        doc = (check.__doc__ or "").strip()
        entry = Guard(area, check.__name__, error, check, doc, f"{area}.{check.__name__}")
        _REGISTRY[entry.qualified] = entry
        return entry

    return register


def all_guards() -> dict[str, Guard]:
    """Every guard of the rules and of the cluster model, by qualified name."""
    # Importing the modules registers their guards.
    import kafkarep.model.actions
    import kafkarep.rules  # noqa: F401

    return dict(sorted(_REGISTRY.items()))


def first_failure(guards: tuple[Guard, ...], disabled: frozenset[str], *args: Any) -> Guard | None:
    """The first guard, in order, that refuses; switched-off guards always pass."""
    for entry in guards:
        if not entry.passes(disabled, *args):
            return entry
    return None
