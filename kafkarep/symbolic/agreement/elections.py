"""Induction's free elections (`Encoding.free_elections`) against the exact ones: every step of
the exact relation is one of the free relation, and the free one elects only an eligible
replica."""

from __future__ import annotations

from typing import Any, NamedTuple

import z3

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.symbolic import ops
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.agreement.disagreement import Disagreement, source
from kafkarep.symbolic.agreement.exploration import Path, explore, pad, project_along
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.symmetry import BROKER_FAMILIES
from kafkarep.symbolic.transition import Instance, Relation


class Cover(NamedTuple):
    """The free elections of induction against the exact ones (`Encoding.free_elections`)."""

    steps: int  # enabled controller steps compared
    widened: int  # of which the free relation admits another leader too
    disagreements: tuple[Disagreement, ...]


class Elections:
    """The exact and the free relation of a model, for metadata logs of a given capacity (the
    free election makes whether a record is appended symbolic, so the log must have room)."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.solver = z3.Solver()
        self._by_capacity: dict[int, tuple[Encoding, Encoding, Relation, Relation]] = {}
        # what a controller step was found to do, by what the election reads (the rest of the
        # state is carried over alike by both relations)
        self._seen: dict[tuple[object, ...], tuple[int, Disagreement | None]] = {}

    def relations(self, capacity: int) -> tuple[Encoding, Encoding, Relation, Relation]:
        capacity = -(-capacity // 4) * 4
        if capacity not in self._by_capacity:
            exact = Encoding(self.cfg, capacity)
            free = Encoding(self.cfg, capacity, free_elections=True)
            self._by_capacity[capacity] = (exact, free, Relation(exact), Relation(free))
        return self._by_capacity[capacity]

    def cover(self, state: ClusterState, path: Path) -> Cover:
        """Each enabled step of the exact relation in this state is a step of the free one, and
        every leader the free one admits instead was in the ISR or ELR before the step (any
        replica where the exact election was unclean)."""
        exact, free, exact_rel, free_rel = self.relations(state.partition.partition_epoch + 2)
        steps = widened = 0
        problems: list[Disagreement] = []
        before = pad(exact, project_along(exact, state, path))
        for precise, loose in zip(exact_rel.instances, free_rel.instances, strict=True):
            if precise.family in BROKER_FAMILIES:
                continue  # a broker's own step: no election
            for arg in exact_rel.domain(precise, before):
                if precise.guard(before, arg) is not True:
                    continue
                key = (
                    precise.label,
                    arg,
                    before.partition,
                    before.registry,
                    before.ap_requests,
                    before.budget,
                ) + tuple((b.status, b.epoch, b.incarnation) for b in before.brokers)
                if key not in self._seen:
                    self._seen[key] = self._step(free, precise, loose, before, arg, state)
                wider, problem = self._seen[key]
                steps += 1
                widened += wider
                if problem is not None:
                    action = exact_rel.action(precise, arg, state)
                    problems.append(problem._replace(state=state, action=action))
        return Cover(steps, widened, tuple(problems))

    def _step(
        self,
        free: Encoding,
        precise: Instance,
        loose: Instance,
        before: symbolic.ClusterState,
        arg: object,
        state: ClusterState,
    ) -> tuple[int, Disagreement | None]:
        """(1 if the free step admits another leader, else 0; what is wrong with it)."""
        solver = self.solver
        want = precise.update(before, arg)
        have = loose.update(before, arg)
        if have == want:
            return 0, None  # no election in this step: the same values
        same = list(free.equal(have, want))
        if any(t is False for t in same) or _unsat(solver, same):
            return 0, Disagreement(
                state, None, "the free election misses it", source(Terms.widen_election)
            )
        other = ops.ne(have.partition.leader, want.partition.leader)
        if isinstance(other, bool) or _unsat(solver, [other]):
            return 0, None
        # clean (from the ISR or ELR) as the exact election was, or unclean like it
        clean = state.partition.isr | state.partition.elr
        eligible = clean if want.partition.leader in clean else set(state.partition.replicas)
        if not _unsat(solver, [ops.ne(have.partition.leader, e) for e in eligible]):
            leader = solver.model().eval(have.partition.leader, True)
            return 1, Disagreement(
                state, None, f"the free choice elects {leader}", source(Terms.widen_election)
            )
        return 1, None


def free_elections_cover(cfg: ModelConfig, depth: int, limit: int = 0) -> Cover:
    """`Elections.cover` on every state of a bounded exploration."""
    elections = Elections(cfg)
    steps = widened = 0
    problems: list[Disagreement] = []
    for number, (state, path) in enumerate(explore(cfg, depth)):
        if limit and number >= limit:
            break
        found = elections.cover(state, path)
        steps += found.steps
        widened += found.widened
        problems.extend(found.disagreements)
    return Cover(steps, widened, tuple(problems))


def _unsat(solver: Any, terms: list[Any]) -> bool:
    """Whether the terms (some maybe Python bools) are unsatisfiable together; on sat the
    solver keeps its model."""
    solver.reset()
    solver.add(*(ops.bool_term(t) for t in terms))
    return bool(solver.check() == z3.unsat)
