"""The partition's assignment under reassignment: which replica lists, adding and removing sets
a registration can hold. The concrete reassignment rules (`rules/reassignment.py`) generate
them, so a rule change changes the invariant with it."""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.model.config import ModelConfig
from kafkarep.rules.domain import VALUES
from kafkarep.rules.partition_change import completed_replicas
from kafkarep.rules.reassignment import revert, started


class Assignment(NamedTuple):
    """A replica list (in order) with its adding and removing sets: the fields of a
    `PartitionRegistration` that only a reassignment changes. It also serves as the
    metadata the reassignment rules read (`m.partition`)."""

    replicas: tuple[int, ...]
    adding: frozenset[int]
    removing: frozenset[int]

    @property
    def partition(self) -> Assignment:
        return self

    @property
    def isr(self) -> frozenset[int]:
        return frozenset()  # the reverted ISR is not part of the assignment

    @property
    def ongoing(self) -> bool:
        return bool(self.adding or self.removing)


class Reached(NamedTuple):
    """An assignment with the reassignment budgets left when it is held, and every broker an
    assignment named on the way (the ELR may keep a removed one)."""

    assignment: Assignment
    starts_left: int
    cancels_left: int
    named: frozenset[int]


def assignments(cfg: ModelConfig) -> tuple[Reached, ...]:
    """Every assignment reachable from the model's initial one within its budgets: starting a
    reassignment to one of its targets (one start spent, whether or not the assignment changes),
    cancelling an ongoing one (one cancel spent) or completing it (nothing spent), in any order.
    A superset of what the ISR allows, closed under every step."""
    d = VALUES
    first = Assignment(tuple(cfg.replicas), frozenset(), frozenset())
    budget = cfg.budget
    start = Reached(
        first, budget.reassignments, budget.reassignment_cancels, frozenset(first.replicas)
    )
    seen = {start}
    todo = [start]
    while todo:
        a, starts, cancels, named = todo.pop()
        after = []
        if starts > 0:
            for target in cfg.targets:
                new = started(a, target)  # type: ignore[arg-type]
                moved = Assignment(tuple(new.replicas), new.adding, new.removing)
                after.append(Reached(moved, starts - 1, cancels, named | set(moved.replicas)))
        if a.ongoing:
            kept = completed_replicas(d, a.replicas, a.removing)
            done = Assignment(tuple(kept), frozenset(), frozenset())
            after.append(Reached(done, starts, cancels, named))
            if cancels > 0:
                back = revert(a)  # type: ignore[arg-type]
                undone = Assignment(tuple(back.replicas), frozenset(), frozenset())
                after.append(Reached(undone, starts, cancels - 1, named))
        for b in after:
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return tuple(sorted(seen))


def once_added(cfg: ModelConfig, b: int) -> bool:
    """A replica the model's one reassignment may add, where nothing cancels it: once a record
    names it, every later record does."""
    budget = cfg.budget
    return b not in cfg.replicas and budget.reassignments == 1 and budget.reassignment_cancels == 0


def once_removed(cfg: ModelConfig, b: int) -> bool:
    """An original replica of a model with one reassignment: once a record drops it, no later
    record names it (only that reassignment's completion removes a replica, and nothing starts
    another to add it back)."""
    return b in cfg.replicas and cfg.budget.reassignments == 1
